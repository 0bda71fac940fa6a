#include "models/estimate/estimate.hpp"

#include <algorithm>
#include <vector>

#include "models/schedules/pipeline_schedule.hpp"
#include "models/workload/cost_bounds.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

// The closed form of a workload: steady 1F1B-like state of the slowest stage (its passes as the
// op graph's reduction leaves them, in-layer communication that was waited for included), the
// schedule's bubble, exposed pipeline transfers, the exposed part of the gradient reduction,
// fixed costs.
void compose_closed_form(const Scenario& sc, const Workload& w, Result& r) {
  const StageWork* worst = &w.stages.front();
  for (const StageWork& s : w.stages)
    if (s.forward_s + s.backward_s > worst->forward_s + worst->backward_s) worst = &s;
  const int m = w.micro_batches;
  const double mb_time = worst->forward_s + worst->backward_s;
  const double steady = m * mb_time;
  const BubbleInputs bin{w.pp, w.vpp, m, worst->forward_s, worst->backward_s, worst->backward_weight_s};
  double bubble = bubble_time_s(w.schedule, bin);
  if (w.pp > 1 && m < 2 * w.pp) {
    // The closed forms assume the pipeline fills (m >= p, and DualPipe's (p/2-1) term assumes
    // p > 2). With few micro-batches play the schedule instead: p x m x 3 ops, cheap here.
    const Timeline t = pipeline_timeline(w, 0.0);
    bubble = std::max(0.0, t.makespan_s - steady);
  }
  double pp_exposed = 0;
  if (w.pp > 1) {
    // Fill and drain put 2(p-1) transfers on the critical path; without overlap every
    // micro-batch also waits for its send and receive.
    pp_exposed = 2.0 * (w.pp - 1) * w.p2p_s;
    if (!sc.plan.overlap.pp) pp_exposed += 2.0 * m * w.p2p_s * w.vpp;
  }
  double dp_s = 0;
  for (const StageWork& s : w.stages) dp_s = std::max(dp_s, s.dp_reduce_s);
  double dp_exposed = dp_s;
  if (w.overlap_dp && dp_s > 0) {
    // Reduction of each bucket starts when its gradients are ready during the last
    // micro-batch's backward; the last bucket is always exposed.
    const double last_bucket =
        dp_s * std::min(1.0, w.dp_bucket_params / std::max(1.0, w.largest_stage_params));
    dp_exposed = std::max(last_bucket, dp_s - worst->backward_s);
  }
  // Collectives the passes leave running (ZeRO-3 gradient reduce-scatters) finish before the
  // optimizer: the last backward's tail, and whatever their stream could not drain while the
  // other micro-batches' passes ran.
  const double async_exposed =
      worst->async_tail_s + (m - 1) * std::max(0.0, worst->async_busy_s - mb_time);
  dp_exposed += async_exposed;
  const double step = steady + bubble + pp_exposed + dp_exposed + w.optimizer_s + w.offload_s;
  r.step_time_s = step;
  // One definition for both tiers (result.hpp): each stage's idle share of the pipeline's
  // makespan, averaged over the stages.
  if (w.pp > 1) {
    const double makespan = steady + bubble;
    double idle = 0;
    for (const StageWork& s : w.stages) idle += 1 - m * (s.forward_s + s.backward_s) / makespan;
    r.bubble_fraction = idle / w.pp;
  }
  TimeBreakdown& bd = r.breakdown;
  bd.compute_s = m * (worst->forward_compute_s + worst->backward_compute_s);
  bd.tp_comm_s = m * worst->tp_comm_s;
  bd.cp_comm_s = m * worst->cp_comm_s;
  bd.ep_comm_s = m * worst->ep_comm_s;
  bd.pp_comm_s = pp_exposed;
  bd.dp_comm_s = dp_exposed + m * worst->zero3_comm_s;
  bd.bubble_s = bubble;
  bd.optimizer_s = w.optimizer_s;
  bd.offload_s = w.offload_s;
  r.exposed_comm_s = bd.tp_comm_s + bd.cp_comm_s + bd.ep_comm_s + bd.pp_comm_s + bd.dp_comm_s;
  r.overlapped_comm_s = std::max(0.0, dp_s - (dp_exposed - async_exposed)) +
                        std::max(0.0, m * worst->async_busy_s - async_exposed);
  finish_result(sc, r);
}

}  // namespace

Timeline pipeline_timeline(const Workload& w, double p2p_s) {
  std::vector<StageCosts> costs;
  // Interleaving splits a device's layers into vpp chunks; DualPipe's two directions each
  // hold a full stage (hence its two parameter copies), so its per-pass cost is the stage's.
  const int chunks = w.schedule == ScheduleKind::kInterleaved ? std::max(1, w.vpp) : 1;
  for (const StageWork& s : w.stages)
    costs.push_back({s.forward_s / chunks, (s.backward_s - s.backward_weight_s) / chunks, s.backward_weight_s / chunks});
  return play_schedule(w.schedule, w.pp, w.vpp, w.micro_batches, costs, p2p_s);
}

EstimatedStep estimate_step(const Scenario& sc) {
  EstimatedStep out;
  out.result.fidelity = "estimate";
  if (!build_workload(sc, out.workload, out.result)) return out;
  compose_closed_form(sc, out.workload, out.result);
  const CostCheck bounds = check_cost_bounds(sc, CostTier::kSimulate);
  if (bounds.within)
    out.timeline = pipeline_timeline(out.workload, out.workload.p2p_s);
  else
    out.timeline_skipped = bounds.reason;
  return out;
}

void finish_result(const Scenario& sc, Result& r) {
  const double step = r.step_time_s;
  if (step <= 0) return;
  const double peak = sc.cluster.gpu.peak_flops(sc.plan.precision);
  r.tokens_per_s = r.tokens_per_step / step;
  r.model_tflops_per_gpu = r.model_flops_per_step / step / r.gpus / 1e12;
  r.hardware_tflops_per_gpu = r.hardware_flops_per_step / step / r.gpus / 1e12;
  r.mfu = r.model_flops_per_step / (step * r.gpus * peak);
  r.hfu = r.hardware_flops_per_step / (step * r.gpus * peak);
}

Result estimate(const Scenario& sc) {
  Result r;
  r.fidelity = "estimate";
  Workload w;
  if (!build_workload(sc, w, r)) return r;
  compose_closed_form(sc, w, r);
  return r;
}

}  // namespace trainsim
