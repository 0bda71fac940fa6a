#include "sim/collective_plan.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "models/core/scenario_error.hpp"

namespace trainsim::sim {
namespace {

double max_route_latency(const Topology& topo, const std::vector<Transfer>& ts) {
  double lat = 0;
  for (const auto& t : ts) lat = std::max(lat, topo.route(t.src_gpu, t.dst_gpu).latency_s);
  return lat;
}

// Ring edges of every channel, each carrying `volume` (already divided per channel).
void add_ring_edges(const std::vector<std::vector<int>>& rings, double volume,
                    std::vector<Transfer>& out) {
  for (const auto& ring : rings) {
    const std::size_t n = ring.size();
    for (std::size_t i = 0; i < n; ++i) out.push_back({ring[i], ring[(i + 1) % n], volume});
  }
}

// Transfers between the same two GPUs in one stage become one flow carrying their sum (the
// channels' shared intra-node ring edges): far fewer SimGrid activities, the same link loads.
// Under contention a coalesced flow gets one max-min share instead of one per channel.
std::vector<Transfer> coalesce(std::vector<Transfer> ts) {
  std::unordered_map<uint64_t, std::size_t> slot;
  std::vector<Transfer> out;
  out.reserve(ts.size());
  for (const auto& t : ts) {
    const uint64_t key =
        (static_cast<uint64_t>(t.src_gpu) << 32) | static_cast<uint32_t>(t.dst_gpu);
    auto [it, inserted] = slot.emplace(key, out.size());
    if (inserted)
      out.push_back(t);
    else
      out[it->second].bytes += t.bytes;
  }
  return out;
}

CollectiveStage flow_stage(std::vector<Transfer> ts, double latency_s) {
  CollectiveStage s;
  s.flow.transfers = coalesce(std::move(ts));
  s.flow.latency_s = latency_s;
  return s;
}

CollectiveStage ring_step_stage(std::vector<std::vector<int>> rings, int steps, double chunk) {
  CollectiveStage s;
  s.ring_steps = true;
  s.steps.rings = std::move(rings);
  s.steps.steps = steps;
  s.steps.chunk_bytes = chunk;
  return s;
}

// Ring reduce-scatter / all-gather (passes = 1) or all-reduce (passes = 2) over `rings`
// (channels): each rank forwards passes*(n-1) chunks of S/(n*C); as one flow per edge that is
// passes*(n-1)/n * S/C bytes, with passes*(n-1) latency steps (REFERENCE.md ring all-reduce).
CollectiveStage ring_stage(const Topology& topo, const std::vector<std::vector<int>>& rings,
                           double bytes, int passes, Granularity gran) {
  const int n = static_cast<int>(rings.front().size());
  const int C = static_cast<int>(rings.size());
  if (gran == Granularity::kStep) return ring_step_stage(rings, passes * (n - 1), bytes / n / C);
  std::vector<Transfer> ts;
  add_ring_edges(rings, passes * (n - 1) / static_cast<double>(n) * bytes / C, ts);
  const double alpha = max_route_latency(topo, ts);
  return flow_stage(std::move(ts), passes * (n - 1) * alpha);
}

// Several independent rings (one channel each) played at once, e.g. one per node or per rail.
CollectiveStage parallel_ring_stage(const Topology& topo,
                                    const std::vector<std::vector<int>>& rings, double bytes,
                                    int passes, Granularity gran) {
  const int n = static_cast<int>(rings.front().size());
  if (gran == Granularity::kStep) return ring_step_stage(rings, passes * (n - 1), bytes / n);
  std::vector<Transfer> ts;
  add_ring_edges(rings, passes * (n - 1) / static_cast<double>(n) * bytes, ts);
  const double alpha = max_route_latency(topo, ts);
  return flow_stage(std::move(ts), passes * (n - 1) * alpha);
}

int ring_passes(CollectiveOp op) { return op == CollectiveOp::kAllReduce ? 2 : 1; }

void plan_ring(const Topology& topo, const PlanRequest& r, const std::vector<int>& group,
               CollectivePlan& plan) {
  auto rings = channel_rings(topo, group, r.channels);
  plan.channels = static_cast<int>(rings.size());
  const int n = static_cast<int>(group.size());
  if (r.op == CollectiveOp::kBroadcast || r.op == CollectiveOp::kReduce) {
    // Pipelined chain from the root along each channel's ring: (n-1) alpha + S/B.
    for (auto& ring : rings)
      std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), r.group[0]), ring.end());
    std::vector<Transfer> ts;
    for (const auto& ring : rings)
      for (int i = 0; i + 1 < n; ++i) {
        if (r.op == CollectiveOp::kBroadcast)
          ts.push_back({ring[i], ring[i + 1], r.bytes / rings.size()});
        else
          ts.push_back({ring[i + 1], ring[i], r.bytes / rings.size()});
      }
    const double alpha = max_route_latency(topo, ts);
    plan.stages.push_back(flow_stage(std::move(ts), (n - 1) * alpha));
    return;
  }
  plan.stages.push_back(ring_stage(topo, rings, r.bytes, ring_passes(r.op), r.granularity));
}

