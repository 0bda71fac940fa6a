// NVLS inside each node and a double binary tree between nodes (NCCL's NVLS_TREE;
// src/graph/tuning.cc, NCCL 2.30.7), all-reduce only, Simple only, several nodes.
//   latency = base (0) + intraLat + 2 log2(nodes) interLat
//   bandwidth: the lowest of the NVLS part (nvls.cpp), the tree between nodes (2S through each
//     node's NICs each way, S on two nodes, tree.cpp) and NCCL's per-channel cap
//     perChMaxNVLSTreeBw x channels (a bus bandwidth: algBw = busBw n / (2(n-1))). Blackwell
//     applies treeCorrectionFactor as NCCL does on sm100.
#include <algorithm>
#include <cmath>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class NvlsTree final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "nvls_tree"; }
  const char* nccl_name() const override { return "NVLSTree"; }
  bool supports(CollectiveOp op) const override { return op == CollectiveOp::kAllReduce; }
  AlgorithmCost cost(CollectiveOp, CollectiveProtocol protocol, double bytes,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    if (protocol != CollectiveProtocol::kSimple || !t.nvls || t.max_ppn < 2 || t.nodes < 2) return c;
    c.supported = true;
    c.channels = std::min(kMaxNvlsArity, t.max_ppn);
    const double n = t.max_ppn;
    const double intra = kNvlsEfficiency[t.arch] * t.intra_bytes_per_s * n / (n + 1);
    const double net = t.nodes == 2 ? t.net_node_bytes_per_s : t.net_node_bytes_per_s / 2;
    const double cap_bus = c.channels * kPerChMaxNvlsTreeGBs[t.arch][t.node_index] * 1e9;
    const double cap = cap_bus * t.ranks / (2.0 * (t.ranks - 1));
    double alg = std::min({intra, net, cap});
    const int log_size = log2i(std::floor(bytes / 64));
    if (t.arch >= 3 && bytes >= 64 && log_size < 24) alg *= kTreeCorrection[kSimple][log_size];
    c.algbw_bytes_per_s = alg;
    c.latency_s = (kBaseLatencyUs[kNvlsTree][kSimple] + t.intra_lat_us(kNvlsTree, kSimple) +
                   2 * log2i(t.nodes) * t.inter_lat_us(kNvlsTree, kSimple)) *
                  1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& nvls_tree_algorithm() {
  static const NvlsTree a;
  return a;
}

}  // namespace trainsim
