#include "sim/collective_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
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
  for (std::size_t c = 0; c < rings.size(); ++c) {
    const auto& ring = rings[c];
    const std::size_t n = ring.size();
    for (std::size_t i = 0; i < n; ++i)
      out.push_back({ring[i], ring[(i + 1) % n], volume, static_cast<int>(c)});
  }
}

// Transfers between the same two GPUs on the same NIC in one stage become one flow carrying
// their sum (the channels' shared intra-node ring edges): far fewer SimGrid activities, the same
// link loads and, paced, the sum of the caps. Under contention a coalesced flow gets one
// max-min share instead of one per channel.
std::vector<Transfer> coalesce(std::vector<Transfer> ts, const Topology& topo) {
  std::unordered_map<uint64_t, std::size_t> slot;
  std::vector<Transfer> out;
  out.reserve(ts.size());
  for (auto t : ts) {
    // Only the NIC choice of a node-crossing flow depends on the channel.
    const bool cross = topo.node_of(t.src_gpu) != topo.node_of(t.dst_gpu);
    const int nic_key = cross ? topo.nic_of_channel(t.src_gpu, t.channel) : 0;
    if (!cross) t.channel = -1;
    const uint64_t key = (static_cast<uint64_t>(t.src_gpu) << 38) ^
                         (static_cast<uint64_t>(t.dst_gpu) << 8) ^ static_cast<uint64_t>(nic_key & 0xff);
    auto [it, inserted] = slot.emplace(key, out.size());
    if (inserted)
      out.push_back(t);
    else
      out[it->second].bytes += t.bytes;
  }
  return out;
}

CollectiveStage flow_stage(std::vector<Transfer> ts, double latency_s, const Topology& topo) {
  CollectiveStage s;
  s.flow.transfers = coalesce(std::move(ts), topo);
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

int ring_passes(CollectiveOp op) { return op == CollectiveOp::kAllReduce ? 2 : 1; }

// Several independent rings (one channel each) played at once, e.g. one per node or per rail
// (the unpaced textbook algorithms: the links decide, latency is the one-way route latency).
CollectiveStage parallel_ring_stage(const Topology& topo,
                                    const std::vector<std::vector<int>>& rings, double bytes,
                                    int passes, Granularity gran) {
  const int n = static_cast<int>(rings.front().size());
  if (gran == Granularity::kStep) return ring_step_stage(rings, passes * (n - 1), bytes / n);
  std::vector<Transfer> ts;
  add_ring_edges(rings, passes * (n - 1) / static_cast<double>(n) * bytes, ts);
  const double alpha = max_route_latency(topo, ts);
  return flow_stage(std::move(ts), passes * (n - 1) * alpha, topo);
}

struct Context {
  const Topology& topo;
  const PlanRequest& r;
  const std::vector<int>& group;  // in ring order
  CollectivePlan& plan;
};

// Bytes on the wire per byte of data (src/include/device.h: an LL line is 8 bytes of data and
// an 8-byte flag, an LL128 line 120 of 128 bytes).
double wire_factor(CollectiveProtocol p) {
  return p == CollectiveProtocol::kLL ? 2.0 : p == CollectiveProtocol::kLL128 ? 128.0 / 120.0 : 1.0;
}

// NCCL's algorithms play one paced stage: the closed form's latency, and at least its bandwidth
// time; the flows carry the protocol's wire bytes.
void paced_stage(Context& c, std::vector<Transfer> ts) {
  const double w = wire_factor(c.plan.protocol);
  for (auto& t : ts) t.bytes *= w;
  CollectiveStage s = flow_stage(std::move(ts), c.plan.pace.latency_s, c.topo);
  s.flow.min_bandwidth_s = c.plan.pace.bandwidth_s;
  c.plan.stages.push_back(std::move(s));
}

// Rings over every channel the group's nodes offer (one per distinct NIC).
std::vector<std::vector<int>> rings_of(Context& c) { return channel_rings(c.topo, c.group, c.r.channels); }

void plan_ring(Context& c) {
  auto rings = rings_of(c);
  const int n = static_cast<int>(c.group.size());
  const double C = static_cast<double>(rings.size());
  if (c.r.op == CollectiveOp::kBroadcast || c.r.op == CollectiveOp::kReduce) {
    // Pipelined chain from the root along each channel's ring.
    for (auto& ring : rings)
      std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), c.r.group[0]), ring.end());
    std::vector<Transfer> ts;
    for (std::size_t ch = 0; ch < rings.size(); ++ch)
      for (int i = 0; i + 1 < n; ++i) {
        const auto& ring = rings[ch];
        if (c.r.op == CollectiveOp::kBroadcast)
          ts.push_back({ring[i], ring[i + 1], c.r.bytes / C, static_cast<int>(ch)});
        else
          ts.push_back({ring[i + 1], ring[i], c.r.bytes / C, static_cast<int>(ch)});
      }
    paced_stage(c, std::move(ts));
    return;
  }
  const int passes = ring_passes(c.r.op);
  if (c.r.granularity == Granularity::kStep) {
    c.plan.stages.push_back(ring_step_stage(rings, passes * (n - 1), c.r.bytes / n / C));
    return;
  }
  std::vector<Transfer> ts;
  add_ring_edges(rings, passes * (n - 1) / static_cast<double>(n) * c.r.bytes / C, ts);
  paced_stage(c, std::move(ts));
}

