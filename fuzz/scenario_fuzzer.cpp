// libFuzzer target: the scenario loader, the sweep loader, the expression parser and the unit
// parser must turn any bytes into a Scenario/SweepSpec or a ScenarioError, never a crash, a hang
// or a sanitizer report. Build: fuzz/run.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/estimate/estimate.hpp"
#include "models/scenario/expression.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/scenario/sweep_spec.hpp"
#include "models/core/units.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const LoadOptions options = [] {
    LoadOptions o;
    o.preset_dirs = default_preset_dirs();
    return o;
  }();
  // Units and expressions straight from the bytes.
  if (size < 80) {
    for (auto kind : {units::Kind::kBytes, units::Kind::kBandwidth, units::Kind::kTime, units::Kind::kFlops}) {
      try {
        units::parse(text, kind, "fuzz");
      } catch (const ScenarioError&) {
      }
    }
  }
  try {
    Expression::parse(text, "fuzz").evaluate([](const std::string&) { return 1.0; });
  } catch (const ScenarioError&) {
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  try {
    const Scenario s = parse_scenario(resolve_scenario_json(j, options, ""));
    // Loaded scenarios must evaluate without crashing, whatever their sizes.
    estimate(s);
  } catch (const ScenarioError&) {
  }
  try {
    parse_sweep(j, ".", options);
  } catch (const ScenarioError&) {
  }
  return 0;
}
