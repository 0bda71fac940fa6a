#include "models/estimate/estimate.hpp"

#include <algorithm>
#include <vector>

#include "models/schedules/pipeline_schedule.hpp"
#include "models/estimate/precision_schedule.hpp"
#include "models/workload/cost_bounds.hpp"
#include "models/workload/memo.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

// The playback's key: the schedule, p, v, m and the stage costs exactly (their bits), as runs
// of equal neighbouring stages (an even split has three: first, middle, last). Keyed on the
// exact costs, the memo returns what the playback returns, bit for bit.
constexpr int kMaxCostRuns = 8;
struct PlaybackKey {
  const PipelineSchedule* schedule;
  int32_t pp, vpp, micro_batches, runs;
  struct Run {
    int64_t stages;
    StageCosts costs;
  } run[kMaxCostRuns];
};

// A lower bound on the makespan the playback gives, for plans the rank floor may skip (0 where
// none is derived: DualPipe, whose micro-batches enter from both ends, and playbacks too long
// for the rounding argument below). Every op of device d needs its micro-batch's forward through
// the chunk-0 stages of the devices before it, so d starts no earlier than the sum of their
// forwards; d then runs m x chunks x (F + B + W) of ops one after another. Where B carries W
// (no split schedule), d's last op is a backward of a virtual stage v >= d, after which the
// backwards of the stages below v run one after another, at least those of devices 0 .. d-1's
// chunk 0. So makespan >= max over d of (forwards before d) + busy(d) + (backwards before d).
// Rounding: each end the playback computes is fl(start + duration) >= (start + duration)(1 - u),
// as if every duration were shorter by at most u x makespan, so the computed makespan is at least
// the exact bound times 1 - K u (K: the terms of the bound, at most ops + 2p); the bound's own
// sums are within K u too. K <= 10^6 keeps both under 1e-9, the margin taken off. Where steps
// overlap (ScheduleTraits::steps_overlap) a step takes a device's span, not the makespan, and
// only busy(d) bounds it: the fill before d and the drain after it run beside the neighbouring
// steps.
double makespan_lower_bound_s(const Workload& w) {
  if (w.schedule->bidirectional()) return 0.0;  // the argument follows one direction's stages
  const int chunks = w.schedule->layer_chunks(w.vpp);
  const bool split = w.split_backward;
  const double terms = 3.0 * w.micro_batches * chunks * w.pp + 2.0 * w.pp;
  if (terms > 1e6) return 0.0;
  double bound = 0, forwards = 0, backwards = 0;
  for (const StageWork& s : w.stages) {
    const StageCosts c = stage_costs(w, s);
    const double busy = static_cast<double>(w.micro_batches) * chunks * (c.forward_s + c.backward_s + c.backward_weight_s);
    if (w.schedule->steps_overlap())
      bound = std::max(bound, busy);
    else
      bound = std::max(bound, forwards + busy + (split ? 0.0 : backwards));
    forwards += c.forward_s;
    backwards += c.backward_s + c.backward_weight_s;
  }
  return bound * (1 - 1e-9);
}

// A playback's step time (Timeline::step_s), and what the overlapped pairs of a schedule that
// pairs a forward with a backward saved: on the stage `worst` and over all stages.
struct Played {
  double step_s = 0;
  double saved_worst_s = 0;
  double saved_total_s = 0;
};

// Where a schedule pairs a forward with a backward (DualPipe), a lower bound on the makespan:
// each device runs its ops, the micro-batches below (m+1)/2 through its direction-0 stage and the
// rest through its direction-1 stage, and each of its m backwards saves at most the most any
// pair of its directions saves (F + B + W alone less the pair, which runs the whole backward;
// with the pairs not yet priced, what F, B and W spend beyond their compute, which a pair still
// runs). Taken 1e-9 low for the rounding,
// as makespan_lower_bound_s is.
double paired_makespan_lower_bound_s(const Workload& w) {
  const int m = w.micro_batches;
  const double n[2] = {static_cast<double>((m + 1) / 2), static_cast<double>(m / 2)};
  double bound = 0;
  for (const StageWork& s : w.stages) {
    const StageCosts c = stage_costs(w, s);
    const double f[2] = {c.forward_s, c.reverse_forward_s}, b[2] = {c.backward_s, c.reverse_backward_s};
    const double wg[2] = {c.backward_weight_s, c.reverse_backward_weight_s};
    double most_saved = 0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        most_saved = std::max(most_saved, c.pairs() ? f[i] + b[j] + wg[j] - c.pair_s[i][j]
                                                    : s.direction_forward_beyond_compute_s[i] +
                                                          s.direction_backward_beyond_compute_s[j]);
    const double busy = n[0] * (f[0] + b[0] + wg[0]) + n[1] * (f[1] + b[1] + wg[1]) - m * most_saved;
    bound = std::max(bound, busy);
  }
  return bound * (1 - 1e-9);
}