// The GPUs of a node that lead a channel: the first GPU on each distinct NIC, in NIC order.
std::vector<int> node_heads(const Topology& topo, const std::vector<int>& node) {
  std::map<int, int> head;
  for (int gpu : node) head.emplace(topo.nic_index_of(gpu), gpu);
  std::vector<int> out;
  for (const auto& [nic, gpu] : head) out.push_back(gpu);
  return out;
}

// Parent of node r in NCCL's in-order binary tree over n nodes (src/graph/trees.cc
// ncclGetBtree: clear r's lowest set bit b and set the next one up, or only clear it when that
// falls outside), -1 for the root 0; `second` gives the other tree of the double binary tree
// (the mirror for even n, the tree shifted by one node for odd n), where leaves of one are
// interior nodes of the other.
int btree_parent(int r, int n, bool second) {
  auto first = [n](int x) {
    if (x == 0) return -1;
    const int bit = x & -x;
    const int up = (x ^ bit) | (bit << 1);
    return up < n ? up : (x ^ bit);
  };
  if (!second) return first(r);
  if (n % 2 == 1) {
    const int p = first((r - 1 + n) % n);
    return p < 0 ? -1 : (p + 1) % n;
  }
  const int p = first(n - 1 - r);
  return p < 0 ? -1 : n - 1 - p;
}

// A double binary tree over the nodes (NCCL's: btree_parent) per channel, joined inside each node by a chain that starts at the
// channel's head (the GPU on the channel's NIC, so tree edges stay on one rail); each tree
// carries `volume` per channel in each direction (reduce up, broadcast down, pipelined into one
// stage). `chain` false: only the heads take part.
void add_double_tree(Context& c, double volume, bool chain, std::vector<Transfer>& out) {
  const auto nodes = gpus_by_node(c.topo, c.group);
  const int m = static_cast<int>(nodes.size());
  const int C = m > 1 ? static_cast<int>(rings_of(c).size()) : 1;
  const int trees = m > 1 ? 2 : 1;
  for (int ch = 0; ch < C; ++ch) {
    std::vector<std::vector<int>> order(m);
    for (int j = 0; j < m; ++j) {
      std::vector<int> cycle = nodes[j];
      std::sort(cycle.begin(), cycle.end());
      const auto heads = node_heads(c.topo, cycle);
      const int head = heads[ch % heads.size()];
      const auto at = std::find(cycle.begin(), cycle.end(), head) - cycle.begin();
      for (std::size_t s = 0; s < cycle.size(); ++s) order[j].push_back(cycle[(at + s) % cycle.size()]);
    }
    for (int t = 0; t < trees; ++t)
      for (int j = 0; j < m; ++j) {
        const auto& ch_gpus = order[j];
        if (chain)
          for (std::size_t i = 0; i + 1 < ch_gpus.size(); ++i) {
            out.push_back({ch_gpus[i], ch_gpus[i + 1], volume, ch});
            out.push_back({ch_gpus[i + 1], ch_gpus[i], volume, ch});
          }
        const int parent = btree_parent(j, m, t == 1);
        if (parent < 0) continue;
        out.push_back({ch_gpus.front(), order[parent].front(), volume, ch});
        out.push_back({order[parent].front(), ch_gpus.front(), volume, ch});
      }
  }
}

