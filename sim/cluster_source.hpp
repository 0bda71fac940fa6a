// Loads a ClusterSpec alone (a preset name or a cluster JSON file, or a scenario file whose
// cluster is used) through models' one strict loader, for `trainsim collective`, tests and the
// benchmark.
#pragma once

#include <string>

#include "models/scenario/scenario_loader.hpp"
#include "models/core/specs.hpp"

namespace trainsim::sim {

// `name_or_path`: "dgx-h100-superpod", or a path to a cluster JSON (may use "base"), or a
// scenario JSON. Errors are ScenarioErrors naming the path (exit code 2).
ClusterSpec load_cluster(const std::string& name_or_path, const LoadOptions& options);

// The cluster with at least `gpus` GPUs (nodes grown as needed; never shrunk).
ClusterSpec with_at_least_gpus(ClusterSpec cluster, int gpus);

}  // namespace trainsim::sim