// The playback without its ops (play_step_s: the same step time, no allocation), with
// transfers instant unless `delays` say otherwise.
Played makespan_only(const Workload& w, std::size_t worst, TransferDelays delays = 0.0) {
  thread_local std::vector<StageCosts> costs;
  thread_local std::vector<double> saved;
  costs.clear();
  for (const StageWork& s : w.stages) costs.push_back(stage_costs(w, s));
  saved.assign(costs.size(), 0.0);
  Played p;
  p.step_s = play_step_s(*w.schedule, w.pp, w.vpp, w.micro_batches, costs.data(), costs.size(), delays,
                         saved.data());
  p.saved_worst_s = saved[worst];
  for (double x : saved) p.saved_total_s += x;
  return p;
}

// The schedule played with the workload's stages and zero-delay transfers. Memoised (4096 slots
// of ~750 bytes, clear-when-full; `worst` is the first slowest stage, which the costs in the key
// determine); plans whose stages make more than kMaxCostRuns runs are played every time. The
// reference route plays the full timeline.
Played played(const Workload& w, std::size_t worst, bool memoise) {
  if (!memoise) {
    const Timeline t = pipeline_timeline(w, 0.0);
    Played p;
    p.step_s = t.step_s;
    p.saved_worst_s = t.pair_saved_s[worst];
    for (double x : t.pair_saved_s) p.saved_total_s += x;
    return p;
  }
  PlaybackKey k;
  memo::zero(k);
  k.schedule = w.schedule;
  k.pp = w.pp;
  k.vpp = w.vpp;
  k.micro_batches = w.micro_batches;
  for (const StageWork& s : w.stages) {
    const StageCosts c = stage_costs(w, s);
    PlaybackKey::Run* last = k.runs > 0 ? &k.run[k.runs - 1] : nullptr;
    if (last && last->costs == c) {
      ++last->stages;
      continue;
    }
    if (k.runs == kMaxCostRuns) return makespan_only(w, worst);
    k.run[k.runs++] = {1, c};
  }
  thread_local memo::Table<PlaybackKey, Played, 4096> table;
  return table.get(k, [&] { return makespan_only(w, worst); });
}

// The most pipeline ops the estimate plays to time its transfers (about a millisecond); larger
// plans keep the closed-form cycle (compose_closed_form).
constexpr double kMaxTransferPlaybackOps = 1e5;

