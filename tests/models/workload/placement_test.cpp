#include "models/workload/placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace trainsim {
namespace {

TEST(RankPlacement, MegatronOrderPutsTpInnermost) {
  // tp 2, cp 2, dp 2, pp 2 on 8-GPU nodes: gpu = tp + 2 (cp + 2 (dp + 2 stage)).
  const RankPlacement p(2, 2, 2, 2);
  EXPECT_EQ(p.gpu(1, 0, 0, 0), 1);
  EXPECT_EQ(p.gpu(0, 1, 0, 0), 2);
  EXPECT_EQ(p.gpu(0, 0, 1, 0), 4);
  EXPECT_EQ(p.gpu(0, 0, 0, 1), 8);
  EXPECT_EQ(p.tp_group(0), (std::vector<int>{0, 1}));
  EXPECT_EQ(p.cp_group(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(p.dp_groups(0).front(), (std::vector<int>{0, 2, 4, 6}));  // dp x cp, cp innermost
  EXPECT_EQ(p.pp_pair(0, 1), (std::vector<int>{0, 8}));
}

TEST(RankPlacement, ExpertGroupsFoldOntoTheStageBlockWithEtpInnermost) {
  // Megatron-Core MoE folding: TP 2, CP 2, DP 4 (16 GPUs a stage), ETP 1, EP 8, EDP 2. EP members
  // are consecutive GPUs (ETP 1 apart): one node, not one GPU per node as a TP x CP stride
  // would put them.
  const RankPlacement p(2, 2, 4, 1, "tp-cp-dp-pp", 8, 1, 8);
  EXPECT_EQ(p.edp(), 2);
  EXPECT_EQ(p.ep_group(0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.shape(p.ep_group(0)).nodes, 1);
  EXPECT_EQ(p.expert_dp_groups(0).front(), (std::vector<int>{0, 8}));
  // ETP = TP = 2: EP members are 2 apart, 8 of them span two nodes.
  const RankPlacement q(2, 2, 4, 1, "tp-cp-dp-pp", 8, 2, 8);
  EXPECT_EQ(q.ep_group(0), (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(q.shape(q.ep_group(0)).nodes, 2);
  EXPECT_EQ(q.shape(q.ep_group(0)).ranks_per_node, 4);
  // Every rank is in exactly one EP group of its stage.
  std::multiset<int> seen;
  for (const auto& g : q.ep_groups(0)) seen.insert(g.begin(), g.end());
  EXPECT_EQ(seen.size(), 16u);
  EXPECT_EQ(std::set<int>(seen.begin(), seen.end()).size(), 16u);
}

TEST(RankPlacement, GroupsThatCrossANodeBoundaryAreFound) {
  // TP 3 on 8-GPU nodes: groups {0,1,2}, {3,4,5} fit; {6,7,8} straddles two nodes.
  const RankPlacement p(3, 1, 8, 1, "tp-cp-dp-pp", 1, 0, 8);
  EXPECT_FALSE(p.straddles(p.tp_group(0, 0, 0)));
  EXPECT_TRUE(p.straddles(p.tp_group(0, 0, 2)));
  const GroupShape worst = p.worst_shape(0);
  EXPECT_EQ(worst.ranks, 3);
  EXPECT_EQ(worst.nodes, 2);
  // TP 4 and TP 8 never straddle.
  EXPECT_EQ(RankPlacement(4, 1, 8, 1).worst_shape(0).nodes, 1);
  EXPECT_EQ(RankPlacement(8, 1, 8, 1).worst_shape(0).nodes, 1);
  // TP 16 spans two nodes by size, not by misalignment.
  const RankPlacement w(16, 1, 2, 1);
  EXPECT_EQ(w.worst_shape(0).nodes, 2);
  EXPECT_FALSE(w.straddles(w.tp_group(0)));
}

TEST(RankPlacement, ClosedFormShapesAreTheListedGroupsShapes) {
  // worst_shape prices arithmetic-progression groups in closed form; it must agree with listing
  // the groups, for every kind, over degrees that align with nodes and degrees that do not.
  int checked = 0;
  for (const char* order : {"tp-cp-dp-pp", "tp-dp-pp", "tp-pp-dp", "dp-tp-pp", "pp-tp-dp"})
    for (int gpn : {4, 8, 6})
      for (int tp : {1, 2, 3, 4, 8, 16})
        for (int cp : {1, 2, 3})
          for (int dp : {1, 2, 4, 6, 8})
            for (int pp : {1, 2, 3})
              for (int ep : {1, 2, 4})
                for (int etp : {0, 1, 2}) {
                  const int block = tp * cp * dp;
                  const int e = etp > 0 ? etp : tp;
                  if (block % (e * ep) != 0) continue;
                  const RankPlacement p(tp, cp, dp, pp, order, ep, etp, gpn, 1 + (tp + dp) % 3);
                  for (int kind = 0; kind < 9; ++kind) {
                    if (kind == 5 || kind == 6) continue;  // enumerated either way
                    SCOPED_TRACE(std::string(order) + " gpn " + std::to_string(gpn) + " tp " + std::to_string(tp) +
                                 " cp " + std::to_string(cp) + " dp " + std::to_string(dp) + " pp " +
                                 std::to_string(pp) + " ep " + std::to_string(ep) + " etp " +
                                 std::to_string(etp) + " kind " + std::to_string(kind));
                    const GroupShape a = p.worst_shape(kind), b = p.worst_shape_enumerated(kind);
                    ASSERT_EQ(a.ranks, b.ranks);
                    ASSERT_EQ(a.nodes, b.nodes);
                    ASSERT_EQ(a.ranks_per_node, b.ranks_per_node);
                    ASSERT_EQ(a.leaf_span, b.leaf_span);
                    ++checked;
                  }
                  if (pp > 1) {
                    const GroupShape a = p.pp_pair_shape(0, 1), b = p.shape(p.pp_pair(0, 1));
                    ASSERT_EQ(a.nodes, b.nodes);
                    ASSERT_EQ(a.ranks_per_node, b.ranks_per_node);
                  }
                }
  EXPECT_GT(checked, 5000);
  // With a shard group, the shard and replica kinds' shapes are the listed groups' worst.
  RankPlacement h(2, 1, 12, 2, "tp-cp-dp-pp", 1, 0, 8);
  h.set_dp_shard(4);
  for (int kind : {7, 8}) {
    GroupShape worst;
    for (const auto& g : kind == 7 ? h.dp_shard_groups(0) : h.dp_replicate_groups(0)) {
      const GroupShape s = h.shape(g);
      if (s.nodes > worst.nodes || (s.nodes == worst.nodes && s.ranks > worst.ranks)) worst = s;
    }
    EXPECT_EQ(h.worst_shape(kind).nodes, worst.nodes) << kind;
    EXPECT_EQ(h.worst_shape(kind).ranks, worst.ranks) << kind;
    EXPECT_EQ(h.worst_shape(kind).ranks_per_node, worst.ranks_per_node) << kind;
  }
}

TEST(RankPlacement, LeafSpanCountsTheLeafSwitchesAGroupReaches) {
  // DP over 4 nodes of 8 GPUs: one leaf of 4 nodes holds it, leaves of 2 nodes split it.
  EXPECT_EQ(RankPlacement(8, 1, 4, 1, "tp-cp-dp-pp", 1, 0, 8, 4).worst_shape(3).leaf_span, 1);
  EXPECT_EQ(RankPlacement(8, 1, 4, 1, "tp-cp-dp-pp", 1, 0, 8, 2).worst_shape(3).leaf_span, 2);
  // Every node its own leaf (the default): a multi-node group spans as many leaves as nodes.
  EXPECT_EQ(RankPlacement(8, 1, 4, 1).worst_shape(3).leaf_span, 4);
  // PP 2 with 3 nodes a stage under leaves of 4: stage 0 (nodes 0-2) fits one leaf, stage 1
  // (nodes 3-5) straddles two, and the worst shape says so.
  const RankPlacement pp2(8, 1, 3, 2, "tp-cp-dp-pp", 1, 0, 8, 4);
  EXPECT_EQ(pp2.shape(pp2.dp_groups(0)[0]).leaf_span, 1);
  EXPECT_EQ(pp2.shape(pp2.dp_groups(1)[0]).leaf_span, 2);
  EXPECT_EQ(pp2.worst_shape(3).leaf_span, 2);
  // TP inside a node never leaves it.
  EXPECT_EQ(pp2.worst_shape(0).leaf_span, 1);
  // The first pipeline pair (nodes 0 and 3) sits under one leaf.
  EXPECT_EQ(pp2.pp_pair_shape(0, 1).leaf_span, 1);
  // CP 2 beside TP 8: each CP group spans two nodes. The sampled one sits under a leaf, but on
  // 8 nodes under leaves of 4 another may not: unknown (0), priced as crossing. With the whole
  // job under one leaf none can cross.
  EXPECT_EQ(RankPlacement(8, 2, 4, 1, "tp-cp-dp-pp", 1, 0, 8, 4).worst_shape(1).leaf_span, 0);
  EXPECT_EQ(RankPlacement(8, 2, 4, 1, "tp-cp-dp-pp", 1, 0, 8, 8).worst_shape(1).leaf_span, 1);
}

// FSDP's HYBRID_SHARD on two 8-GPU nodes: the shard groups are the nodes (consecutive DP ranks),
// the replica groups the GPUs of one local index across the nodes; with TP 2 each TP rank has
// its own, every other GPU.
TEST(RankPlacement, ShardAndReplicaGroupsSplitTheDataParallelGroup) {
  RankPlacement p(1, 1, 16, 1);
  p.set_dp_shard(8);
  const auto shards = p.dp_shard_groups(0);
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[1], (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  const auto replicas = p.dp_replicate_groups(0);
  ASSERT_EQ(replicas.size(), 8u);
  EXPECT_EQ(replicas[3], (std::vector<int>{3, 11}));
  EXPECT_EQ(p.worst_shape(7).nodes, 1);
  EXPECT_EQ(p.worst_shape(7).ranks, 8);
  EXPECT_EQ(p.worst_shape(8).nodes, 2);
  EXPECT_EQ(p.worst_shape(8).ranks_per_node, 1);
  RankPlacement t(2, 1, 8, 1);
  t.set_dp_shard(4);
  EXPECT_EQ(t.dp_shard_groups(0)[0], (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(t.dp_shard_groups(0)[2], (std::vector<int>{1, 3, 5, 7}));  // TP rank 1's first
  EXPECT_EQ(t.dp_replicate_groups(0)[0], (std::vector<int>{0, 8}));
  // Every GPU in exactly one shard group and one replica group of its TP rank.
  std::set<int> seen;
  for (const auto& g : t.dp_shard_groups(0)) seen.insert(g.begin(), g.end());
  EXPECT_EQ(seen.size(), 16u);
  // Without a shard size, or one equal to dp: the DP group itself, and no replicas.
  t.set_dp_shard(8);
  EXPECT_EQ(t.dp_shard_groups(0), t.dp_groups(0));
  EXPECT_TRUE(t.dp_replicate_groups(0).empty());
  EXPECT_EQ(t.worst_shape(8).ranks, 1);
  EXPECT_THROW(t.set_dp_shard(3), std::invalid_argument);
}

TEST(RankPlacement, ExpertDegreesThatDoNotFoldAreRejected) {
  EXPECT_THROW(RankPlacement(2, 1, 3, 1, "tp-cp-dp-pp", 4, 1, 8), std::invalid_argument);
}


TEST(RankPlacement, PipelineLeafLoadsAreTheListedSendsThatLeaveALeaf) {
  // pp_pair_shape counts the sends off a leaf in closed form, run by run of a stage's ids;
  // listing every GPU's pipeline partner gives the same count, for every rank order, leaf
  // size, fabric (whole-node leaves or rails) and ring.
  int checked = 0;
  for (const char* order : {"tp-cp-dp-pp", "tp-pp-dp", "pp-tp-dp", "dp-tp-pp"})
    for (int gpn : {4, 8})
      for (int npl : {1, 2, 3})
        for (int rails : {0, 2, gpn})
          for (int tp : {1, 2, 4})
            for (int dp : {1, 2, 3})
              for (int pp : {2, 3, 5})
                for (int extra_nodes : {0, 3})
                  for (bool ring : {false, true}) {
                    RankPlacement p(tp, 1, dp, pp, order, 1, 0, gpn, npl);
                    const int job_nodes = (p.gpus() + gpn - 1) / gpn;
                    p.set_leaves(job_nodes + extra_nodes, rails);
                    const int per_rail = rails > 0 ? gpn / rails : gpn;
                    auto leaf_of = [&](int g) {
                      const int node = g / gpn;
                      return std::pair<int, int>(node / npl, rails > 0 ? (g % gpn) / per_rail : 0);
                    };
                    // The load one leaf sends up in one direction, listed: a send leaves
                    // when its partner's node is under another leaf (the rail a send rides
                    // is its sender's: rail-aligned, as the leaf span counts it).
                    auto off_leaf = [&](int g, int partner) { return g / gpn / npl != partner / gpn / npl; };
                    auto listed = [&](int from, int dir) {
                      int n = 0;
                      for (int r = 0; r < dp; ++r)
                        for (int t = 0; t < tp; ++t)
                          for (int st = 0; st < pp; ++st) {
                            const int g = p.gpu(t, 0, r, st);
                            if (leaf_of(g) != leaf_of(from)) continue;
                            int to = st + dir;
                            if (to < 0 || to >= pp) {
                              if (!ring) continue;
                              to = (to + pp) % pp;
                            }
                            if (off_leaf(g, p.gpu(t, 0, r, to))) ++n;
                          }
                      return n;
                    };
                    for (int st = 0; st + 1 < pp; ++st) {
                      GroupShape both;
                      const GroupShape one = p.pp_pair_shape(st, st + 1, ring, &both);
                      if (one.leaf_span <= 1) continue;
                      const int from = p.gpu(0, 0, 0, st), to = p.gpu(0, 0, 0, st + 1);
                      const int attached_from = std::min(npl, job_nodes + extra_nodes - from / gpn / npl * npl);
                      const int attached_to = std::min(npl, job_nodes + extra_nodes - to / gpn / npl * npl);
                      const int ga = attached_from * per_rail, gb = attached_to * per_rail;
                      const int fa = listed(from, +1), ba = listed(from, -1);
                      const int bb = listed(to, -1), fb = listed(to, +1);
                      SCOPED_TRACE(std::string(order) + " gpn " + std::to_string(gpn) + " npl " +
                                   std::to_string(npl) + " rails " + std::to_string(rails) + " tp " +
                                   std::to_string(tp) + " dp " + std::to_string(dp) + " pp " + std::to_string(pp) +
                                   " stage " + std::to_string(st) + (ring ? " ring" : ""));
                      // The busier share of the two leaves, as pp_pair_shape reports it.
                      const double want_one = std::max(double(fa) / ga, double(bb) / gb);
                      const double want_both = std::max(double(fa + ba) / ga, double(bb + fb) / gb);
                      ASSERT_DOUBLE_EQ(double(one.leaf_crossing) / one.leaf_gpus, want_one);
                      ASSERT_DOUBLE_EQ(double(both.leaf_crossing) / both.leaf_gpus, want_both);
                      ++checked;
                    }
                  }
  EXPECT_GT(checked, 1000);
}

TEST(RankPlacement, PipelinePairsCountTheSendsThatLeaveTheirLeaf) {
  // A pair's load on the taper: (GPUs sending off the leaf, GPUs the leaf serves).
  using Load = std::pair<int, int>;
  auto load = [](const GroupShape& g) { return Load(g.leaf_crossing, g.leaf_gpus); };
  // TP 8 PP 8 on 8 nodes of 8 GPUs under leaves of 4 nodes: stages 0-3 on leaf 0. Only the
  // boundary 3 -> 4 crosses, and of leaf 0's 32 GPUs the 8 of stage 3 send off it at once.
  RankPlacement p(8, 1, 1, 8, "tp-cp-dp-pp", 1, 0, 8, 4);
  p.set_leaves(8, 0);
  EXPECT_EQ(p.pp_pair_shape(0, 1).leaf_span, 1);
  EXPECT_EQ(p.pp_pair_shape(0, 1).leaf_gpus, 0);
  const GroupShape cross = p.pp_pair_shape(3, 4);
  EXPECT_EQ(cross.leaf_span, 2);
  EXPECT_EQ(load(cross), Load(8, 32));
  // Interleaved chunks also send from stage 7 on to stage 0, from leaf 1 to leaf 0: that pair
  // crosses too, its 8 senders of leaf 1's 32 GPUs (and stage 0's 8 sending gradients back).
  EXPECT_EQ(load(p.pp_pair_shape(7, 0)), Load(8, 32));
  // On a cluster of 6 nodes the second leaf holds 2 and its uplinks serve 16 GPUs: the
  // gradients of stage 4 back to stage 3 leave it from 8 of them, the busier share.
  RankPlacement q(8, 1, 1, 6, "tp-cp-dp-pp", 1, 0, 8, 4);
  q.set_leaves(6, 0);
  EXPECT_EQ(load(q.pp_pair_shape(3, 4)), Load(8, 16));
  // Leaves of 2 nodes: leaf 1 holds stages 2 and 3, whose sends leave it both ways (3 -> 4
  // forward, 2 -> 1 back): 8 of its 16 GPUs in one direction, all 16 in both.
  RankPlacement two(8, 1, 1, 8, "tp-cp-dp-pp", 1, 0, 8, 2);
  two.set_leaves(8, 0);
  GroupShape both;
  const GroupShape one = two.pp_pair_shape(3, 4, false, &both);
  EXPECT_EQ(load(one), Load(8, 16));
  EXPECT_EQ(load(both), Load(16, 16));
  // A stage over 4 nodes (DP 4) under leaves of 2: every GPU's next stage is under another
  // leaf, the whole leaf's traffic climbs (the full taper).
  RankPlacement w(8, 1, 4, 2, "tp-cp-dp-pp", 1, 0, 8, 2);
  w.set_leaves(8, 0);
  EXPECT_EQ(load(w.pp_pair_shape(0, 1)), Load(16, 16));
  // Rail-optimised, 8 rails: TP 4 puts two stages on a node; rail 4's leaf of a 4-node unit
  // holds GPU 4 of nodes 0-3 (stages 1, 3, 5, 7), and only stage 7's send leaves the unit.
  RankPlacement r(4, 1, 1, 16, "tp-cp-dp-pp", 1, 0, 8, 4);
  r.set_leaves(8, 8);
  const GroupShape rail = r.pp_pair_shape(7, 8);
  EXPECT_EQ(rail.leaf_span, 2);
  EXPECT_EQ(load(rail), Load(1, 4));
}

}  // namespace
}  // namespace trainsim
