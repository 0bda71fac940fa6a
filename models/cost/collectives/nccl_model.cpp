#include "models/cost/collectives/nccl_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainsim::nccl {
namespace {

// Candidate per-channel bandwidths of NCCL's graph search, GB/s (src/graph/search.cc).
constexpr double kIntraSpeeds[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
constexpr double kInterSpeeds[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                   7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12};
constexpr double kSm90IntraSpeeds[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kSm90InterSpeeds[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                       15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12};
constexpr double kSm100IntraSpeeds[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr double kSm100InterSpeeds[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                        20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12};

template <std::size_t N>
std::vector<double> list(const double (&a)[N]) {
  return std::vector<double>(a, a + N);
}

// The ring graph's channel count as ncclTopoCompute finds it: the per-channel speed s from the
// speed array that carries the most (channels x s) within the links, searched downwards while
// s stays above half the best, then ncclTopoDupChannels. Only the count is used (for NCCL's
// per-channel caps); bandwidths stay the links' own, unquantised.
int ring_channels(const Terms& t, double intra_gbs, double nic_gbs, double drive_gbs) {
  const bool multi = t.nodes > 1;
  const std::vector<double> speeds =
      t.arch >= 3 ? (multi ? list(kSm100InterSpeeds) : list(kSm100IntraSpeeds))
      : t.arch == 2 ? (multi ? list(kSm90InterSpeeds) : list(kSm90IntraSpeeds))
                    : (multi ? list(kInterSpeeds) : list(kIntraSpeeds));
  auto channels_at = [&](double s) {
    double n = kMaxRingChannels;
    if (t.max_ppn > 1) n = std::min(n, std::floor(intra_gbs / s + 1e-9));
    if (multi) {
      n = std::min(n, t.nics * std::floor(nic_gbs / s + 1e-9));
      n = std::min(n, t.max_ppn * std::floor(drive_gbs / s + 1e-9));
    }
    return static_cast<int>(n);
  };
  double best_s = 0;
  int best_n = 0;
  for (double s : speeds) {
    if (best_n > 0 && s / best_s <= 0.49) break;
    const int n = channels_at(s);
    if (n > 0 && n * s > best_n * best_s * (1 + 1e-9)) {
      best_n = n;
      best_s = s;
    }
  }
  if (best_n == 0) return 1;
  // ncclTopoDupChannels: double the channels of fast graphs (not Hopper+ graphs below 50 GB/s
  // per channel that already have more than 4).
  const bool hopper_plus = t.arch >= 2;
  if (best_s >= 25.0 && !(hopper_plus && best_s < 50.0 && best_n > 4))
    best_n = std::min(2 * best_n, kMaxRingChannels);
  return best_n;
}

}  // namespace

int proto_index(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::kLL: return kLL;
    case CollectiveProtocol::kLL128: return kLL128;
    default: return kSimple;
  }
}

int arch_index(GpuArch a) {
  switch (a) {
    case GpuArch::kVolta: return 0;
    case GpuArch::kAmpere: return 1;
    case GpuArch::kHopper: return 2;
    case GpuArch::kBlackwell: return 3;
  }
  return 1;
}

int log2i(double n) { return n < 2 ? 0 : static_cast<int>(std::floor(std::log2(n) + 1e-12)); }

double Terms::intra_lat_us(int a, int p) const {
  return kHwLatencyUs[nvlink ? kNvlink : kPci][a][p];
}

double Terms::inter_lat_us(int a, int p) const {
  const double table = max_ppn == 1 ? kHwLatencyUs[kNet][kTree][p] : kHwLatencyUs[kNet][a][p];
  const double extra = net_offset_us * (p == kSimple ? 2 : 1);
  return std::max(0.0, table + extra);
}

double Terms::ring_bus_bytes_per_s() const {
  if (nodes <= 1) return intra_bytes_per_s;
  return std::min(intra_bytes_per_s, net_node_bytes_per_s);
}

double Terms::llmax_bytes_per_s() const {
  const int row = nodes == 1 ? arch : 0;
  return kLlMaxBwGBs[row][node_index] * 1e9;
}

namespace {

// How much the leaf-to-spine taper (oversubscription o) slows a group's inter-node traffic.
// Only traffic that climbs above a leaf meets it. With k of the group's nodes under each leaf,
// a ring or tree leaves a leaf on one node's links out of k (the plan's other groups over the
// same nodes alike), while the leaf's uplinks carry 1/o of its ports: o / k. An all-to-all
// sends (N - k) / (N - 1) of every node's traffic off its leaf. A group under one leaf, or one
// too small to fill the uplinks, pays nothing; an unknown span counts every node as its own
// leaf (k = 1: the full o). Where the placement counted the leaf's GPUs whose traffic of the
// kind leaves it at once (GroupShape::leaf_crossing), that share of its ports meets uplinks that
// carry 1/o of them: o x crossing / leaf GPUs.
double taper(CollectiveOp op, const GroupShape& g, int nodes, double oversubscription) {
  const double o = std::max(1.0, oversubscription);
  if (o <= 1 || nodes <= 1 || g.leaf_span == 1) return 1;
  if (g.leaf_gpus > 0) return std::max(1.0, o * g.leaf_crossing / g.leaf_gpus);
  const int span = g.leaf_span > 1 ? std::min(g.leaf_span, nodes) : nodes;
  const double k = std::max(1, nodes / span);  // the fewest a leaf holds, for an even split
  const double crossing = op == CollectiveOp::kAllToAll ? (nodes - k) / (nodes - 1.0) : 1.0 / k;
  return std::max(1.0, o * crossing);
}

}  // namespace

Terms make_terms(CollectiveOp op, const GroupShape& g, const FabricTerms& f) {
  Terms t;
  t.op = op;
  t.fabric = f;
  t.ranks = std::max(1, g.ranks);
  t.nodes = std::max(1, std::min(g.nodes, t.ranks));
  t.ppn = static_cast<double>(t.ranks) / t.nodes;
  t.max_ppn = std::max(1, std::max(g.ranks_per_node, static_cast<int>(std::ceil(t.ppn - 1e-9))));
  const int gpn = std::max(1, f.gpus_per_node);
  const int node_nics = std::max(1, f.nics_per_node);
  t.nics = g.nics > 0 ? g.nics
                      : std::clamp(static_cast<int>(std::ceil(t.max_ppn * double(node_nics) / gpn - 1e-9)),
                                   1, node_nics);
  t.arch = arch_index(f.arch);
  t.node_index = t.nodes <= 2 ? t.nodes - 1 : 2;
  t.nvlink = f.intra_fabric != IntraFabric::kPcie;
  t.nvls = f.nvls && f.intra_fabric == IntraFabric::kNvSwitch && t.arch >= 2;
  t.collnet = f.collnet;
  // NCCL enables LL128 by default only over NVLink inside a node (src/graph/tuning.cc
  // "pEnable &= (graphs[a]->typeIntra <= PATH_NVB)").
  t.ll128 = !(f.intra_fabric == IntraFabric::kPcie && t.max_ppn > 1);
  const double inf = std::numeric_limits<double>::infinity();
  t.intra_bytes_per_s = t.max_ppn > 1 ? std::max(1.0, f.intra_bandwidth_bytes_per_s) : inf;
  double drive = inf;  // one GPU into its NICs
  if (t.nodes > 1) {
    const double nic = std::max(1.0, f.nic_bandwidth_bytes_per_s);
    const int nics_per_gpu = std::max(1, node_nics / gpn);
    drive = nics_per_gpu * nic;
    if (f.gpu_nic_bandwidth_bytes_per_s > 0) drive = std::min(drive, f.gpu_nic_bandwidth_bytes_per_s);
    // A plan's concurrent groups divide a shared NIC between them: with 8 GPUs on one NIC each
    // of the 8 DP rings gets an eighth of it, not all of it (the simulate tier plays them as
    // flows on that NIC).
    const double nic_share =
        g.nics > 0 ? t.nics : std::min<double>(t.nics, t.max_ppn * double(node_nics) / gpn);
    t.net_node_bytes_per_s = std::min(nic_share * nic, t.max_ppn * drive) / taper(op, g, t.nodes, f.oversubscription);
  }
  t.ring_channels = ring_channels(t, t.intra_bytes_per_s / 1e9, f.nic_bandwidth_bytes_per_s / 1e9,
                                  drive / 1e9);
  t.net_offset_us = (f.net_latency_s - kReferenceNetLatencyS) * 1e6;
  return t;
}

}  // namespace trainsim::nccl
