#include "models/workload/placement.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

namespace trainsim {

RankPlacement::RankPlacement(int tp, int cp, int dp, int pp, const std::string& placement, int ep,
                             int etp, int gpus_per_node)
    : tp_(std::max(1, tp)),
      cp_(std::max(1, cp)),
      dp_(std::max(1, dp)),
      pp_(std::max(1, pp)),
      ep_(std::max(1, ep)),
      etp_(etp > 0 ? etp : std::max(1, tp)),
      edp_(1),
      gpn_(gpus_per_node > 0 ? gpus_per_node : 8) {
  const long long block = static_cast<long long>(tp_) * cp_ * dp_;
  if (block % (static_cast<long long>(etp_) * ep_) != 0)
    throw std::invalid_argument("RankPlacement: expert TP x EP = " + std::to_string(etp_ * ep_) +
                                " does not divide TP x CP x DP = " + std::to_string(block));
  edp_ = static_cast<int>(block / (static_cast<long long>(etp_) * ep_));
  // Dimension order, innermost first: 0 tp, 1 cp, 2 dp, 3 pp.
  std::vector<int> order;
  std::stringstream ss(placement);
  std::string tok;
  while (std::getline(ss, tok, '-')) {
    int d = -1;
    if (tok == "tp") d = 0;
    else if (tok == "cp") d = 1;
    else if (tok == "dp") d = 2;
    else if (tok == "pp") d = 3;
    else if (tok == "ep") continue;  // experts fold onto tp x cp x dp
    else throw std::invalid_argument("RankPlacement: unknown dimension \"" + tok + "\" in " + placement);
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  }
  if (std::find(order.begin(), order.end(), 1) == order.end()) {
    auto it = std::find(order.begin(), order.end(), 0);
    order.insert(it == order.end() ? order.begin() : it + 1, 1);
  }
  for (int d : {0, 2, 3})
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  const int size[4] = {tp_, cp_, dp_, pp_};
  long long s = 1;
  for (int d : order) {
    stride_[d] = s;
    s *= size[d];
  }
}

int RankPlacement::gpu(int t, int c, int r, int stage) const {
  const int local = static_cast<int>(t * stride_[0] + c * stride_[1] + r * stride_[2] + stage * stride_[3]);
  return map_.empty() ? local : map_[local];
}

int RankPlacement::expert_gpu(int etp_rank, int ep_rank, int edp_rank, int stage) const {
  // Position in the stage's TP x CP x DP block, expert dimensions innermost first; the block is
  // walked in Megatron's dense order (tp fastest, then cp, then dp).
  const long long j = etp_rank + static_cast<long long>(etp_) * (ep_rank + static_cast<long long>(ep_) * edp_rank);
  const int t = static_cast<int>(j % tp_);
  const int c = static_cast<int>((j / tp_) % cp_);
  const int r = static_cast<int>(j / (static_cast<long long>(tp_) * cp_));
  return gpu(t, c, r, stage);
}

void RankPlacement::set_gpu_map(std::vector<int> map) {
  if (!map.empty() && static_cast<int>(map.size()) != gpus())
    throw std::invalid_argument("RankPlacement::set_gpu_map: " + std::to_string(map.size()) +
                                " entries for " + std::to_string(gpus()) + " GPUs");
  map_ = std::move(map);
}

std::vector<int> RankPlacement::all_gpus() const {
  std::vector<int> out(gpus());
  for (int i = 0; i < gpus(); ++i) out[i] = map_.empty() ? i : map_[i];
  return out;
}

std::vector<int> RankPlacement::tp_group(int stage, int cp_rank, int dp_rank) const {
  std::vector<int> g(tp_);
  for (int t = 0; t < tp_; ++t) g[t] = gpu(t, cp_rank, dp_rank, stage);
  return g;
}

std::vector<int> RankPlacement::cp_group(int stage, int tp_rank, int dp_rank) const {
  std::vector<int> g(cp_);
  for (int c = 0; c < cp_; ++c) g[c] = gpu(tp_rank, c, dp_rank, stage);
  return g;
}

std::vector<int> RankPlacement::ep_group(int stage, int etp_rank, int edp_rank) const {
  std::vector<int> g(ep_);
  for (int e = 0; e < ep_; ++e) g[e] = expert_gpu(etp_rank, e, edp_rank, stage);
  return g;
}

std::vector<int> RankPlacement::pp_pair(int stage, int next_stage, int tp_rank) const {
  return {gpu(tp_rank, 0, 0, stage), gpu(tp_rank, 0, 0, next_stage)};
}

std::vector<std::vector<int>> RankPlacement::dp_groups(int stage) const {
  std::vector<std::vector<int>> out(tp_);
  for (int t = 0; t < tp_; ++t) {
    out[t].reserve(static_cast<std::size_t>(dp_) * cp_);
    for (int r = 0; r < dp_; ++r)
      for (int c = 0; c < cp_; ++c) out[t].push_back(gpu(t, c, r, stage));
  }
  return out;
}

std::vector<std::vector<int>> RankPlacement::expert_dp_groups(int stage) const {
  std::vector<std::vector<int>> out;
  out.reserve(static_cast<std::size_t>(etp_) * ep_);
  for (int t = 0; t < etp_; ++t)
    for (int e = 0; e < ep_; ++e) {
      std::vector<int> g(edp_);
      for (int r = 0; r < edp_; ++r) g[r] = expert_gpu(t, e, r, stage);
      out.push_back(std::move(g));
    }
  return out;
}

std::vector<std::vector<int>> RankPlacement::tp_groups(int stage) const {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < dp_; ++r)
    for (int c = 0; c < cp_; ++c) out.push_back(tp_group(stage, c, r));
  return out;
}

