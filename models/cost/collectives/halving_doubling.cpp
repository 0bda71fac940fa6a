// Rabenseifner's halving-doubling (recursive halving reduce-scatter + recursive doubling
// all-gather; Thakur, Rabenseifner & Gropp 2005), which NCCL does not ship: run only when forced.
//   2 log2(n) alpha + 2 (n-1)/n S / B; a non-power-of-two n costs one more exchange of S each
//   way. Across nodes the partners at distance 1, 2, 4, ... are inside a node first, so only
//   (m-1)/(m k) S crosses each GPU's NIC (k ranks per node, m nodes). alpha is the cluster's
//   one-way latency of the domain crossed.
#include <cmath>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

double log2_ceil(int n) { return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n))); }

class HalvingDoubling final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "hd"; }
  const char* nccl_name() const override { return "HalvingDoubling"; }
  bool tuned() const override { return false; }
  bool supports(CollectiveOp op) const override {
    return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
           op == CollectiveOp::kAllGather;
  }
  AlgorithmCost cost(CollectiveOp op, CollectiveProtocol protocol, double,
                     const nccl::Terms& t) const override {
    AlgorithmCost c;
    if (protocol != CollectiveProtocol::kSimple) return c;
    c.supported = true;
    const int n = t.ranks;
    const double passes = op == CollectiveOp::kAllReduce ? 2 : 1;
    const bool pow2 = (n & (n - 1)) == 0;
    const double a_intra = t.fabric.intra_latency_s, a_net = t.fabric.net_latency_s;
    const double step = t.nodes > 1 ? a_net : a_intra;
    const double ring_bw = t.ring_bus_bytes_per_s();
    double lat = 0, per_byte = 0;
    if (t.nodes > 1 && t.max_ppn > 1) {
      const int k = t.max_ppn, m = t.nodes;
      lat = passes * (log2_ceil(k) * a_intra + log2_ceil(m) * a_net);
      per_byte = passes * ((k - 1.0) / k / t.intra_bytes_per_s + (m - 1.0) / m / t.net_node_bytes_per_s);
    } else {
      lat = passes * log2_ceil(n) * step;
      per_byte = passes * (n - 1.0) / n / ring_bw;
    }
    if (!pow2) {
      lat += 2 * step;
      per_byte += 2 / ring_bw;
    }
    c.latency_s = lat;
    c.algbw_bytes_per_s = 1 / per_byte;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& halving_doubling_algorithm() {
  static const HalvingDoubling a;
  return a;
}

}  // namespace trainsim
