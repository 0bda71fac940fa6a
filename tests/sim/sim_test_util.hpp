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

namespace trainsim::sim::testing {

inline std::vector<double> in_child_process(const std::function<std::vector<double>()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    std::vector<double> out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child failed: %s\n", e.what());
      code = 1;
    }
    const double n = static_cast<double>(out.size());
    (void)!write(fds[1], &n, sizeof n);
    if (!out.empty()) (void)!write(fds[1], out.data(), out.size() * sizeof(double));
    close(fds[1]);
    std::fflush(nullptr);
    _exit(code);
  }
  close(fds[1]);
  std::vector<double> out;
  double n = 0;
  if (read(fds[0], &n, sizeof n) == sizeof n && n > 0) {
    out.resize(static_cast<std::size_t>(n));
    std::size_t got = 0;
    auto* p = reinterpret_cast<char*>(out.data());
    while (got < out.size() * sizeof(double)) {
      const ssize_t r = read(fds[0], p + got, out.size() * sizeof(double) - got);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("simulation child process failed (status " + std::to_string(status) +
                             ")");
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
