// The network topologies, one line each (CONVENTIONS.md #17). Adding one: a new file
// sim/topology_<name>.cpp defining `void build_NAME(TopologyBuilder&)`, and its line below
// (plus its name in the scenario loader's list of cluster.network.topology values).
#include "sim/topology.hpp"

#define TRAINSIM_TOPOLOGIES(X)            \
  X("fat-tree", fat_tree)                 \
  X("rail-optimized", rail_optimized)     \
  X("dragonfly", dragonfly)               \
  X("torus", torus)                       \
  X("single-switch", single_switch)

namespace trainsim::sim {

#define TRAINSIM_DECLARE(key, fn) void build_##fn(TopologyBuilder&);
TRAINSIM_TOPOLOGIES(TRAINSIM_DECLARE)
#undef TRAINSIM_DECLARE

const std::vector<TopologyKind>& topology_kinds() {
#define TRAINSIM_ENTRY(key, fn) TopologyKind{key, build_##fn},
  static const std::vector<TopologyKind> all = {TRAINSIM_TOPOLOGIES(TRAINSIM_ENTRY)};
#undef TRAINSIM_ENTRY
  return all;
}

}  // namespace trainsim::sim
