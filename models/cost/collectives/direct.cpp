// Point-to-point collectives as NCCL runs them (grouped ncclSend / ncclRecv, "P2P"): all-to-all
// (every rank sends S/n to every other) and send/recv (nccl-tests sendrecv_perf: rank i sends S
// to rank i+1). Not in NCCL's tuning model; priced from the links they load:
//   all-to-all: max((ppn-1)/n S over the GPU's NVLink, ppn (n-ppn)/n S over the node's NICs)
//   send/recv:  S over NVLink in a node, S per rank over the node's NICs across nodes
//   latency = base + ceil((n-1) / 8) step latencies (NCCL keeps up to 8 peers in flight; the
//   step latency is the ring's Simple one, NVLink or NET)
#include <algorithm>
#include <cmath>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class Direct final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "direct"; }
  const char* nccl_name() const override { return "P2P"; }
  bool supports(CollectiveOp op) const override {
    return op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv;
  }
  AlgorithmCost cost(CollectiveOp op, CollectiveProtocol protocol, double,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    if (protocol != CollectiveProtocol::kSimple) return c;
    c.supported = true;
    c.channels = t.nodes > 1 ? t.nics : 1;
    const double n = t.ranks, k = t.max_ppn;
    double time_per_byte = 0;
    if (op == CollectiveOp::kAllToAll) {
      time_per_byte = (k - 1) / n / t.intra_bytes_per_s;
      if (t.nodes > 1) time_per_byte = std::max(time_per_byte, k * (n - k) / n / t.net_node_bytes_per_s);
    } else {
      time_per_byte = t.nodes > 1 ? k / t.net_node_bytes_per_s : 1 / t.intra_bytes_per_s;
    }
    c.algbw_bytes_per_s = 1 / time_per_byte;
    const double step = t.nodes > 1 ? t.inter_lat_us(kRing, kSimple) : t.intra_lat_us(kRing, kSimple);
    const double rounds = op == CollectiveOp::kAllToAll ? std::ceil((n - 1) / 8) : 1;
    c.latency_s = (kBaseLatencyUs[kRing][kSimple] + rounds * step) * 1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& direct_algorithm() {
  static const Direct a;
  return a;
}

}  // namespace trainsim
