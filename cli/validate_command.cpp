// `trainsim validate --published FILE`: predict every published run and report the error per
// metric, with the mean absolute percentage error. --max-mape fails (exit 1) above a threshold.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/child_runs.hpp"
#include "cli/command_registry.hpp"
#include "models/scenario_error.hpp"
#include "validate/published_runs.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim validate --published FILE [--fidelity estimate|simulate] [-j N] [--json]
                         [--max-mape METRIC=PCT ...]

Predicts every run of a published-runs file (the format of shared/data/published_runs_visible.json:
training runs, nccl-tests all-reduce reports, ZeRO model-state figures) with the estimate tier and
prints predicted vs measured per run and the mean absolute percentage error (MAPE) per metric.
Fields a record leaves out are assumed as stated in the output's "assumptions".

options:
  --published FILE        the runs to predict
  --fidelity TIER         estimate (default) or simulate: each training run is simulated in a
                          child process (one SimGrid engine per process), N at once (-j N)
  --json                  one JSON object: {runs: [...], mape: {metric: {mape, runs}}}
  --max-mape METRIC=PCT   exit 1 if METRIC's MAPE exceeds PCT percent (repeatable),
                          e.g. --max-mape tokens_per_s=15
)";

int run(int argc, char** argv) {
  std::string file;
  bool as_json = false;
  std::vector<std::pair<std::string, double>> limits;
  std::string fidelity = "estimate";
  int jobs = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--published") {
      file = option_value(argc, argv, i);
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "--fidelity") {
      fidelity = option_value(argc, argv, i);
      if (fidelity != "estimate" && fidelity != "simulate")
        throw ScenarioError("--fidelity", "expected estimate or simulate, got \"" + fidelity + "\"");
    } else if (a == "-j") {
      jobs = static_cast<int>(parse_int_option(a, option_value(argc, argv, i), 1, 256));
    } else if (a == "--max-mape") {
      const auto [metric, pct] = parse_set(option_value(argc, argv, i));
      char* end = nullptr;
      const double v = std::strtod(pct.c_str(), &end);
      if (pct.empty() || *end != '\0' || !(v >= 0))
        throw ScenarioError("--max-mape", "expected METRIC=PERCENT, got \"" + metric + "=" + pct + "\"");
      limits.emplace_back(metric, v);
    } else {
      throw ScenarioError(a, "unknown option; see trainsim validate --help");
    }
  }
  if (file.empty()) throw ScenarioError("--published", "missing; see trainsim validate --help");
  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  const nlohmann::json records = validate::read_published_file(file);
  auto report = validate::compare_published(records, options);
  if (fidelity == "simulate") {
    // Re-predict every training run with the simulate tier, each in a child process.
    std::vector<ChildRun> runs;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < report.runs.size(); ++i) {
      if (!report.runs[i].predicted || report.runs[i].kind != "training") continue;
      runs.push_back({report.runs[i].scenario.dump(), "", "", -1});
      which.push_back(i);
    }
    run_children(self_executable(argv[0]), runs, jobs, {"--fidelity", "simulate", "--json"}, [&](std::size_t n) {
      auto& run = report.runs[which[n]];
      try {
        const auto j = nlohmann::json::parse(runs[n].output);
        Result r;
        r.step_time_s = j.at("step_time_s").get<double>();
        r.tokens_per_step = j.at("tokens_per_step").get<double>();
        r.tokens_per_s = j.at("tokens_per_s").get<double>();
        r.hardware_tflops_per_gpu = j.at("hardware_tflops_per_gpu").get<double>();
        r.mfu = j.at("mfu").get<double>();
        validate::fill_training_metrics(records[which[n]], r, run);
        run.assumptions.push_back("simulate tier");
      } catch (const std::exception&) {
        run.assumptions.push_back("simulate failed, estimate kept: " + runs[n].error.substr(0, 200));
      }
    });
    validate::summarize(report);
  }
  if (as_json) std::cout << validate::report_to_json(report).dump(2) << "\n";
  else std::cout << validate::report_to_text(report);
  int rc = kExitOk;
  for (const auto& [metric, pct] : limits) {
    bool found = false;
    for (const auto& [m, mape] : report.mape) {
      if (m != metric) continue;
      found = true;
      if (100 * mape > pct) {
        std::fprintf(stderr, "validate: %s MAPE %.1f%% exceeds the limit %.1f%%\n", m.c_str(), 100 * mape, pct);
        rc = kExitFailure;
      }
    }
    if (!found) throw ScenarioError("--max-mape", "no run has metric \"" + metric + "\"");
  }
  return rc;
}

const CommandRegistrar kRegistrar("validate", "compare predictions with published or measured runs", run);

}  // namespace
}  // namespace trainsim::cli
