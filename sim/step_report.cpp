#include "sim/step_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace trainsim::sim {
namespace {

std::string gib(double bytes) {
  const long long tenths = std::llround(bytes / (1024.0 * 1024 * 1024) * 10);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " GiB";
}

struct StageFigures {
  double idle_s = 0;
  double pp_wait_s = 0;        // idle while the next op's p2p input was in flight (+ blocked sends)
  double pp_contention_s = 0;  // the part of pp_wait_s beyond the contention-free transfer time
  double dp_busy_s = 0;
  double dp_contention_exposed_s = 0;
};

}  // namespace

void compose_simulated_result(const Scenario& sc, const Workload& w, const StepTimeline& tl,
                              Result& r, nlohmann::json& extra) {
  r.fidelity = "simulate";
  const int n = static_cast<int>(tl.busy_s.size());
  std::vector<StageFigures> fig(n);
  {
    std::vector<double> prev_free(n, 0.0);
    for (const StepOpRecord& op : tl.ops) {
      StageFigures& f = fig[op.stage];
      const double gap_start = prev_free[op.stage];
      if (op.start_s > gap_start && op.input_transfer >= 0) {
        const StepTransferRecord& t = tl.transfers[op.input_transfer];
        // The op waited for this transfer when it arrived as the op started.
        if (t.end_s >= op.start_s - 1e-12) {
          const double waited = std::max(0.0, std::min(op.start_s, t.end_s) - std::max(gap_start, t.start_s));
          f.pp_wait_s += waited;
          f.pp_contention_s += std::min(waited, std::max(0.0, (t.end_s - t.start_s) - w.p2p_s));
        }
      }
      f.pp_wait_s += op.free_s - op.end_s;  // blocked on its own sends (overlap.pp off)
      prev_free[op.stage] = op.free_s;
    }
    for (int s = 0; s < n; ++s) fig[s].idle_s = std::max(0.0, tl.compute_end_s[s] - tl.busy_s[s]);
    for (const StepBucketRecord& b : tl.buckets) {
      StageFigures& f = fig[b.stage];
      const double dur = b.end_s - b.start_s;
      f.dp_busy_s += dur;
      if (b.end_s > tl.compute_end_s[b.stage])
        f.dp_contention_exposed_s += std::min(b.end_s - tl.compute_end_s[b.stage],
                                              std::max(0.0, dur - b.closed_form_s));
    }
  }
  // Critical stage: its reduction ends last (the optimizer waits for it); ties: busiest.
  int c = 0;
  for (int s = 1; s < n; ++s) {
    if (tl.dp_end_s[s] > tl.dp_end_s[c] + 1e-12 ||
        (std::abs(tl.dp_end_s[s] - tl.dp_end_s[c]) <= 1e-12 && tl.busy_s[s] > tl.busy_s[c]))
      c = s;
  }
  const StageWork& sw = w.stages[c];
  const double folded = sw.forward_compute_s + sw.backward_compute_s + sw.tp_comm_s + sw.cp_comm_s + sw.ep_comm_s;
  auto part = [&](double x) { return folded > 0 ? tl.busy_s[c] * x / folded : 0.0; };
  TimeBreakdown& bd = r.breakdown;
  bd = TimeBreakdown{};
  bd.compute_s = part(sw.forward_compute_s + sw.backward_compute_s);
  bd.tp_comm_s = part(sw.tp_comm_s);
  bd.cp_comm_s = part(sw.cp_comm_s);
  bd.ep_comm_s = part(sw.ep_comm_s);
  bd.pp_comm_s = fig[c].pp_wait_s;
  const double dp_exposed = tl.dp_end_s[c] - tl.compute_end_s[c];
  bd.dp_comm_s = dp_exposed + w.zero3_gather_s;
  bd.bubble_s = std::max(0.0, fig[c].idle_s - fig[c].pp_wait_s) + (tl.optimizer_start_s - tl.dp_end_s[c]);
  bd.optimizer_s = w.optimizer_s;
  bd.offload_s = w.offload_s;

  const double step = tl.step_end_s;
  const double peak = sc.cluster.gpu.peak_flops(sc.plan.precision);
  r.step_time_s = step;
  if (step > 0) {
    r.tokens_per_s = r.tokens_per_step / step;
    r.model_tflops_per_gpu = r.model_flops_per_step / step / r.gpus / 1e12;
    r.hardware_tflops_per_gpu = r.hardware_flops_per_step / step / r.gpus / 1e12;
    r.mfu = r.model_flops_per_step / (step * r.gpus * peak);
    r.hfu = r.hardware_flops_per_step / (step * r.gpus * peak);
  }
  double idle_share = 0;
  if (w.pp > 1 && tl.pipeline_end_s > 0) {
    for (int s = 0; s < n; ++s) idle_share += (tl.pipeline_end_s - tl.busy_s[s]) / tl.pipeline_end_s;
    idle_share /= n;
  }
  r.bubble_fraction = idle_share;
  r.exposed_comm_s = bd.tp_comm_s + bd.cp_comm_s + bd.ep_comm_s + bd.pp_comm_s + bd.dp_comm_s;
  r.overlapped_comm_s = std::max(0.0, fig[c].dp_busy_s - dp_exposed);

  // ---- activations as the schedule held them ----
  nlohmann::json stages = nlohmann::json::array();
  const double per_chunk = w.schedule == ScheduleKind::kInterleaved ? std::max(1, w.vpp) : 1;
  bool memory_changed = false;
  std::string held_more;
  for (int s = 0; s < n && s < static_cast<int>(r.per_stage.size()); ++s) {
    StageMemory& sm = r.per_stage[s];
    const double played = tl.max_in_flight[s] / per_chunk;
    const double assumed = sm.in_flight_micro_batches;
    if (played > assumed + 1e-9) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s stage %d %.4g > %.4g", held_more.empty() ? "" : ",", s,
                    played, assumed);
      held_more += buf;
    }
    if (assumed > 0 && std::abs(played - assumed) > 1e-9 && !sc.plan.offload.activations) {
      sm.breakdown.activations_bytes *= played / assumed;
      sm.in_flight_micro_batches = played;
      sm.total_bytes = sm.breakdown.total();
      memory_changed = true;
    }
    stages.push_back({{"stage", s},
                      {"busy_s", tl.busy_s[s]},
                      {"idle_s", fig[s].idle_s},
                      {"pp_wait_s", fig[s].pp_wait_s},
                      {"pp_contention_s", fig[s].pp_contention_s},
                      {"compute_end_s", tl.compute_end_s[s]},
                      {"dp_end_s", tl.dp_end_s[s]},
                      {"dp_exposed_s", tl.dp_end_s[s] - tl.compute_end_s[s]},
                      {"dp_busy_s", fig[s].dp_busy_s},
                      {"in_flight_micro_batches_played", played},
                      {"in_flight_micro_batches_assumed", assumed}});
  }
  if (!held_more.empty())
    r.warnings.push_back("as played, pipeline stages held more micro-batches' activations than the "
                         "memory model assumed (activation memory scaled to the played figure):" +
                         held_more);
  if (memory_changed) {
    r.peak_memory_bytes = 0;
    int worst = 0;
    for (const StageMemory& sm : r.per_stage)
      if (sm.total_bytes > r.peak_memory_bytes) {
        r.peak_memory_bytes = sm.total_bytes;
        r.peak_breakdown = sm.breakdown;
        worst = sm.stage;
      }
    const bool memory_reason = r.reason.empty() || r.reason.rfind("out of memory", 0) == 0;
    if (memory_reason) {
      if (r.peak_memory_bytes > r.hbm_capacity_bytes) {
        r.feasible = false;
        r.reason = "out of memory (activations as the schedule held them): pipeline stage " +
                   std::to_string(worst) + " needs " + gib(r.peak_memory_bytes) + " but " +
                   sc.cluster.gpu.name + " has " + gib(r.hbm_capacity_bytes);
      } else if (!r.feasible) {
        r.feasible = true;
        r.reason.clear();
      }
    }
  }

  int buckets_dense = 0, buckets_expert = 0;
  for (const auto& b : tl.buckets) (b.expert ? buckets_expert : buckets_dense)++;
  extra["simulation"] = {
      {"critical_stage", c},
      {"pipeline_makespan_s", tl.pipeline_end_s},
      {"optimizer_start_s", tl.optimizer_start_s},
      {"pp_contention_s", fig[c].pp_contention_s},
      {"dp_contention_exposed_s", fig[c].dp_contention_exposed_s},
      {"p2p_transfers", tl.transfers.size()},
      {"p2p_mirror_flows", tl.mirror_flows},
      {"dp_buckets_simulated", buckets_dense},
      {"dp_buckets_per_chunk_max", tl.buckets_per_chunk},
      {"expert_dp_buckets_simulated", buckets_expert},
      {"transfers_started", tl.transfers_started},
      {"per_stage", stages},
      {"approximations",
       "compute once per stage on its representative GPU (DP replica 0, TP rank 0); TP/CP/EP "
       "communication folded into compute (closed form); p2p as real flows for every TP rank of "
       "the representative pipeline (other replicas' p2p as background flows when affordable); "
       "DP reduction of every group of every stage as flows, Megatron buckets merged beyond "
       "max_buckets_per_chunk; ZeRO-3 gathers, optimizer and offload as fixed costs"}};
}

