// Speed of the simulate tier: one training step of
//   gpt3-175b   GPT-3 175B on 1,024 A100 (128 DGX A100 nodes), TP8 PP16 DP8, global batch 1536,
//               1F1B, full recompute                                   goal <= 2 s wall
//   llama3-405b Llama-3 405B on 16,384 H100 (2,048 DGX H100 nodes), the published plan
//               (Llama 3 paper sec. 3.3.2): TP8 CP2 PP16 DP64, interleaved (vpp 2), ZeRO-1,
//               seq 8192, global batch 2048 (16M tokens)                goal <= 30 s wall
// peak memory goal <= 4 GiB. Each case runs in a fresh child process (one s4u::Engine per
// process), so wall time includes loading the scenario and building the platform, and peak RSS
// is the child's alone. Prints the median of --repeat runs. A program, not a test.
//
// usage: bench_step [--cases gpt3-175b,llama3-405b] [--repeat 1] [--limit-s 600]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "models/estimate/estimate.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "sim/step_simulation.hpp"

namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json case_json(const std::string& name) {
  if (name == "gpt3-175b")
    return {{"schema_version", 1},
            {"name", "bench-gpt3-175b-1024xA100"},
            {"model", "gpt3-175b"},
            {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 128}}},
            {"plan",
             {{"tp", 8}, {"pp", 16}, {"dp", 8}, {"schedule", "1f1b"}, {"micro_batch", 1},
              {"global_batch", 1536}, {"recompute", "full"}}}};
  if (name == "llama3-405b") {
    std::vector<int> layers(32, 4);
    layers.front() = layers.back() = 3;
    return {{"schema_version", 1},
            {"name", "bench-llama3-405b-16384xH100"},
            {"model", "llama3-405b"},
            {"cluster", {{"base", "dgx-h100-superpod"}, {"nodes", 2048}}},
            {"plan",
             {{"tp", 8}, {"cp", 2}, {"pp", 16}, {"dp", 64}, {"sp", true}, {"schedule", "interleaved"},
              {"vpp", 2}, {"micro_batch", 1}, {"global_batch", 2048}, {"zero_stage", 1},
              {"recompute", "selective"},
              // 126 layers over 32 chunks: 3 in the first and last (embedding, logits), 4 elsewhere
              {"layers_per_stage", layers}}}};
  }
  return nullptr;
}

struct Figures {
  double wall_s = 0, step_s = 0, estimate_s = 0, rss_bytes = 0, transfers = 0;
};

int run_case(const std::string& name) {
  using namespace trainsim;
  const auto t0 = Clock::now();
  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  const Scenario sc = parse_scenario(resolve_scenario_json(case_json(name), options, "."));
  nlohmann::json extra = nlohmann::json::object();
  const Result r = sim::simulate_step(sc, sim::SimulateOptions{}, extra);
  if (r.step_time_s <= 0) {
    std::fprintf(stderr, "%s: not simulated: %s\n", name.c_str(), r.reason.c_str());
    return 1;
  }
  const auto t1 = Clock::now();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double transfers = extra.contains("simulation")
                               ? extra["simulation"].value("transfers_started", 0.0)
                               : 0.0;
  // A plan the simulate tier declines (infeasible, beyond its bounds) is answered by the
  // estimate in no time: a figure for it would time nothing.
  if (transfers <= 0) {
    std::fprintf(stderr, "%s: not simulated:", name.c_str());
    for (const std::string& w : r.warnings) std::fprintf(stderr, " %s;", w.c_str());
    std::fprintf(stderr, "\n");
    return 1;
  }
  std::printf("%.6f %.6f %.6f %.0f %.0f\n", std::chrono::duration<double>(t1 - t0).count(),
              r.step_time_s, estimate(sc).step_time_s, ru.ru_maxrss * 1024.0, transfers);
  return 0;
}

bool spawn(const char* self, const std::string& name, double limit_s, Figures& out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    execl(self, self, "--case", name.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  const auto start = Clock::now();
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (std::chrono::duration<double>(Clock::now() - start).count() > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(fds[0]);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  char buf[512] = {0};
  const ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  std::istringstream in(buf);
  in >> out.wall_s >> out.step_s >> out.estimate_s >> out.rss_bytes >> out.transfers;
  return static_cast<bool>(in);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--case") == 0) return run_case(argv[2]);
  std::vector<std::string> cases = {"gpt3-175b", "llama3-405b"};
  int repeat = 1;
  double limit_s = 600;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) {
      cases.clear();
      std::stringstream ss(argv[++i]);
      for (std::string c; std::getline(ss, c, ',');) cases.push_back(c);
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--limit-s" && i + 1 < argc) {
      limit_s = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--cases gpt3-175b,llama3-405b] [--repeat 1] [--limit-s 600]\n",
                   argv[0]);
      return 2;
    }
  }
  char host[256] = "?";
  gethostname(host, sizeof host);
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = -1;
  std::printf("# bench_step: one simulated training step per case, machine %s, %u hardware threads, "
              "load average %.2f at start, median of %d runs\n",
              host, std::thread::hardware_concurrency(), load[0], repeat);
  std::printf("# %-12s %10s %12s %12s %12s %10s\n", "case", "wall(s)", "step(s)", "estimate(s)",
              "transfers", "rss(MiB)");
  for (const auto& c : cases) {
    if (case_json(c).is_null()) {
      std::printf("  %-12s unknown case\n", c.c_str());
      continue;
    }
    std::vector<Figures> runs;
    bool ok = true;
    for (int r = 0; r < repeat && ok; ++r) {  // the child's stderr says why it failed
      Figures f;
      ok = spawn(argv[0], c, limit_s, f);
      if (ok) runs.push_back(f);
    }
    if (!ok) {
      std::printf("  %-12s > %.0f s (stopped) or failed\n", c.c_str(), limit_s);
      std::fflush(stdout);
      continue;
    }
    std::sort(runs.begin(), runs.end(), [](const Figures& a, const Figures& b) { return a.wall_s < b.wall_s; });
    const Figures& m = runs[runs.size() / 2];
    std::printf("  %-12s %10.3f %12.4f %12.4f %12.0f %10.1f\n", c.c_str(), m.wall_s, m.step_s,
                m.estimate_s, m.transfers, m.rss_bytes / (1024.0 * 1024));
    std::fflush(stdout);
  }
  return 0;
}
