// libFuzzer target: scenario files. The loader (presets, overrides, every range), the unit and
// expression parsers, and the estimate of whatever loads: a Scenario or a ScenarioError, never
// a crash. Also the cost bounds and the structure check of every loaded plan.
#include "fuzz/fuzz_common.hpp"
#include "models/core/units.hpp"
#include "models/estimate/estimate.hpp"
#include "models/scenario/expression.hpp"
#include "models/workload/cost_bounds.hpp"
#include "models/workload/plan_structure.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text = fuzz::text_of(data, size);
  // Units and expressions straight from the bytes.
  if (size < 80) {
    for (auto kind : {units::Kind::kBytes, units::Kind::kBandwidth, units::Kind::kTime, units::Kind::kFlops})
      fuzz::expect_answer([&] { units::parse(text, kind, "fuzz"); });
  }
  fuzz::expect_answer([&] { Expression::parse(text, "fuzz").evaluate([](const std::string&) { return 1.0; }); });
  const auto j = fuzz::parse(text);
  if (!j) return 0;
  fuzz::expect_answer([&] {
    const Scenario s = parse_scenario(resolve_scenario_json(*j, fuzz::load_options(), ""));
    check_plan_structure(s);
    check_cost_bounds(s, CostTier::kSimulate);
    check_cost_bounds(s, CostTier::kChakraExport);
    // Loaded scenarios must evaluate without crashing, whatever their sizes.
    estimate(s);
  });
  return 0;
}
