// `trainsim run SCENARIO`: predict one plan. Human report by default, one JSON object with
// --json. Exit 0 feasible, 2 bad input, 3 infeasible.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/fidelity_registry.hpp"
#include "models/calibration.hpp"
#include "models/estimate.hpp"
#include "models/result_json.hpp"
#include "models/scenario_error.hpp"
#include "models/scenario_loader.hpp"
#include "models/units.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim run SCENARIO [--set path=value ...] [--fidelity estimate|simulate] [--json]
                    [--trace out.json]

Predicts step time, throughput, MFU/HFU, memory per GPU and pipeline stage, bubble and exposed
communication for the plan in SCENARIO (a scenario JSON file; see README "Scenario format").

options:
  --set path=value   override one field before loading, e.g. --set plan.tp=4
                     --set cluster.nodes=64 --set plan.schedule=interleaved (repeatable)
  --fidelity TIER    simulate (SimGrid step simulation; the default where it is built) or
                     estimate (closed form, microseconds)
  --trace FILE       write a Chrome/Perfetto trace of the simulated step (simulate tier)
  --calibration FILE a file from `trainsim calibrate`: measured peak rates, memory bandwidth,
                     GEMM efficiency curve and in-node collective figures replace the presets
  --json             print exactly one JSON object on stdout (keys documented in README)
  --presets DIR      extra folder with models/, clusters/, gpus/ presets (repeatable)

exit codes: 0 feasible, 2 bad input (the message names the JSON path), 3 plan infeasible
)";

int run(int argc, char** argv) {
  std::string scenario_path;
  bool as_json = false;
  std::string fidelity = fidelity_registry().count("simulate") ? "simulate" : "estimate";
  FidelityOptions fidelity_options;
  std::string calibration_path;
  LoadOptions options;
  std::vector<std::string> extra_dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "--set") {
      options.overrides.push_back(parse_set(option_value(argc, argv, i)));
    } else if (a.rfind("--set=", 0) == 0) {
      options.overrides.push_back(parse_set(a.substr(6)));
    } else if (a == "--fidelity") {
      fidelity = option_value(argc, argv, i);
    } else if (a == "--calibration") {
      calibration_path = option_value(argc, argv, i);
    } else if (a == "--trace") {
      fidelity_options.trace_path = option_value(argc, argv, i);
    } else if (a == "--presets") {
      extra_dirs.push_back(option_value(argc, argv, i));
    } else if (!a.empty() && a[0] == '-') {
      throw ScenarioError(a, "unknown option; see trainsim run --help");
    } else if (scenario_path.empty()) {
      scenario_path = a;
    } else {
      throw ScenarioError(a, "only one scenario file may be given");
    }
  }
  if (scenario_path.empty()) throw ScenarioError("SCENARIO", "missing; see trainsim run --help");
  if (fidelity != "estimate" && !fidelity_registry().count(fidelity)) {
    std::string names = "estimate";
    for (const auto& [name, fn] : fidelity_registry()) names += ", " + name;
    throw ScenarioError("--fidelity", "\"" + fidelity + "\" is not available in this build; expected one of " + names);
  }
  if (!fidelity_options.trace_path.empty() && fidelity == "estimate")
    throw ScenarioError("--trace", "a trace needs --fidelity simulate");
  options.preset_dirs = extra_dirs;
  for (const auto& d : default_preset_dirs()) options.preset_dirs.push_back(d);

  Scenario scenario = load_scenario_file(scenario_path, options);
  nlohmann::json calibration_record = "defaults (GPU presets)";
  if (!calibration_path.empty()) {
    const auto applied = apply_calibration(read_json_file(calibration_path, "calibration"), scenario);
    calibration_record = {{"file", calibration_path}, {"applied", applied}};
  }
  Result result;
  nlohmann::json extra = nlohmann::json::object();
  if (fidelity == "estimate") {
    result = estimate(scenario);
  } else {
    fidelity_registry().at(fidelity)(scenario, fidelity_options, result, extra);
  }
  if (as_json) {
    nlohmann::json out = result_to_json(result);
    for (auto it = extra.begin(); it != extra.end(); ++it) out[it.key()] = it.value();
    out["scenario"] = to_json(scenario);
    out["trainsim_version"] = TRAINSIM_VERSION;
    out["calibration"] = calibration_record;
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << result_to_text(scenario, result);
    if (extra.contains("estimate_vs_simulate")) {
      const auto& e = extra["estimate_vs_simulate"];
      std::printf("\n  simulate vs estimate: %+.1f%% (%s)\n", e.value("difference_pct", 0.0),
                  e.value("cause", std::string("?")).c_str());
    }
    if (extra.contains("hottest_links") && extra["hottest_links"].is_array()) {
      std::printf("  hottest links:\n");
      int n = 0;
      for (const auto& l : extra["hottest_links"]) {
        if (++n > 5) break;
        std::printf("    %-28s %5.1f%% busy  %s moved\n", l.value("link", std::string("?")).c_str(),
                    100 * l.value("utilisation", 0.0), units::format_bytes(l.value("bytes", 0.0)).c_str());
      }
    }
  }
  return result.feasible ? kExitOk : kExitInfeasible;
}

const CommandRegistrar kRegistrar("run", "predict one scenario (step time, MFU, memory, bubble)", run);

}  // namespace
}  // namespace trainsim::cli
