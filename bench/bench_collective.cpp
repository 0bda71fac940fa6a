// Speed of the network simulator: a 1 GiB all-reduce over 1,024 / 4,096 / 16,384 / 65,536 GPUs
// of a rail-optimised DGX H100 fat-tree at flow granularity, with the tuner's choice (auto:
// NVLS-tree at these sizes) and forced ring, and a ring at step granularity over 1,024 GPUs
// for comparison. Each case runs in a fresh child process (SimGrid allows one engine per
// process), so wall time includes loading the cluster and building the platform, and peak RSS
// is the child's alone. Prints the median of --repeat runs.
//
// usage: bench_collective [--gpus 1024,4096,16384,65536] [--repeat 3] [--step-limit-s 300]
//                         [--cluster dgx-h100-superpod] [--skip-step]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "models/scenario/scenario_loader.hpp"
#include "sim/cluster_source.hpp"
#include "sim/collective_engine.hpp"
#include "sim/platform.hpp"
#include "sim/step_simulation.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double wall_s = 0, build_s = 0, sim_time_s = 0, busbw = 0, rss_bytes = 0, transfers = 0, activities = 0;
  std::string played;
};

// The child: one case, figures on stdout as one line of numbers.
int run_case(const std::string& cluster_name, int gpus, const std::string& granularity,
             int channels, const std::string& algo) {
  using namespace trainsim;
  const auto t0 = Clock::now();
  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  ClusterSpec cluster = sim::with_at_least_gpus(sim::load_cluster(cluster_name, options), gpus);
  cluster.nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  sim::TopologyOptions topo_options = sim::topology_options(cluster);
  sim::Platform& platform = sim::Platform::create(cluster, topo_options);
  const auto t1 = Clock::now();
  sim::CollectiveEngine engine(platform);
  sim::PlanRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.algo = collective_algo_from_string(algo, "algo");
  req.bytes = 1024.0 * 1024 * 1024;
  for (int g = 0; g < gpus; ++g) req.group.push_back(g);
  req.granularity = sim::granularity_from_string(granularity, "granularity");
  req.channels = channels;
  const sim::CollectiveResult r = engine.run_one(req);
  const auto t2 = Clock::now();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("%.6f %.6f %.9f %.6e %.0f %zu %zu %s\n", std::chrono::duration<double>(t2 - t0).count(),
              std::chrono::duration<double>(t1 - t0).count(), r.time_s, r.busbw_bytes_per_s(),
              ru.ru_maxrss * 1024.0, r.transfers, r.activities, to_string(r.algo));
  return 0;
}

// The parent: runs `self --case ...` and parses its line; kills it after limit_s.
bool spawn(const char* self, const std::string& cluster, int gpus, const std::string& gran,
           int channels, const std::string& algo, double limit_s, Figures& out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    const std::string g = std::to_string(gpus), c = std::to_string(channels);
    execl(self, self, "--case", cluster.c_str(), g.c_str(), gran.c_str(), c.c_str(), algo.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  const auto start = Clock::now();
  int status = 0;
  bool done = false;
  while (!done) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      done = true;
    else if (std::chrono::duration<double>(Clock::now() - start).count() > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(fds[0]);
      return false;
    } else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  char buf[512] = {0};
  const ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  std::istringstream in(buf);
  in >> out.wall_s >> out.build_s >> out.sim_time_s >> out.busbw >> out.rss_bytes >> out.transfers >>
      out.activities >> out.played;
  return static_cast<bool>(in);
}

Figures median(std::vector<Figures> v) {
  std::sort(v.begin(), v.end(),
            [](const Figures& a, const Figures& b) { return a.wall_s < b.wall_s; });
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::strcmp(argv[1], "--case") == 0)
    return run_case(argv[2], std::atoi(argv[3]), argv[4], std::atoi(argv[5]), argv[6]);
  std::string cluster = "dgx-h100-superpod";
  std::vector<int> sizes = {1024, 4096, 16384, 65536};
  int repeat = 3;
  double step_limit_s = 300;
  bool skip_step = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gpus" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string p; std::getline(ss, p, ',');) sizes.push_back(std::atoi(p.c_str()));
    } else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--step-limit-s" && i + 1 < argc)
      step_limit_s = std::atof(argv[++i]);
    else if (a == "--cluster" && i + 1 < argc)
      cluster = argv[++i];
    else if (a == "--skip-step")
      skip_step = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--gpus 1024,4096,16384] [--repeat 3] [--step-limit-s 300] "
                   "[--cluster NAME] [--skip-step]\n",
                   argv[0]);
      return 2;
    }
  }
  char host[256] = "?";
  gethostname(host, sizeof host);
  std::printf(
      "# bench_collective: 1 GiB all-reduce on %s (rail-optimized), machine %s, "
      "%u hardware threads, median of %d runs\n",
      cluster.c_str(), host, std::thread::hardware_concurrency(), repeat);
  std::printf("# %-5s %-9s %6s %4s %10s %10s %10s %10s %12s %12s %10s\n", "gran", "algo", "gpus", "chan",
              "wall(s)", "build(s)", "transfers", "activities", "sim(ms)", "busbw(GB/s)", "rss(MiB)");
  struct Case {
    std::string gran;
    int gpus;
    int channels;
    int runs;
    double limit;
    std::string algo = "ring";
  };
  std::vector<Case> cases;
  for (int g : sizes) {
    cases.push_back({"flow", g, 0, repeat, 600, "auto"});
    cases.push_back({"flow", g, 0, repeat, 600, "ring"});
  }
  // Step granularity at 1,024 GPUs: 2 x 1023 steps x 1024 ranks = 2.1M transfers on one
  // channel (8 channels would be 16.8M); compared with flow granularity on the same channel.
  if (!skip_step) {
    cases.push_back({"flow", 1024, 1, repeat, 600});
    cases.push_back({"step", 1024, 1, 1, step_limit_s});
  }
  for (const auto& c : cases) {
    std::vector<Figures> runs;
    bool ok = true;
    for (int r = 0; r < c.runs && ok; ++r) {
      Figures f;
      ok = spawn(argv[0], cluster, c.gpus, c.gran, c.channels, c.algo, c.limit, f);
      if (ok) runs.push_back(f);
    }
    const std::string chan = c.channels == 0 ? "nic" : std::to_string(c.channels);
    if (!ok) {
      std::printf("  %-5s %-9s %6d %4s  > %.0f s (stopped) or failed\n", c.gran.c_str(), c.algo.c_str(), c.gpus,
                  chan.c_str(), c.limit);
      std::fflush(stdout);
      continue;
    }
    const Figures m = median(runs);
    std::printf("  %-5s %-9s %6d %4s %10.3f %10.3f %10.0f %10.0f %12.3f %12.1f %10.1f\n", c.gran.c_str(),
                m.played.c_str(), c.gpus, chan.c_str(), m.wall_s, m.build_s, m.transfers, m.activities,
                m.sim_time_s * 1e3, m.busbw / 1e9, m.rss_bytes / (1024.0 * 1024));
    std::fflush(stdout);
  }
  return 0;
}
