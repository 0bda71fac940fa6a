// One evaluated plan as a sweep row (shared by `sweep` and `plan`): the plan's degrees, the
// estimate's metrics, feasibility with a reason code, constraints and objective; and the
// presentation rules both commands share (reason codes, ZeRO-1/2 twins).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "models/scenario/sweep_spec.hpp"

namespace trainsim::cli {

// A row's status: "ok" (feasible, within the constraints), "outside_constraints", "infeasible"
// (the plan cannot run: reason_code + reason) or "invalid" (the loader rejected the plan).
//
// A feasible row carries every metric of result_to_json. An infeasible row carries none: only
// the plan, feasible=false, meets_constraints=false, objective=null, reason_code, reason (the
// full message) and, when out of memory, "memory": {peak_bytes, hbm_capacity_bytes} (what it
// would need).
nlohmann::json make_row(long long index, const nlohmann::json& overrides, const Scenario& scenario,
                        const Result& result);

// Adds meets_constraints, violated, objective and status to the row (constraints and objective
// only for feasible rows), then strips the metrics of an infeasible row (see make_row).
void judge_row(nlohmann::json& row, const nlohmann::json& resolved_scenario,
               const std::vector<Expression>& constraints, const Expression& objective);

// A row for a plan the loader rejected: status "invalid", reason_code "invalid_input".
nlohmann::json invalid_row(long long index, const nlohmann::json& overrides, const std::string& message);

// Throws ScenarioError naming the expression (constraints[i] / objective) when it uses a name a
// full row and its scenario do not have: a typo must stop the sweep, not mark every plan.
void check_expression_names(const nlohmann::json& full_row, const nlohmann::json& resolved_scenario,
                            const std::vector<Expression>& constraints, const Expression& objective);

// Infeasibility reasons as stable codes (the models' messages carry the numbers of each plan):
// "out_of_memory", "tp_heads", "interleaved_micro_batches", ... "other". One table, in
// plan_row.cpp, with a human label per code.
std::string reason_code(const std::string& reason);
std::string reason_label(const std::string& code);

// The ZeRO column of a ranked plan: its (folded) stage label, "++" with ZeRO++, "/n" under a
// shard group of n DP ranks ("ZeRO-3++", "ZeRO-3/8").
std::string zero_column(const std::string& stage_label, bool zero_plus_plus, int dp_shard);

// ZeRO-1 and ZeRO-2 of the same plan take the same time (ZeRO-2 only shards the gradients the
// reduce-scatter already produced): in a ranking they are one choice. Folds each such pair of
// rows (best first) into the first of them; `label` is "ZeRO-1/2" for a folded pair, else
// "ZeRO-<stage>"; memory_bytes is the smaller peak of the pair.
struct RankedRow {
  const nlohmann::json* row;
  std::string zero_label;
  double memory_bytes;
};
std::vector<RankedRow> fold_zero_twins(const std::vector<const nlohmann::json*>& ranked);

// The same folding over any n ranked rows, read through accessors: key(i) identifies the plan
// without its ZeRO stage (equal keys: the same plan), zero(i) its stage, step(i) its step time,
// memory(i) its peak. Returns, per kept row, its position, label and memory as above.
struct FoldedRow {
  std::size_t at;
  std::string zero_label;
  double memory_bytes;
};
std::vector<FoldedRow> fold_zero_twins(std::size_t n, const std::function<std::string(std::size_t)>& key,
                                       const std::function<int(std::size_t)>& zero,
                                       const std::function<double(std::size_t)>& step,
                                       const std::function<double(std::size_t)>& memory);

}  // namespace trainsim::cli
