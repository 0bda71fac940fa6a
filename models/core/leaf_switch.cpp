#include "models/core/leaf_switch.hpp"

#include <algorithm>
#include <limits>

namespace trainsim {

int switch_radix(const NetworkSpec& network) {
  return network.switch_radix > 0 ? network.switch_radix : kDefaultSwitchRadix;
}

int nodes_per_leaf(const std::string& topology, int radix, int nics_per_node) {
  const int down_ports = std::max(1, radix / 2);
  if (topology == "fat-tree") return std::max(1, down_ports / std::max(1, nics_per_node));
  if (topology == "rail-optimized") return down_ports;
  if (topology == "single-switch" || topology == "dragonfly" || topology == "torus")
    return std::numeric_limits<int>::max();
  return 1;
}

int nodes_per_leaf(const ClusterSpec& cluster) {
  return nodes_per_leaf(cluster.network.topology, switch_radix(cluster.network),
                        std::max(1, cluster.network.nics_per_node));
}

int leaf_rails(const ClusterSpec& cluster) {
  return cluster.network.topology == "rail-optimized" ? std::max(1, cluster.network.nics_per_node) : 0;
}

}  // namespace trainsim
