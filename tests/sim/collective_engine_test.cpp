// The simulator against independent references: the closed forms of models/cost/collectives
// (NCCL's tuning model; the flows must load the links as the closed form assumes, or the
// simulation comes out slower), nccl-tests bus-bandwidth factors, and hand-derived max-min
// sharing outcomes. Every simulation runs in a child process.
#include "sim/collective_engine.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include "models/cost/collectives/collective_algorithm.hpp"
#include "sim/link_stats.hpp"
#include "sim/platform.hpp"
#include "sim_test_util.hpp"

namespace trainsim::sim {
namespace {

using testing::in_child_process;
using testing::iota_group;
using testing::test_cluster;
using testing::two_concurrent_ring_all_reduces;

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Index of the played algorithm in the registry (numbers cross the child-process pipe).
double algo_index(CollectiveAlgo a) {
  const auto& all = collective_algorithms();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (a == CollectiveAlgo(all[i]->name())) return static_cast<double>(i);
  return -1;
}

struct Played {
  double time_s = 0, algo = -1, protocol = -1, activities = 0;
};

Played simulate_full(const ClusterSpec& cluster, PlanRequest req, TopologyOptions opts = {}) {
  const auto out = in_child_process([&] {
    Platform& p = Platform::create(cluster, opts);
    CollectiveEngine engine(p);
    const CollectiveResult r = engine.run_one(req);
    return std::vector<double>{r.time_s, algo_index(r.algo), static_cast<double>(r.protocol),
                               static_cast<double>(r.activities)};
  });
  return {out.at(0), out.at(1), out.at(2), out.at(3)};
}

double simulate(const ClusterSpec& cluster, PlanRequest req, TopologyOptions opts = {}) {
  return simulate_full(cluster, std::move(req), opts).time_s;
}

CollectiveCost closed_form_cost(const ClusterSpec& cluster, const PlanRequest& req) {
  Topology topo(cluster);
  return collective_cost(req.op, req.algo, req.protocol, req.bytes, group_shape(topo, req.group),
                         fabric_terms(cluster));
}
double closed_form(const ClusterSpec& cluster, const PlanRequest& req) {
  return closed_form_cost(cluster, req).time_s;
}

struct Case {
  const char* name;
  ClusterSpec cluster;
  CollectiveOp op;
  CollectiveAlgo algo;
  int ranks;
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;
};

// DGX-like figures with efficiency 1: NVLink 600 GB/s (300 per direction), 8 NICs of 25 GB/s.
ClusterSpec one_node() { return test_cluster(1, 8, 600e9, 25e9, 8); }
ClusterSpec four_nodes() { return test_cluster(4, 8, 600e9, 25e9, 8); }
// Hopper nodes (NVLink SHARP): 900 GB/s NVLink, 8 NICs of 50 GB/s; optionally SHARP in the fabric.
ClusterSpec hopper(int nodes, int gpn = 8, bool sharp = false) {
  ClusterSpec c = test_cluster(nodes, gpn, gpn > 1 ? 900e9 : 0, 50e9, gpn > 1 ? 8 : 1);
  c.gpu.name = "H100-SXM-80GB";
  c.network.collnet = sharp;
  return c;
}

TEST(CollectiveEngine, MatchesClosedFormOnContentionFreeTopologies) {
  const Case cases[] = {
      {"ring allreduce 1 node", one_node(), CollectiveOp::kAllReduce, CollectiveAlgo::kRing, 8},
      {"ring allreduce 1 node LL", one_node(), CollectiveOp::kAllReduce, CollectiveAlgo::kRing, 8,
       CollectiveProtocol::kLL},
      {"ring allreduce 4 nodes LL128", four_nodes(), CollectiveOp::kAllReduce, CollectiveAlgo::kRing, 32,
       CollectiveProtocol::kLL128},
      {"ring allreduce 4 nodes", four_nodes(), CollectiveOp::kAllReduce, CollectiveAlgo::kRing, 32},
      {"ring reducescatter 4 nodes", four_nodes(), CollectiveOp::kReduceScatter,
       CollectiveAlgo::kRing, 32},
      {"ring allgather 4 nodes", four_nodes(), CollectiveOp::kAllGather, CollectiveAlgo::kRing, 32},
      {"ring broadcast 4 nodes", four_nodes(), CollectiveOp::kBroadcast, CollectiveAlgo::kRing, 32},
      {"tree allreduce 1 node", one_node(), CollectiveOp::kAllReduce, CollectiveAlgo::kTree, 8},
      {"tree allreduce 4 nodes", four_nodes(), CollectiveOp::kAllReduce, CollectiveAlgo::kTree, 32},
      {"tree allreduce 2 nodes", test_cluster(2, 8, 600e9, 25e9, 8), CollectiveOp::kAllReduce,
       CollectiveAlgo::kTree, 16},
      {"nvls allreduce H100 node", hopper(1), CollectiveOp::kAllReduce, CollectiveAlgo::kNvls, 8},
      {"nvls allgather H100 node", hopper(1), CollectiveOp::kAllGather, CollectiveAlgo::kNvls, 8},
      {"nvls_tree allreduce 4 H100 nodes", hopper(4), CollectiveOp::kAllReduce, CollectiveAlgo::kNvlsTree, 32},
      {"nvls allreduce 4 H100 nodes with SHARP", hopper(4, 8, true), CollectiveOp::kAllReduce,
       CollectiveAlgo::kNvls, 32},
      {"collnet_direct 4 H100 nodes", hopper(4, 8, true), CollectiveOp::kAllReduce,
       CollectiveAlgo::kCollnetDirect, 32},
      {"collnet_chain 4 H100 nodes", hopper(4, 8, true), CollectiveOp::kAllReduce,
       CollectiveAlgo::kCollnetChain, 32},
      {"pat allgather 8 x 1 GPU", hopper(8, 1), CollectiveOp::kAllGather, CollectiveAlgo::kPat, 8},
      {"pat reducescatter 8 x 1 GPU", hopper(8, 1), CollectiveOp::kReduceScatter, CollectiveAlgo::kPat, 8},
      {"hd allreduce 1 node", one_node(), CollectiveOp::kAllReduce,
       CollectiveAlgo::kHalvingDoubling, 8},
      {"hier allreduce 4 nodes", four_nodes(), CollectiveOp::kAllReduce,
       CollectiveAlgo::kHierarchical, 32},
      {"hier reducescatter 4 nodes", four_nodes(), CollectiveOp::kReduceScatter,
       CollectiveAlgo::kHierarchical, 32},
      {"hier allreduce 4 nodes LL", four_nodes(), CollectiveOp::kAllReduce, CollectiveAlgo::kHierarchical, 32,
       CollectiveProtocol::kLL},
      {"direct alltoall 1 node", one_node(), CollectiveOp::kAllToAll, CollectiveAlgo::kDirect, 8},
      {"direct alltoall 4 nodes", four_nodes(), CollectiveOp::kAllToAll, CollectiveAlgo::kDirect, 32},
      {"sendrecv 1 node", one_node(), CollectiveOp::kSendRecv, CollectiveAlgo::kDirect, 8},
      {"sendrecv 2 x 1 GPU, 4 NICs", test_cluster(2, 1, 0, 25e9, 4), CollectiveOp::kSendRecv,
       CollectiveAlgo::kDirect, 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PlanRequest req;
    req.op = c.op;
    req.algo = c.algo;
    req.protocol = c.protocol;
    req.bytes = kGiB;
    req.group = iota_group(c.ranks);
    const Played sim = simulate_full(c.cluster, req);
    const CollectiveCost ref = closed_form_cost(c.cluster, req);
    EXPECT_EQ(sim.algo, algo_index(c.algo)) << "played another algorithm";
    EXPECT_EQ(ref.algo, c.algo);
    if (c.protocol != CollectiveProtocol::kAuto) {
      EXPECT_EQ(sim.protocol, static_cast<double>(c.protocol));
    }
    EXPECT_NEAR(sim.time_s / ref.time_s, 1.0, 1e-3) << "sim " << sim.time_s << " s, closed form " << ref.time_s << " s";
  }
}

TEST(CollectiveEngine, PlaysTheSharedTunersChoice) {
  // The simulator asks the one tuner the estimate tier uses: same algorithm and protocol.
  for (double bytes : {8.0, 1e6, 1e9}) {
    for (const ClusterSpec& c : {four_nodes(), hopper(1), hopper(4)}) {
      SCOPED_TRACE(bytes);
      PlanRequest req;
      req.op = CollectiveOp::kAllReduce;
      req.algo = CollectiveAlgo::kAuto;
      req.bytes = bytes;
      req.group = iota_group(c.total_gpus());
      const Played sim = simulate_full(c, req);
      const CollectiveCost ref = closed_form_cost(c, req);
      EXPECT_EQ(sim.algo, algo_index(ref.algo));
      EXPECT_EQ(sim.protocol, static_cast<double>(ref.protocol));
      EXPECT_NEAR(sim.time_s / ref.time_s, 1.0, 1e-3);
    }
  }
}

TEST(CollectiveEngine, LargeStagesAreBundledWithoutChangingTheResult) {
  // 1,024 nodes x 8 GPUs on one switch (contention-free): ~16k transfers, played as ~2k
  // activities, still the closed form.
  const ClusterSpec c = test_cluster(1024, 8, 600e9, 25e9, 8);
  PlanRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.algo = CollectiveAlgo::kRing;
  req.bytes = kGiB;
  req.group = iota_group(8192);
  const Played sim = simulate_full(c, req);
  EXPECT_LE(sim.activities, 2100);
  EXPECT_NEAR(sim.time_s / closed_form(c, req), 1.0, 1e-3);
}

TEST(CollectiveEngine, LargePlatformsDoNotOverflowTheStack) {
  // 32,768 GPUs on a rail-optimised fat-tree: SimGrid's max-min solver recursion overflowed the
  // 8 MiB main stack here; the engine runs on a stack of its own.
  ClusterSpec c = test_cluster(4096, 8, 900e9, 50e9, 8, "rail-optimized");
  c.gpu.name = "H100-SXM-80GB";
  PlanRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.algo = CollectiveAlgo::kAuto;
  req.bytes = kGiB;
  req.group = iota_group(32768);
  const Played sim = simulate_full(c, req);
  EXPECT_GT(sim.time_s, 0);
  EXPECT_GE(sim.time_s / closed_form(c, req), 1.0 - 1e-6);  // contention only slows it
}

TEST(CollectiveEngine, BusBandwidthFollowsNcclTestsFactors) {
  // Ring all-reduce on one node: busbw = algbw * 2(n-1)/n reaches the NVLink one-direction rate
  // (300 GB/s) for large sizes (nccl-tests doc/PERFORMANCE.md).
  PlanRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.algo = CollectiveAlgo::kRing;
  req.bytes = 4 * kGiB;
  req.group = iota_group(8);
  const double t = simulate(one_node(), req);
  CollectiveResult r;
  r.op = req.op;
  r.ranks = 8;
  r.bytes = req.bytes;
  r.time_s = t;
  EXPECT_NEAR(r.busbw_bytes_per_s() / (r.algbw_bytes_per_s() * 2.0 * 7 / 8), 1.0, 1e-12);
  EXPECT_NEAR(r.busbw_bytes_per_s() / 300e9, 1.0, 3e-3);
  // Across 4 nodes with 8 NICs each, multi-channel rings reach the node's total NIC bandwidth
  // (8 x 25 GB/s), not one NIC's.
  req.group = iota_group(32);
  r.ranks = 32;
  r.time_s = simulate(four_nodes(), req);
  EXPECT_NEAR(r.busbw_bytes_per_s() / 200e9, 1.0, 0.02);  // NCCL's ring latency: ~1%
}

TEST(CollectiveEngine, StepAndFlowGranularityAgreeWithoutContention) {
  for (CollectiveAlgo algo : {CollectiveAlgo::kRing, CollectiveAlgo::kHierarchical}) {
    SCOPED_TRACE(to_string(algo));
    PlanRequest req;
    req.op = CollectiveOp::kAllReduce;
    req.algo = algo;
    req.bytes = kGiB;
    req.group = iota_group(16);
    const ClusterSpec c = test_cluster(2, 8, 600e9, 25e9, 8);
    const double flow = simulate(c, req);
    req.granularity = Granularity::kStep;
    const double step = simulate(c, req);
    // Step granularity pays the route latency per step, flow granularity NCCL's step latency.
    EXPECT_NEAR(step / flow, 1.0, 0.01) << "step " << step << " flow " << flow;
  }
}

TEST(CollectiveEngine, ConcurrentAllReducesShareAnOversubscribedUplink) {
  // 4 single-GPU nodes, 2 per leaf (radix 4), 2:1 taper: one leaf uplink of one NIC's rate.
  // All-reduce A over GPUs {0,2} and B over {1,3} both cross leaf0's uplink in each direction.
  const ClusterSpec c = test_cluster(4, 1, 0, 25e9, 1, "fat-tree", 2.0);
  TopologyOptions opts;
  opts.switch_radix = 4;
  const auto times = in_child_process([&] {
    return two_concurrent_ring_all_reduces(Platform::create(c, opts));
  });
  EXPECT_NEAR(times[1] / times[0], 2.0, 0.02);
  EXPECT_NEAR(times[2] / times[0], 2.0, 0.02);
}

TEST(CollectiveEngine, HierarchicalBeatsFlatRingByTheClosedFormRatio) {
  // NVLink 900 GB/s >> one 25 GB/s NIC per node: the flat ring crosses the NIC with the whole
  // 2(n-1)/n S, the 2D algorithm with 2(m-1)/m S over all rails sharing it.
  const ClusterSpec c = test_cluster(4, 8, 900e9, 25e9, 1);
  PlanRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.bytes = kGiB;
  req.group = iota_group(32);
  req.algo = CollectiveAlgo::kRing;
  const double ring = simulate(c, req);
  const double ring_ref = closed_form(c, req);
  req.algo = CollectiveAlgo::kHierarchical;
  const double hier = simulate(c, req);
  const double hier_ref = closed_form(c, req);
  EXPECT_LT(hier, ring);
  EXPECT_NEAR((ring / hier) / (ring_ref / hier_ref), 1.0, 0.01);
}

TEST(CollectiveEngine, TopologyAwareRingBeatsRankOrderOnOversubscribedFatTree) {
  // 8 single-GPU nodes, 2 per leaf, 2:1 taper. Ranks were handed out scattered over leaves (a
  // scheduler's allocation): in rank order every ring edge climbs to the spine; sorted by the
  // switch tree only the 4 leaf-to-leaf edges do, one per uplink direction.
  const ClusterSpec c = test_cluster(8, 1, 0, 25e9, 1, "fat-tree", 2.0);
  TopologyOptions opts;
  opts.switch_radix = 4;
  PlanRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.algo = CollectiveAlgo::kRing;
  req.bytes = kGiB;
  req.group = {0, 2, 4, 6, 1, 3, 5, 7};
  req.order = RingOrder::kRankOrder;
  const double rank_order = simulate(c, req, opts);
  req.order = RingOrder::kTopologyAware;
  const double aware = simulate(c, req, opts);
  EXPECT_LT(aware, 0.6 * rank_order) << "aware " << aware << " rank order " << rank_order;
}

}  // namespace
}  // namespace trainsim::sim

namespace trainsim::sim {
namespace {

TEST(Platform, OneEnginePerProcessAndLinkStatistics) {
  const auto out = testing::in_child_process([] {
    const ClusterSpec c = testing::test_cluster(2, 2, 600e9, 25e9, 2);
    Platform& p = Platform::create(c);
    double second_create_threw = 0;
    try {
      Platform::create(c);
    } catch (const std::logic_error&) {
      second_create_threw = 1;
    }
    p.link_stats().enable_sampling(true);
    CollectiveEngine engine(p);
    PlanRequest req;
    req.op = CollectiveOp::kAllReduce;
    req.algo = CollectiveAlgo::kRing;
    req.bytes = 1e9;
    req.group = {0, 1, 2, 3};
    const auto r = engine.run_one(req);
    const auto hot = p.link_stats().hottest(10, r.start_s, r.end_s);
    // Ranked per kind, the NVLink links show up too (the NICs top the single ranking).
    std::set<int> kinds;
    for (const auto& l : p.link_stats().hottest_by_kind(2, r.start_s, r.end_s)) kinds.insert(static_cast<int>(l.kind));
    std::ostringstream trace;
    p.link_stats().write_chrome_trace(trace, {hot.front().link});
    // The busiest links are the NICs (2 channels x 2(n-1)/n x S / 2 per NIC direction).
    return std::vector<double>{
        second_create_threw, static_cast<double>(hot.front().kind), hot.front().bytes,
        hot.front().busy_share,
        static_cast<double>(trace.str().find("\"ph\":\"C\"") != std::string::npos),
        static_cast<double>(kinds.count(static_cast<int>(LinkKind::kNvlink))),
        static_cast<double>(kinds.count(static_cast<int>(LinkKind::kNic)))};
  });
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(static_cast<LinkKind>(static_cast<int>(out[1])), LinkKind::kNic);
  EXPECT_NEAR(out[2], 2.0 * 3 / 4 * 1e9 / 2, 1.0);
  EXPECT_GT(out[3], 0.95);  // the bottleneck is busy the whole collective, latency aside
  EXPECT_LE(out[3], 1.0);
  EXPECT_EQ(out[4], 1);
  EXPECT_EQ(out[5], 1);  // hottest_by_kind lists NVLink ...
  EXPECT_EQ(out[6], 1);  // ... and NIC links alike
}

}  // namespace
}  // namespace trainsim::sim
