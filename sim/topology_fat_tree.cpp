// A fat-tree (Leiserson 1985; the k-ary form of Al-Fares et al. SIGCOMM'08): all NICs of a node on
// one leaf, radix/2 down ports per leaf, switch tiers above (topology_tiers.cpp).
#include <algorithm>

#include "models/core/leaf_switch.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

void build_fat_tree(TopologyBuilder& b) {
  const int N = b.cluster().nodes;
  const int nics = b.nics_per_node();
  const int nodes_per_leaf = trainsim::nodes_per_leaf("fat-tree", b.options().switch_radix, nics);
  const int count = (N + nodes_per_leaf - 1) / nodes_per_leaf;
  std::vector<int> leaves;
  for (int i = 0; i < count; ++i) leaves.push_back(b.add_switch(1, i, "leaf" + std::to_string(i)));
  for (int i = 0; i < b.nic_count(); ++i) b.attach_nic(i, leaves[(i / nics) / nodes_per_leaf]);
  int tiers = b.options().fat_tree_tiers;
  if (tiers <= 0) tiers = count <= 1 ? 1 : (count <= b.options().switch_radix ? 2 : 3);
  build_switch_tiers(b, leaves, tiers);
}

}  // namespace trainsim::sim
