// Per-link traffic: bytes carried by each direction of each link (always on, O(route length)
// per transfer) and, when sampling is enabled, utilisation over time as piecewise-constant
// intervals, written as Chrome/Perfetto counter tracks ("ph": "C") for the hottest links.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/topology.hpp"

namespace trainsim::sim {

struct LinkLoad {
  DirectedLink link = 0;
  std::string name;  // "<link name>:up" / ":down"
  LinkKind kind = LinkKind::kSwitch;
  double bytes = 0;
  double bandwidth_bytes_per_s = 0;
  double busy_share = 0;  // bytes / (bandwidth * window): mean utilisation over the window
};

struct UtilisationSample {
  double start_s = 0;
  double end_s = 0;
  double bytes_per_s = 0;
};

class LinkStats {
 public:
  explicit LinkStats(const Topology& topo);

  // src_gpu attributes the bytes to the GPU's owner (set_owners; several jobs on one fabric).
  void add_transfer(const Route& route, double bytes, int src_gpu = -1);
  // Per-owner accounting: owner_of_gpu[g] in [0, owners) or -1 (not counted per owner).
  void set_owners(std::vector<int> owner_of_gpu, int owners);
  int owners() const { return static_cast<int>(owner_bytes_.size()); }
  double bytes(DirectedLink link) const { return bytes_[link]; }
  double owner_bytes(int owner, DirectedLink link) const { return owner_bytes_[owner][link]; }
  // Utilisation series: the engine reports, per link, bytes moved during [start_s, end_s].
  // A run keeps at most kMaxSamples intervals (2.1 M, 50 MB): a large step records one per
  // link of every transfer in flight at every start and completion, which grows with the square
  // of the transfers in flight. Past the budget sampling stops; sampling_stopped_s() says when
  // (negative while it has not).
  static constexpr std::size_t kMaxSamples = std::size_t{1} << 21;
  // Counter points per link in write_chrome_trace; more are averaged into this many time bins.
  static constexpr std::size_t kMaxCounterPoints = 20000;
  void enable_sampling(bool on) { sampling_ = on; }
  bool sampling() const { return sampling_; }
  double sampling_stopped_s() const { return sampling_stopped_s_; }
  void add_interval(DirectedLink link, double start_s, double end_s, double bytes);
  void reset();

  // The `count` links busiest relative to their bandwidth, with their mean utilisation over
  // [window_start_s, window_end_s].
  std::vector<LinkLoad> hottest(std::size_t count, double window_start_s,
                                double window_end_s) const;
  // The `count` hottest links of each kind that carried traffic (NVLink, NIC, switch, PCIe),
  // kinds in that order: NVLink links are ten times a NIC's rate, so a single ranking would
  // rarely show them even when they limit a collective.
  std::vector<LinkLoad> hottest_by_kind(std::size_t count, double window_start_s,
                                        double window_end_s) const;
  const std::vector<UtilisationSample>& series(DirectedLink link) const;

  // Chrome trace JSON (Perfetto reads it): one counter track per link in `links`
  // ("utilisation_%"), timestamps in microseconds.
  void write_chrome_trace(std::ostream& out, const std::vector<DirectedLink>& links) const;

 private:
  std::vector<LinkLoad> ranked(std::size_t count, double t0, double t1,
                               const std::function<bool(int)>& keep) const;
  const Topology& topo_;
  std::vector<double> bytes_;  // per directed link
  std::vector<int> owner_of_gpu_;
  std::vector<std::vector<double>> owner_bytes_;  // per owner, per directed link
  std::vector<std::vector<UtilisationSample>> series_;
  bool sampling_ = false;
  std::size_t samples_ = 0;
  double sampling_stopped_s_ = -1;
};

std::string directed_link_name(const Topology& topo, DirectedLink link);

}  // namespace trainsim::sim
