// The structural checks of a plan (degrees, divisibility, batch, schedule constraints) that
// come before any cost: a plan that fails one cannot be built into a workload. Memory is not
// checked here (the workload's memory model does that).
#pragma once

#include <string>

#include "models/core/specs.hpp"

namespace trainsim {

// Empty if the plan's structure is sound; otherwise the reason, naming the fields.
std::string check_plan_structure(const Scenario& scenario);

}  // namespace trainsim
