// The JSON contract of `trainsim run --json`. Keys carry units; the resolved
// scenario and the tool version are repeated so that every result says what it ran
// (CONVENTIONS.md #8). Other tools (sweeps, GUI, validation) read these keys: extend, never rename.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

nlohmann::json result_to_json(const Result& result);
// Human report for a terminal.
std::string result_to_text(const Scenario& scenario, const Result& result);

}  // namespace trainsim
