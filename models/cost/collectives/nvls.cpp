// NVLink SHARP (NCCL's NVLS; src/graph/tuning.cc, NCCL 2.30.7): the NVSwitch reduces
// (multimem.ld_reduce) and multicasts (multimem.st), Simple protocol only, Hopper and later on
// NVSwitch nodes; across nodes only with CollNet (SHARP) in the fabric.
//   latency = intraLat (NVLink NVLS entry) [+ interLat across nodes]; no base latency
// Links: for all-reduce each GPU sends its S to the switch and its reduced S/n share back
// out, and receives the same, S (n+1)/n each way, at nvlsEfficiency of the NVLink rate
// (NCCL's per-arch factor); reduce-scatter / all-gather move S one way. With SHARP across
// nodes each node sends and receives S through its NICs.
#include <algorithm>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class Nvls final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "nvls"; }
  const char* nccl_name() const override { return "NVLS"; }
  bool supports(CollectiveOp op) const override {
    return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
           op == CollectiveOp::kAllGather;
  }
  AlgorithmCost cost(CollectiveOp op, CollectiveProtocol protocol, double,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    if (protocol != CollectiveProtocol::kSimple || !t.nvls || t.max_ppn < 2) return c;
    // Multi-node NVLS needs CollNet; its reduce-scatter / all-gather also need the network
    // plugin's SHARP all-gather / reduce-scatter, which trainsim does not assume.
    if (t.nodes > 1 && (!t.collnet || op != CollectiveOp::kAllReduce)) return c;
    c.supported = true;
    c.channels = std::min(kMaxNvlsArity, t.max_ppn);
    const double eff = kNvlsEfficiency[t.arch];
    const double n = t.max_ppn;
    double alg = op == CollectiveOp::kAllReduce ? eff * t.intra_bytes_per_s * n / (n + 1)
                                                : eff * t.intra_bytes_per_s;
    if (t.nodes > 1) alg = std::min(alg, t.net_node_bytes_per_s);
    c.algbw_bytes_per_s = alg;
    double lat = t.intra_lat_us(kNvls, kSimple);
    if (t.nodes > 1) lat += t.inter_lat_us(kNvls, kSimple);
    c.latency_s = lat * 1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& nvls_algorithm() {
  static const Nvls a;
  return a;
}

}  // namespace trainsim
