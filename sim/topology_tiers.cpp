// The switch tiers above the leaves of a fat-tree or rail-optimised fabric.
#include <algorithm>
#include <cmath>
#include <map>

#include "sim/topology.hpp"

namespace trainsim::sim {

void build_switch_tiers(TopologyBuilder& b, const std::vector<int>& leaves, int tiers) {
  const double lat = b.options().switch_hop_latency_s;
  if (tiers <= 1) {
    if (leaves.size() > 1) {  // one big switch above all leaves
      const int top = b.add_switch(2, 0, "spine0");
      for (int leaf : leaves) b.add_link(LinkKind::kSwitch, leaf, top, 1e18, lat, b.vertex_name(leaf) + "_up");
    }
    return;
  }
  const double port = b.port_bandwidth_bytes_per_s();
  const double o = std::max(1.0, b.cluster().network.oversubscription);
  const int half = std::max(1, b.options().switch_radix / 2);
  // A full leaf has `half` ports down and half / o up, one to each spine.
  const int spines = std::max(1, static_cast<int>(std::floor(half / o)));
  std::map<int, int> ports_down;  // leaf vertex -> NIC ports attached
  for (const auto& l : b.links())
    if (l.kind == LinkKind::kNic) ++ports_down[l.b];
  // Uplinks of one leaf: its attached ports / o, rounded up, each at the port rate. The taper
  // is kept (a leaf's uplink capacity is ~its NIC capacity / o) without thinning each uplink
  // below a port: two nodes on a leaf get two full-rate uplinks, not 1/16 of a port on each of
  // 32 spines.
  auto uplinks = [&](int leaf) {
    return std::clamp(static_cast<int>(std::ceil(ports_down[leaf] / o - 1e-9)), 1, spines);
  };
  auto uplink_bw = [&](int leaf) { return ports_down[leaf] * port / o / uplinks(leaf); };
  if (tiers == 2) {
    int used = 1;
    for (int leaf : leaves) used = std::max(used, uplinks(leaf));
    std::vector<int> spine;
    for (int s = 0; s < used; ++s) spine.push_back(b.add_switch(2, s, "spine" + std::to_string(s)));
    for (int leaf : leaves)
      for (int s = 0; s < uplinks(leaf); ++s)
        b.add_link(LinkKind::kSwitch, leaf, spine[s], uplink_bw(leaf), lat,
                   b.vertex_name(leaf) + "_spine" + std::to_string(s));
    return;
  }
  // Three tiers: pods of `half` leaves, each with `spines` aggregation switches; aggregation
  // switch j of every pod connects to the core switches of plane j (non-blocking above the
  // leaves: the taper is applied once, at the leaf), as many as its downlinks, at the port rate.
  const int pods = (static_cast<int>(leaves.size()) + half - 1) / half;
  std::vector<int> core;
  for (int j = 0; j < spines; ++j)
    for (int c = 0; c < half; ++c)
      core.push_back(b.add_switch(3, j * half + c, "core_p" + std::to_string(j) + "_" + std::to_string(c)));
  for (int p = 0; p < pods; ++p) {
    std::vector<int> agg;
    for (int j = 0; j < spines; ++j)
      agg.push_back(b.add_switch(2, p * spines + j, "agg_pod" + std::to_string(p) + "_" + std::to_string(j)));
    std::vector<double> agg_down(spines, 0.0);
    for (int i = p * half; i < std::min<int>((p + 1) * half, leaves.size()); ++i) {
      const int leaf = leaves[i];
      for (int j = 0; j < uplinks(leaf); ++j) {
        b.add_link(LinkKind::kSwitch, leaf, agg[j], uplink_bw(leaf), lat,
                   b.vertex_name(leaf) + "_agg" + std::to_string(j));
        agg_down[j] += uplink_bw(leaf);
      }
    }
    for (int j = 0; j < spines; ++j) {
      if (agg_down[j] <= 0) continue;
      const int up = std::clamp(static_cast<int>(std::ceil(agg_down[j] / port - 1e-9)), 1, half);
      for (int c = 0; c < up; ++c)
        b.add_link(LinkKind::kSwitch, agg[j], core[j * half + c], agg_down[j] / up, lat,
                   b.vertex_name(agg[j]) + "_core" + std::to_string(c));
    }
  }
}

}  // namespace trainsim::sim