std::vector<std::vector<int>> RankPlacement::cp_groups(int stage) const {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < dp_; ++r)
    for (int t = 0; t < tp_; ++t) out.push_back(cp_group(stage, t, r));
  return out;
}

std::vector<std::vector<int>> RankPlacement::ep_groups(int stage) const {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < edp_; ++r)
    for (int t = 0; t < etp_; ++t) out.push_back(ep_group(stage, t, r));
  return out;
}

GroupShape RankPlacement::shape(const std::vector<int>& group) const {
  GroupShape g;
  g.ranks = static_cast<int>(group.size());
  if (group.size() <= 1) return g;
  std::map<int, int> per_node;
  for (int r : group) ++per_node[node_of(r)];
  g.nodes = static_cast<int>(per_node.size());
  g.ranks_per_node = 0;
  for (const auto& [node, n] : per_node) g.ranks_per_node = std::max(g.ranks_per_node, n);
  return g;
}

GroupShape RankPlacement::worst_shape(int kind) const {
  std::vector<std::vector<int>> sample;
  const int k = gpn_;
  switch (kind) {
    case 0:
      for (int i = 0; i < std::min(k, dp_ * cp_); ++i) sample.push_back(tp_group(0, i % cp_, i / cp_));
      break;
    case 1:
      for (int i = 0; i < std::min(k, dp_ * tp_); ++i) sample.push_back(cp_group(0, i % tp_, i / tp_));
      break;
    case 2:
      for (int i = 0; i < std::min(k, edp_ * etp_); ++i) sample.push_back(ep_group(0, i % etp_, i / etp_));
      break;
    case 3: {
      auto g = dp_groups(0);
      g.resize(std::min<std::size_t>(g.size(), 2));
      sample = std::move(g);
      break;
    }
    default: {
      auto g = expert_dp_groups(0);
      g.resize(std::min<std::size_t>(g.size(), 2));
      sample = std::move(g);
      break;
    }
  }
  GroupShape worst;
  for (const auto& g : sample) {
    const GroupShape s = shape(g);
    if (s.nodes > worst.nodes || (s.nodes == worst.nodes && s.ranks > worst.ranks)) worst = s;
  }
  return worst;
}

bool RankPlacement::straddles(const std::vector<int>& group) const {
  if (group.size() <= 1) return false;
  const GroupShape g = shape(group);
  const int needed = static_cast<int>((group.size() + gpn_ - 1) / gpn_);
  return g.nodes > needed;
}

}  // namespace trainsim
