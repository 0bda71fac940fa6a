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

#include "models/specs.hpp"
#include "sim/forked_run.hpp"

namespace trainsim::sim::testing {

// Runs fn in a forked child (one SimGrid engine per process) and returns its numbers.
inline std::vector<double> in_child_process(const std::function<std::vector<double>()>& fn) {
  ForkedRun run = ForkedRun::start(fn);
  std::vector<double> out = run.wait();
  if (!run.error().empty()) throw std::runtime_error("simulation child process failed: " + run.error());
  return out;
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
