// Topology-aware rank orders: rings whose node order follows the
// switch tree, so that consecutive nodes share a leaf and only the ring's few leaf-to-leaf edges
// climb to the spines; and NCCL-like multi-channel rings that leave each node through a
// different NIC, so that a cross-node ring reaches the node's total NIC bandwidth.
#pragma once

#include <vector>

#include "sim/topology.hpp"

namespace trainsim::sim {

enum class RingOrder { kRankOrder, kTopologyAware };
const char* to_string(RingOrder order);

// The group's GPUs sorted by (leaf of the node's first NIC, node, local index): nodes under one
// leaf become consecutive, leaves of one pod become consecutive (leaves are numbered by pod).
std::vector<int> topology_aware_order(const Topology& topo, const std::vector<int>& group);

// The group's GPUs per node, nodes in order of first appearance, GPUs in group order.
std::vector<std::vector<int>> gpus_by_node(const Topology& topo, const std::vector<int>& group);

// Rings, one per channel, each a permutation of the group. Nodes keep the group's node order;
// channel c leaves every other node through the GPU on the node's c-th NIC, and node-crossing
// edges join GPUs on the same rail (except the wrap-around edge when the node count is odd).
// Inside a node all channels walk one cycle of the GPUs, so their intra-node edges coincide.
// channels <= 0: one channel per distinct NIC used by the group on each node (1 on one node);
// a GPU with several NICs of its own leads one channel per NIC (Topology::nic_of_channel).
std::vector<std::vector<int>> channel_rings(const Topology& topo, const std::vector<int>& group,
                                            int channels = 0);

}  // namespace trainsim::sim
