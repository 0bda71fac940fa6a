#include "models/workload/placement.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string_view>

namespace trainsim {

RankPlacement::RankPlacement(int tp, int cp, int dp, int pp, const std::string& placement, int ep,
                             int etp, int gpus_per_node, int nodes_per_leaf)
    : tp_(std::max(1, tp)),
      cp_(std::max(1, cp)),
      dp_(std::max(1, dp)),
      pp_(std::max(1, pp)),
      ep_(std::max(1, ep)),
      etp_(etp > 0 ? etp : std::max(1, tp)),
      edp_(1),
      gpn_(gpus_per_node > 0 ? gpus_per_node : 8),
      npl_(std::max(1, nodes_per_leaf)) {
  const long long block = static_cast<long long>(tp_) * cp_ * dp_;
  if (block % (static_cast<long long>(etp_) * ep_) != 0)
    throw std::invalid_argument("RankPlacement: expert TP x EP = " + std::to_string(etp_ * ep_) +
                                " does not divide TP x CP x DP = " + std::to_string(block));
  edp_ = static_cast<int>(block / (static_cast<long long>(etp_) * ep_));
  // Dimension order, innermost first: 0 tp, 1 cp, 2 dp, 3 pp. Parsed without allocating: a
  // placement is built for every plan of a search.
  int order[4] = {0, 1, 2, 3};
  int dims = 0;
  auto has = [&](int d) { return std::find(order, order + dims, d) != order + dims; };
  if (placement == "tp-cp-dp-pp") dims = 4;  // the default, already in order
  for (std::size_t at = dims == 4 ? placement.size() : 0; at < placement.size();) {  // as std::getline on '-' splits it
    std::size_t end = placement.find('-', at);
    if (end == std::string::npos) end = placement.size();
    const std::string_view tok(placement.data() + at, end - at);
    at = end + 1;
    int d = -1;
    if (tok == "tp") d = 0;
    else if (tok == "cp") d = 1;
    else if (tok == "dp") d = 2;
    else if (tok == "pp") d = 3;
    else if (tok == "ep") continue;  // experts fold onto tp x cp x dp
    else throw std::invalid_argument("RankPlacement: unknown dimension \"" + std::string(tok) + "\" in " + placement);
    if (!has(d)) order[dims++] = d;
  }
  if (!has(1)) {
    int* it = std::find(order, order + dims, 0);
    const int pos = it == order + dims ? 0 : static_cast<int>(it - order) + 1;
    for (int i = dims; i > pos; --i) order[i] = order[i - 1];
    order[pos] = 1;
    ++dims;
  }
  for (int d : {0, 2, 3})
    if (!has(d)) order[dims++] = d;
  const int size[4] = {tp_, cp_, dp_, pp_};
  long long s = 1;
  for (int i = 0; i < dims; ++i) {
    stride_[order[i]] = s;
    s *= size[order[i]];
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

void RankPlacement::set_dp_shard(int dp_shard) {
  if (dp_shard < 0 || (dp_shard > 0 && dp_ % dp_shard != 0))
    throw std::invalid_argument("RankPlacement: dp_shard " + std::to_string(dp_shard) + " does not divide dp " +
                                std::to_string(dp_));
  dp_shard_ = dp_shard == dp_ ? 0 : dp_shard;
}

std::vector<std::vector<int>> RankPlacement::consecutive_dp_parts(int stage, int size) const {
  std::vector<std::vector<int>> out;
  for (int t = 0; t < tp_; ++t)
    for (int k = 0; k < dp_ / size; ++k) {
      std::vector<int> g;
      g.reserve(static_cast<std::size_t>(size) * cp_);
      for (int r = k * size; r < (k + 1) * size; ++r)
        for (int c = 0; c < cp_; ++c) g.push_back(gpu(t, c, r, stage));
      out.push_back(std::move(g));
    }
  return out;
}

std::vector<std::vector<int>> RankPlacement::dp_shard_groups(int stage) const {
  return dp_shard_ == 0 ? dp_groups(stage) : consecutive_dp_parts(stage, dp_shard_);
}

void RankPlacement::set_hpz(int hpz) {
  const int shard = dp_shard_ > 0 ? dp_shard_ : dp_;
  if (hpz < 0 || (hpz > 1 && shard % hpz != 0))
    throw std::invalid_argument("RankPlacement: hpz " + std::to_string(hpz) + " does not divide the shard group's " +
                                std::to_string(shard) + " DP ranks");
  hpz_ = hpz > 1 && hpz < shard ? hpz : 0;
}

std::vector<std::vector<int>> RankPlacement::dp_secondary_groups(int stage) const {
  if (hpz_ == 0) return {};
  return consecutive_dp_parts(stage, hpz_);
}

std::vector<std::vector<int>> RankPlacement::dp_replicate_groups(int stage) const {
  std::vector<std::vector<int>> out;
  if (dp_shard_ == 0) return out;
  for (int t = 0; t < tp_; ++t)
    for (int j = 0; j < dp_shard_; ++j)
      for (int c = 0; c < cp_; ++c) {
        std::vector<int> g;
        g.reserve(dp_ / dp_shard_);
        for (int r = j; r < dp_; r += dp_shard_) g.push_back(gpu(t, c, r, stage));
        out.push_back(std::move(g));
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

namespace {

// A group's two hops (DeepEP's EP exchange, ZeRO++'s qgZ): its members on each node, in node
// order (the NVLink hop's groups); and, for each in-node index j, the j-th member on every node
// (the network hop's groups).
std::vector<std::vector<int>> members_per_node(const std::vector<int>& group, int gpn) {
  std::vector<std::vector<int>> parts;
  std::vector<int> sorted = group;
  std::sort(sorted.begin(), sorted.end());
  for (int g : sorted) {
    if (parts.empty() || parts.back().front() / gpn != g / gpn) parts.emplace_back();
    parts.back().push_back(g);
  }
  return parts;
}

void add_node_hops(const std::vector<int>& group, int gpn, bool inter, std::vector<std::vector<int>>& out) {
  const auto parts = members_per_node(group, gpn);
  if (!inter) {
    out.insert(out.end(), parts.begin(), parts.end());
    return;
  }
  std::size_t widest = 0;
  for (const auto& p : parts) widest = std::max(widest, p.size());
  for (std::size_t j = 0; j < widest; ++j) {
    std::vector<int> rail;
    for (const auto& p : parts)
      if (j < p.size()) rail.push_back(p[j]);
    out.push_back(std::move(rail));
  }
}

}  // namespace

std::vector<std::vector<int>> RankPlacement::ep_hop_groups(int stage, bool inter) const {
  std::vector<std::vector<int>> out;
  for (const auto& g : ep_groups(stage)) add_node_hops(g, gpn_, inter, out);
  return out;
}

std::vector<std::vector<int>> RankPlacement::dp_shard_hop_groups(int stage, bool inter) const {
  std::vector<std::vector<int>> out;
  if (!qgz_) return out;
  for (const auto& g : dp_shard_groups(stage)) add_node_hops(g, gpn_, inter, out);
  return out;
}

namespace {

// Shape of a set of GPUs from their node ids (sorted here): nodes spanned, most on one node.
GroupShape shape_of_nodes(int* nodes, int n, int per_leaf) {
  GroupShape g;
  g.ranks = n;
  g.leaf_span = 1;
  if (n <= 1) return g;
  if (!std::is_sorted(nodes, nodes + n)) std::sort(nodes, nodes + n);
  g.leaf_span = nodes[n - 1] / per_leaf - nodes[0] / per_leaf + 1;
  g.nodes = 0;
  g.ranks_per_node = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && nodes[j] == nodes[i]) ++j;
    ++g.nodes;
    g.ranks_per_node = std::max(g.ranks_per_node, j - i);
    i = j;
  }
  return g;
}

// The shape of the arithmetic progression {first + i step : 0 <= i < n} on nodes of `gpn` GPUs,
// in closed form: consecutive members step < gpn apart leave no node between them empty, so
// the nodes spanned are last - first + 1; a node holds the members in [k gpn, (k+1) gpn), and
// the counts of the nodes strictly inside the span repeat every step / gcd(step, gpn) nodes.
GroupShape progression_shape(long long first, long long step, long long n, long long gpn) {
  GroupShape g;
  g.ranks = static_cast<int>(n);
  g.leaf_span = 1;
  if (n <= 1) return g;
  if (step >= gpn) {
    g.nodes = static_cast<int>(n);
    g.ranks_per_node = 1;
    return g;
  }
  const long long last = first + (n - 1) * step;
  const long long n0 = first / gpn, n1 = last / gpn;
  g.nodes = static_cast<int>(n1 - n0 + 1);
  // Members on node k: i in [ceil((k gpn - first) / step), floor(((k+1) gpn - 1 - first) / step)].
  auto count = [&](long long k) {
    const long long lo = std::max(0LL, (k * gpn - first + step - 1) / step);
    const long long hi = std::min(n - 1, ((k + 1) * gpn - 1 - first) / step);
    return std::max(0LL, hi - lo + 1);
  };
  long long best = std::max(count(n0), count(n1));
  const long long period = step / std::gcd(step, gpn);
  for (long long k = n0 + 1; k < n1 && k <= n0 + period; ++k) best = std::max(best, count(k));
  g.ranks_per_node = static_cast<int>(best);
  return g;
}

// Worst of two shapes: most nodes spanned, then most ranks (worst_shape's order); the leaf
// span is the widest of the two.
void keep_worst(GroupShape& worst, const GroupShape& s) {
  const int span = worst.leaf_span == 0 || s.leaf_span == 0 ? 0 : std::max(worst.leaf_span, s.leaf_span);
  if (s.nodes > worst.nodes || (s.nodes == worst.nodes && s.ranks > worst.ranks)) worst = s;
  worst.leaf_span = span;
}

}  // namespace

GroupShape RankPlacement::shape(const std::vector<int>& group) const {
  const int n = static_cast<int>(group.size());
  if (n <= 1) return shape_of_nodes(nullptr, n, npl_);
  // Node ids in a per-thread buffer: no allocation per call after warm-up.
  thread_local std::vector<int> nodes;
  nodes.resize(group.size());
  for (int i = 0; i < n; ++i) nodes[i] = node_of(group[i]);
  return shape_of_nodes(nodes.data(), n, npl_);
}

GroupShape RankPlacement::pp_pair_shape(int stage, int next_stage, bool ring, GroupShape* both_ways) const {
  const int from = gpu(0, 0, 0, stage), to = gpu(0, 0, 0, next_stage);
  int nodes[2] = {node_of(from), node_of(to)};
  GroupShape g = shape_of_nodes(nodes, 2, npl_);
  if (both_ways) *both_ways = g;
  if (g.leaf_span <= 1 || !map_.empty() || !leaves_set_) return g;
  ring = ring || next_stage <= stage;  // a pair that wraps is the ring's
  // The activations leave the sender's leaf beside the other forward sends off it; the
  // gradients leave the receiver's leaf beside the other backward sends off it. Each leaf's
  // uplinks also carry its sends the other way.
  const LeafSends a = sends_off_leaf(from, ring), b = sends_off_leaf(to, ring);
  // The busier of two loads, compared as shares of their leaves' GPUs.
  auto busier = [&](GroupShape& out, int load_a, int load_b) {
    const bool first = static_cast<long long>(load_a) * b.gpus >= static_cast<long long>(load_b) * a.gpus;
    out.leaf_crossing = first ? load_a : load_b;
    out.leaf_gpus = first ? a.gpus : b.gpus;
  };
  busier(g, a.forward, b.backward);
  if (both_ways) busier(*both_ways, a.forward + a.backward, b.backward + b.forward);
  return g;
}

void RankPlacement::set_leaves(int cluster_nodes, int rails) {
  leaves_set_ = true;
  cluster_nodes_ = std::max(0, cluster_nodes);
  rails_ = std::max(0, rails);
}

RankPlacement::LeafSends RankPlacement::sends_off_leaf(int from, bool ring) const {
  const long long per_leaf = static_cast<long long>(npl_) * gpn_;
  const long long job_nodes = (static_cast<long long>(gpus()) + gpn_ - 1) / gpn_;
  const long long nodes = std::max<long long>(cluster_nodes_, job_nodes);
  const long long leaf = node_of(from) / npl_;
  const long long attached = std::min<long long>(npl_, nodes - leaf * npl_);
  // A rail's leaf serves the GPUs of one NIC index on each of its nodes.
  const int per_rail = rails_ > 0 ? std::max(1, gpn_ / rails_) : gpn_;
  const int local_lo = rails_ > 0 ? (from % gpn_) / per_rail * per_rail : 0;
  LeafSends out;
  out.gpus = static_cast<int>(attached * per_rail);
  const long long start = leaf * per_leaf, end = start + per_leaf;  // the leaf's GPU ids
  const long long hi = std::min<long long>(start + attached * gpn_, gpus());
  const long long step = stride_[3];
  // The leaf's GPUs below x (of the rail's, on a rail-optimised fabric).
  auto below = [&](long long x) {
    return x / gpn_ * per_rail + std::clamp<long long>(x % gpn_ - local_lo, 0, per_rail);
  };
  // Those in [x, y) whose stage is one `want` takes, a run of one stage at a time (a stage's
  // GPUs are runs of `step` ids): a plan search prices every pair of every plan.
  auto count = [&](long long x, long long y, auto want) {
    long long n = 0;
    x = std::max(x, start);
    y = std::min(y, hi);
    while (x < y) {
      const long long run_end = std::min(y, (x / step + 1) * step);
      if (want(static_cast<int>((x / step) % pp_))) n += below(run_end) - below(x);
      x = run_end;
    }
    return n;
  };
  const long long wrap = static_cast<long long>(pp_ - 1) * step;
  // Forward: partner g + step at or past the leaf's end; with the ring, the last stage's
  // g - wrap before its start. Backward: g - step before its start; the first stage's g + wrap
  // past its end.
  long long forward = count(end - step, hi, [&](int s) { return s < pp_ - 1; });
  long long backward = count(start, start + step, [&](int s) { return s > 0; });
  if (ring) {
    forward += count(start, start + wrap, [&](int s) { return s == pp_ - 1; });
    backward += count(end - wrap, hi, [&](int s) { return s == 0; });
  }
  out.forward = static_cast<int>(forward);
  out.backward = static_cast<int>(backward);
  return out;
}

int RankPlacement::leaf_span_over_stages(long long lo, long long hi) const {
  if (!map_.empty()) return 0;
  const long long per_leaf = static_cast<long long>(gpn_) * npl_;  // GPUs under one leaf
  int span = 1;
  for (int s = 0; s < pp_; ++s) {
    const long long off = s * stride_[3];
    span = std::max(span, static_cast<int>((hi + off) / per_leaf - (lo + off) / per_leaf + 1));
  }
  return span;
}

GroupShape RankPlacement::crossing_unless_sampled_exactly(int kind, GroupShape g) const {
  // DP and expert-DP groups run over their stage's whole block, so every group of a stage spans
  // the same nodes and the stages' translates cover them all. CP and EP groups are translates
  // of the sampled ones by the other dimensions too, and a translate may straddle a leaf
  // boundary the sample does not: unless the whole job hangs off one leaf, one that spans nodes
  // counts as crossing the taper (0, unknown).
  const bool sub_block = kind == 1 || kind == 2 || kind >= 5;
  if (sub_block && g.nodes > 1 && g.leaf_span == 1) {
    const bool one_leaf = map_.empty() && (static_cast<long long>(gpus()) - 1) / gpn_ / npl_ == 0;
    if (!one_leaf) g.leaf_span = 0;
  }
  return g;
}

GroupShape RankPlacement::worst_shape(int kind) const {
  // Without a dp_shard the shard group is the DP group, and no replica group exists.
  if (dp_shard_ == 0 && kind == 7) return worst_shape(3);
  if (dp_shard_ == 0 && kind == 8) return GroupShape{};
  if (hpz_ == 0 && kind == 9) return GroupShape{};
  if (!qgz_ && (kind == 10 || kind == 11)) return GroupShape{};
  if (!map_.empty() || kind >= 5) return worst_shape_enumerated(kind);
  return crossing_unless_sampled_exactly(kind, worst_shape_sampled(kind));
}

GroupShape RankPlacement::worst_shape_sampled(int kind) const {
  // The groups of a kind are arithmetic progressions of GPU ids whenever the dimensions they
  // run over are adjacent in the rank order (every standard order): price those in closed
  // form, over the same sample of groups worst_shape_enumerated() lists.
  const long long s0 = stride_[0], s1 = stride_[1], s2 = stride_[2];
  const long long k = gpn_;
  GroupShape worst;
  worst.leaf_span = 1;
  // A progression's shape, its leaf span taken over every stage's copy of it.
  auto progression = [&](long long first, long long step, long long n) {
    GroupShape g = progression_shape(first, step, n, k);
    if (n > 1) g.leaf_span = leaf_span_over_stages(first, first + (n - 1) * step);
    return g;
  };
  // The stage's block as an affine map of its index j = t + tp (c + cp r) (MoE folding walks
  // it in that order): gpu = j * unit when each dimension's stride is the previous ones' span.
  long long unit = 0;
  {
    const long long size[3] = {tp_, cp_, dp_};
    const long long stride[3] = {s0, s1, s2};
    long long span = 1;
    bool affine = true;
    for (int d = 0; d < 3; ++d) {
      if (size[d] == 1) continue;
      if (unit == 0) unit = stride[d];
      else if (stride[d] != unit * span) affine = false;
      span *= size[d];
    }
    if (unit == 0) unit = 1;
    if (!affine) unit = -1;
  }
  switch (kind) {
    case 0:
      for (int i = 0; i < std::min(gpn_, dp_ * cp_); ++i)
        keep_worst(worst, progression(gpu(0, i % cp_, i / cp_, 0), s0, tp_));
      return worst;
    case 1:
      for (int i = 0; i < std::min(gpn_, dp_ * tp_); ++i)
        keep_worst(worst, progression(gpu(i % tp_, 0, i / tp_, 0), s1, cp_));
      return worst;
    case 3: {
      // dp x cp ranks of one TP rank: a progression when cp and dp are adjacent, either way round.
      long long step = 0;
      if (cp_ == 1) step = s2;
      else if (dp_ == 1) step = s1;
      else if (s2 == s1 * cp_) step = s1;
      else if (s1 == s2 * dp_) step = s2;
      if (step == 0) return worst_shape_enumerated(kind);
      for (int t = 0; t < std::min(tp_, 2); ++t)
        keep_worst(worst, progression(gpu(t, 0, 0, 0), step, static_cast<long long>(dp_) * cp_));
      return worst;
    }
    case 2:
      if (unit < 0) return worst_shape_enumerated(kind);
      for (int i = 0; i < std::min(gpn_, edp_ * etp_); ++i)
        keep_worst(worst, progression(expert_gpu(i % etp_, 0, i / etp_, 0), unit * etp_, ep_));
      return worst;
    default: {
      if (unit < 0) return worst_shape_enumerated(kind);
      // expert_dp_groups' first two: (etp 0, ep 0), then (0, 1), or (1, 0) without EP.
      const int firsts[2][2] = {{0, 0}, {ep_ > 1 ? 0 : 1, ep_ > 1 ? 1 : 0}};
      const int groups = std::min(etp_ * ep_, 2);
      for (int g = 0; g < groups; ++g)
        keep_worst(worst, progression(expert_gpu(firsts[g][0], firsts[g][1], 0, 0), unit * etp_ * ep_, edp_));
      return worst;
    }
  }
}

GroupShape RankPlacement::worst_shape_enumerated(int kind) const {
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
    case 5:
    case 6:
      for (int i = 0; i < std::min(k, edp_ * etp_); ++i) add_node_hops(ep_group(0, i % etp_, i / etp_), gpn_, kind == 5, sample);
      break;
    case 7:
    case 8:
    case 9: {
      if (dp_shard_ == 0 && kind != 9) return kind == 7 ? worst_shape_enumerated(3) : GroupShape{};
      if (hpz_ == 0 && kind == 9) return GroupShape{};
      // The groups of TP rank 0 (those of other TP ranks are their translates by one GPU): a
      // node's worth shows every alignment of a group with the node boundaries.
      const auto g = kind == 7 ? dp_shard_groups(0) : kind == 8 ? dp_replicate_groups(0) : dp_secondary_groups(0);
      const std::size_t per_tp = g.size() / static_cast<std::size_t>(tp_);
      for (std::size_t i = 0; i < std::min<std::size_t>(per_tp, k); ++i) sample.push_back(g[i]);
      if (tp_ > 1) sample.push_back(g[per_tp]);
      break;
    }
    case 10:
    case 11: {
      if (!qgz_) return GroupShape{};
      // The hops of TP rank 0's first shard groups (a node's worth shows every alignment).
      const auto g = dp_shard_groups(0);
      const std::size_t per_tp = g.size() / static_cast<std::size_t>(tp_);
      for (std::size_t i = 0; i < std::min<std::size_t>(per_tp, k); ++i) add_node_hops(g[i], gpn_, kind == 11, sample);
      break;
    }
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
  worst.leaf_span = 1;
  for (const auto& g : sample) {
    GroupShape sh = shape(g);
    if (g.size() > 1) {
      const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
      sh.leaf_span = map_.empty() ? leaf_span_over_stages(*lo, *hi) : (pp_ > 1 ? 0 : sh.leaf_span);
    }
    keep_worst(worst, sh);
  }
  return crossing_unless_sampled_exactly(kind, worst);
}

bool RankPlacement::straddles(const std::vector<int>& group) const {
  if (group.size() <= 1) return false;
  const GroupShape g = shape(group);
  const int needed = static_cast<int>((group.size() + gpn_ - 1) / gpn_);
  return g.nodes > needed;
}

}  // namespace trainsim
