// Where each rank of a parallel plan sits (issue 4, "Scale"): the GPU index of (tp, cp, dp,
// pipeline stage) under the plan's placement string, innermost dimension first. Megatron's
// default "tp-cp-dp-pp" gives gpu = tp + TP*(cp + CP*(dp + DP*stage)) (models/estimate.cpp
// group_shape assumes the same). The step simulator uses it to lay out the representative
// pipeline and every data-parallel gradient group on the platform. No SimGrid here.
#pragma once

#include <string>
#include <vector>

namespace trainsim::sim {

class RankPlacement {
 public:
  // placement: one of the loader's strings ("tp-cp-dp-pp", "tp-pp-dp", ...); "ep" is folded
  // into dp (experts are spread over data-parallel ranks), a missing "cp" sits next to "tp".
  RankPlacement(int tp, int cp, int dp, int pp, const std::string& placement = "tp-cp-dp-pp");

  int gpu(int tp_rank, int cp_rank, int dp_rank, int stage) const;
  int gpus() const { return tp_ * cp_ * dp_ * pp_; }
  // Where the job's GPUs sit on a larger fabric (several jobs on one cluster, `trainsim share`):
  // gpu() returns map[local index]. map.size() must be gpus().
  void set_gpu_map(std::vector<int> map);
  // Every fabric GPU the job uses.
  std::vector<int> all_gpus() const;

  // Dense gradient groups of a stage: one per TP rank, each the dp x cp ranks holding the same
  // shard, ordered by (dp, cp) with cp innermost.
  std::vector<std::vector<int>> dp_groups(int stage) const;
  // Expert gradient groups of a stage (MoE with EP): each dense group split into `ep` groups;
  // group e holds the ranks whose dp index is e mod ep (EP peers are consecutive dp ranks, as
  // the "tp-cp-ep-dp-pp" layout puts them). Size dp x cp / ep.
  std::vector<std::vector<int>> expert_dp_groups(int stage, int ep) const;

 private:
  int tp_, cp_, dp_, pp_;
  // stride of each dimension in the GPU index: [tp, cp, dp, pp]
  long long stride_[4] = {1, 1, 1, 1};
  std::vector<int> map_;
};

}  // namespace trainsim::sim
