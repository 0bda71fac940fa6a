#include "models/cost/collectives/collective_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "models/core/scenario_error.hpp"

namespace trainsim {
namespace {

constexpr std::array<std::pair<const char*, CollectiveOp>, 7> kOps = {{
    {"allreduce", CollectiveOp::kAllReduce},
    {"reducescatter", CollectiveOp::kReduceScatter},
    {"allgather", CollectiveOp::kAllGather},
    {"broadcast", CollectiveOp::kBroadcast},
    {"reduce", CollectiveOp::kReduce},
    {"alltoall", CollectiveOp::kAllToAll},
    {"sendrecv", CollectiveOp::kSendRecv},
}};
constexpr std::array<std::pair<const char*, CollectiveAlgo>, 6> kAlgos = {{
    {"ring", CollectiveAlgo::kRing},
    {"tree", CollectiveAlgo::kTree},
    {"hd", CollectiveAlgo::kHalvingDoubling},
    {"hier", CollectiveAlgo::kHierarchical},
    {"direct", CollectiveAlgo::kDirect},
    {"auto", CollectiveAlgo::kAuto},
}};

double log2_ceil(int n) { return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n))); }

// Bandwidth a ring sustains per rank: within a node NVLink; across nodes each node's share of
// its NICs, since NCCL runs one channel per NIC and the ring's node-crossing edges spread over
// all of them (busbw of a cross-node ring ~ the node's NIC bandwidth per GPU in the group).
double ring_bandwidth(const GroupShape& g, const FabricTerms& f) {
  if (g.nodes <= 1) return f.intra_bandwidth_bytes_per_s;
  const double net = g.ranks_per_node * f.nic_bandwidth_per_gpu_bytes_per_s / f.oversubscription;
  return g.ranks_per_node > 1 ? std::min(f.intra_bandwidth_bytes_per_s, net) : net;
}
double step_latency(const GroupShape& g, const FabricTerms& f) {
  return g.nodes > 1 ? f.net_latency_s : f.intra_latency_s;
}

// Number of "ring passes" of the data: all-reduce = reduce-scatter + all-gather.
double ring_passes(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return 2;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll: return 1;
    default: return 1;
  }
}

CollectiveCost ring(CollectiveOp op, double bytes, const GroupShape& g, const FabricTerms& f) {
  CollectiveCost c;
  c.algo = CollectiveAlgo::kRing;
  const int n = g.ranks;
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) {
    // Pipelined ring broadcast/reduce: (n-1) latency steps, S/B bandwidth.
    c.latency_s = (n - 1) * step_latency(g, f);
    c.bandwidth_s = bytes / ring_bandwidth(g, f);
  } else {
    // Ring all-reduce 2(n-1)a + 2(n-1)/n S/B; reduce-scatter / all-gather half of each.
    const double passes = ring_passes(op);
    c.latency_s = passes * (n - 1) * step_latency(g, f);
    c.bandwidth_s = passes * (n - 1) / static_cast<double>(n) * bytes / ring_bandwidth(g, f);
  }
  c.time_s = c.latency_s + c.bandwidth_s;
  return c;
}

CollectiveCost tree(CollectiveOp op, double bytes, const GroupShape& g, const FabricTerms& f) {
  // Double binary tree (NCCL Tree): reduce up + broadcast down across nodes, a chain inside each
  // node. Latency logarithmic in nodes; every rank moves S per direction per phase.
  CollectiveCost c;
  c.algo = CollectiveAlgo::kTree;
  const double phases = op == CollectiveOp::kAllReduce ? 2.0 : 1.0;
  c.latency_s = phases * (log2_ceil(g.nodes) * f.net_latency_s +
                          (g.ranks_per_node - 1) * f.intra_latency_s);
  c.bandwidth_s = phases * bytes / ring_bandwidth(g, f);
  c.time_s = c.latency_s + c.bandwidth_s;
  return c;
}

