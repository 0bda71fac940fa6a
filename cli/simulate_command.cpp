// Registers the simulate tier (ARCHITECTURE.md tier 2) with `trainsim run --fidelity simulate`:
// one SimGrid step simulation per process (sim/step_simulation.hpp). Built only with sim/.
#include "cli/fidelity_registry.hpp"
#include "sim/step_simulation.hpp"

namespace trainsim::cli {
namespace {

void simulate(const Scenario& scenario, const FidelityOptions& options, Result& result,
              nlohmann::json& extra) {
  sim::SimulateOptions so;
  so.trace_path = options.trace_path;
  so.progress = options.progress;
  result = sim::simulate_step(scenario, so, extra);
}

const FidelityRegistrar kReg("simulate", simulate);

}  // namespace
}  // namespace trainsim::cli
