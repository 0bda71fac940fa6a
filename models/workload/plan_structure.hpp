// The structural checks of a plan (degrees, divisibility, batch, schedule constraints) that
// come before any cost: a plan that fails one cannot be built into a workload. Memory is not
// checked here (the workload's memory model does that).
#pragma once

#include <string>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

// Layers of declared stage `i` (0 .. pp x vpp - 1, virtual stage order): plan.layers_per_stage
// where given; an even split where model.layers divides the stages (Megatron's default);
// otherwise the split of Megatron-Core's --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split, which count the embedding and the loss as one layer
// each: layers + 2 places shared out as evenly as possible, the extra places on the last stages
// (a 1F1B stage s holds p - s micro-batches, so later stages have the memory to spare), the
// first and last stages' first place taken by the embedding and the loss. Llama 3 405B's 126
// layers on 16 stages are 7, 8 x 14, 7, the split Meta reports (Llama 3 paper, section 3.3.2).
// Where that leaves the first or last stage no layer, an even split with the extra layers last.
// Allocation-free (the plan search asks it per plan); needs model.layers >= pp x vpp.
int stage_layers(const ModelSpec& model, const ParallelPlan& plan, int stage);
// All of them, and whether they come from the rule above (not given, not even).
std::vector<int> stage_layer_split(const ModelSpec& model, const ParallelPlan& plan);
bool layers_split_unevenly(const ModelSpec& model, const ParallelPlan& plan);

// Empty if the plan's structure is sound; otherwise the reason, naming the fields.
std::string check_plan_structure(const Scenario& scenario);

// Fields the scenario sets away from their defaults that this plan does not use (a mode they
// belong to is off: plan.recompute_modules under recompute "full"), one warning each, so that an
// edit that has no effect says so instead of passing silently. The fields stay valid: switching
// the mode back uses them.
std::vector<std::string> unused_plan_fields(const Scenario& scenario);

}  // namespace trainsim
