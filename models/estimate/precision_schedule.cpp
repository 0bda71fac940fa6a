#include "models/estimate/precision_schedule.hpp"

#include <algorithm>

#include "models/estimate/estimate.hpp"

namespace trainsim {

std::vector<PrecisionShare> precision_shares(const Scenario& sc) {
  const double steps = static_cast<double>(std::max<int64_t>(1, sc.training.steps));
  std::vector<PrecisionShare> out;
  auto add = [&](Precision p, double n) {
    if (n <= 0) return;
    for (PrecisionShare& s : out)
      if (s.precision == p) {
        s.steps += n;
        return;
      }
    out.push_back({p, n});
  };
  const auto& stages = sc.plan.precision_stages;
  if (stages.empty()) {
    add(sc.plan.precision, steps);
    return out;
  }
  add(sc.plan.precision, std::min<double>(steps, static_cast<double>(stages.front().from_step)));
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const double begin = std::min<double>(steps, static_cast<double>(stages[i].from_step));
    const double end =
        i + 1 < stages.size() ? std::min<double>(steps, static_cast<double>(stages[i + 1].from_step)) : steps;
    add(stages[i].precision, end - begin);
  }
  return out;
}

Scenario at_precision(const Scenario& sc, Precision precision) {
  Scenario out = sc;
  out.plan.precision = precision;
  out.plan.precision_stages.clear();
  return out;
}

namespace {

void add_scaled(TimeBreakdown& to, const TimeBreakdown& b, double w) {
  to.compute_s += w * b.compute_s;
  to.tp_comm_s += w * b.tp_comm_s;
  to.pp_comm_s += w * b.pp_comm_s;
  to.dp_comm_s += w * b.dp_comm_s;
  to.ep_comm_s += w * b.ep_comm_s;
  to.cp_comm_s += w * b.cp_comm_s;
  to.bubble_s += w * b.bubble_s;
  to.optimizer_s += w * b.optimizer_s;
  to.offload_s += w * b.offload_s;
}

void add_scaled(OverlappedComm& to, const OverlappedComm& b, double w) {
  to.tp_s += w * b.tp_s;
  to.cp_s += w * b.cp_s;
  to.ep_s += w * b.ep_s;
  to.dp_s += w * b.dp_s;
}

}  // namespace

Result mix_precision_stages(const Scenario& sc, const TierFn& tier) {
  const std::vector<PrecisionShare> shares = precision_shares(sc);
  double total_steps = 0;
  for (const PrecisionShare& s : shares) total_steps += s.steps;
  std::vector<Result> runs;
  runs.reserve(shares.size());
  for (const PrecisionShare& s : shares) runs.push_back(tier(at_precision(sc, s.precision)));

  // Memory, FLOPs per step and the group counts: the step with the highest peak (the run holds
  // its largest step); the FLOPs and counts are the same at every precision.
  std::size_t peak = 0;
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (runs[i].peak_memory_bytes > runs[peak].peak_memory_bytes) peak = i;
  Result r = runs[peak];
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (!runs[i].feasible) {
      r = runs[i];
      r.reason = std::string("plan.precision_stages: the ") + to_string(shares[i].precision) +
                 " steps cannot run: " + runs[i].reason;
      return r;
    }
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const std::string& w : runs[i].warnings)
      if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) r.warnings.push_back(w);

  r.step_time_s = 0;
  r.exposed_comm_s = 0;
  r.overlapped = OverlappedComm{};
  r.breakdown = TimeBreakdown{};
  r.tp_bytes = r.pp_bytes = r.dp_bytes = r.ep_bytes = r.cp_bytes = 0;
  double idle_s = 0, offered_flop = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Result& x = runs[i];
    const double w = shares[i].steps / total_steps;
    r.step_time_s += w * x.step_time_s;
    r.exposed_comm_s += w * x.exposed_comm_s;
    add_scaled(r.overlapped, x.overlapped, w);
    add_scaled(r.breakdown, x.breakdown, w);
    r.tp_bytes += w * x.tp_bytes;
    r.pp_bytes += w * x.pp_bytes;
    r.dp_bytes += w * x.dp_bytes;
    r.ep_bytes += w * x.ep_bytes;
    r.cp_bytes += w * x.cp_bytes;
    idle_s += w * x.bubble_fraction * x.step_time_s;
    offered_flop += w * x.step_time_s * r.gpus * sc.cluster.gpu.peak_flops(shares[i].precision);
  }
  // The share of the run's time the pipeline stages sit idle (each step's bubble_fraction
  // weighted by its time).
  r.bubble_fraction = r.step_time_s > 0 ? idle_s / r.step_time_s : 0;
  finish_result(sc, r);  // tokens/s and TFLOP/s per GPU from the mean step ...
  // ... and MFU/HFU against the peak on offer over the run, not plan.precision's alone.
  r.mfu = offered_flop > 0 ? r.model_flops_per_step / offered_flop : 0;
  r.hfu = offered_flop > 0 ? r.hardware_flops_per_step / offered_flop : 0;
  return r;
}

}  // namespace trainsim
