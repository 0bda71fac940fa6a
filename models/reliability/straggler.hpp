// Stragglers and pipeline rebalancing. Synchronous training runs at the pace of its
// slowest member: one slow GPU slows its whole pipeline stage (its TP peers wait for it inside
// every layer, its DP peers at the gradient reduction), so a stage holding a straggler runs at
// the straggler's speed_factor. Rebalancing (dynamic repartitioning) moves layers off the slow
// stage so that max_i cost_i / speed_i is minimal. Pure functions; both tiers use them:
// the estimate through straggled/rebalanced scenarios, the simulate tier by scaling the slow
// stage's compute timers (sim/step_simulation.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

struct Workload;

struct StragglerEffect {
  // 1 - (1 - fraction)^gpus: some GPU of the job is slow.
  double probability_any = 0;
  double expected_slow_gpus = 0;  // fraction x gpus
  int stage = -1;                 // pipeline stage (device) holding the straggler; -1: none
  double speed_factor = 1;        // its relative compute speed
  std::vector<double> stage_speed;    // per pipeline device (plan.pp entries), 1 = nominal
  std::vector<int> layers_per_stage;  // per device: the plan's split (chunks summed) or even
  // The split minimising max_i (layers_i x c + extra_i) / speed_i, moving as few layers as
  // possible off the plan's split; empty when there is no straggler, pp == 1, or the schedule
  // is DualPipe (each device holds two mirrored stages; not rebalanced).
  std::vector<int> rebalanced_layers_per_stage;
  // The cost model used: compute time of one layer (forward + backward, one micro-batch) and the
  // fixed extra per device (the logits GEMM on the last stage), seconds; from build_workload.
  double layer_cost_s = 0;
  std::vector<double> stage_extra_s;
  // max_i stage time / its nominal max (>= 1): the slowdown of the slowest stage, before and
  // after rebalancing (1 without a straggler).
  double bottleneck_slowdown = 1;
  double rebalanced_bottleneck_slowdown = 1;
  std::string note;  // why there is no rebalance, when there is none
};

// Deterministic: the straggler is present when speed_factor < 1 and either a stage is forced
// (stragglers.stage) or fraction > 0; its stage is the forced one, else the pipeline stage of a
// GPU drawn uniformly with faults.seed (every stage holds the same number of GPUs, so this is a
// uniform draw over stages). Throws ScenarioError when the forced stage is >= plan.pp.
StragglerEffect straggler_effect(const Scenario& scenario);

// Split `layers` over stages of relative speeds stage_speed (> 0) minimising
//   max_i (layers_i * layer_cost + extra_cost[i]) / stage_speed[i]
// with every stage holding at least min_layers. Among optimal splits, the one closest to
// `current` (fewest layers moved; ties: the added layers go where the stage time stays lowest,
// lowest index first). extra_cost (per stage, in units of layer_cost) and current may be empty
// (no extras; current = even split). Requires layers >= min_layers x stages.
std::vector<int> rebalance_layers(const std::vector<double>& stage_speed, int layers,
                                  const std::vector<double>& extra_cost = {},
                                  const std::vector<int>& current = {}, int min_layers = 1);

// max_i (layers_i + extra_cost[i]) / stage_speed[i] (stage time in units of one layer).
double bottleneck_time(const std::vector<int>& layers, const std::vector<double>& stage_speed,
                       const std::vector<double>& extra_cost = {});

// Per-device layer counts as plan.layers_per_stage (pp x vpp chunk entries, chunk c on device
// c mod pp; a device's layers split as evenly as possible over its vpp chunks, earlier chunks
// first).
std::vector<int> chunk_layers(const std::vector<int>& per_device, int vpp);

// The scenario with the rebalanced split as plan.layers_per_stage (unchanged when the effect
// has no rebalance).
Scenario rebalanced_scenario(const Scenario& scenario, const StragglerEffect& effect);

// Slows the workload's stages by their speeds: compute parts of F/B/W divided by stage_speed[d],
// the exposed in-layer communication folded into F/B left as it is. Index d is the pipeline
// device: under DualPipe both stages it holds (d and its mirror) and their overlapped pairs slow,
// as the simulate tier slows the device (sim/step_player.hpp).
void apply_stage_speeds(Workload& workload, const std::vector<double>& stage_speed);

}  // namespace trainsim
