// `trainsim run SCENARIO`: predict one plan. Human report by default, one JSON object with
// --json. Exit 0 feasible, 2 bad input, 3 infeasible.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/progress.hpp"
#include "cli/command_registry.hpp"
#include "cli/output_file.hpp"
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
#include "models/workload/cost_bounds.hpp"

namespace trainsim::cli {
namespace {

struct RunOptions {
  std::string scenario_path;
  std::vector<std::string> sets;
  std::string fidelity;
  std::string trace_path;
  std::string calibration_path;
  std::vector<std::string> preset_dirs;
  bool json = false;
  ProgressMode progress = ProgressMode::kAuto;
};

std::vector<std::string> fidelity_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : fidelity_registry()) names.push_back(name);
  return names;
}

void declare(CLI::App& app, RunOptions& o) {
  app.description(
      "Predicts step time, throughput, MFU/HFU, memory per GPU and pipeline stage, bubble and exposed\n"
      "communication for the plan in SCENARIO (a scenario JSON file; docs/architecture.md describes\n"
      "the format).");
  o.fidelity = fidelity_registry().count("simulate") ? "simulate" : "estimate";
  app.add_option("SCENARIO", o.scenario_path, "the scenario JSON file (- reads it from standard input)")->required();
  add_set_option(app, o.sets);
  app.add_option("--fidelity", o.fidelity,
                 "simulate: SimGrid step simulation (the default where it is built; seconds for\n"
                 "large plans); estimate: closed form, microseconds")
      ->type_name("TIER")
      ->check(CLI::IsMember(fidelity_names()))
      ->default_str(o.fidelity);
  app.add_option("--trace", o.trace_path, "write a Chrome/Perfetto trace of the simulated step (simulate tier)")
      ->type_name("FILE");
  app.add_option("--calibration", o.calibration_path,
                 "a file from `trainsim calibrate`: measured peak rates, memory bandwidth, the GEMM\n"
                 "share fitted to its shapes and in-node collective figures replace the presets")
      ->type_name("FILE");
  add_json_flag(app, o.json, "print exactly one JSON object on stdout (keys in docs/architecture.md)");
  add_presets_option(app, o.preset_dirs);
  add_progress_options(app, o.progress);
  app.footer("examples:\n  trainsim run scenarios/default.json --fidelity=estimate\n"
             "  trainsim run scenarios/default.json --set plan.tp=4 --set plan.dp=48 --json");
}

// "gpt3-175b-1536xA100-tp8-pp8-dp24, with --set plan.pp=16": the report names what it ran.
std::string effective_name(const Scenario& s, const std::vector<std::string>& sets) {
  if (sets.empty()) return s.name;
  std::string out = s.name + (s.name.empty() ? "" : ", ") + "with --set";
  for (const auto& x : sets) out += " " + x;
  return out;
}

// The simulate tier played the step with the scenario's faults in it (the straggler placed, the
// links failed or degraded) and measured the comparison steps in child runs: the goodput starts
// from the step without them and weighs the straggler by its probability, as the estimate does.
SlowParts simulated_slow_parts(const Scenario& scenario, const nlohmann::json& faults,
                               const Result& simulated, Result& nominal) {
  SlowParts slow = estimate_slow_parts(scenario, simulated);  // probabilities, notes
  const double step = simulated.step_time_s;
  // The estimate's rebalanced step is the step it was given (here the simulated one, straggler
  // included) plus what the rebalanced split adds to the nominal pipeline: that addition, put
  // on the simulated nominal step below where the run did not play the rebalance.
  const double estimated_rebalance_delta = slow.rebalanced_step_s > 0 ? slow.rebalanced_step_s - step : -1;
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
  if (d_rebalanced >= 0) {
    slow.rebalanced_step_s = base + d_rebalanced;
  } else if (estimated_rebalance_delta >= 0) {
    slow.rebalanced_step_s = base + estimated_rebalance_delta;
    slow.notes.push_back("rebalanced step: the estimate's (training.faults.rebalance is off, so it was not simulated)");
  }
  slow.degraded_step_s = base + d_link;
  slow.degraded_link_probability = d_link > 0 ? 1.0 : 0.0;  // placed, not drawn: certain here
  slow.slowed_step_s = base + slow.straggler_probability * d_applied + d_link;
  slow.notes.push_back("slow parts measured by the simulation (comparison runs in child processes)");
  return slow;
}

