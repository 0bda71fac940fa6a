// PAT, the Parallel Aggregated Trees of NCCL 2.23+ (src/graph/tuning.cc, NCCL 2.30.7): all-gather
// and reduce-scatter with a logarithmic latency, one GPU per node only (ncclPatEnable), Simple.
//   latency = base + log2(nodes) interLat / 3.5 + 2.8 us x ranks
//   algBw = 0.75 x busBw (busBw = the GPU's NIC rate; NCCL keeps PAT's figure unconverted
//   for all-gather / reduce-scatter)
#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {
namespace {

class Pat final : public CollectiveAlgorithm {
 public:
  const char* name() const override { return "pat"; }
  const char* nccl_name() const override { return "PAT"; }
  bool supports(CollectiveOp op) const override {
    return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  }
  AlgorithmCost cost(CollectiveOp, CollectiveProtocol protocol, double,
                     const nccl::Terms& t) const override {
    using namespace nccl;
    AlgorithmCost c;
    if (protocol != CollectiveProtocol::kSimple || t.max_ppn != 1 || t.nodes < 2 || t.arch < 0) return c;
    c.supported = true;
    c.channels = t.ring_channels;
    c.algbw_bytes_per_s = kPatFactor * t.ring_bus_bytes_per_s();
    c.latency_s = (kBaseLatencyUs[kPat][kSimple] + log2i(t.nodes) * t.inter_lat_us(kPat, kSimple) / kPatLogDivisor +
                   t.ranks * kPatUsPerRank) *
                  1e-6;
    return c;
  }
};

}  // namespace

const CollectiveAlgorithm& pat_algorithm() {
  static const Pat a;
  return a;
}

}  // namespace trainsim