void plan_tree(Context& c) {
  const auto nodes = gpus_by_node(c.topo, c.group);
  const int m = static_cast<int>(nodes.size());
  const int C = m > 1 ? static_cast<int>(rings_of(c).size()) : 1;
  std::vector<Transfer> ts;
  add_double_tree(c, c.r.bytes / ((m > 1 ? 2 : 1) * C), true, ts);
  paced_stage(c, std::move(ts));
}

// NVLS inside each node: the GPU's NVLink carries S (n+1)/n each way for all-reduce (its S to
// the switch, its reduced share back out; nvls.cpp), S for reduce-scatter / all-gather. The
// switch itself is not a host, so the load is played as a ring of GPU-to-GPU edges with the
// same per-link volume.
void add_nvls_intra(Context& c, std::vector<Transfer>& out) {
  for (const auto& node : gpus_by_node(c.topo, c.group)) {
    const double k = static_cast<double>(node.size());
    if (node.size() < 2) continue;
    const double v = c.r.op == CollectiveOp::kAllReduce ? c.r.bytes * (k + 1) / k : c.r.bytes;
    for (std::size_t i = 0; i < node.size(); ++i) out.push_back({node[i], node[(i + 1) % node.size()], v});
  }
}

// In-network reduction (SHARP) between nodes: each node sends and receives S through its
// NICs; played as a ring over the nodes' channel heads (same rail), S / channels per edge.
void add_sharp(Context& c, std::vector<Transfer>& out) {
  const auto nodes = gpus_by_node(c.topo, c.group);
  if (nodes.size() < 2) return;
  const int C = static_cast<int>(rings_of(c).size());
  for (int ch = 0; ch < C; ++ch) {
    std::vector<int> heads;
    for (const auto& node : nodes) {
      const auto h = node_heads(c.topo, node);
      heads.push_back(h[ch % h.size()]);
    }
    for (std::size_t j = 0; j < heads.size(); ++j)
      out.push_back({heads[j], heads[(j + 1) % heads.size()], c.r.bytes / C, ch});
  }
}

void plan_nvls(Context& c) {
  std::vector<Transfer> ts;
  add_nvls_intra(c, ts);
  add_sharp(c, ts);
  paced_stage(c, std::move(ts));
}

void plan_nvls_tree(Context& c) {
  std::vector<Transfer> ts;
  add_nvls_intra(c, ts);
  const int m = static_cast<int>(gpus_by_node(c.topo, c.group).size());
  add_double_tree(c, c.r.bytes / (2.0 * rings_of(c).size()), false, ts);
  (void)m;
  paced_stage(c, std::move(ts));
}

void plan_collnet(Context& c) {
  // Inside a node: a chain (CollNet Chain) or direct exchange with the heads (Direct); both
  // move about 2S each way over a GPU's NVLink, played as ring edges of that volume.
  std::vector<Transfer> ts;
  for (const auto& node : gpus_by_node(c.topo, c.group)) {
    if (node.size() < 2) continue;
    for (std::size_t i = 0; i < node.size(); ++i)
      ts.push_back({node[i], node[(i + 1) % node.size()], 2 * c.r.bytes});
  }
  add_sharp(c, ts);
  paced_stage(c, std::move(ts));
}

