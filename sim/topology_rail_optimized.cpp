// Rail-optimised fat-tree (NVIDIA DGX SuperPOD reference architecture): NIC r of every node on
// rail r's leaf, one leaf per rail per radix/2 nodes (a "scalable unit" of 32 nodes on 8 rail
// leaves), spines above every leaf (topology_tiers.cpp), so same-rail traffic turns at the
// leaf and cross-rail traffic climbs one tier.
#include <algorithm>

#include "models/core/leaf_switch.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

void build_rail_optimized(TopologyBuilder& b) {
  const int N = b.cluster().nodes;
  const int nics = b.nics_per_node();
  const int unit_nodes = trainsim::nodes_per_leaf("rail-optimized", b.options().switch_radix, nics);
  const int groups = (N + unit_nodes - 1) / unit_nodes;
  std::vector<int> leaves;
  for (int grp = 0; grp < groups; ++grp)
    for (int r = 0; r < nics; ++r)
      leaves.push_back(b.add_switch(1, static_cast<int>(leaves.size()),
                                    "leaf_su" + std::to_string(grp) + "_rail" + std::to_string(r)));
  for (int i = 0; i < b.nic_count(); ++i) {
    const int node = i / nics, rail = i % nics;
    b.attach_nic(i, leaves[(node / unit_nodes) * nics + rail]);
  }
  int tiers = b.options().fat_tree_tiers;
  if (tiers <= 0)
    tiers = leaves.size() <= 1 ? 1 : (static_cast<int>(leaves.size()) <= b.options().switch_radix ? 2 : 3);
  build_switch_tiers(b, leaves, tiers);
}

}  // namespace trainsim::sim
