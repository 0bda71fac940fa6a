#include "cli/plan_row.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "models/core/result_json.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim::cli {
using nlohmann::json;

namespace {

// The infeasibility reasons the models give (models/workload/plan_structure.cpp, each schedule's
// constraint in models/schedules/, models/estimate/estimate.cpp, the simulate tier), by a
// fragment every message of that kind contains. First match wins.
struct ReasonKind {
  const char* code;
  const char* fragment;
  const char* label;
};
constexpr ReasonKind kReasons[] = {
    {"out_of_memory", "out of memory", "out of memory: a pipeline stage needs more than the GPU's HBM"},
    {"offload_host_memory", "offload needs", "offload needs more host memory than the node has"},
    {"degrees_divide_gpus", "plan.tp x plan.pp x plan.cp =", "tp x pp x cp does not divide the GPU count"},
    {"degrees_gpu_count", "plan.tp x plan.pp x plan.dp x plan.cp =", "tp x pp x dp x cp is not the GPU count"},
    {"tp_heads", "does not divide model.heads", "tp does not divide the attention heads"},
    {"tp_kv_heads", "model.kv_heads", "tp and the KV heads do not divide one another"},
    {"tp_ffn", "does not divide model.ffn_hidden", "tp does not divide the FFN width"},
    {"layers_split", "stages: every stage needs a layer", "fewer layers than pp x vpp stages"},
    {"layers_per_stage", "plan.layers_per_stage", "plan.layers_per_stage does not match pp x vpp or the layers"},
    {"batch_split", "is not a multiple of plan.micro_batch x plan.dp", "global batch is not a multiple of micro-batch x dp"},
    {"cp_seq", "plan.cp:", "cp does not divide the sequence length"},
    {"sp_seq", "plan.sp needs", "sequence parallelism needs seq / cp to be a multiple of tp"},
    {"ep_no_experts", "but the model has no experts", "ep > 1 on a dense model"},
    {"ep_experts", "does not divide model.moe.experts", "ep does not divide the experts"},
    {"ep_dp", "must divide plan.dp x plan.cp", "ep does not divide dp x cp"},
    {"precision_unsupported", "is not supported by", "the GPU has no peak rate for the precision"},
    {"interleaved_vpp", "needs plan.vpp >= 2", "the interleaved schedule needs vpp >= 2"},
    {"interleaved_micro_batches", "interleaved schedule needs micro-batches per pipeline",
     "interleaving needs the micro-batches per pipeline to be a multiple of pp"},
    {"vpp_needs_interleaved", "needs plan.schedule \"interleaved\"", "vpp > 1 needs the interleaved schedule"},
    {"dualpipe_even_pp", "dualpipe needs an even plan.pp", "DualPipe needs an even pp"},
    {"dualpipe_micro_batches", "dualpipe needs at least plan.pp micro-batches",
     "DualPipe needs at least pp micro-batches per pipeline"},
    {"fabric_cut", "training.faults:", "failed links cut the job's GPUs apart"},
    {"dp_shard", "plan.dp_shard:", "the ZeRO-3 shard group does not divide dp, or the plan is not ZeRO-3"},
};

// What an infeasible row keeps: the plan and why, no metrics it could be ranked by.
const char* kKeptKeys[] = {"index", "overrides", "model", "cluster", "gpu", "gpus", "plan", "fidelity"};

}  // namespace

std::string reason_code(const std::string& reason) {
  for (const auto& k : kReasons)
    if (reason.find(k.fragment) != std::string::npos) return k.code;
  return "other";
}

std::string reason_label(const std::string& code) {
  for (const auto& k : kReasons)
    if (code == k.code) return k.label;
  if (code == "invalid_input") return "the loader rejected the plan (bad axis value)";
  if (code == "constraint") return "outside the sweep's constraints";
  return "other";
}

std::string zero_column(const std::string& stage_label, bool zero_plus_plus, int dp_shard) {
  return stage_label + (zero_plus_plus ? "++" : "") + (dp_shard > 0 ? "/" + std::to_string(dp_shard) : "");
}

json make_row(long long index, const json& overrides, const Scenario& s, const Result& r) {
  json row = result_to_json(r);
  row.erase("warnings");
  row["memory"].erase("per_stage");
  const ParallelPlan& p = s.plan;
  row["index"] = index;
  row["overrides"] = overrides;
  row["model"] = s.model.name;
  row["cluster"] = s.cluster.name;
  row["gpu"] = s.cluster.gpu.name;
  row["plan"] = {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"ep", p.ep}, {"sp", p.sp},
                 {"vpp", p.vpp}, {"schedule", p.schedule}, {"micro_batch", p.micro_batch},
                 {"global_batch", p.global_batch}, {"zero_stage", p.zero_stage},
                 {"recompute", to_string(p.recompute)}, {"precision", to_string(p.precision)},
                 {"offload_optimizer", p.offload.optimizer}};
  if (p.dp_shard > 0) row["plan"]["dp_shard"] = p.dp_shard;
  if (p.zero_hpz_partition_size > 1) row["plan"]["zero_hpz_partition_size"] = p.zero_hpz_partition_size;
  if (p.zero_quantized_weights) row["plan"]["zero_quantized_weights"] = true;
  if (p.zero_quantized_gradients) row["plan"]["zero_quantized_gradients"] = true;
  if (!r.feasible) row["reason_code"] = reason_code(r.reason);
  return row;
}