void plan_hierarchical(Context& c) {
  // 2D: intra-node reduce-scatter over k ranks, per-rail inter-node all-reduce of S/k over m
  // nodes, intra-node all-gather. Reduce-scatter / all-gather keep one half each. The phases'
  // rings run on the links as they are (wire bytes of the protocol); their step latencies are
  // the closed form's (NCCL's per-step latencies), paid once at the end.
  const auto nodes = gpus_by_node(c.topo, c.group);
  const int k = static_cast<int>(nodes.front().size());
  std::vector<std::vector<int>> rails(k);
  for (const auto& node : nodes)
    for (int l = 0; l < k; ++l) rails[l].push_back(node[l]);
  const double S = c.r.bytes * wire_factor(c.plan.protocol);
  const auto gran = c.r.granularity;
  const CollectiveOp op = c.r.op;
  if (op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter)
    c.plan.stages.push_back(parallel_ring_stage(c.topo, nodes, S, 1, gran));
  c.plan.stages.push_back(parallel_ring_stage(c.topo, rails, S / k, op == CollectiveOp::kAllReduce ? 2 : 1, gran));
  if (op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather)
    c.plan.stages.push_back(parallel_ring_stage(c.topo, nodes, S, 1, gran));
  for (auto& st : c.plan.stages)
    if (!st.ring_steps) st.flow.latency_s = 0;
  if (gran == Granularity::kFlow) {  // step granularity pays route latencies per step instead
    CollectiveStage tail;  // the analytic latency of all phases
    tail.flow.latency_s = c.plan.pace.latency_s;
    c.plan.stages.push_back(tail);
  }
}

void plan_halving_doubling(Context& c) {
  // Rabenseifner: recursive halving reduce-scatter (partner distance 1, 2, 4, ... so the big
  // early exchanges stay inside a node) then recursive doubling all-gather. A non-power-of-two
  // group first folds its extra ranks onto the others and unfolds them at the end (+2 S).
  const auto& group = c.group;
  const int n = static_cast<int>(group.size());
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;
  auto exchange_stage = [&](int dist, double bytes) {
    std::vector<Transfer> ts;
    for (int i = 0; i < p; ++i) ts.push_back({group[i], group[i ^ dist], bytes});
    const double a = max_route_latency(c.topo, ts);
    return flow_stage(std::move(ts), a, c.topo);
  };
  auto fold_stage = [&](bool unfold) {
    std::vector<Transfer> ts;
    for (int i = 0; i < extra; ++i)
      ts.push_back(unfold ? Transfer{group[i], group[p + i], c.r.bytes} : Transfer{group[p + i], group[i], c.r.bytes});
    const double a = max_route_latency(c.topo, ts);
    return flow_stage(std::move(ts), a, c.topo);
  };
  if (extra > 0) c.plan.stages.push_back(fold_stage(false));
  const bool rs = c.r.op == CollectiveOp::kAllReduce || c.r.op == CollectiveOp::kReduceScatter;
  const bool ag = c.r.op == CollectiveOp::kAllReduce || c.r.op == CollectiveOp::kAllGather;
  if (rs)
    for (int dist = 1, share = 2; dist < p; dist *= 2, share *= 2)
      c.plan.stages.push_back(exchange_stage(dist, c.r.bytes / share));
  if (ag)
    for (int dist = p / 2, share = p; dist >= 1; dist /= 2, share /= 2)
      c.plan.stages.push_back(exchange_stage(dist, c.r.bytes / share));
  if (extra > 0) c.plan.stages.push_back(fold_stage(true));
}

void plan_direct(Context& c) {
  const int n = static_cast<int>(c.group.size());
  std::vector<Transfer> ts;
  if (c.r.op == CollectiveOp::kSendRecv) {
    // nccl-tests sendrecv: rank i sends S to rank i+1 (in the request's rank order).
    const auto& g = c.r.group;
    for (int i = 0; i < n; ++i) ts.push_back({g[i], g[(i + 1) % n], c.r.bytes});
    if (n == 2) ts.pop_back();
  } else {
    // Pairwise all-to-all: every rank sends S/n to every other rank at once, over the NIC of
    // the destination's rail where the GPU has several.
    ts.reserve(static_cast<std::size_t>(n) * (n - 1));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j) ts.push_back({c.group[i], c.group[j], c.r.bytes / n, j});
  }
  paced_stage(c, std::move(ts));
}

