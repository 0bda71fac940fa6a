// NCCL's double binary tree (src/graph/tuning.cc, NCCL 2.30.7), all-reduce only: a chain
// through each node's GPUs and two binary trees over the nodes (each node interior in at most
// one), reduce up and broadcast down pipelined per channel.
//   latency = base + 2 ((ppn-1) intraLat + log2(nodes) interLat)
//   busBw: the tree's bottleneck link, x0.92 and at most channels x perChMaxTreeBw; LL /3.8
//     (at most llMaxBw), LL128 x7/9 on one node or x120/128 (at most channels x
//     perChMaxTreeLL128Bw); algBw = busBw / 2, then treeCorrectionFactor by size.
// Links: an interior node receives S from each child's half-tree and sends S up per phase, so
// its NICs carry 2S each way over the whole operation (S on two nodes, where neither tree has
// an interior node: NCCL's search lets bwIntra reach twice bwInter there); the chain moves 2S
// over each GPU's NVLink.
#include <algorithm>
#include <cmath>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class Tree final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "tree"; }
  const char* nccl_name() const override { return "Tree"; }
  bool supports(CollectiveOp op) const override { return op == CollectiveOp::kAllReduce; }
  AlgorithmCost cost(CollectiveOp, CollectiveProtocol protocol, double bytes,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    const int p = proto_index(protocol);
    c.supported = true;
    c.channels = t.ring_channels;  // the tree graph is searched with the ring's channel count
    double links = t.intra_bytes_per_s;
    if (t.nodes == 2) links = std::min(links, 2 * t.net_node_bytes_per_s);
    if (t.nodes > 2) links = std::min(links, t.net_node_bytes_per_s);
    double bus = std::min(links * kTreeFactor, c.channels * kPerChMaxTreeGBs[t.arch][t.node_index] * 1e9);
    if (p == kLL) bus = std::min(bus / kTreeLLDivisor, t.llmax_bytes_per_s());
    if (p == kLL128)
      bus = std::min(bus * (t.nodes == 1 ? kTreeLL128FactorOneNode : kTreeLL128FactorMultiNode),
                     c.channels * kPerChMaxTreeLL128GBs[t.arch][t.node_index] * 1e9);
    double alg = bus * 0.5;
    const int log_size = log2i(std::floor(bytes / 64));
    if (bytes >= 64 && log_size < 23) alg *= kTreeCorrection[p][log_size];
    c.algbw_bytes_per_s = alg;
    c.latency_s = (kBaseLatencyUs[kTree][p] +
                   2 * ((t.max_ppn - 1) * t.intra_lat_us(kTree, p) + log2i(t.nodes) * t.inter_lat_us(kTree, p))) *
                  1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& tree_algorithm() {
  static const Tree a;
  return a;
}

}  // namespace trainsim