void judge_row(json& row, const json& scenario, const std::vector<Expression>& constraints,
               const Expression& objective) {
  const bool feasible = row["feasible"].get<bool>();
  if (!feasible) {
    json kept = json::object();
    for (const char* k : kKeptKeys)
      if (row.contains(k)) kept[k] = row[k];
    kept["feasible"] = false;
    kept["status"] = "infeasible";
    kept["reason_code"] = row.value("reason_code", reason_code(row.value("reason", std::string())));
    kept["reason"] = row["reason"];
    if (kept["reason_code"] == "out_of_memory" && row.contains("memory"))
      kept["memory"] = {{"peak_bytes", row["memory"]["peak_bytes"]},
                        {"hbm_capacity_bytes", row["memory"]["hbm_capacity_bytes"]}};
    kept["meets_constraints"] = false;
    kept["violated"] = json::array();
    kept["objective"] = nullptr;
    row = std::move(kept);
    return;
  }
  const auto lookup = row_lookup(row, scenario);
  json violated = json::array();
  for (const auto& c : constraints)
    if (!constraint_met(c.evaluate(lookup))) violated.push_back(c.text());
  row["meets_constraints"] = violated.empty();
  row["violated"] = violated;
  row["status"] = violated.empty() ? "ok" : "outside_constraints";
  const double objective_value = objective.evaluate(lookup);
  row["objective"] = std::isfinite(objective_value) ? json(objective_value) : json(nullptr);
}

json invalid_row(long long index, const json& overrides, const std::string& message) {
  return {{"index", index}, {"overrides", overrides}, {"feasible", false}, {"status", "invalid"},
          {"reason_code", "invalid_input"}, {"reason", "invalid: " + message}, {"meets_constraints", false},
          {"violated", json::array()}, {"objective", nullptr}};
}

void check_expression_names(const json& row, const json& scenario, const std::vector<Expression>& constraints,
                            const Expression& objective) {
  const auto lookup = row_lookup(row, scenario);
  auto check = [&](const Expression& e, const std::string& where) {
    for (const auto& name : e.names())
      if (!lookup(name))
        throw ScenarioError(where, "\"" + e.text() + "\" uses \"" + name +
                                       "\", which is neither a result key (tokens_per_s, step_time_s, mfu, "
                                       "memory.peak_bytes, ...), a scenario path (plan.tp, ...) nor one of hbm, "
                                       "gpus, nodes, gpus_per_node");
  };
  for (std::size_t i = 0; i < constraints.size(); ++i) check(constraints[i], "constraints[" + std::to_string(i) + "]");
  check(objective, "objective");
}

std::vector<FoldedRow> fold_zero_twins(std::size_t n, const std::function<std::string(std::size_t)>& key,
                                       const std::function<int(std::size_t)>& zero,
                                       const std::function<double(std::size_t)>& step,
                                       const std::function<double(std::size_t)>& memory) {
  // The ZeRO-1 and ZeRO-2 rows by their plan without the stage, each list in rank order: one
  // key per row, so a ranking of a million rows folds in linear time.
  std::unordered_map<std::string, std::vector<std::size_t>> twins[2];  // [0]: ZeRO-1, [1]: ZeRO-2
  std::vector<std::string> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int z = zero(i);
    if (z != 1 && z != 2) continue;
    keys[i] = key(i);
    twins[z - 1][keys[i]].push_back(i);
  }
  std::vector<FoldedRow> out;
  std::vector<bool> used(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (used[i]) continue;
    const int za = zero(i);
    FoldedRow r{i, "ZeRO-" + std::to_string(za), memory(i)};
    if (za == 1 || za == 2) {
      // The first later, unused row of the other stage with the same plan and the same time.
      auto it = twins[2 - za].find(keys[i]);
      if (it != twins[2 - za].end()) {
        for (std::size_t j : it->second) {
          if (j <= i || used[j]) continue;
          if (std::fabs(step(i) - step(j)) > 1e-9 * std::max(step(i), step(j))) continue;
          used[j] = true;
          r.zero_label = "ZeRO-1/2";
          r.memory_bytes = std::min(memory(i), memory(j));
          break;
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RankedRow> fold_zero_twins(const std::vector<const json*>& ranked) {
  auto key = [&](std::size_t i) {
    const json& row = *ranked[i];
    json k = {{"model", row.value("model", "")}, {"cluster", row.value("cluster", "")},
              {"gpus", row.value("gpus", json())}, {"plan", row.value("plan", json::object())}};
    k["plan"].erase("zero_stage");
    return k.dump();
  };
  auto zero = [&](std::size_t i) {
    const json& row = *ranked[i];
    return row.contains("plan") ? row["plan"].value("zero_stage", -1) : -1;
  };
  auto step = [&](std::size_t i) { return ranked[i]->value("step_time_s", 0.0); };
  auto memory = [&](std::size_t i) {
    const json& row = *ranked[i];
    return row.contains("memory") ? row["memory"].value("peak_bytes", 0.0) : 0.0;
  };
  std::vector<RankedRow> out;
  for (FoldedRow& f : fold_zero_twins(ranked.size(), key, zero, step, memory))
    out.push_back({ranked[f.at], std::move(f.zero_label), f.memory_bytes});
  return out;
}

}  // namespace trainsim::cli