CollectiveCost halving_doubling(CollectiveOp op, double bytes, const GroupShape& g,
                                const FabricTerms& f) {
  // Rabenseifner: recursive halving reduce-scatter + recursive doubling all-gather,
  // 2 log2(n) a + 2(n-1)/n S/B; a non-power-of-two n costs one extra exchange of S. Across
  // nodes the partners at distance 1, 2, 4, ... are inside the node first: (k-1)/k S crosses
  // NVLink and only (m-1)/(m k) S each GPU's own NIC (k ranks per node, m nodes), the
  // hierarchical algorithm's bandwidth term.
  CollectiveCost c;
  c.algo = CollectiveAlgo::kHalvingDoubling;
  const int n = g.ranks;
  const double passes = ring_passes(op);
  const bool pow2 = (n & (n - 1)) == 0;
  const double extra_s = pow2 ? 0 : 2 * step_latency(g, f);
  const double extra_b = pow2 ? 0 : 2 * bytes / ring_bandwidth(g, f);
  if (g.nodes > 1 && g.ranks_per_node > 1) {
    const int k = g.ranks_per_node, m = g.nodes;
    const double bn = f.nic_bandwidth_per_gpu_bytes_per_s / f.oversubscription;
    c.latency_s = passes * (log2_ceil(k) * f.intra_latency_s + log2_ceil(m) * f.net_latency_s) + extra_s;
    c.bandwidth_s = passes * ((k - 1) / static_cast<double>(k) * bytes / f.intra_bandwidth_bytes_per_s +
                              (m - 1) / static_cast<double>(m) * bytes / k / bn) +
                    extra_b;
  } else {
    c.latency_s = passes * log2_ceil(n) * step_latency(g, f) + extra_s;
    c.bandwidth_s = passes * (n - 1) / static_cast<double>(n) * bytes / ring_bandwidth(g, f) + extra_b;
  }
  c.time_s = c.latency_s + c.bandwidth_s;
  return c;
}

CollectiveCost hierarchical(CollectiveOp op, double bytes, const GroupShape& g,
                            const FabricTerms& f) {
  // 2D: intra-node reduce-scatter (k ranks), per-rail inter-node all-reduce of S/k over m
  // nodes, intra-node all-gather. Each phase is a ring of its own.
  if (g.nodes <= 1 || g.ranks_per_node <= 1) return ring(op, bytes, g, f);
  const int k = g.ranks_per_node, m = g.nodes;
  const double bi = f.intra_bandwidth_bytes_per_s;
  const double bn = f.nic_bandwidth_per_gpu_bytes_per_s / f.oversubscription;
  const double passes = ring_passes(op);
  CollectiveCost c;
  c.algo = CollectiveAlgo::kHierarchical;
  c.latency_s = passes * ((k - 1) * f.intra_latency_s + (m - 1) * f.net_latency_s);
  c.bandwidth_s = passes * ((k - 1) / static_cast<double>(k) * bytes / bi +
                            (m - 1) / static_cast<double>(m) * bytes / k / bn);
  c.time_s = c.latency_s + c.bandwidth_s;
  return c;
}

CollectiveCost direct(CollectiveOp op, double bytes, const GroupShape& g, const FabricTerms& f) {
  // Pairwise exchange: n-1 rounds; each rank sends (n-1)/n of its buffer. The cross-node part
  // (n - k)/n goes through the NICs, the rest over NVLink, concurrently.
  if (op != CollectiveOp::kAllToAll) return ring(op, bytes, g, f);
  const int n = g.ranks;
  CollectiveCost c;
  c.algo = CollectiveAlgo::kDirect;
  c.latency_s = (n - 1) * step_latency(g, f) / std::max(1.0, std::min<double>(n - 1, 8.0));
  const double intra_share = (g.ranks_per_node - 1) / static_cast<double>(n);
  const double cross_share = (n - g.ranks_per_node) / static_cast<double>(n);
  double t = intra_share * bytes / f.intra_bandwidth_bytes_per_s;
  if (g.nodes > 1)
    t = std::max(t, cross_share * bytes /
                        (f.nic_bandwidth_per_gpu_bytes_per_s / f.oversubscription));
  c.bandwidth_s = t;
  c.time_s = c.latency_s + c.bandwidth_s;
  return c;
}

}  // namespace

