// Reads the `trainsim run --json` contract (README "trainsim run --json keys") back into a
// Result, for results that come from a child process (the simulate tier). Missing keys keep
// their defaults: the contract may grow, it never renames.
#pragma once

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"

namespace trainsim::gui {

Result result_from_json(const nlohmann::json& j);

}  // namespace trainsim::gui
