// A 2D/3D torus of routers, one per node, with wrap-around links (a dimension of size 2 gets a
// single link, as a wrap would duplicate it); dimensions from network.torus_dims or near-square.
#include <cmath>

#include "models/core/scenario_error.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

void build_torus(TopologyBuilder& b) {
  const int N = b.cluster().nodes;
  const int nics = b.nics_per_node();
  std::vector<int> dims = b.options().torus_dims;
  if (dims.empty()) {
    int d0 = static_cast<int>(std::sqrt(static_cast<double>(N)));
    while (d0 > 1 && N % d0 != 0) --d0;
    dims = {d0, N / d0};
  }
  long prod = 1;
  for (int d : dims) prod *= std::max(1, d);
  if (prod != N)
    throw ScenarioError("torus_dims", "the product of the torus dimensions (" + std::to_string(prod) +
                                          ") must equal the node count (" + std::to_string(N) + ")");
  const double port = b.port_bandwidth_bytes_per_s();
  std::vector<int> router;
  for (int n = 0; n < N; ++n) router.push_back(b.add_switch(1, n, "router" + std::to_string(n)));
  for (int i = 0; i < b.nic_count(); ++i) b.attach_nic(i, router[i / nics]);
  long stride = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const int size = dims[d];
    for (int n = 0; n < N; ++n) {
      const int coord = static_cast<int>((n / stride) % size);
      if (size < 2 || (size == 2 && coord == 1)) continue;
      const int next = static_cast<int>(n + ((coord + 1) % size - coord) * stride);
      b.add_link(LinkKind::kSwitch, router[n], router[next], port * nics, b.options().switch_hop_latency_s,
                 "torus_d" + std::to_string(d) + "_" + std::to_string(n));
    }
    stride *= size;
  }
}

}  // namespace trainsim::sim