// The closed form of a workload: steady 1F1B-like state of the slowest stage (its passes as the
// op graph's reduction leaves them, in-layer communication that was waited for included), the
// schedule's bubble, exposed pipeline transfers, the exposed part of the gradient reduction,
// fixed costs.
void compose_closed_form(const Scenario& sc, Workload& w, Result& r, const EstimateOptions& options) {
  const bool memoise = options.memoise;
  const StageWork* worst = &w.stages.front();
  double sum_f = 0, sum_b = 0, sum_w = 0;
  for (const StageWork& s : w.stages) {
    if (s.forward_s + s.backward_s > worst->forward_s + worst->backward_s) worst = &s;
    sum_f += s.forward_s;
    sum_b += s.backward_s;
    sum_w += s.backward_weight_s;
  }
  const int m = w.micro_batches;
  const double mb_time = worst->forward_s + worst->backward_s;
  const double steady = m * mb_time;
  BubbleInputs bin{w.pp, w.vpp, m, worst->forward_s, worst->backward_s, worst->backward_weight_s};
  // The other stages' sums (the fill and drain pass through them), never below zero.
  bin.others_forward_s = std::max(0.0, sum_f - worst->forward_s);
  bin.others_backward_s = std::max(0.0, sum_b - worst->backward_s);
  bin.others_backward_weight_s = std::max(0.0, sum_w - worst->backward_weight_s);
  double bubble = w.schedule->bubble_time_s(bin);
  // Played below (after the cheaper parts) where the closed forms do not hold: a pipeline that
  // does not fill, and DualPipe, whose devices run two stages and overlap a forward with a
  // backward where both are ready (its makespan is what the playback of its pairs gives).
  const bool play = w.pp > 1 && (m < 2 * w.pp || w.schedule->bidirectional());
  const bool pairs = w.schedule->overlaps_forward_backward();
  double pp_exposed = 0, pp_blocked = 0;
  bool play_transfers = false;
  if (w.pp > 1) {
    // formulas.md, "Pipeline transfers". A micro-batch crosses each boundary between devices
    // once per chunk and the wrap (last device to first) once per chunk after the first, its
    // activation forward and its gradient back: the fill and the drain put each crossing on the
    // critical path once.
    const int chunks = w.schedule->layer_chunks(w.vpp);
    const std::vector<double>& c = w.p2p_boundary_s;
    double one_way = 0;
    for (int b = 0; b + 1 < w.pp; ++b) one_way += chunks * c[b];
    one_way += (chunks - 1) * c[w.pp - 1];
    pp_exposed = 2.0 * one_way;
    if (!sc.plan.overlap.pp) {
      // Without overlap every micro-batch also blocks on its own send and receive.
      pp_blocked = 2.0 * m * w.p2p_s * w.vpp;
    } else {
      // Overlapped transfers still pace the steady state: stage s holds at most h_s
      // micro-batches between a forward and its backward (1F1B: p - s), and each one's round
      // trip through the stages after it crosses their boundaries twice, so its period is at
      // least (their passes + 2 x their crossings) / h_s: balanced 1F1B, F + B + 2 (p-1)/p x a
      // transfer. Interleaved chunks wrap around the devices: the whole pipeline's round trip
      // over the first stage's.
      double period = 0, chain = 0, crossings = 0;
      const int last = chunks > 1 ? 0 : w.pp - 1;
      if (chunks > 1) chain = sum_f + sum_b, crossings = 2.0 * one_way;
      for (int s = w.pp - 1; s >= 0; --s) {
        if (chunks == 1) {
          chain += w.stages[s].forward_s + w.stages[s].backward_s;
          if (s + 1 < w.pp) crossings += 2.0 * c[s];
        }
        if (s <= last) {
          const double held = std::max(1.0, w.schedule->in_flight_micro_batches(w.pp, w.vpp, s, m));
          period = std::max(period, (chain + crossings) / held);
        }
      }
      const double paced = m * std::max(0.0, period - mb_time);
      pp_exposed += paced;
      // Where that is more than a hundredth of the step the schedule is played with each
      // boundary's transfer time (the cycle of the slowest boundaries, not of the first stage,
      // sets the pace; zero-bubble schedules fill some of it with W), within
      // kMaxTransferPlaybackOps.
      play_transfers = paced > 1e-2 * (steady + bubble) && 3.0 * m * chunks * w.pp <= kMaxTransferPlaybackOps;
    }
  }
  double dp_s = 0;
  for (const StageWork& s : w.stages) dp_s = std::max(dp_s, s.dp_reduce_s);
  double dp_exposed = dp_s;
  if (w.overlap_dp && dp_s > 0) {
    // Reduction of each bucket starts when its gradients are ready during the pass that makes
    // them final: the last micro-batch's backward, or where a one-direction schedule splits the
    // backward its W (B makes input gradients only, and the zero-bubble orders end on W); the
    // last bucket is always exposed, and on the stage that holds the input embedding it is at
    // least the embedding, whose gradient is made last. DualPipe's two directions finish apart,
    // the earlier one's reduction beside the later one's passes: the whole backward is kept as
    // its window. The first bucket is final only once the pass has made its share of the
    // gradients, so the reductions run in the rest of the pass. Each stage's own reduction
    // and pass; the step waits for the longest.
    const bool ends_on_w = w.split_backward && !w.schedule->bidirectional();
    dp_exposed = 0;
    for (const StageWork& s : w.stages) {
      const double params = s.dense_params + s.expert_params;
      if (s.dp_reduce_s <= 0 || params <= 0) continue;
      const double last = std::max(w.dp_bucket_params, s.params_final_at_end);
      const double share = std::min(1.0, last / params);
      const double final_pass = ends_on_w ? s.backward_weight_s : s.backward_s;
      dp_exposed = std::max(dp_exposed, std::max(s.dp_reduce_s * share, s.dp_reduce_s - final_pass * (1 - share)));
    }
  }
  // Collectives the passes leave running (ZeRO-3 gradient reduce-scatters) finish before the
  // optimizer: the last backward's tail, and whatever their stream could not drain while the
  // other micro-batches' passes ran.
  const double async_exposed =
      worst->async_tail_s + (m - 1) * std::max(0.0, worst->async_busy_s - mb_time);
  dp_exposed += async_exposed;
  auto below_rank_floor = [&] {
    if (!play || options.rank_floor_tokens_per_s <= 0) return false;
    // The step with the bubble's lower bound (at most the played bubble: floating-point
    // subtraction is monotone): addition and division are monotone too, so this sum is at most
    // the step's and the throughput from it at least the plan's. Where ops pair, a pair takes
    // less than its two ops, so the pipeline's part is bounded by its own bound instead.
    const double pipeline_lb = pairs ? std::max(0.0, paired_makespan_lower_bound_s(w))
                                     : steady + std::max(0.0, makespan_lower_bound_s(w) - steady);
    // Played transfers may hide in the bubble: none of them is counted here.
    const double step_lb = pipeline_lb + (play_transfers ? 0.0 : pp_exposed) + pp_blocked + dp_exposed +
                           w.optimizer_s + w.offload_s;
    if (step_lb > 0 && r.tokens_per_step / step_lb <= options.rank_floor_tokens_per_s) {
      r.step_time_s = step_lb;
      r.tokens_per_s = r.tokens_per_step / step_lb;
      return true;
    }
    return false;
  };
  if (below_rank_floor()) return;
  // Pairs the workload left unpriced for the bound above: priced now, and the bound again.
  if (w.pending_pairs.pending) {
    price_pairs(w);
    if (below_rank_floor()) return;
  }
  // The closed forms assume the pipeline fills (m >= p, and DualPipe's (p/2-1) term assumes
  // p > 2). With few micro-batches play the schedule instead: p x m x 3 ops, cheap here.
  // Where ops pair, the slowest stage is busy for its passes less what its pairs saved, and the
  // saving is communication the pairs hid (each side's beside the other's compute).
  Played pl;
  if (play) {
    pl = played(w, static_cast<std::size_t>(worst - &w.stages.front()), memoise);
    bubble = std::max(0.0, pl.step_s - (steady - pl.saved_worst_s));
  }
  const double busy = steady - pl.saved_worst_s;
  // The pipeline's time per step: first op to last, or where steps overlap the longest device's
  // span (Timeline::step_s).
  double makespan = busy + bubble;
  if (play_transfers) {
    // What the transfers add to the pipeline's makespan beyond its bubble.
    const double played_s = makespan_only(w, static_cast<std::size_t>(worst - &w.stages.front()), w.p2p_delays()).step_s;
    pp_exposed = std::max(0.0, played_s - (busy + bubble));
  }
  makespan += pp_exposed;
  pp_exposed += pp_blocked;
  const double step = busy + bubble + pp_exposed + dp_exposed + w.optimizer_s + w.offload_s;
  r.step_time_s = step;
  // One definition for both tiers (result.hpp): each stage's idle share of the pipeline's
  // makespan, averaged over the stages.
  if (w.pp > 1) {
    double idle = 0;
    for (const StageWork& s : w.stages) idle += 1 - m * (s.forward_s + s.backward_s) / makespan;
    r.bubble_fraction = (idle + pl.saved_total_s / makespan) / w.pp;
  }
  const double waited = m * (worst->tp_comm_s + worst->cp_comm_s + worst->ep_comm_s + worst->zero3_comm_s);
  const double kept = waited > 0 ? std::max(0.0, 1 - pl.saved_worst_s / waited) : 1.0;
  TimeBreakdown& bd = r.breakdown;
  bd.compute_s = m * (worst->forward_compute_s + worst->backward_compute_s);
  bd.tp_comm_s = kept * m * worst->tp_comm_s;
  bd.cp_comm_s = kept * m * worst->cp_comm_s;
  bd.ep_comm_s = kept * m * worst->ep_comm_s;
  bd.pp_comm_s = pp_exposed;
  bd.dp_comm_s = dp_exposed + kept * m * worst->zero3_comm_s;
  bd.bubble_s = bubble;
  bd.optimizer_s = w.optimizer_s;
  bd.offload_s = w.offload_s;
  r.exposed_comm_s = bd.tp_comm_s + bd.cp_comm_s + bd.ep_comm_s + bd.pp_comm_s + bd.dp_comm_s;
  const auto comm_busy = [&](CommPurpose k) { return m * worst->comm_busy_s[static_cast<int>(k)]; };
  r.overlapped = overlapped_comm(bd, comm_busy(CommPurpose::kTp), comm_busy(CommPurpose::kCp),
                                 comm_busy(CommPurpose::kEp), comm_busy(CommPurpose::kDp) + worst->dp_reduce_s);
  finish_result(sc, r);
}

}  // namespace

