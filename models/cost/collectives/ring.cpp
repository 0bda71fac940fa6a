// NCCL's ring (src/graph/tuning.cc, NCCL 2.30.7): every rank forwards nsteps chunks around the
// ring, pipelined per channel, so the latency is one NCCL step latency per step (NVLink / PCI
// inside a node, the NET table across) rather than a network round trip per chunk.
//   nsteps = 2(n-1) all-reduce, n-1 reduce-scatter / all-gather, n broadcast / reduce
//   latency = base + (nsteps - nInter) * max(intraLat, netOverhead) + nInter * interLat,
//     nInter = 2(nodes-1) all-reduce, nodes-1 otherwise; x1.4 (the ring's plateau) for Simple
//     multi-node all-reduce once bytes / (channels x ranks) >= 64
//   busBw = the ring's bottleneck link (NVLink per GPU, the node's NICs); LL: min(llMaxBw,
//     0.5 busBw); LL128: min(0.92 busBw, channels x perChMaxRingLL128Bw); algBw = busBw n/nsteps
#include <algorithm>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class Ring final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "ring"; }
  const char* nccl_name() const override { return "Ring"; }
  bool supports(CollectiveOp op) const override {
    return op != CollectiveOp::kAllToAll && op != CollectiveOp::kSendRecv;
  }
  AlgorithmCost cost(CollectiveOp op, CollectiveProtocol protocol, double bytes,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    const int p = proto_index(protocol);
    const int n = t.ranks;
    const bool allreduce = op == CollectiveOp::kAllReduce;
    const bool ag_rs = op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
    const int nsteps = allreduce ? 2 * (n - 1) : ag_rs ? n - 1 : n;
    c.supported = true;
    c.channels = t.ring_channels;
    double bus = t.ring_bus_bytes_per_s();
    if (p == kLL) bus = std::min(t.llmax_bytes_per_s(), bus * kRingLLFactor);
    if (p == kLL128)
      bus = std::min(bus * kRingLL128Factor,
                     c.channels * kPerChMaxRingLL128GBs[t.arch][t.node_index] * 1e9);
    c.algbw_bytes_per_s = bus * n / nsteps;
    double lat = kBaseLatencyUs[kRing][p];
    if (ag_rs || allreduce) {
      double intra = t.intra_lat_us(kRing, p);
      if (t.nodes > 1)
        intra = std::max(intra, kNetOverheadUs * (p == kSimple ? kNetOverheadSimpleFactor : 1.0));
      const int inter_steps = t.nodes == 1 ? 0 : allreduce ? 2 * (t.nodes - 1) : t.nodes - 1;
      lat += (nsteps - inter_steps) * intra + inter_steps * t.inter_lat_us(kRing, p);
    } else {
      // Broadcast / reduce: one hop when every channel follows the same order (one node),
      // else a chunk latency per step (Simple uses Tree's hop latency, as NCCL does).
      const double hop = t.nodes == 1 ? t.intra_lat_us(kRing, p)
                                      : (p == kSimple ? t.inter_lat_us(kTree, p)
                                                      : t.inter_lat_us(kRing, p));
      lat += t.nodes == 1 ? hop : nsteps * hop;
    }
    if (p == kSimple && t.nodes > 1 && allreduce && bytes / (double(c.channels) * n) >= 64)
      lat *= t.arch >= 1 ? kRingPlateauFactor : kRingPlateauFactorOld;
    c.latency_s = lat * 1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& ring_algorithm() {
  static const Ring a;
  return a;
}

}  // namespace trainsim
