#include "models/cost/collectives/collective_cost.hpp"

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"

namespace trainsim {
namespace {

FabricTerms simple_fabric() {
  FabricTerms f;
  f.intra_bandwidth_bytes_per_s = 200e9;
  f.intra_latency_s = 2e-6;
  f.nic_bandwidth_per_gpu_bytes_per_s = 25e9;
  f.net_latency_s = 5e-6;
  return f;
}

// Ring all-reduce of S bytes over n ranks: 2(n-1) a + 2(n-1)/n S/B (REFERENCE.md).
TEST(CollectiveCost, RingAllReduceMatchesAlphaBeta) {
  const FabricTerms f = simple_fabric();
  const double S = 1 << 30;
  for (int n : {2, 4, 8}) {
    SCOPED_TRACE(n);
    const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, S, {n, 1, n}, f);
    EXPECT_DOUBLE_EQ(c.time_s, 2.0 * (n - 1) * 2e-6 + 2.0 * (n - 1) / n * S / 200e9);
    const auto rs = collective_cost(CollectiveOp::kReduceScatter, CollectiveAlgo::kRing, S, {n, 1, n}, f);
    EXPECT_DOUBLE_EQ(rs.time_s, c.time_s / 2);  // reduce-scatter is half of all-reduce
  }
}

TEST(CollectiveCost, BusBandwidthOfARingEqualsTheLinkBandwidth) {
  // nccl-tests: busbw = algbw * 2(n-1)/n, which for a latency-free ring is the link rate.
  FabricTerms f = simple_fabric();
  f.intra_latency_s = 0;
  const double S = 1 << 30;
  const int n = 8;
  const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, S, {n, 1, n}, f);
  EXPECT_NEAR(S / c.time_s * bus_bandwidth_factor(CollectiveOp::kAllReduce, n), 200e9, 1);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kBroadcast, 4), 1.0);
}

TEST(CollectiveCost, CrossNodeRingUsesAllOfTheNodesNics) {
  // 2 nodes x 8 GPUs, 8 NICs of 25 GB/s: busbw ~ the node's NIC total shared by its 8 ranks
  // = 8 x (25 GB/s per GPU) = 200 GB/s, capped by NVLink.
  FabricTerms f = simple_fabric();
  f.net_latency_s = f.intra_latency_s = 0;
  f.intra_bandwidth_bytes_per_s = 1e12;
  const double S = 1 << 30;
  const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, S, {16, 2, 8}, f);
  EXPECT_NEAR(S / c.time_s * bus_bandwidth_factor(CollectiveOp::kAllReduce, 16), 200e9, 1e3);
  // One rank per node (a DP group with TP8) gets one NIC.
  const auto one = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, S, {16, 16, 1}, f);
  EXPECT_NEAR(S / one.time_s * bus_bandwidth_factor(CollectiveOp::kAllReduce, 16), 25e9, 1e3);
}

TEST(CollectiveCost, HierarchicalBeatsRingOnLatencyAcrossManyNodes) {
  const FabricTerms f = simple_fabric();
  const GroupShape g{256, 32, 8};
  const double S = 64 << 10;  // latency-bound
  const auto ring = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, S, g, f);
  const auto hier = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kHierarchical, S, g, f);
  // Closed forms: ring 2(n-1) a_net; hier 2((k-1) a_intra + (m-1) a_net).
  EXPECT_DOUBLE_EQ(ring.latency_s, 2.0 * 255 * 5e-6);
  EXPECT_DOUBLE_EQ(hier.latency_s, 2.0 * (7 * 2e-6 + 31 * 5e-6));
  EXPECT_LT(hier.time_s, ring.time_s);
  const auto best = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, S, g, f);
  EXPECT_LE(best.time_s, hier.time_s);
}

TEST(CollectiveCost, TreeLatencyIsLogarithmicInNodes) {
  const FabricTerms f = simple_fabric();
  const auto t = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kTree, 8, {1024, 128, 8}, f);
  EXPECT_DOUBLE_EQ(t.latency_s, 2 * (7 * 5e-6 + 7 * 2e-6));
}

TEST(CollectiveCost, UnknownNamesListTheValidOnes) {
  try {
    collective_algo_from_string("butterfly", "--algo");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("ring, tree, hd, hier, direct, auto"), std::string::npos) << e.what();
  }
  EXPECT_EQ(collective_op_from_string("allgather", "--op"), CollectiveOp::kAllGather);
}

}  // namespace
}  // namespace trainsim
