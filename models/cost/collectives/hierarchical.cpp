// Two-level ("2D") all-reduce, which NCCL does not ship (Horovod's hierarchical all-reduce):
// a reduce-scatter ring inside each node (k ranks), one ring per rail across the m nodes on S/k,
// an all-gather ring inside each node. Run only when forced; alpha is the cluster's one-way
// latency per ring step.
//   (k-1) a_intra + (m-1) a_net per pass; (k-1)/k S / B_nvlink + (m-1)/m S/k / B_nic per pass
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
    AlgorithmCost c;
    if (protocol != CollectiveProtocol::kSimple || t.nodes <= 1 || t.max_ppn <= 1) return c;
    c.supported = true;
    const int k = t.max_ppn, m = t.nodes;
    const double passes = op == CollectiveOp::kAllReduce ? 2 : 1;
    c.channels = k;
    c.latency_s = passes * ((k - 1) * t.fabric.intra_latency_s + (m - 1) * t.fabric.net_latency_s);
    const double per_gpu_nic = t.net_node_bytes_per_s / k;
    c.algbw_bytes_per_s =
        1 / (passes * ((k - 1.0) / k / t.intra_bytes_per_s + (m - 1.0) / m / k / per_gpu_nic));
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& hierarchical_algorithm() {
  static const Hierarchical a;
  return a;
}

}  // namespace trainsim
