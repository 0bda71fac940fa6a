// Estimate-tier throughput: plans evaluated per second on one core (goal >= 1,000,000).
// Evaluates a rotating set of GPT-3 175B plans (TP, PP, micro-batch, schedule, ZeRO, recompute
// varied) on 1536 A100s; prints the median of 5 repetitions. Scenario loading is not timed: a
// sweep loads once and varies the resolved plan.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "models/core/scenario_error.hpp"
#include "models/estimate/estimate.hpp"
#include "models/scenario/scenario_loader.hpp"

using namespace trainsim;

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0))) {
    std::fprintf(argc > 2 ? stderr : stdout,
                 "usage: bench_estimate [SCENARIO]\n"
                 "  plans evaluated per second by the estimate tier on one core, over TP/PP/micro-batch/\n"
                 "  ZeRO/schedule variations of SCENARIO (default: scenarios/default.json)\n");
    return argc > 2 ? 2 : 0;
  }
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  const std::string file = argc > 1 ? argv[1] : std::string(TRAINSIM_SCENARIOS_DIR "/default.json");
  Scenario base;
  try {
    base = load_scenario_file(file, o);
  } catch (const ScenarioError& e) {
    std::fprintf(stderr, "bench_estimate: %s\n", e.what());
    return 2;
  }
  std::vector<Scenario> plans;
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2, 4, 8, 16})
      for (int mb : {1, 2, 4})
        for (int z : {0, 1, 3})
          for (const char* sched : {"1f1b", "zb-h1"}) {
            Scenario s = base;
            s.plan.tp = tp;
            s.plan.pp = pp;
            s.plan.vpp = 1;
            s.plan.dp = base.cluster.total_gpus() / (tp * pp);
            s.plan.micro_batch = mb;
            s.plan.zero_stage = z;
            s.plan.schedule = sched;
            plans.push_back(s);
          }
  std::vector<double> rates;
  double sink = 0;
  int feasible = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const int n = 400000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      const Result r = estimate(plans[i % plans.size()]);
      sink += r.step_time_s;
      feasible += r.feasible;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(n / s);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("bench_estimate: %zu distinct plans (%d feasible evaluations), one core\n", plans.size(),
              feasible);
  std::printf("  estimate tier: %.0f plans/s (median of 5; min %.0f, max %.0f)\n", rates[2], rates[0],
              rates[4]);
  std::printf("  goal >= 1000000 plans/s per core: %s\n", rates[2] >= 1e6 ? "met" : "NOT met");
  return sink > 0 ? 0 : 1;
}
