// Two-level ("2D") all-reduce, which NCCL does not ship (Horovod's hierarchical all-reduce):
// a reduce-scatter ring inside each node (k ranks), one ring per rail across the m nodes on S/k,
// an all-gather ring inside each node. Run only when forced. Its rings are priced as NCCL prices
// a ring: NCCL's per-step latencies (NVLink steps inside, NET steps across) and the protocol's
// wire bytes (LL carries 8 of every 16, LL128 120 of every 128); reduce-scatter / all-gather
// keep one half of each phase.
//   latency = base + passes ((k-1) intra step + (m-1) NET step)
//   bytes/B = passes ((k-1)/k S / B_nvlink + (m-1)/m S/k / B_nic) / protocol payload share
#include <algorithm>

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class Hierarchical final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "hier"; }
  const char* nccl_name() const override { return "Hierarchical"; }
  bool tuned() const override { return false; }
  bool supports(CollectiveOp op) const override {
    return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
           op == CollectiveOp::kAllGather;
  }
  AlgorithmCost cost(CollectiveOp op, CollectiveProtocol protocol, double,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    if (t.nodes <= 1 || t.max_ppn <= 1) return c;
    c.supported = true;
    const int p = proto_index(protocol);
    const int k = t.max_ppn, m = t.nodes;
    const double passes = op == CollectiveOp::kAllReduce ? 2 : 1;
    c.channels = k;
    c.latency_s = (kBaseLatencyUs[kRing][p] +
                   passes * ((k - 1) * t.intra_lat_us(kRing, p) + (m - 1) * t.inter_lat_us(kRing, p))) *
                  1e-6;
    const double payload = p == kLL ? 0.5 : p == kLL128 ? 120.0 / 128.0 : 1.0;
    const double per_gpu_nic = t.net_node_bytes_per_s / k;
    c.algbw_bytes_per_s =
        payload / (passes * ((k - 1.0) / k / t.intra_bytes_per_s + (m - 1.0) / m / k / per_gpu_nic));
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& hierarchical_algorithm() {
  static const Hierarchical a;
  return a;
}

}  // namespace trainsim
