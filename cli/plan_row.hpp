// One evaluated plan as a sweep row (shared by `sweep` and `plan`): the plan's degrees, the
// estimate's metrics, feasibility, constraints and objective.
#pragma once

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "models/scenario/sweep_spec.hpp"

namespace trainsim::cli {

nlohmann::json make_row(long long index, const nlohmann::json& overrides, const Scenario& scenario,
                        const Result& result);

// Adds meets_constraints, violated and objective to the row.
void judge_row(nlohmann::json& row, const nlohmann::json& resolved_scenario,
               const std::vector<Expression>& constraints, const Expression& objective);

}  // namespace trainsim::cli
