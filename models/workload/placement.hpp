// Where each rank of a parallel plan sits, and the groups it communicates in. One answer for both
// tiers: the estimate prices a collective on the shape of the group the placement really makes
// (nodes spanned, ranks per node), and the simulator plays it on those GPUs.
//
// Dense layers use the plan's rank order, innermost first (Megatron's default "tp-cp-dp-pp":
// gpu = tp + TP*(cp + CP*(dp + DP*stage))). MoE layers fold their own degrees onto the same
// TP x CP x DP block of each stage (Megatron-Core "MoE parallel folding", arXiv:2504.14960):
// expert tensor parallel (ETP) innermost, then expert parallel (EP), then expert data parallel
// (EDP = TP*CP*DP / (ETP*EP)), so EP members are ETP ranks apart and an EP group fills a node
// before it leaves it.
#pragma once

#include <string>
#include <vector>

#include "models/cost/collectives/collective_cost.hpp"

namespace trainsim {

class RankPlacement {
 public:
  // placement: one of the loader's strings ("tp-cp-dp-pp", "tp-cp-ep-dp-pp", "tp-dp-pp", ...);
  // "ep" is ignored for the dense layout (experts fold as above), a missing "cp" sits next to
  // "tp". ep/etp: expert degrees (etp 0 = tp). gpus_per_node: for group shapes (0 = 8).
  // nodes_per_leaf: nodes under one leaf switch (models/core/leaf_switch.hpp), for the shapes'
  // leaf_span; 1 (every node its own leaf) prices every multi-node group as crossing the taper.
  RankPlacement(int tp, int cp, int dp, int pp, const std::string& placement = "tp-cp-dp-pp",
                int ep = 1, int etp = 0, int gpus_per_node = 8, int nodes_per_leaf = 1);

  int tp() const { return tp_; }
  int cp() const { return cp_; }
  int dp() const { return dp_; }
  int pp() const { return pp_; }
  int ep() const { return ep_; }
  int etp() const { return etp_; }
  int edp() const { return edp_; }
  int gpus_per_node() const { return gpn_; }
  // ZeRO-3 sharding over part of the DP group (FSDP's HYBRID_SHARD, torchtitan's dp_shard): the
  // parameters are sharded over `dp_shard` consecutive DP ranks (with every CP rank) and
  // replicated dp / dp_shard times. 0 or dp: sharded over the whole DP group. Must divide dp.
  void set_dp_shard(int dp_shard);
  int dp_shard() const { return dp_shard_; }
  // ZeRO++'s hpZ: the secondary partition, `hpz` consecutive DP ranks (with every CP rank) inside a
  // shard group; 0 or 1: none. Must divide the shard group's DP ranks.
  void set_hpz(int hpz);
  int hpz() const { return hpz_; }
  // ZeRO++'s qgZ: gradients reduced by a two-hop all-to-all over each shard group's members on
  // one node, then its members at one in-node index across the nodes (dp_shard_hop_groups).
  void set_qgz(bool qgz) { qgz_ = qgz; }
  bool qgz() const { return qgz_; }
  int nodes_per_leaf() const { return npl_; }

  int gpu(int tp_rank, int cp_rank, int dp_rank, int stage) const;
  // MoE folding: the GPU of (etp rank, ep rank, edp rank) in a stage.
  int expert_gpu(int etp_rank, int ep_rank, int edp_rank, int stage) const;
  int gpus() const { return tp_ * cp_ * dp_ * pp_; }
  // Where the job's GPUs sit on a larger fabric (several jobs on one cluster, `trainsim share`):
  // gpu() returns map[local index]. map.size() must be gpus().
  void set_gpu_map(std::vector<int> map);
  std::vector<int> all_gpus() const;

  // The groups of the representative ranks (tp/cp/dp rank 0 unless given).
  std::vector<int> tp_group(int stage, int cp_rank = 0, int dp_rank = 0) const;
  std::vector<int> cp_group(int stage, int tp_rank = 0, int dp_rank = 0) const;
  std::vector<int> ep_group(int stage, int etp_rank = 0, int edp_rank = 0) const;
  std::vector<int> pp_pair(int stage, int next_stage, int tp_rank = 0) const;
  // Every group of a kind in a stage (all run the same collective at the same time).
  // Dense gradients / ZeRO-3 parameters: one group per TP rank, the dp x cp ranks holding the
  // same shard, ordered by (dp, cp) with cp innermost.
  std::vector<std::vector<int>> dp_groups(int stage) const;
  // ZeRO-3 under a dp_shard: the shard groups (per TP rank, dp_shard consecutive DP ranks with
  // their CP ranks, ordered as dp_groups), and the replica groups (per TP rank, CP rank and
  // position in a shard, its dp / dp_shard copies). Without a dp_shard: dp_groups, and none.
  std::vector<std::vector<int>> dp_shard_groups(int stage) const;
  std::vector<std::vector<int>> dp_replicate_groups(int stage) const;
  // ZeRO++'s secondary partitions (per TP rank, hpz consecutive DP ranks with their CP ranks);
  // none without hpZ.
  std::vector<std::vector<int>> dp_secondary_groups(int stage) const;
  // qgZ's hops of every shard group (as ep_hop_groups); none without qgZ.
  std::vector<std::vector<int>> dp_shard_hop_groups(int stage, bool inter) const;
  // Expert gradients / parameters: one group per (etp, ep) rank, its EDP ranks.
  std::vector<std::vector<int>> expert_dp_groups(int stage) const;
  std::vector<std::vector<int>> tp_groups(int stage) const;
  std::vector<std::vector<int>> cp_groups(int stage) const;
  std::vector<std::vector<int>> ep_groups(int stage) const;
  // DeepEP's hops of every EP group (representative's first): inter, the members at one in-node
  // index on each of the group's nodes; otherwise the members on one node.
  std::vector<std::vector<int>> ep_hop_groups(int stage, bool inter) const;

