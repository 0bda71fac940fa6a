#include "gui/result_reader.hpp"

namespace trainsim::gui {
namespace {

double num(const nlohmann::json& j, const char* key, double fallback = 0) {
  auto it = j.find(key);
  return (it != j.end() && it->is_number()) ? it->get<double>() : fallback;
}

MemoryBreakdown memory_breakdown(const nlohmann::json& j) {
  MemoryBreakdown b;
  b.params_bytes = num(j, "params_bytes");
  b.grads_bytes = num(j, "grads_bytes");
  b.optimizer_bytes = num(j, "optimizer_bytes");
  b.activations_bytes = num(j, "activations_bytes");
  b.other_bytes = num(j, "other_bytes");
  return b;
}

}  // namespace

Result result_from_json(const nlohmann::json& j) {
  Result r;
  r.feasible = j.value("feasible", true);
  r.reason = j.value("reason", std::string());
  r.fidelity = j.value("fidelity", std::string("estimate"));
  if (auto w = j.find("warnings"); w != j.end() && w->is_array())
    for (const auto& s : *w)
      if (s.is_string()) r.warnings.push_back(s.get<std::string>());
  r.step_time_s = num(j, "step_time_s");
  r.tokens_per_step = num(j, "tokens_per_step");
  r.tokens_per_s = num(j, "tokens_per_s");
  r.model_flops_per_step = num(j, "model_flops_per_step");
  r.hardware_flops_per_step = num(j, "hardware_flops_per_step");
  r.model_tflops_per_gpu = num(j, "model_tflops_per_gpu");
  r.hardware_tflops_per_gpu = num(j, "hardware_tflops_per_gpu");
  r.mfu = num(j, "mfu");
  r.hfu = num(j, "hfu");
  r.bubble_fraction = num(j, "bubble_fraction");
  r.exposed_comm_s = num(j, "exposed_comm_s");
  r.overlapped_comm_s = num(j, "overlapped_comm_s");
  r.gpus = static_cast<int>(num(j, "gpus"));
  r.micro_batches = static_cast<int>(num(j, "micro_batches_per_step"));
  if (auto b = j.find("breakdown_s"); b != j.end() && b->is_object()) {
    r.breakdown.compute_s = num(*b, "compute");
    r.breakdown.tp_comm_s = num(*b, "tp_comm");
    r.breakdown.pp_comm_s = num(*b, "pp_comm");
    r.breakdown.dp_comm_s = num(*b, "dp_comm");
    r.breakdown.ep_comm_s = num(*b, "ep_comm");
    r.breakdown.cp_comm_s = num(*b, "cp_comm");
    r.breakdown.bubble_s = num(*b, "bubble");
    r.breakdown.optimizer_s = num(*b, "optimizer");
    r.breakdown.offload_s = num(*b, "offload");
  }
  if (auto c = j.find("comm_bytes_per_gpu"); c != j.end() && c->is_object()) {
    r.tp_bytes = num(*c, "tp");
    r.pp_bytes = num(*c, "pp");
    r.dp_bytes = num(*c, "dp");
    r.ep_bytes = num(*c, "ep");
    r.cp_bytes = num(*c, "cp");
  }
  if (auto m = j.find("memory"); m != j.end() && m->is_object()) {
    r.peak_memory_bytes = num(*m, "peak_bytes");
    r.hbm_capacity_bytes = num(*m, "hbm_capacity_bytes");
    if (auto b = m->find("breakdown"); b != m->end() && b->is_object()) r.peak_breakdown = memory_breakdown(*b);
    if (auto ps = m->find("per_stage"); ps != m->end() && ps->is_array()) {
      for (const auto& s : *ps) {
        StageMemory sm;
        sm.stage = static_cast<int>(num(s, "stage"));
        sm.layers = static_cast<int>(num(s, "layers"));
        sm.in_flight_micro_batches = num(s, "in_flight_micro_batches");
        sm.total_bytes = num(s, "total_bytes");
        if (auto b = s.find("breakdown"); b != s.end() && b->is_object()) sm.breakdown = memory_breakdown(*b);
        r.per_stage.push_back(sm);
      }
    }
  }
  return r;
}

}  // namespace trainsim::gui
