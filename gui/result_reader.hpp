// Reads the `trainsim run --json` contract (README "trainsim run --json keys") back into a
// Result, for results that come from a child process (the simulate tier). Missing keys keep
// their defaults: the contract may grow, it never renames.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/reliability/goodput.hpp"

namespace trainsim::gui {

Result result_from_json(const nlohmann::json& j);
// What makes j not a result a user may be shown, naming the field and what was expected: a
// missing step_time_s, a figure that is not a number or is negative, a count beyond an int.
// Empty when j reads back.
std::string result_json_problem(const nlohmann::json& j);
// The "goodput" object of `trainsim run --json` (models/reliability/goodput_json.cpp) read back:
// what the Goodput view draws after a simulation. enabled=false when j is not an object.
GoodputReport goodput_from_json(const nlohmann::json& j);

}  // namespace trainsim::gui
