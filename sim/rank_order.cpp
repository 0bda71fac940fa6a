#include "sim/rank_order.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace trainsim::sim {

const char* to_string(RingOrder order) {
  return order == RingOrder::kRankOrder ? "rank" : "topology";
}

std::vector<int> topology_aware_order(const Topology& topo, const std::vector<int>& group) {
  std::vector<int> out = group;
  const int gpn = topo.cluster().gpus_per_node;
  auto key = [&](int gpu) {
    const int node = topo.node_of(gpu);
    return std::make_tuple(topo.leaf_of_gpu(node * gpn), node, topo.local_of(gpu));
  };
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return key(a) < key(b); });
  return out;
}

std::vector<std::vector<int>> gpus_by_node(const Topology& topo, const std::vector<int>& group) {
  std::vector<std::vector<int>> out;
  std::map<int, std::size_t> slot;
  for (int gpu : group) {
    auto [it, inserted] = slot.emplace(topo.node_of(gpu), out.size());
    if (inserted) out.emplace_back();
    out[it->second].push_back(gpu);
  }
  return out;
}

std::vector<std::vector<int>> channel_rings(const Topology& topo, const std::vector<int>& group,
                                            int channels) {
  const auto nodes = gpus_by_node(topo, group);
  if (nodes.size() <= 1) return std::vector<std::vector<int>>(std::max(1, channels), group);
  // Per node: its GPUs as a cycle in local-index (hence NIC) order, and the first GPU on each of
  // its distinct NICs.
  std::vector<std::vector<int>> cycle(nodes.size()), nic_heads(nodes.size());
  int distinct = 1 << 30;
  for (std::size_t j = 0; j < nodes.size(); ++j) {
    cycle[j] = nodes[j];
    std::stable_sort(cycle[j].begin(), cycle[j].end(),
                     [&](int a, int b) { return topo.local_of(a) < topo.local_of(b); });
    std::map<int, int> head;
    for (int gpu : cycle[j]) head.emplace(topo.nic_index_of(gpu), gpu);
    for (auto& [nic, gpu] : head) nic_heads[j].push_back(gpu);
    // A GPU with several NICs of its own (more NICs than GPUs) leads one channel per NIC.
    distinct = std::min<int>(distinct, static_cast<int>(head.size()) * topo.nics_of_gpu(cycle[j].front()));
  }
  const int C = channels > 0 ? channels : distinct;
  std::vector<std::vector<int>> rings(C);
  for (int c = 0; c < C; ++c) {
    auto& ring = rings[c];
    ring.reserve(group.size());
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      // Channel c leaves even nodes through x (the GPU on the node's c-th NIC) after walking the
      // cycle forward from x's successor; odd nodes are entered at x (same rail) and walked
      // backward to the successor, where the next even node is entered (same rail again). All
      // channels then share the intra-node edges, which the plan coalesces into one flow each.
      const auto& cy = cycle[j];
      const int k = static_cast<int>(cy.size());
      const int x = nic_heads[j][c % nic_heads[j].size()];
      const int px = static_cast<int>(std::find(cy.begin(), cy.end(), x) - cy.begin());
      if (j % 2 == 0)
        for (int s = 1; s <= k; ++s) ring.push_back(cy[(px + s) % k]);
      else
        for (int s = 0; s < k; ++s) ring.push_back(cy[((px - s) % k + k) % k]);
    }
  }
  return rings;
}

}  // namespace trainsim::sim