void compare_with_estimate(const Result& est, const Result& sim, const nlohmann::json& sim_extra,
                           nlohmann::json& extra) {
  const double diff = est.step_time_s > 0 ? (sim.step_time_s - est.step_time_s) / est.step_time_s : 0;
  const TimeBreakdown& e = est.breakdown;
  const TimeBreakdown& s = sim.breakdown;
  double pp_cont = 0, dp_cont = 0;
  if (sim_extra.contains("simulation")) {
    pp_cont = sim_extra["simulation"].value("pp_contention_s", 0.0);
    dp_cont = sim_extra["simulation"].value("dp_contention_exposed_s", 0.0);
  }
  const double contention = pp_cont + dp_cont;
  // Stage imbalance and the schedule's real bubble versus the formula on the slowest stage.
  const double imbalance = (s.bubble_s - e.bubble_s) + (s.compute_s + s.tp_comm_s + s.cp_comm_s + s.ep_comm_s) -
                           (e.compute_s + e.tp_comm_s + e.cp_comm_s + e.ep_comm_s);
  // How much of the reduction and the p2p traffic hid behind compute, contention aside.
  const double overlap = (s.dp_comm_s - e.dp_comm_s - dp_cont) + (s.pp_comm_s - e.pp_comm_s - pp_cont);
  nlohmann::json j = {{"estimate_step_time_s", est.step_time_s},
                      {"simulate_step_time_s", sim.step_time_s},
                      {"difference_pct", diff * 100},
                      {"effects_s", {{"contention", contention}, {"overlap", overlap}, {"imbalance", imbalance}}}};
  if (std::abs(diff) > 0.05) {
    std::string cause = "contention";
    double best = std::abs(contention);
    if (std::abs(overlap) > best) {
      cause = "overlap";
      best = std::abs(overlap);
    }
    if (std::abs(imbalance) > best) cause = "imbalance";
    j["cause"] = cause;
  } else {
    j["cause"] = "none (within 5%)";
  }
  extra["estimate_vs_simulate"] = j;
}

}  // namespace trainsim::sim
