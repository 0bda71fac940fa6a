// `trainsim run SCENARIO`: predict one plan. Human report by default, one JSON object with
// --json. Exit 0 feasible, 2 bad input, 3 infeasible.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/fidelity_registry.hpp"
#include "models/cost/calibration.hpp"
#include "models/estimate/estimate.hpp"
#include "models/reliability/goodput.hpp"
#include "models/reliability/goodput_json.hpp"
#include "models/core/result_json.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/reliability/slow_parts.hpp"
#include "models/core/units.hpp"

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

// The simulate tier played the step with the scenario's faults in it (the straggler placed, the
// links failed or degraded) and measured the comparison steps in child runs: the goodput starts
// from the step without them and weighs the straggler by its probability, as the estimate does.
SlowParts simulated_slow_parts(const Scenario& scenario, const nlohmann::json& faults,
                               const Result& simulated, Result& nominal) {
  SlowParts slow = estimate_slow_parts(scenario, simulated);  // probabilities, notes
  const double step = simulated.step_time_s;
  double d_link = 0, d_straggler = 0, d_rebalanced = -1;
  if (faults.contains("links"))
    d_link = std::max(0.0, step - faults["links"].value("healthy_fabric_step_time_s", step));
  if (faults.contains("straggler")) {
    const auto& st = faults["straggler"];
    const double without = st.value("nominal_step_time_s", step);
    d_straggler = std::max(0.0, st.value("step_time_s", without) - without);
    if (st.contains("rebalance") && st["rebalance"].value("applied", false))
      d_rebalanced = std::max(0.0, st["rebalance"].value("step_time_s", without) - without);
  }
  const double d_applied = d_rebalanced >= 0 ? d_rebalanced : d_straggler;
  const double base = std::max(1e-12, step - d_link - d_applied);
  nominal.step_time_s = base;
  nominal.tokens_per_s = simulated.tokens_per_step / base;
  slow.nominal_step_s = base;
  slow.straggler_step_s = base + d_straggler;
  slow.rebalanced_step_s = d_rebalanced >= 0 ? base + d_rebalanced : slow.rebalanced_step_s;
  slow.degraded_step_s = base + d_link;
  slow.degraded_link_probability = d_link > 0 ? 1.0 : 0.0;  // placed, not drawn: certain here
  slow.slowed_step_s = base + slow.straggler_probability * d_applied + d_link;
  slow.notes.push_back("slow parts measured by the simulation (comparison runs in child processes)");
  return slow;
}

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
  // training.faults: the long-run view (failures, checkpoints, slow parts) on top of the step.
  GoodputReport report;
  if (scenario.training.faults.enabled && result.feasible) {
    if (extra.contains("faults")) {
      Result nominal = result;
      const SlowParts slow = simulated_slow_parts(scenario, extra["faults"], result, nominal);
      report = goodput(scenario, nominal, slow);
    } else {
      report = goodput(scenario, result, estimate_slow_parts(scenario, result));
    }
  }
  if (as_json) {
    nlohmann::json out = result_to_json(result);
    if (report.enabled) out["goodput"] = goodput_to_json(report);
    for (auto it = extra.begin(); it != extra.end(); ++it) out[it.key()] = it.value();
    out["scenario"] = to_json(scenario);
    out["trainsim_version"] = TRAINSIM_VERSION;
    out["calibration"] = calibration_record;
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << result_to_text(scenario, result);
    if (report.enabled) std::cout << goodput_to_text(report);
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
