// CollNet Chain (NCCL; src/graph/tuning.cc, NCCL 2.30.7): in-network reduction (SHARP) fed by a
// chain through each node's GPUs; all-reduce, Simple, several nodes, where the fabric declares
// SHARP (network.collnet).
//   latency = 2 (ppn-1) intraLat + interLat;  busBw = the chain's NVLink (the network carries S
//   each way per node: at most twice the node's NIC rate); algBw = busBw / 2
#include <algorithm>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class CollnetChain final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "collnet_chain"; }
  const char* nccl_name() const override { return "CollNetChain"; }
  bool supports(CollectiveOp op) const override { return op == CollectiveOp::kAllReduce; }
  AlgorithmCost cost(CollectiveOp, CollectiveProtocol protocol, double,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    if (protocol != CollectiveProtocol::kSimple || !t.collnet || t.nodes < 2) return c;
    c.supported = true;
    c.channels = t.ring_channels;
    c.algbw_bytes_per_s = std::min(t.intra_bytes_per_s, 2 * t.net_node_bytes_per_s) * 0.5;
    c.latency_s = (kBaseLatencyUs[kCollnetChain][kSimple] +
                   2 * (t.max_ppn - 1) * t.intra_lat_us(kCollnetChain, kSimple) +
                   t.inter_lat_us(kCollnetChain, kSimple)) *
                  1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& collnet_chain_algorithm() {
  static const CollnetChain a;
  return a;
}

}  // namespace trainsim
