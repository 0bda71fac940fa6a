// Shared by the libFuzzer targets (one per input format, fuzz/run.sh builds them): the contract
// they check is that any bytes become a value or a ScenarioError (exit code 2 in the CLI),
// never a crash, a hang, a sanitizer report or another exception (which would be exit 1).
// Any other exception escapes LLVMFuzzerTestOneInput, and libFuzzer reports it as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/core/scenario_error.hpp"
#include "models/scenario/input_file.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::fuzz {

inline std::string text_of(const uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

inline const LoadOptions& load_options() {
  static const LoadOptions options = [] {
    LoadOptions o;
    o.preset_dirs = default_preset_dirs();  // $TRAINSIM_SCENARIOS, set by fuzz/run.sh
    return o;
  }();
  return options;
}

// The text through the one JSON parser every input uses (depth cap, no quoting).
inline std::optional<nlohmann::json> parse(const std::string& text) {
  try {
    return parse_json_text(text, "fuzz");
  } catch (const ScenarioError&) {
    return std::nullopt;
  }
}

// Runs f; a ScenarioError is an answer, anything else propagates.
template <typename F>
void expect_answer(F&& f) {
  try {
    f();
  } catch (const ScenarioError&) {
  }
}

// A small, valid scenario for the formats that modify one (calibration, torch trace op rates).
inline const Scenario& small_scenario() {
  static const Scenario s = parse_scenario(resolve_scenario_json(
      nlohmann::json::parse(R"({"schema_version": 1, "model": "gpt-1.7b",
        "cluster": {"base": "dgx-a100-superpod", "nodes": 1},
        "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 2, "global_batch": 16}})"),
      load_options()));
  return s;
}

}  // namespace trainsim::fuzz
