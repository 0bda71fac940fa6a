// Helpers for sim/ tests. SimGrid allows one s4u::Engine per process, so every test that
// builds a Platform runs it in a forked child (in_child_process) and gets numbers back through a
// pipe; the test binary then works both under ctest (one process per test) and run directly.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/core/specs.hpp"
#include "models/workload/workload.hpp"
#include "sim/collective_engine.hpp"
#include "sim/forked_run.hpp"
#include "sim/platform.hpp"

namespace trainsim::sim::testing {

// Gives a synthetic workload (per-stage F, B+W and W seconds in wl.stages) the op graph the step
// player plays: one compute op per pass and chunk, no collectives. Interleaved chunks split a
// device's costs evenly; DualPipe's two directions each run a whole stage (device d: stages d
// and p-1-d).
inline void give_programs(Workload& wl) {
  const bool split = wl.schedule->splits_backward();
  wl.split_backward = split;
  const bool dual = wl.schedule->bidirectional() && wl.pp > 1;
  const int chunks = wl.schedule->chunks_per_device(wl.pp, wl.vpp);
  wl.placement = RankPlacement(1, 1, 1, wl.pp);
  wl.programs.assign(wl.pp, DeviceProgram{});
  auto pass = [](double seconds) {
    PassProgram p;
    OpBlock b;
    b.name = "synthetic";
    ComputeOp op;
    b.compute.push_back(op);
    b.compute_s.push_back(seconds);
    p.blocks.push_back(b);
    return p;
  };
  for (int d = 0; d < wl.pp; ++d)
    for (int c = 0; c < chunks; ++c) {
      const StageWork& s = wl.stages[dual && c == 1 ? wl.pp - 1 - d : d];
      const double div = dual ? 1.0 : chunks;
      ChunkProgram ch;
      ch.program(PassKind::kForward) = pass(s.forward_s / div);
      if (wl.split_backward) {
        ch.program(PassKind::kBackwardInput) = pass((s.backward_s - s.backward_weight_s) / div);
        ch.program(PassKind::kBackwardWeight) = pass(s.backward_weight_s / div);
      } else {
        ch.program(PassKind::kBackward) = pass(s.backward_s / div);
      }
      wl.programs[d].chunks.push_back(ch);
    }
}

// Runs fn in a forked child (one SimGrid engine per process) and returns its numbers.
inline std::vector<double> in_child_process(const std::function<std::vector<double>()>& fn) {
  ForkedRun run = ForkedRun::start(fn);
  std::vector<double> out = run.wait();
  if (!run.error().empty()) throw std::runtime_error("simulation child process failed: " + run.error());
  return out;
}

// Ring all-reduces of 1 GiB over GPUs {0, 2} (A) and {1, 3} (B) on `platform`: A alone, then A
// and B at once. Returns {A alone, A shared, B shared} in seconds.
inline std::vector<double> two_concurrent_ring_all_reduces(Platform& platform) {
  CollectiveEngine engine(platform);
  PlanRequest a;
  a.op = CollectiveOp::kAllReduce;
  a.algo = CollectiveAlgo::kRing;
  a.bytes = 1024.0 * 1024 * 1024;
  a.group = {0, 2};
  PlanRequest b = a;
  b.group = {1, 3};
  const double alone = engine.run_one(a).time_s;
  double ta = 0, tb = 0;
  engine.start(a, [&](const CollectiveResult& r) { ta = r.time_s; });
  engine.start(b, [&](const CollectiveResult& r) { tb = r.time_s; });
  platform.run();
  return {alone, ta, tb};
}

// A synthetic cluster: bandwidths per GPU (NVLink both directions, as presets write it) and per
// NIC (one direction), efficiencies 1 unless given, so closed forms are easy to write by hand.
inline ClusterSpec test_cluster(int nodes, int gpus_per_node, double nvlink_bytes_per_s,
                                double nic_bytes_per_s, int nics_per_node,
                                const std::string& topology = "single-switch",
                                double oversubscription = 1.0) {
  ClusterSpec c;
  c.name = "test";
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.intra_node.bandwidth_bytes_per_s = nvlink_bytes_per_s;
  c.intra_node.latency_s = 2e-6;
  c.intra_node.efficiency = 1.0;
  c.network.topology = topology;
  c.network.nic_bandwidth_bytes_per_s = nic_bytes_per_s;
  c.network.nics_per_node = nics_per_node;
  c.network.latency_s = 5e-6;
  c.network.oversubscription = oversubscription;
  c.network.efficiency = 1.0;
  c.pcie_bandwidth_bytes_per_s = 25e9;
  return c;
}

inline std::vector<int> iota_group(int n, int first = 0) {
  std::vector<int> g(n);
  for (int i = 0; i < n; ++i) g[i] = first + i;
  return g;
}

}  // namespace trainsim::sim::testing