void plan_hierarchical(const Topology& topo, const PlanRequest& r, const std::vector<int>& group,
                       CollectivePlan& plan) {
  // 2D (REFERENCE.md): intra-node reduce-scatter over k ranks, per-rail inter-node all-reduce
  // of S/k over m nodes, intra-node all-gather. Reduce-scatter / all-gather keep one half each.
  const auto nodes = gpus_by_node(topo, group);
  const int k = static_cast<int>(nodes.front().size());
  std::vector<std::vector<int>> rails(k);
  for (const auto& node : nodes)
    for (int l = 0; l < k; ++l) rails[l].push_back(node[l]);
  const double S = r.bytes;
  const auto gran = r.granularity;
  plan.channels = k;
  if (r.op == CollectiveOp::kAllReduce || r.op == CollectiveOp::kReduceScatter)
    plan.stages.push_back(parallel_ring_stage(topo, nodes, S, 1, gran));
  if (r.op == CollectiveOp::kAllReduce)
    plan.stages.push_back(parallel_ring_stage(topo, rails, S / k, 2, gran));
  else  // reduce-scatter continues with S/k, all-gather starts from it
    plan.stages.push_back(parallel_ring_stage(topo, rails, S / k, 1, gran));
  if (r.op == CollectiveOp::kAllReduce || r.op == CollectiveOp::kAllGather)
    plan.stages.push_back(parallel_ring_stage(topo, nodes, S, 1, gran));
}

void plan_tree(const Topology& topo, const PlanRequest& r, const std::vector<int>& group,
               CollectivePlan& plan) {
  // NCCL double binary tree: a chain through each node's GPUs, and two binary trees over the
  // nodes (heap order and its mirror, so a node interior in one is a leaf in the other), each
  // carrying half the data on every channel. Reduce goes up, broadcast comes down; each phase
  // costs log2(nodes)*alpha_net + (k-1)*alpha_intra + S/B (models/collective_cost.cpp tree()).
  const auto nodes = gpus_by_node(topo, group);
  const int m = static_cast<int>(nodes.size());
  const int k = static_cast<int>(nodes.front().size());
  auto rings = channel_rings(topo, group, r.channels);  // reused for per-channel chain order
  const int C = m > 1 ? static_cast<int>(rings.size()) : 1;
  plan.channels = C;
  const int trees = m > 1 ? 2 : 1;
  const double part = r.bytes / (trees * C);
  // chain[c][j]: node j's GPUs for channel c, entry first, exit last.
  std::vector<std::vector<std::vector<int>>> chain(C, std::vector<std::vector<int>>(m));
  for (int c = 0; c < C; ++c) {
    const auto& ring = m > 1 ? rings[c] : group;
    std::size_t pos = 0;
    for (int j = 0; j < m; ++j) {
      chain[c][j].assign(ring.begin() + pos, ring.begin() + pos + nodes[j].size());
      pos += nodes[j].size();
    }
  }
  std::vector<Transfer> up;  // reduce direction: child -> parent
  for (int c = 0; c < C; ++c)
    for (int t = 0; t < trees; ++t)
      for (int j = 0; j < m; ++j) {
        const auto& ch = chain[c][j];
        for (std::size_t i = 0; i + 1 < ch.size(); ++i) up.push_back({ch[i], ch[i + 1], part});
        const int pos = t == 0 ? j : m - 1 - j;  // position in the heap-ordered tree
        if (pos == 0) continue;
        const int parent_pos = (pos - 1) / 2;
        const int parent = t == 0 ? parent_pos : m - 1 - parent_pos;
        up.push_back({ch.back(), chain[c][parent].front(), part});
      }
  const double a_net = m > 1 ? topo.cluster().network.latency_s : 0;
  double a_intra = 0;
  for (const auto& tr : up)
    if (topo.node_of(tr.src_gpu) == topo.node_of(tr.dst_gpu))
      a_intra = std::max(a_intra, topo.route(tr.src_gpu, tr.dst_gpu).latency_s);
  const double lat = std::ceil(std::log2(std::max(1, m))) * a_net + (k - 1) * a_intra;
  std::vector<Transfer> down;
  for (const auto& tr : up) down.push_back({tr.dst_gpu, tr.src_gpu, tr.bytes});
  if (r.op != CollectiveOp::kBroadcast) plan.stages.push_back(flow_stage(up, lat));
  if (r.op != CollectiveOp::kReduce) plan.stages.push_back(flow_stage(down, lat));
}

