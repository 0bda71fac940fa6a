// The one pricing entry point for collectives, shared by the estimate tier, the simulator and
// the importers (ARCHITECTURE.md "communication op"): given the op, the bytes per rank as
// nccl-tests counts them, where the group sits and the fabric, it returns the time and the
// algorithm / protocol / channel count NCCL's tuner would run. The algorithms are NCCL's
// (src/graph/tuning.cc, NCCL 2.30.7): one file each in this folder, listed once in
// collective_registry.cpp; collective_tuner.cpp picks among them. Bus-bandwidth factors follow
// nccl-tests doc/PERFORMANCE.md and live only here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll,
                          kSendRecv };

// NCCL's protocols (src/include/device.h): LL carries 8 bytes of data with an 8-byte flag per
// 16-byte line, LL128 120 of every 128 bytes, Simple whole buffers with a fence per step.
enum class CollectiveProtocol { kLL, kLL128, kSimple, kAuto };

// An algorithm, by its registry key (collective_algorithm.hpp). A handle, not an enum, so that a
// new algorithm is one file plus one registry line; the constants below name the built-in ones.
class CollectiveAlgo {
 public:
  constexpr CollectiveAlgo() = default;
  constexpr explicit CollectiveAlgo(const char* key) : key_(key) {}
  const char* name() const { return key_; }
  bool is_auto() const { return std::string_view(key_) == "auto"; }
  friend bool operator==(CollectiveAlgo a, CollectiveAlgo b) {
    return std::string_view(a.key_) == std::string_view(b.key_);
  }
  friend bool operator!=(CollectiveAlgo a, CollectiveAlgo b) { return !(a == b); }

  static const CollectiveAlgo kAuto, kRing, kTree, kNvls, kNvlsTree, kCollnetDirect,
      kCollnetChain, kPat, kHalvingDoubling, kHierarchical, kDirect;

 private:
  const char* key_ = "auto";
};
inline constexpr CollectiveAlgo CollectiveAlgo::kAuto{"auto"};
inline constexpr CollectiveAlgo CollectiveAlgo::kRing{"ring"};
inline constexpr CollectiveAlgo CollectiveAlgo::kTree{"tree"};
inline constexpr CollectiveAlgo CollectiveAlgo::kNvls{"nvls"};
inline constexpr CollectiveAlgo CollectiveAlgo::kNvlsTree{"nvls_tree"};
inline constexpr CollectiveAlgo CollectiveAlgo::kCollnetDirect{"collnet_direct"};
inline constexpr CollectiveAlgo CollectiveAlgo::kCollnetChain{"collnet_chain"};
inline constexpr CollectiveAlgo CollectiveAlgo::kPat{"pat"};
inline constexpr CollectiveAlgo CollectiveAlgo::kHalvingDoubling{"hd"};
inline constexpr CollectiveAlgo CollectiveAlgo::kHierarchical{"hier"};
inline constexpr CollectiveAlgo CollectiveAlgo::kDirect{"direct"};

const char* to_string(CollectiveOp op);
const char* to_string(CollectiveAlgo algo);
const char* to_string(CollectiveProtocol protocol);  // "LL", "LL128", "Simple", "auto"
// Lookups by name; throw ScenarioError listing valid names on an unknown one. Algorithm names
// are the registry's (plus "auto"); protocols are matched case-insensitively (NCCL_PROTO).
CollectiveOp collective_op_from_string(const std::string& name, const std::string& path);
CollectiveAlgo collective_algo_from_string(const std::string& name, const std::string& path);
CollectiveProtocol collective_protocol_from_string(const std::string& name,
                                                   const std::string& path);
std::vector<std::string> collective_op_names();
// The op a calibration's collective row names (MeasuredCollective::op: "all_reduce",
// "reduce_scatter", "all_gather", "all_to_all", "send_recv"); nullopt for any other, which the
// communicator's curves do not carry.
std::optional<CollectiveOp> measured_collective_op(std::string_view calibration_name);
std::vector<std::string> collective_algo_names();  // "auto" first, then the registry
std::vector<std::string> collective_protocol_names();

// nccl-tests: busbw = algbw * factor. All-reduce 2(n-1)/n; reduce-scatter, all-gather,
// all-to-all (n-1)/n; broadcast, reduce, send/recv 1.
double bus_bandwidth_factor(CollectiveOp op, int ranks);

