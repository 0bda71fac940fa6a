// `trainsim validate --published FILE`: predict every published run and report the error per
// metric, with the mean absolute percentage error. --max-mape fails (exit 1) above a threshold.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "models/scenario_error.hpp"
#include "validate/published_runs.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim validate --published FILE [--json] [--max-mape METRIC=PCT ...]

Predicts every run of a published-runs file (the format of shared/data/published_runs_visible.json:
training runs, nccl-tests all-reduce reports, ZeRO model-state figures) with the estimate tier and
prints predicted vs measured per run and the mean absolute percentage error (MAPE) per metric.
Fields a record leaves out are assumed as stated in the output's "assumptions".

options:
  --published FILE        the runs to predict
  --json                  one JSON object: {runs: [...], mape: {metric: {mape, runs}}}
  --max-mape METRIC=PCT   exit 1 if METRIC's MAPE exceeds PCT percent (repeatable),
                          e.g. --max-mape tokens_per_s=15
)";

int run(int argc, char** argv) {
  std::string file;
  bool as_json = false;
  std::vector<std::pair<std::string, double>> limits;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--published") {
      file = option_value(argc, argv, i);
    } else if (a == "--json") {
      as_json = true;
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
  const auto report = validate::compare_published(validate::read_published_file(file), options);
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
