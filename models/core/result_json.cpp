#include "models/core/result_json.hpp"

#include <cstdio>
#include <sstream>

#include "models/cost/flops.hpp"
#include "models/core/units.hpp"

namespace trainsim {
using nlohmann::json;

namespace {
json breakdown_json(const MemoryBreakdown& b) {
  return {{"params_bytes", b.params_bytes},
          {"grads_bytes", b.grads_bytes},
          {"optimizer_bytes", b.optimizer_bytes},
          {"activations_bytes", b.activations_bytes},
          {"other_bytes", b.other_bytes}};
}
}  // namespace

json result_to_json(const Result& r) {
  json stages = json::array();
  for (const auto& s : r.per_stage)
    stages.push_back({{"stage", s.stage},
                      {"layers", s.layers},
                      {"in_flight_micro_batches", s.in_flight_micro_batches},
                      {"total_bytes", s.total_bytes},
                      {"breakdown", breakdown_json(s.breakdown)}});
  const TimeBreakdown& b = r.breakdown;
  return {
      {"feasible", r.feasible},
      {"reason", r.reason},
      {"fidelity", r.fidelity},
      {"warnings", r.warnings},
      {"gpus", r.gpus},
      {"micro_batches_per_step", r.micro_batches},
      {"step_time_s", r.step_time_s},
      {"tokens_per_step", r.tokens_per_step},
      {"tokens_per_s", r.tokens_per_s},
      {"model_flops_per_step", r.model_flops_per_step},
      {"hardware_flops_per_step", r.hardware_flops_per_step},
      {"model_tflops_per_gpu", r.model_tflops_per_gpu},
      {"hardware_tflops_per_gpu", r.hardware_tflops_per_gpu},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"bubble_fraction", r.bubble_fraction},
      {"exposed_comm_s", r.exposed_comm_s},
      {"overlapped_comm_s", r.overlapped.total_s()},
      {"overlapped_s",
       {{"tp_comm", r.overlapped.tp_s},
        {"cp_comm", r.overlapped.cp_s},
        {"ep_comm", r.overlapped.ep_s},
        {"dp_comm", r.overlapped.dp_s}}},
      {"memory",
       {{"peak_bytes", r.peak_memory_bytes},
        {"hbm_capacity_bytes", r.hbm_capacity_bytes},
        {"per_stage", stages},
        {"breakdown", breakdown_json(r.peak_breakdown)}}},
      {"breakdown_s",
       {{"compute", b.compute_s},
        {"tp_comm", b.tp_comm_s},
        {"pp_comm", b.pp_comm_s},
        {"dp_comm", b.dp_comm_s},
        {"ep_comm", b.ep_comm_s},
        {"cp_comm", b.cp_comm_s},
        {"bubble", b.bubble_s},
        {"optimizer", b.optimizer_s},
        {"offload", b.offload_s}}},
      {"comm_bytes_per_gpu",
       {{"tp", r.tp_bytes}, {"pp", r.pp_bytes}, {"dp", r.dp_bytes}, {"ep", r.ep_bytes},
        {"cp", r.cp_bytes}}},
  };
}