// Where a group of ranks sits: `ranks` in total over `nodes` nodes, at most `ranks_per_node` on
// one of them, and the NICs its ranks reach on a node. nics = 0: the group is one of a plan's
// groups of its kind, which all run at once (every GPU of a node is in one DP group, one TP
// group...): its ranks get their GPUs' share of the node's NICs, ranks_per_node x NICs / GPUs
// per node, a fraction of a NIC when several GPUs share one. group_shape_of() describes a group
// that runs alone and counts the NICs it really reaches.
//
// leaf_span: the leaf switches from the group's first node to its last (nodes_per_leaf in
// models/core/leaf_switch.hpp); 1 means its inter-node traffic turns at one leaf and never
// crosses the fabric's taper (network.oversubscription). 0: not known, and a group over several
// nodes is priced as crossing it.
// leaf_crossing of leaf_gpus: where the placement knows how much of a leaf's traffic of this
// kind climbs above it at once (pipeline sends, RankPlacement::pp_pair_shape), the GPUs under
// the busiest leaf whose sends leave it, of the GPUs its ports serve; the taper then slows the
// group by o x leaf_crossing / leaf_gpus (at least 1). leaf_gpus 0: the group's own span decides.
struct GroupShape {
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node = 1;
  int nics = 0;
  int leaf_span = 0;
  int leaf_crossing = 0;
  int leaf_gpus = 0;
  bool operator==(const GroupShape&) const = default;
};
// The shape of an explicit group of GPU ids (GPU g on node g / gpus_per_node, NIC
// local * nics_per_node / gpus_per_node), counting the NICs it really reaches.
GroupShape group_shape_of(const std::vector<int>& gpus, const ClusterSpec& cluster);

// NCCL's compute-capability classes, the row index of its tuning tables.
enum class GpuArch { kVolta, kAmpere, kHopper, kBlackwell };
enum class IntraFabric { kNvSwitch, kNvLink, kPcie };
GpuArch gpu_arch(const GpuSpec& gpu);  // from compute_capability, else the GPU's family name

// The hardware a collective runs over, as the cost models read it (sustained rates: line rate x
// the cluster's efficiency, the same rates the simulator gives its links).
struct FabricTerms {
  double intra_bandwidth_bytes_per_s = 0;  // per GPU per direction (NVLink to the NVSwitch)
  double intra_latency_s = 0;
  double nic_bandwidth_per_gpu_bytes_per_s = 0;  // node NIC total / gpus_per_node
  double net_latency_s = 0;
  double oversubscription = 1;
  double nic_bandwidth_bytes_per_s = 0;  // one NIC, one direction
  int nics_per_node = 0;
  int gpus_per_node = 1;
  // Most one GPU pushes into its NICs (GPUDirect RDMA crosses the GPU's PCIe link; one NIC at
  // line rate is always reachable). 0 = no limit.
  double gpu_nic_bandwidth_bytes_per_s = 0;
  GpuArch arch = GpuArch::kAmpere;
  IntraFabric intra_fabric = IntraFabric::kNvSwitch;
  bool nvls = false;     // NVLink SHARP (NVSwitch multicast / in-switch reduction)
  bool collnet = false;  // in-network reduction (InfiniBand SHARP) on the inter-node fabric
  // The communicator's measured curves (ClusterSpec::measured_collectives), by op.
  struct Measured {
    CollectiveOp op = CollectiveOp::kAllReduce;
    int ranks = 0;
    std::vector<std::pair<double, double>> bytes_seconds;
    bool operator==(const Measured&) const = default;
  };
  std::vector<Measured> measured;
  bool operator==(const FabricTerms&) const = default;
};
FabricTerms fabric_terms(const ClusterSpec& cluster);

struct CollectiveCost {
  double time_s = 0;
  double latency_s = 0;    // alpha part (NCCL's latency term)
  double bandwidth_s = 0;  // beta part (bytes / algorithm bandwidth)
  CollectiveAlgo algo = CollectiveAlgo::kRing;              // what runs (auto resolved)
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;  // what runs (auto resolved)
  int channels = 1;
  bool measured = false;  // the time is the communicator's measured curve (FabricTerms::measured)
};

// The time of `bytes` on a measured curve: log-log between its points (calibration sweeps grow
// geometrically), the first point's time below it (the per-call floor), and beyond the last point
// the last segment's seconds per byte (the bandwidth regime). 0 for an empty curve.
double measured_collective_time_s(const std::vector<std::pair<double, double>>& bytes_seconds, double bytes);

// Time of one collective of `bytes` (the per-rank buffer as nccl-tests counts it: the full
// vector for all-reduce, reduce-scatter input, all-gather output, all-to-all send buffer).
// kAuto / CollectiveProtocol::kAuto pick the fastest (algorithm, protocol) as NCCL's tuner does
// (collective_tuner.cpp). Where the fabric carries a measured curve for the op on a group of this
// size inside one node, the time is that curve's (the choice is still reported; the simulator lays
// its flows and paces them by the measured time); a forced choice is priced as NCCL_ALGO / NCCL_PROTO run it, and one the
// op cannot run falls back to ring (direct for all-to-all and send/recv), reported in `algo`.
CollectiveCost collective_cost(CollectiveOp op, CollectiveAlgo algo, CollectiveProtocol protocol,
                               double bytes, const GroupShape& group, const FabricTerms& fabric);
CollectiveCost collective_cost(CollectiveOp op, CollectiveAlgo algo, double bytes,
                               const GroupShape& group, const FabricTerms& fabric);

// The entry point for a workload's communication op: the group as explicit GPU ids on a cluster.
CollectiveCost price_collective(CollectiveOp op, double bytes, const std::vector<int>& gpus,
                                const ClusterSpec& cluster,
                                CollectiveAlgo algo = CollectiveAlgo::kAuto,
                                CollectiveProtocol protocol = CollectiveProtocol::kAuto);

}  // namespace trainsim
