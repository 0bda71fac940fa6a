#include "sim/step_placement.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace trainsim::sim {

RankPlacement::RankPlacement(int tp, int cp, int dp, int pp, const std::string& placement)
    : tp_(std::max(1, tp)), cp_(std::max(1, cp)), dp_(std::max(1, dp)), pp_(std::max(1, pp)) {
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
    else if (tok == "ep") continue;  // inside dp
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

std::vector<std::vector<int>> RankPlacement::dp_groups(int stage) const {
  std::vector<std::vector<int>> out(tp_);
  for (int t = 0; t < tp_; ++t) {
    out[t].reserve(static_cast<std::size_t>(dp_) * cp_);
    for (int r = 0; r < dp_; ++r)
      for (int c = 0; c < cp_; ++c) out[t].push_back(gpu(t, c, r, stage));
  }
  return out;
}

std::vector<std::vector<int>> RankPlacement::expert_dp_groups(int stage, int ep) const {
  ep = std::max(1, ep);
  std::vector<std::vector<int>> out;
  out.reserve(static_cast<std::size_t>(tp_) * ep);
  for (int t = 0; t < tp_; ++t)
    for (int e = 0; e < ep; ++e) {
      std::vector<int> g;
      for (int r = e; r < dp_; r += ep)
        for (int c = 0; c < cp_; ++c) g.push_back(gpu(t, c, r, stage));
      out.push_back(std::move(g));
    }
  return out;
}

}  // namespace trainsim::sim