Timeline pipeline_timeline(const Workload& w, TransferDelays delays) {
  std::vector<StageCosts> costs;
  costs.reserve(w.stages.size());
  for (const StageWork& s : w.stages) costs.push_back(stage_costs(w, s));
  return play_schedule(*w.schedule, w.pp, w.vpp, w.micro_batches, costs, delays);
}

namespace {

WorkloadOptions workload_options(const EstimateOptions& o) {
  WorkloadOptions wo;
  wo.keep_programs = !o.memoise;
  wo.stop_when_infeasible = o.stop_when_infeasible;
  // A plan the rank floor rejects is never played: its pairs are priced only if it is not.
  wo.defer_pairs = o.memoise && o.rank_floor_tokens_per_s > 0;
  return wo;
}

}  // namespace

EstimatedStep estimate_step(const Scenario& sc, const EstimateOptions& options) {
  EstimatedStep out;
  out.result.fidelity = "estimate";
  if (!sc.plan.precision_stages.empty()) {
    // The run is a mix of steps at several precisions: the result is the mix; the workload (its
    // placement and transfers) and the timeline are one step at the precision most steps run
    // at, and say so.
    Precision typical = sc.plan.precision;
    double most = -1;
    for (const PrecisionShare& share : precision_shares(sc))
      if (share.steps > most) most = share.steps, typical = share.precision;
    // The typical precision's workload is built once, into out.workload, as its share of the mix.
    bool built = false;
    std::string unbuilt_reason;
    out.result = mix_precision_stages(sc, [&](const Scenario& s) {
      if (s.plan.precision != typical) return estimate(s, options);
      Result r;
      r.fidelity = "estimate";
      built = build_workload(s, out.workload, r, workload_options(options));
      if (built) compose_closed_form(s, out.workload, r, options);
      else unbuilt_reason = r.reason;
      return r;
    });
    const CostCheck bounds = check_cost_bounds(at_precision(sc, typical), CostTier::kSimulate);
    if (built && bounds.within) {
      out.timeline = pipeline_timeline(out.workload, out.workload.p2p_delays());
      out.timeline_note = std::string("one step at ") + to_string(typical) +
                          ", the precision most steps run at; the step time is the mix over plan.precision_stages";
    } else {
      out.timeline_skipped = built ? bounds.reason : unbuilt_reason;
    }
    return out;
  }
  if (!build_workload(sc, out.workload, out.result, workload_options(options))) return out;
  compose_closed_form(sc, out.workload, out.result, options);
  const CostCheck bounds = check_cost_bounds(sc, CostTier::kSimulate);
  if (bounds.within)
    out.timeline = pipeline_timeline(out.workload, out.workload.p2p_delays());
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

Result estimate(const Scenario& sc, const EstimateOptions& options) {
  // A precision that changes with the step: the step-weighted mix of one run per precision.
  if (!sc.plan.precision_stages.empty())
    return mix_precision_stages(sc, [&](const Scenario& s) { return estimate(s, options); });
  Result r;
  r.fidelity = "estimate";
  // One workload per thread, refilled plan after plan (build_workload sets every field of a
  // workload it returns true for): its vectors keep their capacity, no allocation per plan.
  thread_local Workload w;
  if (!build_workload(sc, w, r, workload_options(options))) return r;
  compose_closed_form(sc, w, r, options);
  return r;
}

}  // namespace trainsim
