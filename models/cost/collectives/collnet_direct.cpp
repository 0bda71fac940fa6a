// CollNet Direct (NCCL; src/graph/tuning.cc, NCCL 2.30.7): in-network reduction (InfiniBand
// SHARP) with every GPU of a node talking to the node's NIC heads directly over NVSwitch;
// all-reduce, Simple, several nodes, only where the fabric declares SHARP (network.collnet).
//   latency = 2 (min(1, ppn-1) intraLat + 0.4 us (ppn-1)) + interLat   (arity serialisation)
//   busBw = NVLink per GPU (the network carries only S each way per node: at most twice the
//     node's NIC rate), / (f - (f-1)/2) with f = GPUs per NIC, x0.85 on Hopper and later;
//     algBw = busBw / 2
#include <algorithm>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class CollnetDirect final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "collnet_direct"; }
  const char* nccl_name() const override { return "CollNetDirect"; }
  bool supports(CollectiveOp op) const override { return op == CollectiveOp::kAllReduce; }
  AlgorithmCost cost(CollectiveOp, CollectiveProtocol protocol, double,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    // NCCL also disables it off NVSwitch systems (ncclTopoGetNvsCount == 0).
    if (protocol != CollectiveProtocol::kSimple || !t.collnet || t.nodes < 2 ||
        t.fabric.intra_fabric != IntraFabric::kNvSwitch)
      return c;
    c.supported = true;
    c.channels = std::min(8, std::max(1, t.nics));  // NCCL_MAX_DIRECT_ARITY + 1 heads
    double bus = std::min(t.intra_bytes_per_s, 2 * t.net_node_bytes_per_s);
    double f = t.max_ppn / static_cast<double>(c.channels);
    f -= (f - 1) / 2;
    if (f > 1) bus /= f;
    if (t.arch >= 2) bus *= kCollnetDirectHopperFactor;
    c.algbw_bytes_per_s = bus * 0.5;
    const int local = t.max_ppn - 1;
    c.latency_s = (kBaseLatencyUs[kCollnetDirect][kSimple] +
                   2 * (std::min(1, local) * t.intra_lat_us(kCollnetDirect, kSimple) + local * kCollnetArityUs) +
                   t.inter_lat_us(kCollnetDirect, kSimple)) *
                  1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& collnet_direct_algorithm() {
  static const CollnetDirect a;
  return a;
}

}  // namespace trainsim