  // The worst shape among the stage's groups of a kind (most nodes spanned): groups are
  // translates of one another, so the first few (one per GPU of a node) show every alignment.
  // Its leaf_span is the widest over every stage's copy of those groups (a stage is the first
  // one's translate), so a later stage that straddles two leaves is not missed.
  // kind: 0 tp, 1 cp, 2 ep, 3 dp, 4 expert dp, 5 and 6 the EP exchange's network and NVLink
  // hops, 7 and 8 ZeRO-3's shard and replica groups, 9 ZeRO++'s secondary partition, 10 and 11
  // qgZ's NVLink and network hops (CommGroup's order). In closed form for groups that are arithmetic progressions of GPU
  // ids (the standard orders make them), without listing a group; otherwise (the EP hops, and
  // with a GPU map) worst_shape_enumerated().
  GroupShape worst_shape(int kind) const;
  // The same sample of groups listed and measured one by one.
  GroupShape worst_shape_enumerated(int kind) const;

  // The shape the collective cost models price: ranks, nodes spanned, most ranks on one node.
  GroupShape shape(const std::vector<int>& group) const;
  // shape(pp_pair(stage, next_stage)) without building the pair. A pair whose nodes hang off
  // two leaves also carries its load on the taper (GroupShape::leaf_crossing): in a pipeline's
  // steady state every stage sends at once, so the activations leave the sender's leaf beside
  // every other GPU under it whose next stage is under another leaf, and the gradients leave the
  // receiver's leaf beside those whose previous stage is; the pair pays the busier leaf's share.
  // both_ways: the same with each leaf's sends the other way added, the load while the two
  // directions' transfers run at once (build_workload.cpp weighs the two). ring: the last stage
  // sends to the first as well (interleaved chunks; implied by a pair that wraps). Not under a
  // GPU map (the pair then counts as crossing in full).
  GroupShape pp_pair_shape(int stage, int next_stage, bool ring = false, GroupShape* both_ways = nullptr) const;
  // The fabric's leaves as the simulator builds them (sim/topology_fat_tree.cpp,
  // sim/topology_rail_optimized.cpp), for pp_pair_shape's load: the cluster's nodes (the last
  // leaf holds what is left; 0: the job's own) and, on a rail-optimised fabric, its rails (NIC r
  // of every node on rail r's leaf; 0: a leaf holds whole nodes). A send loads its sender's
  // rail (rail-aligned, as leaf_span counts it). Until it is called pp_pair_shape leaves the
  // load unset (a fabric without a taper needs none).
  void set_leaves(int cluster_nodes, int rails);
  // True when the group spans more nodes than its size needs (TP 3 or 6 on 8-GPU nodes: some
  // groups cross a node boundary and their traffic crosses the NICs).
  bool straddles(const std::vector<int>& group) const;
  int node_of(int gpu) const { return gpu / gpn_; }

 private:
  // Leaf switches between the nodes of GPUs lo and hi (lo <= hi), widest over the stages'
  // translates of the pair; 0 (unknown) under a GPU map.
  int leaf_span_over_stages(long long lo, long long hi) const;
  // worst_shape's closed form, before crossing_unless_sampled_exactly.
  GroupShape worst_shape_sampled(int kind) const;
  // g's leaf_span as the sampled groups show it, or 0 where other groups of the kind may cross.
  GroupShape crossing_unless_sampled_exactly(int kind, GroupShape g) const;
  // Of the GPUs sharing `from`'s leaf, how many send to their next stage (forward) and to their
  // previous one (backward) under another leaf, and how many GPUs that leaf's ports serve.
  struct LeafSends {
    int forward = 0, backward = 0, gpus = 0;
  };
  LeafSends sends_off_leaf(int from, bool ring) const;

  int tp_, cp_, dp_, pp_, ep_, etp_, edp_, gpn_, npl_;
  bool leaves_set_ = false;  // set_leaves
  int cluster_nodes_ = 0;
  int rails_ = 0;
  int dp_shard_ = 0;  // 0: the whole DP group
  int hpz_ = 0;       // 0: no secondary partition
  bool qgz_ = false;
  // Per TP rank, the DP ranks cut into consecutive parts of `size` (with their CP ranks).
  std::vector<std::vector<int>> consecutive_dp_parts(int stage, int size) const;
  // stride of each dimension in the GPU index: [tp, cp, dp, pp]
  long long stride_[4] = {1, 1, 1, 1};
  std::vector<int> map_;
};

}  // namespace trainsim