std::string result_to_text(const Scenario& sc, const Result& r) {
  std::ostringstream o;
  const auto& p = sc.plan;
  const ParamCount params = count_params(sc.model);
  char line[256];
  o << "trainsim " << r.fidelity << ": " << sc.name << "\n";
  std::snprintf(line, sizeof line, "  model    %s: %d layers, hidden %lld, %d heads, %.1fB params%s\n",
                sc.model.name.c_str(), sc.model.layers, static_cast<long long>(sc.model.hidden),
                sc.model.heads, params.total / 1e9, sc.model.moe ? " (MoE)" : "");
  o << line;
  std::snprintf(line, sizeof line, "  cluster  %s: %d nodes x %d %s = %d GPUs\n", sc.cluster.name.c_str(),
                sc.cluster.nodes, sc.cluster.gpus_per_node, sc.cluster.gpu.name.c_str(),
                sc.cluster.total_gpus());
  o << line;
  std::snprintf(line, sizeof line,
                "  plan     TP%d PP%d DP%d CP%d EP%d%s%s vpp %d, %s, micro-batch %lld, global batch %lld, "
                "ZeRO-%d, recompute %s, %s\n",
                p.tp, p.pp, p.dp, p.cp, p.ep, p.moe_dispatcher == MoeDispatcher::kDeepEp ? " (DeepEP)" : "",
                p.sp ? " +SP" : "", p.vpp, p.schedule.c_str(),
                static_cast<long long>(p.micro_batch), static_cast<long long>(p.global_batch),
                p.zero_stage, recompute_label(p).c_str(), to_string(p.precision));
  o << line << "\n";
  if (!r.feasible) {
    o << "  INFEASIBLE: " << r.reason << "\n";
    if (r.step_time_s <= 0) return o.str();
    o << "  (figures below are what the plan would need)\n";
  }
  std::snprintf(line, sizeof line, "  step time          %s  (%d micro-batches per pipeline)\n",
                units::format_time(r.step_time_s).c_str(), r.micro_batches);
  o << line;
  std::snprintf(line, sizeof line, "  throughput         %s tokens/s\n", units::format_count(r.tokens_per_s).c_str());
  o << line;
  std::snprintf(line, sizeof line, "  per GPU            %.1f model TFLOP/s, %.1f hardware TFLOP/s\n",
                r.model_tflops_per_gpu, r.hardware_tflops_per_gpu);
  o << line;
  std::snprintf(line, sizeof line, "  MFU / HFU          %.1f%% / %.1f%%\n", 100 * r.mfu, 100 * r.hfu);
  o << line;
  std::snprintf(line, sizeof line, "  pipeline bubble    %.1f%% of the step\n", 100 * r.bubble_fraction);
  o << line;
  std::snprintf(line, sizeof line, "  exposed comm       %s\n", units::format_time(r.exposed_comm_s).c_str());
  o << line << "\n  where the step goes (critical stage):\n";
  const TimeBreakdown& b = r.breakdown;
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute_s}, {"tp comm", b.tp_comm_s}, {"cp comm", b.cp_comm_s},
      {"ep comm", b.ep_comm_s}, {"pp comm", b.pp_comm_s}, {"dp comm", b.dp_comm_s},
      {"bubble", b.bubble_s},   {"optimizer", b.optimizer_s}, {"offload", b.offload_s}};
  for (const auto& [name, s] : parts) {
    if (s <= 0) continue;
    std::snprintf(line, sizeof line, "    %-10s %12s  %5.1f%%\n", name, units::format_time(s).c_str(),
                  100 * s / r.step_time_s);
    o << line;
  }
  // Memory in GiB, the unit the driver and the framework report it in (nvidia-smi's MiB,
  // torch.cuda.max_memory_allocated / 2^30): an A100 80GB has 80 GiB.
  o << "\n  memory per GPU (HBM " << units::format_bytes(r.hbm_capacity_bytes) << "):\n";
  o << "    stage  layers  params     grads      optimizer  activations  other      total\n";
  const std::size_t n = r.per_stage.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 6 && i >= 3 && i + 3 < n) {
      if (i == 3) o << "    ...\n";
      continue;
    }
    const auto& s = r.per_stage[i];
    const auto& m = s.breakdown;
    std::snprintf(line, sizeof line, "    %5d  %6d  %-9s  %-9s  %-9s  %-11s  %-9s  %s\n", s.stage,
                  s.layers, units::format_bytes(m.params_bytes).c_str(),
                  units::format_bytes(m.grads_bytes).c_str(),
                  units::format_bytes(m.optimizer_bytes).c_str(),
                  units::format_bytes(m.activations_bytes).c_str(),
                  units::format_bytes(m.other_bytes).c_str(),
                  units::format_bytes(s.total_bytes).c_str());
    o << line;
  }
  for (const auto& w : r.warnings) o << "  warning: " << w << "\n";
  return o.str();
}

}  // namespace trainsim
