// The tuner's bus bandwidth against message size on A100, H100 and H200 clusters of 1 to 248
// nodes. NCCL's model, time = latency + bytes / bw minimised over (algorithm, protocol), gives
// a bus bandwidth that never falls as messages grow; only its size-dependent corrections can
// (the tree correction factors, the ring's Simple plateau), so a fall is allowed only where one
// of those changes between the two sizes, and never by more than that correction.
#include <gtest/gtest.h>

#include <cmath>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/collectives/nccl_model.hpp"

namespace trainsim {
namespace {

ClusterSpec cluster(const char* gpu, double nvlink, int nodes, int gpn, double nic, int nics) {
  ClusterSpec c;
  c.gpu.name = gpu;
  c.nodes = nodes;
  c.gpus_per_node = gpn;
  c.intra_node.bandwidth_bytes_per_s = nvlink;
  c.intra_node.latency_s = 1e-6;
  c.network.topology = "rail-optimized";
  c.network.nic_bandwidth_bytes_per_s = nic;
  c.network.nics_per_node = nics;
  c.network.latency_s = 5e-6;
  return c;
}

// The correction NCCL applies to this algorithm at this size, or 1.
double size_correction(const CollectiveCost& c, double bytes) {
  const int log_size = nccl::log2i(std::floor(bytes / 64));
  if ((c.algo == CollectiveAlgo::kTree || c.algo == CollectiveAlgo::kNvlsTree) && bytes >= 64 && log_size < 24)
    return nccl::kTreeCorrection[nccl::proto_index(c.protocol)][std::min(log_size, 23)];
  return 1;
}

TEST(CollectiveTuner, BusBandwidthNeverFallsAsMessagesGrow) {
  const struct {
    const char* name;
    ClusterSpec c;
  } clusters[] = {
      {"A100 1 node", cluster("A100-SXM4-80GB", 600e9, 1, 8, 25e9, 8)},
      {"A100 2 nodes 4 NICs", cluster("A100-SXM4-80GB", 600e9, 2, 8, 25e9, 4)},
      {"A100 16 nodes", cluster("A100-SXM4-80GB", 600e9, 16, 8, 25e9, 8)},
      {"H100 1 node", cluster("H100-SXM-80GB", 900e9, 1, 8, 50e9, 8)},
      {"H100 2 x 1 GPU, 4 NICs", cluster("H100-SXM-80GB", 0, 2, 1, 50e9, 4)},
      {"H100 32 nodes", cluster("H100-SXM-80GB", 900e9, 32, 8, 50e9, 8)},
      {"H200 248 nodes", cluster("H200-SXM-141GB", 900e9, 248, 8, 50e9, 8)},
  };
  for (const auto& k : clusters) {
    SCOPED_TRACE(k.name);
    const FabricTerms f = fabric_terms(k.c);
    const int ranks = k.c.total_gpus();
    const GroupShape g{ranks, k.c.nodes, k.c.gpus_per_node};
    for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
      SCOPED_TRACE(to_string(op));
      double prev_busbw = 0, prev_bytes = 0;
      CollectiveCost prev;
      for (double bytes = 8; bytes <= 16.0 * 1024 * 1024 * 1024; bytes *= 2) {
        const CollectiveCost c = collective_cost(op, CollectiveAlgo::kAuto, bytes, g, f);
        const double busbw = bytes / c.time_s * bus_bandwidth_factor(op, ranks);
        if (prev_busbw > 0 && busbw < prev_busbw * (1 - 1e-9)) {
          // A fall is NCCL's own only when a size correction dropped between the two sizes.
          const double drop = size_correction(c, bytes) / size_correction(prev, prev_bytes);
          const bool plateau = c.algo == CollectiveAlgo::kRing && c.protocol == CollectiveProtocol::kSimple &&
                               k.c.nodes > 1 && op == CollectiveOp::kAllReduce;
          EXPECT_TRUE(drop < 1 || plateau) << bytes << " B: " << busbw / 1e9 << " GB/s after "
                                           << prev_busbw / 1e9 << " GB/s (" << to_string(c.algo) << "/"
                                           << to_string(c.protocol) << ")";
          if (drop < 1) {
            EXPECT_GE(busbw / prev_busbw, drop * (1 - 1e-9));
          }
        }
        prev_busbw = busbw;
        prev_bytes = bytes;
        prev = c;
      }
    }
  }
}

}  // namespace
}  // namespace trainsim
