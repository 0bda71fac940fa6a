// Topology analysis without SimGrid: structure, routes, hop distances, bisection bandwidth,
// and topology-aware orders (hand-counted references).
#include "sim/topology.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/core/scenario_error.hpp"
#include "sim/link_stats.hpp"
#include "sim/rank_order.hpp"
#include "sim_test_util.hpp"

namespace trainsim::sim {
namespace {

using testing::test_cluster;

TEST(Topology, RailOptimizedKeepsEachRailOnItsOwnLeaf) {
  // 4 DGX-like nodes, 8 rails: GPU i of every node on rail i's leaf; 2 tiers.
  Topology t(test_cluster(4, 8, 600e9, 25e9, 8, "rail-optimized"));
  EXPECT_EQ(t.levels(), 2);
  for (int local = 0; local < 8; ++local) {
    SCOPED_TRACE(local);
    EXPECT_EQ(t.leaf_of_gpu(local), t.leaf_of_gpu(8 * 3 + local));
    EXPECT_EQ(t.switch_hops(local, 8 * 3 + local), 0);  // same rail: leaf only
  }
  EXPECT_NE(t.leaf_of_gpu(0), t.leaf_of_gpu(1));
  EXPECT_EQ(t.switch_hops(0, 8 + 1), 2);  // rail 0 -> spine -> rail 1
  // Same rail: NIC up, NIC down; cross rail adds leaf->spine->leaf.
  EXPECT_EQ(t.route(0, 8).links.size(), 2u);
  EXPECT_EQ(t.route(0, 9).links.size(), 4u);
  EXPECT_EQ(t.route(0, 1).links.size(), 2u);  // NVLink up + NVLink down
  EXPECT_DOUBLE_EQ(t.route(0, 9).latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(t.route(0, 1).latency_s, 2e-6);
}

TEST(Topology, EcmpSpreadsFlowsAndDestinationModIsDeterministic) {
  TopologyOptions opts;
  opts.switch_radix = 8;  // 4 spines
  const ClusterSpec c = test_cluster(16, 1, 0, 25e9, 1, "fat-tree");
  Topology ecmp(c, opts);
  std::set<int> spines_used;
  for (uint64_t salt = 0; salt < 64; ++salt)
    spines_used.insert(link_of(ecmp.route(0, 15, salt).links[1]));
  EXPECT_EQ(spines_used.size(), 4u);
  opts.routing = RoutingPolicy::kDestinationMod;
  Topology dmodk(c, opts);
  std::set<int> uplinks;
  for (int dst = 4; dst < 8; ++dst) uplinks.insert(link_of(dmodk.route(0, dst).links[1]));
  EXPECT_EQ(uplinks.size(), 4u);  // consecutive destinations take distinct uplinks
  EXPECT_EQ(dmodk.route(0, 5, 1).links, dmodk.route(0, 5, 2).links);
}

TEST(Topology, BisectionBandwidthReflectsOversubscription) {
  TopologyOptions opts;
  opts.switch_radix = 4;  // 2 single-NIC nodes per leaf
  const ClusterSpec full = test_cluster(8, 1, 0, 25e9, 1, "fat-tree", 1.0);
  const ClusterSpec tapered = test_cluster(8, 1, 0, 25e9, 1, "fat-tree", 2.0);
  // Non-blocking: half the GPUs send at full NIC rate, 4 x 25 GB/s.
  EXPECT_NEAR(Topology(full, opts).bisection_bandwidth_bytes_per_s(), 100e9, 1e3);
  EXPECT_NEAR(Topology(tapered, opts).bisection_bandwidth_bytes_per_s(), 50e9, 1e3);
}

TEST(Topology, ThreeTierFatTreeAndOtherShapesRouteEverywhere) {
  TopologyOptions opts;
  opts.switch_radix = 4;
  const ClusterSpec ft = test_cluster(16, 1, 0, 25e9, 1, "fat-tree");
  Topology t3(ft, opts);  // 8 leaves > radix 4: three tiers
  EXPECT_EQ(t3.levels(), 3);
  EXPECT_EQ(t3.switch_hops(0, 15), 4);  // leaf-agg-core-agg-leaf
  EXPECT_EQ(t3.switch_hops(0, 3), 2);   // same pod
  EXPECT_EQ(t3.vertices()[t3.lowest_common_switch(0, 15)].level, 3);

  TopologyOptions df;
  df.dragonfly_nodes_per_router = 2;  // 4 routers per group
  Topology dragonfly(test_cluster(32, 1, 0, 25e9, 1, "dragonfly"), df);
  for (int dst = 1; dst < 32; ++dst)
    EXPECT_LE(dragonfly.switch_hops(0, dst), 3);  // local-global-local

  TopologyOptions torus;
  torus.torus_dims = {4, 4, 2};
  Topology t(test_cluster(32, 1, 0, 25e9, 1, "torus"), torus);
  EXPECT_EQ(t.switch_hops(0, 1), 1);
  EXPECT_EQ(t.switch_hops(0, 3), 1);               // wrap-around
  EXPECT_EQ(t.switch_hops(0, 2 + 2 * 4 + 16), 5);  // 2 + 2 + 1
}

TEST(RankOrder, TopologyAwareOrderGroupsNodesUnderTheirLeaf) {
  TopologyOptions opts;
  opts.switch_radix = 4;
  Topology t(test_cluster(8, 1, 0, 25e9, 1, "fat-tree", 2.0), opts);
  const std::vector<int> scattered = {0, 2, 4, 6, 1, 3, 5, 7};
  const auto order = topology_aware_order(t, scattered);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(RankOrder, ChannelRingsLeaveEachNodeThroughADifferentNic) {
  Topology t(test_cluster(4, 8, 600e9, 25e9, 8, "rail-optimized"));
  std::vector<int> group(32);
  for (int i = 0; i < 32; ++i) group[i] = i;
  const auto rings = channel_rings(t, group);
  ASSERT_EQ(rings.size(), 8u);
  std::set<int> exit_nics;
  for (const auto& ring : rings) {
    EXPECT_EQ(std::set<int>(ring.begin(), ring.end()).size(), 32u);  // a permutation
    // Node-crossing edges stay on one rail (same NIC index on both ends), except the wrap.
    for (std::size_t i = 0; i + 1 < ring.size(); ++i) {
      if (t.node_of(ring[i]) != t.node_of(ring[i + 1])) {
        EXPECT_EQ(t.nic_index_of(ring[i]), t.nic_index_of(ring[i + 1]));
      }
    }
    exit_nics.insert(t.nic_index_of(ring[7]));
  }
  EXPECT_EQ(exit_nics.size(), 8u);
}

// A route's narrowest link (bytes/s per direction).
double bottleneck(const Topology& t, const Route& r) {
  double b = 1e300;
  for (DirectedLink d : r.links) b = std::min(b, t.links()[link_of(d)].bandwidth_bytes_per_s);
  return b;
}

TEST(Topology, RailOptimizedCrossRailRoutesGetFullPortUplinks) {
  // A send that crosses rails climbs leaf -> spine -> leaf. Each leaf gets as many uplinks as
  // its NIC ports / oversubscription (at least one), each at the port rate: on 2 and 4 nodes
  // the spine hop is as wide as the NIC (not 1/16 of it over 32 spines), and on 140 nodes
  // (4 full scalable units of 32 nodes and one of 12) too.
  for (int nodes : {2, 4, 140}) {
    SCOPED_TRACE(nodes);
    Topology t(test_cluster(nodes, 8, 600e9, 25e9, 8, "rail-optimized"));
    const int last = (nodes - 1) * 8;
    EXPECT_DOUBLE_EQ(bottleneck(t, t.route(7, 8)), 25e9);          // rail 7 -> rail 0
    EXPECT_DOUBLE_EQ(bottleneck(t, t.route(0, 8)), 25e9);          // same rail
    EXPECT_DOUBLE_EQ(bottleneck(t, t.route(3, last + 5)), 25e9);   // across rails and units
    // A leaf's uplinks carry its NICs' bandwidth (full bisection): count them.
    double up = 0, down = 0;
    const int leaf = t.leaf_of_gpu(0);
    for (const auto& l : t.links()) {
      if (l.kind == LinkKind::kSwitch && l.a == leaf) up += l.bandwidth_bytes_per_s;
      if (l.kind == LinkKind::kNic && l.b == leaf) down += l.bandwidth_bytes_per_s;
    }
    EXPECT_NEAR(up, down, 1);
  }
  // With a 2:1 taper a leaf keeps half its NIC bandwidth upward, still in full-rate uplinks.
  Topology tapered(test_cluster(4, 8, 600e9, 25e9, 8, "rail-optimized", 2.0));
  EXPECT_DOUBLE_EQ(bottleneck(tapered, tapered.route(7, 8)), 25e9);
}

TEST(Topology, EveryTopologyComesFromTheRegistry) {
  std::set<std::string> names;
  for (const auto& k : topology_kinds()) names.insert(k.name);
  EXPECT_EQ(names, (std::set<std::string>{"fat-tree", "rail-optimized", "dragonfly", "torus", "single-switch"}));
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    ClusterSpec c = test_cluster(16, 8, 600e9, 25e9, 8, name);
    Topology t(c);
    EXPECT_EQ(t.kind(), name);
    EXPECT_GT(t.route(0, 8 * 15 + 3).links.size(), 1u);  // every pair of GPUs is connected
  }
  try {
    Topology(test_cluster(2, 8, 600e9, 25e9, 8, "hypercube"));
    ADD_FAILURE() << "unknown topology accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("rail-optimized"), std::string::npos);  // lists the valid ones
  }
}

TEST(Topology, AGpuWithSeveralNicsUsesThemAllByChannel) {
  Topology t(test_cluster(2, 1, 0, 25e9, 4, "single-switch"));
  EXPECT_EQ(t.nics_of_gpu(0), 4);
  std::set<int> nic_links;
  for (int ch = 0; ch < 4; ++ch) nic_links.insert(link_of(t.route(0, 1, 0, false, ch).links.front()));
  EXPECT_EQ(nic_links.size(), 4u);
  EXPECT_EQ(channel_rings(t, {0, 1}).size(), 4u);
}

TEST(Topology, AdaptiveRoutingTakesTheLeastLoadedUplink) {
  TopologyOptions opts;
  opts.switch_radix = 8;  // 4 spines
  opts.routing = RoutingPolicy::kAdaptive;
  Topology t(test_cluster(16, 1, 0, 25e9, 1, "fat-tree"), opts);
  std::set<int> uplinks;
  for (int dst = 4; dst < 8; ++dst) {  // four flows from leaf 0 to leaf 1, loaded as they start
    const Route r = t.route(0, dst, 0);
    uplinks.insert(link_of(r.links[1]));
    t.add_load(r, 1e9);
  }
  EXPECT_EQ(uplinks.size(), 4u);  // one spine each, whatever the hash says
}

// LinkStats without SimGrid: a utilisation series of more points than a trace keeps is
// time-averaged into kMaxCounterPoints bins, and the bytes it carries stay the same.
TEST(LinkStats, ALongUtilisationSeriesIsAveragedIntoBoundedCounterPoints) {
  Topology t(test_cluster(2, 8, 600e9, 25e9, 8, "rail-optimized"));
  LinkStats stats(t);
  stats.enable_sampling(true);
  const DirectedLink link = 0;
  const double bw = t.links()[0].bandwidth_bytes_per_s;
  // 100,000 intervals of 1 us, every other one at half the link's rate: 25% on average.
  const int n = 100000;
  for (int k = 0; k < n; k += 2) stats.add_interval(link, k * 1e-6, (k + 1) * 1e-6, 0.5 * bw * 1e-6);
  std::ostringstream out;
  stats.write_chrome_trace(out, {link});
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  std::size_t points = 0;
  double mean_pct = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C") {
      ++points;
      mean_pct += e["args"]["utilisation_pct"].get<double>();
    }
  EXPECT_LE(points, LinkStats::kMaxCounterPoints + 1);
  EXPECT_NEAR(mean_pct / points, 25.0, 0.1);
}

}  // namespace
}  // namespace trainsim::sim