void plan_halving_doubling(const Topology& topo, const PlanRequest& r,
                           const std::vector<int>& group, CollectivePlan& plan) {
  // Rabenseifner: recursive halving reduce-scatter (partner distance 1, 2, 4, ... so the big
  // early exchanges stay inside a node) then recursive doubling all-gather. A non-power-of-two
  // group first folds its extra ranks onto the others and unfolds them at the end (+2 S).
  const int n = static_cast<int>(group.size());
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;
  auto exchange_stage = [&](int dist, double bytes) {
    std::vector<Transfer> ts;
    for (int i = 0; i < p; ++i) ts.push_back({group[i], group[i ^ dist], bytes});
    const double a = max_route_latency(topo, ts);
    return flow_stage(std::move(ts), a);
  };
  if (extra > 0) {
    std::vector<Transfer> fold;
    for (int i = 0; i < extra; ++i) fold.push_back({group[p + i], group[i], r.bytes});
    const double a = max_route_latency(topo, fold);
    plan.stages.push_back(flow_stage(std::move(fold), a));
  }
  const bool rs = r.op == CollectiveOp::kAllReduce || r.op == CollectiveOp::kReduceScatter;
  const bool ag = r.op == CollectiveOp::kAllReduce || r.op == CollectiveOp::kAllGather;
  if (rs)
    for (int dist = 1, share = 2; dist < p; dist *= 2, share *= 2)
      plan.stages.push_back(exchange_stage(dist, r.bytes / share));
  if (ag)
    for (int dist = p / 2, share = p; dist >= 1; dist /= 2, share /= 2)
      plan.stages.push_back(exchange_stage(dist, r.bytes / share));
  if (extra > 0) {
    std::vector<Transfer> unfold;
    for (int i = 0; i < extra; ++i) unfold.push_back({group[i], group[p + i], r.bytes});
    const double a = max_route_latency(topo, unfold);
    plan.stages.push_back(flow_stage(std::move(unfold), a));
  }
}

void plan_direct(const Topology& topo, const PlanRequest& r, const std::vector<int>& group,
                 CollectivePlan& plan) {
  // Pairwise all-to-all: every rank sends S/n to every other rank at once; latency as models'
  // direct(): (n-1) alpha / min(n-1, 8) (NCCL keeps up to 8 peers in flight).
  const int n = static_cast<int>(group.size());
  std::vector<Transfer> ts;
  ts.reserve(static_cast<std::size_t>(n) * (n - 1));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) ts.push_back({group[i], group[j], r.bytes / n});
  const GroupShape g = group_shape(topo, group);
  const double alpha =
      g.nodes > 1 ? topo.cluster().network.latency_s : topo.cluster().intra_node.latency_s;
  const double lat = (n - 1) * alpha / std::max(1.0, std::min<double>(n - 1, 8.0));
  plan.stages.push_back(flow_stage(std::move(ts), lat));
}

void plan_sendrecv(const Topology& topo, const PlanRequest& r, const std::vector<int>& group,
                   CollectivePlan& plan) {
  // nccl-tests sendrecv: rank i sends S to rank i+1 and receives S from rank i-1.
  const int n = static_cast<int>(group.size());
  std::vector<Transfer> ts;
  for (int i = 0; i < n; ++i) ts.push_back({group[i], group[(i + 1) % n], r.bytes});
  if (n == 2) ts.pop_back();
  const double a = max_route_latency(topo, ts);
  plan.stages.push_back(flow_stage(std::move(ts), a));
}

}  // namespace

CollectiveAlgo tuned_algorithm(CollectiveOp op, double bytes, const GroupShape& shape,
                               const ClusterSpec& cluster) {
  // models' NCCL-like tuner (latency + bytes / bandwidth per algorithm), with one correction:
  // across nodes, halving-doubling moves (k-1)/k S over NVLink but only (m-1)/(m k) S through
  // each GPU's own NIC (k ranks per node, m nodes, partners at distance 1, 2, 4, ... first), so
  // its bandwidth term is the hierarchical one, not 2(n-1)/n S over the node's NIC total.
  const FabricTerms f = fabric_terms(cluster);
  const double S = std::max(1.0, bytes);
  CollectiveAlgo best = CollectiveAlgo::kRing;
  double best_s = collective_cost(op, CollectiveAlgo::kRing, S, shape, f).time_s;
  for (CollectiveAlgo a : {CollectiveAlgo::kTree, CollectiveAlgo::kHalvingDoubling,
                           CollectiveAlgo::kHierarchical, CollectiveAlgo::kDirect}) {
    CollectiveCost c = collective_cost(op, a, S, shape, f);
    if (a == CollectiveAlgo::kHalvingDoubling && shape.nodes > 1 && shape.ranks_per_node > 1) {
      const CollectiveCost h = collective_cost(op, CollectiveAlgo::kHierarchical, S, shape, f);
      c.time_s = c.latency_s + std::max(c.bandwidth_s, h.bandwidth_s);
    }
    if (c.time_s < best_s) {
      best_s = c.time_s;
      best = c.algo;
    }
  }
  return best;
}

