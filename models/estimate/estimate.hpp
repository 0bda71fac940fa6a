// The estimate tier: closed-form evaluation of a scenario (ARCHITECTURE.md tier 1). Pure
// function of the resolved Scenario, about a microsecond per plan once its parts are memoised
// (docs/performance.md). Formulas are cited where they are used.
#pragma once

#include <string>

#include "models/core/result.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"
#include "models/core/specs.hpp"
#include "models/workload/plan_structure.hpp"

namespace trainsim {

struct EstimateOptions {
  // The memoised route (default): passes priced and reduced once per distinct pass, without
  // keeping the op graph, and the pipeline played once per distinct (schedule, p, m, v, stage
  // costs), all through per-thread memo tables (models/workload/memo.hpp). false: the reference
  // route, every pass built as an op graph and reduced and the pipeline played, nothing reused;
  // the two give the same numbers (tests/models/estimate/estimate_memo_test.cpp).
  bool memoise = true;
  // Stop at the first reason the plan cannot run (structure, then memory), before any time is
  // computed: what plan searches need. The result then has feasibility, reason and memory only.
  bool stop_when_infeasible = false;
  // Plan searches that keep only the plans above a throughput (tokens/s; 0: none): a feasible
  // plan whose pipeline would still have to be played, and whose throughput with no bubble at
  // all is at most this floor, is returned without the playback. Its result is then a bound,
  // not an estimate: tokens_per_s is at least its throughput (so at most the floor) and
  // step_time_s at most its step time; the other figures are not computed. Feasibility, reason
  // and memory are the plan's. Exact for a search: such a plan never beats the floor.
  double rank_floor_tokens_per_s = 0;
};

// Returns feasible=false with a reason for plans that cannot run; never throws for a Scenario
// that the loader produced.
Result estimate(const Scenario& scenario, const EstimateOptions& options = {});

// The estimate with what it was computed from: the workload (the op graph and its reduced
// per-stage passes) and the pipeline played with those passes and contention-free transfers.
// The GUI's timeline is this one, not a second composition.
struct EstimatedStep {
  Result result;
  Workload workload;
  Timeline timeline;  // empty when the plan's structure allows no workload or is too large
  // Why the timeline is empty for a plan whose step was estimated: playing it would exceed the
  // playback bounds of models/workload/cost_bounds.hpp (10^9 micro-batches are estimated in
  // milliseconds but cannot be drawn op by op).
  std::string timeline_skipped;
  // What the timeline stands for when it is not the step the result describes (a plan whose
  // precision changes with the step: the timeline is one step at the precision most steps run at).
  std::string timeline_note;
};
// With options.memoise the workload holds no op graph (programs empty), only its costs.
EstimatedStep estimate_step(const Scenario& scenario, const EstimateOptions& options = {});

// The schedule played with the workload's per-device passes (interleaved chunks share a device's
// cost evenly; DualPipe's directions each run a stage) and the transfer delays between stages.
Timeline pipeline_timeline(const Workload& workload, TransferDelays delays);

// The figures every tier derives the same way from a step time: tokens/s, TFLOP/s per GPU,
// MFU and HFU (PaLM appendix B), against the plan's precision's peak.
void finish_result(const Scenario& scenario, Result& result);

}  // namespace trainsim
