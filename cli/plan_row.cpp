#include "cli/plan_row.hpp"

#include "models/core/result_json.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim::cli {
using nlohmann::json;

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
  return row;
}

void judge_row(json& row, const json& scenario, const std::vector<Expression>& constraints,
               const Expression& objective) {
  const auto lookup = row_lookup(row, scenario);
  json violated = json::array();
  bool feasible = row["feasible"].get<bool>();
  if (feasible) {
    for (const auto& c : constraints)
      if (c.evaluate(lookup) == 0) violated.push_back(c.text());
  }
  row["meets_constraints"] = violated.empty();
  row["violated"] = violated;
  if (feasible) row["objective"] = objective.evaluate(lookup);
  else row["objective"] = nullptr;
}

}  // namespace trainsim::cli
