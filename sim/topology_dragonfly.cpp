// Balanced dragonfly (Kim et al. ISCA'08): p nodes per router, a = 2p routers per group, all
// routers of a group fully connected, one global link between every pair of groups.
#include <algorithm>

#include "sim/topology.hpp"

namespace trainsim::sim {

void build_dragonfly(TopologyBuilder& b) {
  const int N = b.cluster().nodes;
  const int nics = b.nics_per_node();
  const int p = std::max(1, b.options().dragonfly_nodes_per_router);
  const int a = 2 * p;
  const int routers = (N + p - 1) / p;
  const int groups = (routers + a - 1) / a;
  const double port = b.port_bandwidth_bytes_per_s();
  std::vector<int> router;
  for (int r = 0; r < routers; ++r)
    router.push_back(b.add_switch(1, r, "router_g" + std::to_string(r / a) + "_" + std::to_string(r % a)));
  for (int i = 0; i < b.nic_count(); ++i) b.attach_nic(i, router[(i / nics) / p]);
  const double lat = b.options().switch_hop_latency_s;
  // Router links carry a node's full injection (nics ports) so the local/global mesh is not
  // thinner than the NICs feeding it.
  const double wide = port * nics;
  for (int grp = 0; grp < groups; ++grp) {
    const int lo = grp * a, hi = std::min(routers, lo + a);
    for (int i = lo; i < hi; ++i)
      for (int j = i + 1; j < hi; ++j)
        b.add_link(LinkKind::kSwitch, router[i], router[j], wide, lat,
                   "local_" + std::to_string(i) + "_" + std::to_string(j));
  }
  for (int gi = 0; gi < groups; ++gi)
    for (int gj = gi + 1; gj < groups; ++gj) {
      const int size_i = std::min(a, routers - gi * a), size_j = std::min(a, routers - gj * a);
      const int ri = gi * a + gj % size_i, rj = gj * a + gi % size_j;
      b.add_link(LinkKind::kSwitch, router[ri], router[rj], wide, lat,
                 "global_g" + std::to_string(gi) + "_g" + std::to_string(gj));
    }
}

}  // namespace trainsim::sim
