// The simulate tier's entry point (ARCHITECTURE.md tier 2): one training step of a scenario on
// the SimGrid platform of its cluster. Builds the workload (models/workload.hpp, the same
// generator as the estimate), creates the process's one Platform, plays the step
// (step_player.hpp), composes the Result (step_report.hpp) and writes the trace
// (step_trace.hpp). One call per process (one s4u::Engine per process).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "sim/step_player.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

struct SimulateOptions {
  std::string trace_path;  // Chrome/Perfetto trace written here when not empty
  bool progress = false;   // {"progress": fraction} JSON lines on stderr
  StepOptions step;
  int hottest_links = 10;
  // With training.faults: also simulate the comparisons the "faults" report needs (healthy
  // fabric, no straggler, straggler without rebalancing) in forked children, in parallel with
  // this run (one s4u::Engine per process). Off: only this run's figures and the estimate's.
  bool fault_comparisons = true;
};

// The cluster's topology knobs (network.switch_radix, fat_tree_tiers, torus_dims,
// dragonfly_nodes_per_router, routing) as TopologyOptions; no PCIe links (offload is a fixed
// cost in the step).
TopologyOptions topology_options(const ClusterSpec& cluster);

// Fills the Result with fidelity "simulate"; extra receives "simulation" (per-stage figures),
// "hottest_links" and "estimate_vs_simulate". An infeasible structure returns the workload's
// reason without simulating.
//
// training.faults: failed / degraded links are applied to the topology (a failure
// that disconnects the job's GPUs is an infeasible result naming the link; an unknown link
// name a ScenarioError); a straggler slows its pipeline stage's compute (models/straggler.hpp);
// with faults.rebalance the plan's layers are rebalanced first. extra["faults"] reports them
// (see step_report.hpp fault_report).
Result simulate_step(const Scenario& scenario, const SimulateOptions& options, nlohmann::json& extra);

}  // namespace trainsim::sim
