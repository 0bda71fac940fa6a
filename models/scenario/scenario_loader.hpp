// The one strict scenario loader (CONVENTIONS.md #4), shared by the CLI, sweeps and the GUI.
// Input: a scenario JSON (schema_version 1) whose model/cluster/gpu parts are preset names or
// objects, optionally {"base": "<preset>", ...overrides} merged key by key. Output: a resolved
// Scenario in SI units, and the resolved JSON that results repeat (CONVENTIONS.md #8).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/specs.hpp"
#include "models/scenario/input_file.hpp"

namespace trainsim {

struct LoadOptions {
  // Folders holding models/, clusters/ and gpus/ preset files, searched in order.
  std::vector<std::string> preset_dirs;
  // "--set path=value" overrides applied to the raw scenario before resolution. The value is
  // parsed as JSON when it is valid JSON, else taken as a string ("plan.schedule=interleaved").
  std::vector<std::pair<std::string, std::string>> overrides;
};

// Default preset search path: $TRAINSIM_SCENARIOS (colon-separated), then the scenarios/ folder
// of the source tree this binary was built from, then ./scenarios.
std::vector<std::string> default_preset_dirs();

// Reads a file (ScenarioError on I/O or JSON syntax errors, with line/column).
nlohmann::json read_json_file(const std::string& file_path, const std::string& what = "scenario",
                              DuplicateKeys duplicates = DuplicateKeys::kReject);

// Expands presets and applies overrides; returns the full scenario JSON with every part an
// object (no "base" keys left). The scenario file's own folder is searched for presets first.
nlohmann::json resolve_scenario_json(nlohmann::json raw, const LoadOptions& options,
                                     const std::string& origin_dir = "");

// A cluster alone: expand its presets (resolve_cluster_json), then read it strictly.
nlohmann::json resolve_cluster_json(const nlohmann::json& cluster, const LoadOptions& options,
                                    const std::string& origin_dir = "");
// A resolved GPU part (a preset's contents), read strictly.
GpuSpec parse_gpu(const nlohmann::json& resolved_gpu, const std::string& path = "gpu");
ClusterSpec parse_cluster(const nlohmann::json& resolved_cluster, const std::string& path = "cluster");

// Strictly converts a resolved scenario JSON into a Scenario.
Scenario parse_scenario(const nlohmann::json& resolved);

// The last step of parse_scenario, for a caller that changes the plan of a parsed Scenario in
// place (a sweep): derives plan.dp from the GPU count when the plan gave none (dp_from_gpus)
// and checks the micro-batches per step; throws the ScenarioError parse_scenario would.
void finish_plan(Scenario& scenario);

// Convenience: read + resolve + parse.
Scenario load_scenario_file(const std::string& file_path, const LoadOptions& options,
                            nlohmann::json* resolved_out = nullptr);

// Applies one "--set a.b.c=value" to a raw scenario JSON (a preset name on the way becomes
// {"base": name}).
void apply_override(nlohmann::json& raw, const std::string& dotted_path, const std::string& value);

// Lists preset names of a kind ("models", "clusters", "gpus") found on the search path.
std::vector<std::string> list_presets(const std::string& kind, const LoadOptions& options);

// Resolved scenario in canonical form (SI units, every field present).
nlohmann::json to_json(const Scenario& scenario);

}  // namespace trainsim
