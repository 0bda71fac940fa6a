#include "sim/cluster_source.hpp"

#include <filesystem>

#include "models/core/scenario_error.hpp"

namespace trainsim::sim {
namespace fs = std::filesystem;

ClusterSpec load_cluster(const std::string& name_or_path, const LoadOptions& options) {
  nlohmann::json cluster = name_or_path;
  std::string origin;
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  std::error_code ec;
  if (looks_like_path || fs::is_regular_file(name_or_path, ec)) {
    nlohmann::json j = read_json_file(name_or_path, "cluster");
    if (j.is_object() && j.contains("cluster") && j.contains("schema_version")) j = j["cluster"];
    cluster = j;
    const fs::path parent = fs::path(name_or_path).parent_path();
    origin = parent.empty() ? std::string(".") : parent.string();
  }
  // The loader parses whole scenarios: wrap the cluster with a minimal model and plan.
  nlohmann::json scenario = {{"schema_version", 1},
                             {"name", "collective"},
                             {"model",
                              {{"name", "none"},
                               {"layers", 1},
                               {"hidden", 64},
                               {"heads", 1},
                               {"vocab", 1},
                               {"seq_len", 1}}},
                             {"cluster", cluster},
                             {"plan", {{"global_batch", 1}}}};
  const nlohmann::json resolved = resolve_scenario_json(scenario, options, origin);
  return parse_scenario(resolved).cluster;
}

ClusterSpec with_at_least_gpus(ClusterSpec c, int gpus) {
  const int need = (gpus + c.gpus_per_node - 1) / c.gpus_per_node;
  if (need > c.nodes) c.nodes = need;
  return c;
}

}  // namespace trainsim::sim