// The generic plan of an algorithm without its own: the ring's edges, paced to its closed form.
void plan_generic(Context& c) {
  std::vector<Transfer> ts;
  const int n = static_cast<int>(c.group.size());
  auto rings = rings_of(c);
  add_ring_edges(rings, ring_passes(c.r.op) * (n - 1) / static_cast<double>(n) * c.r.bytes / rings.size(), ts);
  paced_stage(c, std::move(ts));
}

using PlanBuilder = void (*)(Context&);
const std::map<std::string, PlanBuilder>& plan_builders() {
  static const std::map<std::string, PlanBuilder> builders = {
      {"ring", plan_ring},          {"tree", plan_tree},
      {"nvls", plan_nvls},          {"nvls_tree", plan_nvls_tree},
      {"collnet_direct", plan_collnet}, {"collnet_chain", plan_collnet},
      {"pat", plan_generic},        {"hd", plan_halving_doubling},
      {"hier", plan_hierarchical},  {"direct", plan_direct},
  };
  return builders;
}

}  // namespace

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
  return group_shape_of(group, topo.cluster());
}

CollectivePlan make_plan(const Topology& topo, const PlanRequest& r) {
  const int G = topo.gpu_count();
  if (r.group.empty()) throw ScenarioError("group", "a collective needs at least one rank");
  std::vector<char> seen(G, 0);
  for (int g : r.group) {
    if (g < 0 || g >= G)
      throw ScenarioError("group", "GPU " + std::to_string(g) + " is not in the cluster (0.." +
                                       std::to_string(G - 1) + ")");
    if (seen[g]++) throw ScenarioError("group", "GPU " + std::to_string(g) + " appears twice");
  }
  if (!(r.bytes >= 0)) throw ScenarioError("bytes", "must be >= 0");
  CollectivePlan plan;
  plan.op = r.op;
  const auto nodes = gpus_by_node(topo, r.group);
  bool uniform = true;
  for (const auto& n : nodes) uniform = uniform && n.size() == nodes.front().size();
  CollectiveAlgo algo = r.algo;
  // Trees, NVLS trees and the 2D algorithm need the same GPU count on every node.
  if (!uniform && (algo == CollectiveAlgo::kTree || algo == CollectiveAlgo::kNvlsTree ||
                   algo == CollectiveAlgo::kHierarchical))
    algo = CollectiveAlgo::kRing;
  // The one tuner (models/cost/collectives): the sim plays what the estimate prices.
  const GroupShape shape = group_shape(topo, r.group);
  FabricTerms fabric = fabric_terms(topo.cluster());
  CollectiveCost chosen = collective_cost(r.op, algo, r.protocol, r.bytes, shape, fabric);
  if (!uniform && (chosen.algo == CollectiveAlgo::kTree || chosen.algo == CollectiveAlgo::kNvlsTree))
    chosen = collective_cost(r.op, CollectiveAlgo::kRing, r.protocol, r.bytes, shape, fabric);
  // The pace of what was chosen, without the closed form's blanket taper: the topology's own
  // leaf uplinks carry the oversubscription, and where the flows really cross them.
  fabric.oversubscription = 1;
  plan.pace = collective_cost(r.op, chosen.algo, chosen.protocol, r.bytes, shape, fabric);
  plan.model = chosen;
  plan.algo = plan.model.algo;
  plan.protocol = plan.model.protocol;
  plan.channels = plan.model.channels;
  if (r.group.size() <= 1 || r.bytes <= 0) return plan;  // nothing moves

  const std::vector<int> group =
      r.order == RingOrder::kTopologyAware ? topology_aware_order(topo, r.group) : r.group;
  Context c{topo, r, group, plan};
  const auto& builders = plan_builders();
  const auto it = builders.find(plan.algo.name());
  (it == builders.end() ? plan_generic : it->second)(c);
  return plan;
}

}  // namespace trainsim::sim
