#include "models/cost/collectives/collective_cost.hpp"

#include "models/core/leaf_switch.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <string_view>

#include "models/core/scenario_error.hpp"
#include "models/cost/collectives/collective_tuner.hpp"

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
constexpr std::array<std::pair<const char*, CollectiveProtocol>, 4> kProtocols = {{
    {"LL", CollectiveProtocol::kLL},
    {"LL128", CollectiveProtocol::kLL128},
    {"Simple", CollectiveProtocol::kSimple},
    {"auto", CollectiveProtocol::kAuto},
}};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

const char* to_string(CollectiveOp op) {
  for (const auto& [name, value] : kOps)
    if (value == op) return name;
  return "?";
}
const char* to_string(CollectiveAlgo algo) { return algo.name(); }
const char* to_string(CollectiveProtocol p) {
  for (const auto& [name, value] : kProtocols)
    if (value == p) return name;
  return "?";
}
std::vector<std::string> collective_op_names() {
  std::vector<std::string> v;
  for (const auto& e : kOps) v.emplace_back(e.first);
  return v;
}
std::vector<std::string> collective_algo_names() {
  std::vector<std::string> v{"auto"};
  for (const CollectiveAlgorithm* a : collective_algorithms()) v.emplace_back(a->name());
  return v;
}
std::vector<std::string> collective_protocol_names() {
  std::vector<std::string> v;
  for (const auto& e : kProtocols) v.emplace_back(e.first);
  return v;
}
CollectiveOp collective_op_from_string(const std::string& name, const std::string& path) {
  for (const auto& [n, value] : kOps)
    if (name == n) return value;
  throw ScenarioError(path, "unknown collective \"" + name + "\"; expected one of " +
                                joined(collective_op_names()));
}
CollectiveAlgo collective_algo_from_string(const std::string& name, const std::string& path) {
  if (name == "auto") return CollectiveAlgo::kAuto;
  if (const CollectiveAlgorithm* a = find_collective_algorithm(name)) return CollectiveAlgo(a->name());
  throw ScenarioError(path, "unknown collective algorithm \"" + name + "\"; expected one of " +
                                joined(collective_algo_names()));
}
CollectiveProtocol collective_protocol_from_string(const std::string& name, const std::string& path) {
  for (const auto& [n, value] : kProtocols)
    if (lower(name) == lower(n)) return value;
  throw ScenarioError(path, "unknown NCCL protocol \"" + name + "\"; expected one of " +
                                joined(collective_protocol_names()));
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

GpuArch gpu_arch(const GpuSpec& gpu) {
  const double cc = gpu.compute_capability;
  if (cc > 0) return cc >= 10 ? GpuArch::kBlackwell : cc >= 9 ? GpuArch::kHopper : cc >= 8 ? GpuArch::kAmpere
                                                                                           : GpuArch::kVolta;
  // The GPU's family, from its marketing name (NVIDIA's naming: V = Volta, A = Ampere,
  // H = Hopper, B = Blackwell). Every estimated plan asks (fabric_terms) of the same few names:
  // the last name's answer is kept.
  thread_local std::string last_name;
  thread_local GpuArch last_arch = GpuArch::kAmpere;
  thread_local bool have = false;
  if (have && gpu.name == last_name) return last_arch;
  std::string n;
  for (char c : gpu.name) n += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto has = [&](const char* needle) { return n.find(needle) != std::string::npos; };
  GpuArch arch = GpuArch::kAmpere;
  if (has("B100") || has("B200") || has("B300")) arch = GpuArch::kBlackwell;
  else if (has("H100") || has("H200") || has("H800") || has("H20")) arch = GpuArch::kHopper;
  else if (has("V100")) arch = GpuArch::kVolta;
  last_name = gpu.name;
  last_arch = arch;
  have = true;
  return arch;
}

FabricTerms fabric_terms(const ClusterSpec& c) {
  FabricTerms f;
  // NVLink figures are both directions together; a ring uses one direction of each link.
  f.intra_bandwidth_bytes_per_s = c.intra_node.bandwidth_bytes_per_s / 2 * c.intra_node.efficiency;
  f.intra_latency_s = c.intra_node.latency_s;
  if (c.gpus_per_node <= 1 && f.intra_bandwidth_bytes_per_s <= 0)
    f.intra_bandwidth_bytes_per_s = std::numeric_limits<double>::max();
  f.gpus_per_node = std::max(1, c.gpus_per_node);
  f.nics_per_node = std::max(1, c.network.nics_per_node);
  f.nic_bandwidth_bytes_per_s = c.network.nic_bandwidth_bytes_per_s * c.network.efficiency;
  f.nic_bandwidth_per_gpu_bytes_per_s = f.nic_bandwidth_bytes_per_s * f.nics_per_node / f.gpus_per_node;
  f.net_latency_s = c.network.latency_s;
  f.oversubscription = std::max(1.0, c.network.oversubscription);
  if (c.pcie_bandwidth_bytes_per_s > 0)
    f.gpu_nic_bandwidth_bytes_per_s = std::max(c.pcie_bandwidth_bytes_per_s, f.nic_bandwidth_bytes_per_s);
  f.arch = gpu_arch(c.gpu);
  f.intra_fabric = c.intra_node.fabric == "pcie"     ? IntraFabric::kPcie
                   : c.intra_node.fabric == "nvlink" ? IntraFabric::kNvLink
                                                     : IntraFabric::kNvSwitch;
  // NVLink SHARP: third-generation NVSwitch (Hopper) and later, unless the cluster says.
  f.nvls = c.intra_node.nvls >= 0 ? c.intra_node.nvls == 1
                                  : (f.arch >= GpuArch::kHopper && f.intra_fabric == IntraFabric::kNvSwitch &&
                                     c.gpus_per_node >= 2);
  f.collnet = c.network.collnet;
  for (const MeasuredCollective& m : c.measured_collectives) {
    const std::optional<CollectiveOp> op = measured_collective_op(m.op);
    if (!op || m.ranks < 2 || m.bytes_seconds.empty()) continue;
    f.measured.push_back({*op, m.ranks, m.bytes_seconds});
  }
  return f;
}

std::optional<CollectiveOp> measured_collective_op(std::string_view name) {
  if (name == "all_reduce") return CollectiveOp::kAllReduce;
  if (name == "reduce_scatter") return CollectiveOp::kReduceScatter;
  if (name == "all_gather") return CollectiveOp::kAllGather;
  if (name == "all_to_all") return CollectiveOp::kAllToAll;
  if (name == "send_recv") return CollectiveOp::kSendRecv;
  return std::nullopt;
}

double measured_collective_time_s(const std::vector<std::pair<double, double>>& pts, double bytes) {
  if (pts.empty()) return 0;
  if (bytes <= pts.front().first || pts.size() == 1) return pts.front().second;
  if (bytes >= pts.back().first) {
    const auto& [b0, t0] = pts[pts.size() - 2];
    const auto& [b1, t1] = pts.back();
    const double per_byte = b1 > b0 ? std::max(0.0, (t1 - t0) / (b1 - b0)) : 0.0;
    return t1 + per_byte * (bytes - b1);
  }
  std::size_t i = 1;
  while (pts[i].first < bytes) ++i;
  const auto& [b0, t0] = pts[i - 1];
  const auto& [b1, t1] = pts[i];
  if (!(b1 > b0) || !(t0 > 0) || !(t1 > 0)) return t1;
  const double f = std::log(bytes / b0) / std::log(b1 / b0);
  return t0 * std::pow(t1 / t0, f);
}

GroupShape group_shape_of(const std::vector<int>& gpus, const ClusterSpec& cluster) {
  GroupShape s;
  const int gpn = std::max(1, cluster.gpus_per_node);
  const int nics = std::max(1, cluster.network.nics_per_node);
  std::vector<std::pair<int, int>> node_count;  // (node, ranks), in order of first appearance
  std::vector<std::set<int>> node_nics;
  for (int g : gpus) {
    const int node = g / gpn;
    auto it = std::find_if(node_count.begin(), node_count.end(), [&](const auto& e) { return e.first == node; });
    if (it == node_count.end()) {
      node_count.emplace_back(node, 0);
      node_nics.emplace_back();
      it = node_count.end() - 1;
    }
    ++it->second;
    node_nics[it - node_count.begin()].insert((g % gpn) * nics / gpn);
  }
  s.ranks = std::max<int>(1, gpus.size());
  s.nodes = std::max<int>(1, node_count.size());
  if (!node_count.empty()) {
    const auto [lo, hi] = std::minmax_element(node_count.begin(), node_count.end());
    const int per_leaf = nodes_per_leaf(cluster);
    s.leaf_span = hi->first / per_leaf - lo->first / per_leaf + 1;
  }
  s.ranks_per_node = 1;
  for (const auto& e : node_count) s.ranks_per_node = std::max(s.ranks_per_node, e.second);
  int min_nics = nics;
  for (const auto& n : node_nics) min_nics = std::min<int>(min_nics, n.size());
  // A GPU with several NICs of its own reaches all of them.
  const int nics_per_gpu = std::max(1, nics / gpn);
  s.nics = std::min(nics, std::max(1, min_nics) * (nics > gpn ? nics_per_gpu : 1));
  return s;
}

CollectiveCost collective_cost(CollectiveOp op, CollectiveAlgo algo, CollectiveProtocol protocol,
                               double bytes, const GroupShape& group, const FabricTerms& fabric) {
  CollectiveCost out;
  const CollectiveAlgo fallback =
      op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv ? CollectiveAlgo::kDirect
                                                                     : CollectiveAlgo::kRing;
  const nccl::Terms terms = nccl::make_terms(op, group, fabric);
  std::vector<TunerCandidate> c = tuner_candidates(op, algo, protocol, std::max(bytes, 1.0), terms);
  // A forced choice the op cannot run: its protocol is dropped first, then the algorithm.
  if (c.empty() && protocol != CollectiveProtocol::kAuto)
    c = tuner_candidates(op, algo, CollectiveProtocol::kAuto, std::max(bytes, 1.0), terms);
  if (c.empty()) c = tuner_candidates(op, fallback, protocol, std::max(bytes, 1.0), terms);
  if (c.empty()) c = tuner_candidates(op, fallback, CollectiveProtocol::kAuto, std::max(bytes, 1.0), terms);
  if (c.empty()) {
    out.algo = fallback;
    return out;
  }
  const TunerCandidate& best = c.front();
  out.algo = CollectiveAlgo(best.algorithm->name());
  out.protocol = best.protocol;
  out.channels = best.cost.channels;
  if (group.ranks <= 1 || !(bytes > 0)) return out;  // nothing moves: the choice, no time
  if (group.nodes == 1)
    for (const FabricTerms::Measured& m : fabric.measured)
      if (m.op == op && m.ranks == group.ranks) {
        // What this communicator took for the op on this group, measured; its smallest message
        // is the per-call floor (the latency term), the rest moves bytes.
        out.time_s = measured_collective_time_s(m.bytes_seconds, bytes);
        out.latency_s = std::min(out.time_s, m.bytes_seconds.front().second);
        out.bandwidth_s = out.time_s - out.latency_s;
        out.measured = true;
        return out;
      }
  out.latency_s = best.cost.latency_s;
  out.bandwidth_s = bytes / best.cost.algbw_bytes_per_s;
  out.time_s = out.latency_s + out.bandwidth_s;
  return out;
}

CollectiveCost collective_cost(CollectiveOp op, CollectiveAlgo algo, double bytes,
                               const GroupShape& group, const FabricTerms& fabric) {
  return collective_cost(op, algo, CollectiveProtocol::kAuto, bytes, group, fabric);
}

CollectiveCost price_collective(CollectiveOp op, double bytes, const std::vector<int>& gpus,
                                const ClusterSpec& cluster, CollectiveAlgo algo,
                                CollectiveProtocol protocol) {
  return collective_cost(op, algo, protocol, bytes, group_shape_of(gpus, cluster), fabric_terms(cluster));
}

}  // namespace trainsim
