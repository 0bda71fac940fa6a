// Registers the estimate tier (ARCHITECTURE.md tier 1) with `trainsim run --fidelity estimate`:
// the closed-form reduction of the plan's op graph (models/estimate/estimate.hpp), in-process.
#include "cli/fidelity_registry.hpp"
#include "models/estimate/estimate.hpp"

namespace trainsim::cli {
namespace {

void estimate_tier(const Scenario& scenario, const FidelityOptions&, Result& result, nlohmann::json&) {
  result = estimate(scenario);
}

const FidelityRegistrar kReg("estimate", estimate_tier);

}  // namespace
}  // namespace trainsim::cli
