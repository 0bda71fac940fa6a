// Turns a played step (step_player.hpp) into the Result of the simulate tier, with the same keys
// and meanings as the estimate (models/result.hpp), and the extras a user needs: per-stage
// figures, in-flight micro-batches as played, and where estimate and simulation differ by more
// than 5%, which effect causes it (contention, overlap, imbalance). No SimGrid here.
#pragma once

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "models/reliability/straggler.hpp"
#include "models/workload/workload.hpp"
#include "sim/step_player.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

// `result` arrives filled by build_workload (FLOPs, memory per stage, feasibility); this fills
// the timing keys and rewrites activation memory where the played schedule held more (or fewer)
// micro-batches than the workload assumed.
//
// Definitions (critical stage c = the busiest stage, as the estimate's: ties, the one whose
// gradient reduction ends last):
//   step_time_s      makespan: slowest reduction + ZeRO-3 gathers + optimizer + offload
//   bubble_fraction  mean over stages of (pipeline makespan - busy) / pipeline makespan: the
//                    estimate's "bubble / (steady + bubble)"; (p-1)/(m+p-1) for uniform 1F1B
//   breakdown_s      on c: compute/tp/cp/ep = c's busy time split as the workload folds them;
//                    pp_comm = idle time during which c's next op waited on an in-flight p2p
//                    transfer (plus sends it blocked on when overlap.pp is off) and c's idle
//                    beyond the schedule's own bubble; dp_comm = the last reduction after the
//                    pipeline's last op + ZeRO-3 gathers; bubble = the rest of c's idle up to
//                    the optimizer
void compose_simulated_result(const Scenario& scenario, const Workload& workload,
                              const StepTimeline& timeline, Result& result, nlohmann::json& extra);

// Adds extra["estimate_vs_simulate"]: step times of both tiers, the difference in percent, the
// effects in seconds (imbalance: bubble; contention: p2p waits beyond the contention-free
// transfer time + reduction time beyond the alpha-beta closed form, where exposed; overlap: the
// rest of the exposed-DP difference) and, when |difference| > 5%, the dominant one as "cause".
void compare_with_estimate(const Result& estimate, const Result& simulated,
                           const nlohmann::json& simulated_extra, nlohmann::json& extra);

class LinkStats;

// What a faulted run measured, and its comparison runs (0 = not run or failed).
struct FaultRunFigures {
  double step_time_s = 0;                  // this run (faults, rebalanced split if any)
  double healthy_fabric_step_time_s = 0;   // same run without the link faults
  double no_straggler_step_time_s = 0;     // the plan's split, link faults, no straggler
  double no_rebalance_step_time_s = 0;     // the plan's split, link faults, straggler
  bool healthy_fabric_pending = false, no_straggler_pending = false, no_rebalance_pending = false;
  std::string error;  // why a comparison has no figure
  const LinkStats* stats = nullptr;
  std::size_t transfers_started = 0, transfers_rerouted = 0;
};

// extra["faults"]: {"links": failed and degraded links, bytes the failed links carried (0),
// flows rerouted, bandwidth lost, bisection healthy vs faulted, step time on the healthy fabric
// and slowdown; "straggler": stage, speed, per-stage layers, step time with it and without it,
// slowdown, the estimate's bottleneck figures, and with rebalance the rebalanced split and the
// recovered fraction (T_straggler - T_rebalanced) / (T_straggler - T_nominal); "summary": one
// line per effect, for the text report}.
nlohmann::json fault_report(const Scenario& scenario, const StragglerEffect& straggler,
                            bool rebalanced, const Topology& topology,
                            const FaultRunFigures& figures);

}  // namespace trainsim::sim
