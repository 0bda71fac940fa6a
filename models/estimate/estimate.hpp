// The estimate tier: closed-form evaluation of a scenario (ARCHITECTURE.md tier 1). Pure
// function of the resolved Scenario, microseconds per plan, no allocation beyond the result's
// per-stage vector. Formulas are cited where they are used.
#pragma once

#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "models/workload/plan_structure.hpp"

namespace trainsim {

// Returns feasible=false with a reason for plans that cannot run; never throws for a Scenario
// that the loader produced.
Result estimate(const Scenario& scenario);

// The figures every tier derives the same way from a step time: tokens/s, TFLOP/s per GPU,
// MFU and HFU (PaLM appendix B), against the plan's precision's peak.
void finish_result(const Scenario& scenario, Result& result);

}  // namespace trainsim
