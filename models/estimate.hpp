// The estimate tier: closed-form evaluation of a scenario (ARCHITECTURE.md tier 1). Pure
// function of the resolved Scenario, microseconds per plan, no allocation beyond the result's
// per-stage vector. Formulas are cited where they are used.
#pragma once

#include "models/result.hpp"
#include "models/specs.hpp"

namespace trainsim {

// Returns feasible=false with a reason for plans that cannot run; never throws for a Scenario
// that the loader produced.
Result estimate(const Scenario& scenario);

// The structural checks alone (degrees, divisibility, batch), without memory. Empty if fine.
std::string check_plan_structure(const Scenario& scenario);

}  // namespace trainsim
