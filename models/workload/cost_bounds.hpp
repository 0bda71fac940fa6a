// What playing a plan op by op costs, and the bounds within which the tiers that do so run
// (CONVENTIONS.md #18: work that can grow without bound has a stated cap checked before it
// starts). The estimate tier is closed form and has no such bound: it answers a plan of 10^9
// micro-batches in milliseconds. The simulate tier (sim/step_*), the closed-form timeline the
// GUI draws (workload/timeline.hpp) and export-chakra play every forward, backward and
// weight-gradient op of the representative pipeline and every hand-off between its stages, so
// their time and memory grow with micro-batches x stages x chunks.
//
// Counts of one step (m micro-batches, p pipeline devices, v chunks a device, tp):
//   pipeline ops = p v m x passes       passes = 3 when the schedule splits B from W (zb-h1,
//                                        zb-h2, dualpipe), else 2; dualpipe: v = 2
//   hand-offs    = 2 m (p v - 1)         an activation forward and a gradient back per boundary
//   p2p flows    = hand-offs x tp        the simulate tier sends each TP rank's share as a flow
//   chakra nodes = pipeline ops + 2 hand-offs   (a send and a recv node each)
//   trace events = pipeline ops + 4 hand-offs   (run --trace: a slice per op, and per hand-off a
//                                                send slice, a receive slice and a flow arrow's two ends)
// Bounds. The simulate tier costs about a microsecond and 50 bytes per op or flow it plays,
// export-chakra about 10 us and 2 KB per node it writes (JSON objects in memory), so:
//   simulate / timeline: pipeline ops <= 2e6 and p2p flows <= 2e6   (seconds, < 0.3 GiB)
//   export-chakra:       nodes <= 5e5                               (seconds, < 1 GiB)
//   run --trace:         the simulate tier's bounds and trace events <= 1.5e6 (the simulated step
//                        and its trace in memory take about 1.1 KB an event: < 2 GB; measured on
//                        TP8 PP8 1F1B with 15,000 micro-batches: 1.32 M events with the link
//                        counters, 1.43 GB peak, a 143 MB file)
// The simulate tier's data-parallel flows have their own budget (sim StepOptions.max_dp_flows),
// and the ops and collective flows of its passes theirs (sim/step_simulation.cpp: they need the
// op graph, which this closed form does not build).
// A plan whose precision changes with the step (plan.precision_stages) is outside both: each
// plays one step at one precision, and the run is a mix of steps (estimate/precision_schedule.hpp).
#pragma once

#include <string>

#include "models/core/specs.hpp"

namespace trainsim {

struct PlanCost {
  double micro_batches = 0;  // per pipeline per step (global_batch / (micro_batch x dp))
  int pipeline_devices = 1;
  int chunks_per_device = 1;
  int passes = 2;
  // Doubles: the products of the largest plans the loader accepts pass 2^63.
  double pipeline_ops = 0;
  double handoffs = 0;
  double p2p_flows = 0;
  double chakra_nodes = 0;
  double trace_events = 0;
};
PlanCost plan_cost(const Scenario& scenario);

enum class CostTier {
  kSimulate,      // sim/step_*, the simulate tier; also the GUI's timeline (the same playback)
  kChakraExport,  // interop/chakra_export
  kTrace,         // run --trace: the simulate tier's step and its Chrome trace
};

constexpr double kMaxSimulatedPipelineOps = 2e6;
constexpr double kMaxSimulatedP2pFlows = 2e6;
constexpr double kMaxChakraNodes = 5e5;
constexpr double kMaxTraceEvents = 1.5e6;

struct CostCheck {
  bool within = true;
  std::string reason;  // why not, naming the counts, the bound and what to do instead
  PlanCost cost;
};
// Whether `scenario`'s plan is within `tier`'s bounds. Cheap (closed form): call it before
// building a platform, a timeline or a trace.
CostCheck check_cost_bounds(const Scenario& scenario, CostTier tier);

}  // namespace trainsim