const char* to_string(Granularity g) { return g == Granularity::kFlow ? "flow" : "step"; }
Granularity granularity_from_string(const std::string& name, const std::string& path) {
  if (name == "flow") return Granularity::kFlow;
  if (name == "step") return Granularity::kStep;
  throw ScenarioError(path, "unknown granularity \"" + name + "\"; expected one of flow, step");
}

std::size_t CollectivePlan::transfer_count() const {
  std::size_t n = 0;
  for (const auto& s : stages) {
    if (!s.ring_steps)
      n += s.flow.transfers.size();
    else
      for (const auto& ring : s.steps.rings) n += ring.size() * s.steps.steps;
  }
  return n;
}

GroupShape group_shape(const Topology& topo, const std::vector<int>& group) {
  std::set<int> nodes;
  for (int g : group) nodes.insert(topo.node_of(g));
  GroupShape s;
  s.ranks = static_cast<int>(group.size());
  s.nodes = std::max<int>(1, nodes.size());
  s.ranks_per_node = std::max(1, s.ranks / s.nodes);
  return s;
}

CollectivePlan make_plan(const Topology& topo, const PlanRequest& r) {
  const int G = topo.gpu_count();
  if (r.group.empty()) throw ScenarioError("group", "a collective needs at least one rank");
  std::set<int> seen;
  for (int g : r.group) {
    if (g < 0 || g >= G)
      throw ScenarioError("group", "GPU " + std::to_string(g) + " is not in the cluster (0.." +
                                       std::to_string(G - 1) + ")");
    if (!seen.insert(g).second)
      throw ScenarioError("group", "GPU " + std::to_string(g) + " appears twice");
  }
  if (!(r.bytes >= 0)) throw ScenarioError("bytes", "must be >= 0");
  CollectivePlan plan;
  plan.op = r.op;
  const GroupShape shape = group_shape(topo, r.group);
  CollectiveAlgo algo = r.algo;
  if (algo == CollectiveAlgo::kAuto) algo = tuned_algorithm(r.op, r.bytes, shape, topo.cluster());
  const auto nodes = gpus_by_node(topo, r.group);
  bool uniform = true;
  for (const auto& n : nodes) uniform = uniform && n.size() == nodes.front().size();
  // Fallbacks, as models' collective_cost applies them.
  const bool reduce_like = r.op == CollectiveOp::kAllReduce ||
                           r.op == CollectiveOp::kReduceScatter || r.op == CollectiveOp::kAllGather;
  if (r.op == CollectiveOp::kAllToAll)
    algo = CollectiveAlgo::kDirect;
  else if (algo == CollectiveAlgo::kDirect)
    algo = CollectiveAlgo::kRing;
  if (algo == CollectiveAlgo::kTree &&
      !(r.op == CollectiveOp::kAllReduce || r.op == CollectiveOp::kBroadcast ||
        r.op == CollectiveOp::kReduce))
    algo = CollectiveAlgo::kRing;
  if (algo == CollectiveAlgo::kTree && !uniform) algo = CollectiveAlgo::kRing;
  if (algo == CollectiveAlgo::kHalvingDoubling && !reduce_like) algo = CollectiveAlgo::kRing;
  if (algo == CollectiveAlgo::kHierarchical &&
      (!reduce_like || nodes.size() <= 1 || nodes.front().size() <= 1 || !uniform))
    algo = CollectiveAlgo::kRing;
  plan.algo = r.op == CollectiveOp::kSendRecv ? CollectiveAlgo::kRing : algo;
  if (r.group.size() <= 1 || r.bytes <= 0) return plan;  // nothing moves

  const std::vector<int> group =
      r.order == RingOrder::kTopologyAware ? topology_aware_order(topo, r.group) : r.group;
  if (r.op == CollectiveOp::kSendRecv) {
    plan_sendrecv(topo, r, r.group, plan);
    return plan;
  }
  switch (algo) {
    case CollectiveAlgo::kRing:
      plan_ring(topo, r, group, plan);
      break;
    case CollectiveAlgo::kTree:
      plan_tree(topo, r, group, plan);
      break;
    case CollectiveAlgo::kHalvingDoubling:
      plan_halving_doubling(topo, r, group, plan);
      break;
    case CollectiveAlgo::kHierarchical:
      plan_hierarchical(topo, r, group, plan);
      break;
    case CollectiveAlgo::kDirect:
      plan_direct(topo, r, group, plan);
      break;
    case CollectiveAlgo::kAuto:
      break;
  }
  return plan;
}

}  // namespace trainsim::sim
