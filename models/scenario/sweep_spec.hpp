// Sweep files: a base scenario, axes to vary, constraints and an
// objective. Read by the same strict loader rules as scenarios: unknown keys and bad values are
// ScenarioErrors naming the JSON path.
//
//   {"schema_version": 1, "name": "...", "base": "../default.json" | {scenario},
//    "axes": [
//      {"path": "plan.tp", "values": [1, 2, 4, 8]},
//      {"path": "plan.pp", "divisors_of": 96},            // or "divisors_of": "model.layers"
//      {"path": "plan.micro_batch", "powers_of_two": [1, 16]},
//      {"path": "plan.vpp", "range": [1, 4]},             // [from, to] or [from, to, step]
//      {"path": "model", "values": ["gpt3-175b", "llama3-70b"]},
//      {"degrees": ["plan.tp", "plan.pp", "plan.dp"]}     // every factorisation of the GPU count
//    ],
//    "constraints": ["memory.peak_bytes < 0.9 * hbm", "plan.tp <= gpus_per_node"],
//    "objective": {"maximize": "tokens_per_s"},         // or {"minimize": "step_time_s * gpus"}
//    "top_k": 10, "simulate_top": 0}
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/expression.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {

struct SweepAxis {
  std::string path;                 // one path, or empty for a degrees axis
  std::vector<nlohmann::json> values;
  std::vector<std::string> degrees;  // degrees axis: these paths multiply to the GPU count
};

struct SweepSpec {
  std::string name;
  nlohmann::json base_raw;  // the base scenario, raw (presets not yet expanded)
  std::string base_dir;     // where the base's presets are searched first
  std::vector<SweepAxis> axes;
  std::vector<Expression> constraints;
  Expression objective;
  bool maximize = true;
  int top_k = 10;
  int simulate_top = 0;
};

// One plan of a sweep: the overrides applied to the base, in axis order.
using PlanOverrides = std::vector<std::pair<std::string, nlohmann::json>>;

SweepSpec load_sweep_file(const std::string& path, const LoadOptions& options);
SweepSpec parse_sweep(const nlohmann::json& j, const std::string& dir, const LoadOptions& options);

// Every plan of the sweep, in a deterministic order. A degrees axis needs the GPU count, so the
// base (with the other axes applied) is resolved for it. Throws ScenarioError above max_plans.
std::vector<PlanOverrides> expand_sweep(const SweepSpec& spec, const LoadOptions& options,
                                        std::size_t max_plans = 50'000'000);
// The same plans in the same order, each handed to `visit` as it is listed (the list itself is
// not kept: a sweep of millions of plans keeps its own compact form).
void for_each_plan(const SweepSpec& spec, const LoadOptions& options, std::size_t max_plans,
                   const std::function<void(const PlanOverrides&)>& visit);

// The positive integer factorisations of n into k ordered factors.
std::vector<std::vector<int>> factorisations(int n, int k);

// The names constraints and objectives may use besides result and scenario paths.
// hbm, gpus, nodes, gpus_per_node, plus every numeric field of the result row and of the
// resolved scenario by dotted path (memory.peak_bytes, plan.tp, cluster.gpu.hbm_capacity, ...).
Expression::Lookup row_lookup(const nlohmann::json& row, const nlohmann::json& scenario);

}  // namespace trainsim