const char* to_string(CollectiveOp op) {
  for (const auto& [name, value] : kOps)
    if (value == op) return name;
  return "?";
}
const char* to_string(CollectiveAlgo algo) {
  for (const auto& [name, value] : kAlgos)
    if (value == algo) return name;
  return "?";
}
std::vector<std::string> collective_op_names() {
  std::vector<std::string> v;
  for (const auto& e : kOps) v.emplace_back(e.first);
  return v;
}
std::vector<std::string> collective_algo_names() {
  std::vector<std::string> v;
  for (const auto& e : kAlgos) v.emplace_back(e.first);
  return v;
}
CollectiveOp collective_op_from_string(const std::string& name, const std::string& path) {
  for (const auto& [n, value] : kOps)
    if (name == n) return value;
  std::string list;
  for (const auto& n : collective_op_names()) list += (list.empty() ? "" : ", ") + n;
  throw ScenarioError(path, "unknown collective \"" + name + "\"; expected one of " + list);
}
CollectiveAlgo collective_algo_from_string(const std::string& name, const std::string& path) {
  for (const auto& [n, value] : kAlgos)
    if (name == n) return value;
  std::string list;
  for (const auto& n : collective_algo_names()) list += (list.empty() ? "" : ", ") + n;
  throw ScenarioError(path, "unknown collective algorithm \"" + name + "\"; expected one of " + list);
}

double bus_bandwidth_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll: return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

FabricTerms fabric_terms(const ClusterSpec& c) {
  FabricTerms f;
  // NVLink figures are both directions together; a ring uses one direction of each link.
  f.intra_bandwidth_bytes_per_s = c.intra_node.bandwidth_bytes_per_s / 2 * c.intra_node.efficiency;
  f.intra_latency_s = c.intra_node.latency_s;
  if (c.gpus_per_node <= 1 && f.intra_bandwidth_bytes_per_s <= 0)
    f.intra_bandwidth_bytes_per_s = std::numeric_limits<double>::max();
  f.nic_bandwidth_per_gpu_bytes_per_s = c.network.nic_bandwidth_bytes_per_s *
                                        c.network.nics_per_node / c.gpus_per_node *
                                        c.network.efficiency;
  f.net_latency_s = c.network.latency_s;
  f.oversubscription = std::max(1.0, c.network.oversubscription);
  return f;
}

CollectiveCost collective_cost(CollectiveOp op, CollectiveAlgo algo, double bytes,
                               const GroupShape& group, const FabricTerms& fabric) {
  if (group.ranks <= 1 || bytes <= 0) return {};
  if (op == CollectiveOp::kSendRecv) {
    CollectiveCost c;
    const bool cross = group.nodes > 1;
    c.latency_s = cross ? fabric.net_latency_s : fabric.intra_latency_s;
    c.bandwidth_s = bytes / (cross ? fabric.nic_bandwidth_per_gpu_bytes_per_s
                                   : fabric.intra_bandwidth_bytes_per_s);
    c.time_s = c.latency_s + c.bandwidth_s;
    return c;
  }
  switch (algo) {
    case CollectiveAlgo::kRing: return ring(op, bytes, group, fabric);
    case CollectiveAlgo::kTree:
      return op == CollectiveOp::kAllReduce || op == CollectiveOp::kBroadcast ||
                     op == CollectiveOp::kReduce
                 ? tree(op, bytes, group, fabric)
                 : ring(op, bytes, group, fabric);
    case CollectiveAlgo::kHalvingDoubling: return halving_doubling(op, bytes, group, fabric);
    case CollectiveAlgo::kHierarchical: return hierarchical(op, bytes, group, fabric);
    case CollectiveAlgo::kDirect: return direct(op, bytes, group, fabric);
    case CollectiveAlgo::kAuto: {
      CollectiveCost best = ring(op, bytes, group, fabric);
      for (CollectiveAlgo a : {CollectiveAlgo::kTree, CollectiveAlgo::kHalvingDoubling,
                               CollectiveAlgo::kHierarchical, CollectiveAlgo::kDirect}) {
        const CollectiveCost c = collective_cost(op, a, bytes, group, fabric);
        if (c.time_s < best.time_s) best = c;
      }
      return best;
    }
  }
  return {};
}

}  // namespace trainsim