int run(RunOptions& o) {
  if (!o.trace_path.empty()) {
    if (o.fidelity == "estimate") throw ScenarioError("--trace", "a trace needs --fidelity simulate");
    check_output_file(o.trace_path, "--trace");
    refuse_overwriting_inputs(o.trace_path, "--trace", {o.scenario_path, o.calibration_path});
  }
  LoadOptions options;
  options.overrides = parse_sets(o.sets);
  options.preset_dirs = o.preset_dirs;
  for (const auto& d : default_preset_dirs()) options.preset_dirs.push_back(d);

  Scenario scenario = load_scenario_file(o.scenario_path, options);
  nlohmann::json calibration_record = "defaults (GPU presets)";
  if (!o.calibration_path.empty()) {
    const auto applied = apply_calibration(read_json_file(o.calibration_path, "calibration"), scenario);
    calibration_record = {{"file", o.calibration_path}, {"applied", applied}};
  }
  if (!o.trace_path.empty() && scenario.plan.precision_stages.empty()) {
    // A trace holds an event per op and several per hand-off, all in memory while it is built:
    // bounded before the run (models/workload/cost_bounds.hpp). A plan the simulate tier would
    // not play either is refused here too: a trace of it cannot be written. (A run of several
    // precisions is played by the estimate alone, which says the trace was not written.)
    const CostCheck bounds = check_cost_bounds(scenario, CostTier::kTrace);
    if (!bounds.within) throw ScenarioError("--trace", bounds.reason);
  }
  const std::string fidelity = o.fidelity;
  const bool as_json = o.json;
  FidelityOptions fidelity_options;
  fidelity_options.trace_path = o.trace_path;
  fidelity_options.progress = o.progress;
  Result result;
  nlohmann::json extra = nlohmann::json::object();
  fidelity_registry().at(fidelity)(scenario, fidelity_options, result, extra);
  // training.faults: the long-run view (failures, checkpoints, slow parts) on top of the step.
  GoodputReport report;
  if (scenario.training.faults.enabled && result.feasible) {
    // The Monte Carlo over the horizon can take seconds: show it.
    Progress progress("goodput Monte Carlo", "", 1.0, o.progress);
    auto tick = [&](double f) { progress.update(f); };
    if (extra.contains("faults")) {
      Result nominal = result;
      const SlowParts slow = simulated_slow_parts(scenario, extra["faults"], result, nominal);
      report = goodput(scenario, nominal, slow, tick);
    } else {
      report = goodput(scenario, result, estimate_slow_parts(scenario, result), tick);
    }
    progress.finish();
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
    Scenario named = scenario;
    named.name = effective_name(scenario, o.sets);
    std::cout << result_to_text(named, result);
    if (report.enabled) std::cout << goodput_to_text(report);
    if (extra.contains("estimate_vs_simulate")) {
      const auto& e = extra["estimate_vs_simulate"];
      std::printf("\n  simulate vs estimate: %+.1f%%, cause: %s\n", e.value("difference_pct", 0.0),
                  e.value("cause", std::string("?")).c_str());
    }
    if (extra.contains("hottest_links") && extra["hottest_links"].is_array()) {
      std::printf("  hottest links:\n");
      int n = 0;
      for (const auto& l : extra["hottest_links"]) {
        if (++n > 5) break;
        std::printf("    %-28s %5.1f%% busy  %s moved\n", l.value("link", std::string("?")).c_str(),
                    100 * l.value("utilisation", 0.0), units::format_bytes_si(l.value("bytes", 0.0)).c_str());
      }
    }
  }
  return result.feasible ? kExitOk : kExitInfeasible;
}

const CommandRegistrar kRegistrar("run", "predict one scenario (step time, MFU, memory, bubble)", declare, run);

}  // namespace
}  // namespace trainsim::cli
