// The SimGrid platform of one cluster, and the process's one s4u::Engine (ARCHITECTURE.md
// "SimGrid: facts that shape sim/"). No SimGrid header leaks from here: callers see GPU
// indices, seconds and bytes.
//
// Every GPU is a host "gpu<i>"; every TopologyLink becomes a split-duplex SimGrid link. A single
// custom NetZone answers route queries from the Topology (O(hops), ECMP or destination-mod-k),
// so 16k GPUs need neither an all-pairs routing table nor a Dijkstra per flow.
//
// Activities are driven without actors and without a pre-built DAG: start_transfer() creates
// a Comm when its inputs are ready, one global Activity::on_completion_cb dispatches each
// completion to its callback, and the CommPtr is kept alive until then. Timers (after()) carry
// analytically added latencies.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/core/specs.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

class LinkStats;

class Platform {
 public:
  // Configures SimGrid for ideal alpha-beta (network/model:CM02, crosstraffic 0, TCP-gamma 0)
  // and builds the platform. Only one Platform (one s4u::Engine) may exist per process: a
  // second call throws std::logic_error. Tests and sweeps run each platform in a child process.
  static Platform& create(const ClusterSpec& cluster, const TopologyOptions& options = {});
  static bool exists();

  const Topology& topology() const;
  double now_s() const;

  // Moves `bytes` from GPU src to GPU dst (a Comm with max-min sharing on its route); calls
  // on_done at the simulated time it arrives. salt varies the ECMP path between flows; channel
  // picks among a GPU's NICs (Topology::nic_of_channel).
  void start_transfer(int src_gpu, int dst_gpu, double bytes, std::function<void()> on_done,
                      uint64_t salt = 0, int channel = -1);
  // One SimGrid activity moving `bytes` over every hop at once (the union of their routes, a
  // link used twice loaded twice): the hops of one pipelined channel progress together, at the
  // rate of the most contended of their links. Returns the route latency the activity pays
  // (the largest hop's).
  struct Hop {
    int src_gpu = 0, dst_gpu = 0, channel = -1;
  };
  double start_bundle(const std::vector<Hop>& hops, double bytes, std::function<void()> on_done,
                      uint64_t salt = 0);
  // Calls fn at now_s() + delay_s.
  void after(double delay_s, std::function<void()> fn);
  // Runs the simulation until no activity or timer is left.
  void run();

  LinkStats& link_stats();
  std::size_t transfers_started() const;
  // Transfers whose route differs from the one the healthy fabric would give (link faults:
  // the failed links' flows and those ECMP rehashed over the smaller surviving set).
  std::size_t transfers_rerouted() const;

  ~Platform();
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

 private:
  Platform();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim::sim
