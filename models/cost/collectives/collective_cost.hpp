// Alpha-beta cost of collectives (REFERENCE.md "Collectives"), shared by the estimate tier and
// the simulator's tests: the simulator must reproduce these closed forms on contention-free
// topologies. Bus-bandwidth factors follow nccl-tests doc/PERFORMANCE.md and live only here.
#pragma once

#include <string>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll,
                          kSendRecv };
enum class CollectiveAlgo { kRing, kTree, kHalvingDoubling, kHierarchical, kDirect, kAuto };

const char* to_string(CollectiveOp op);
const char* to_string(CollectiveAlgo algo);
// Registry lookups by name; throw ScenarioError listing valid names on an unknown one.
CollectiveOp collective_op_from_string(const std::string& name, const std::string& path);
CollectiveAlgo collective_algo_from_string(const std::string& name, const std::string& path);
std::vector<std::string> collective_op_names();
std::vector<std::string> collective_algo_names();

// nccl-tests: busbw = algbw * factor. All-reduce 2(n-1)/n; reduce-scatter, all-gather,
// all-to-all (n-1)/n; broadcast, reduce, send/recv 1.
double bus_bandwidth_factor(CollectiveOp op, int ranks);

// Where a group of ranks sits: `ranks` in total over `nodes` nodes, `ranks_per_node` on each
// (groups are assumed evenly spread, as Megatron's rank placement makes them).
struct GroupShape {
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node = 1;
};

// The links a collective runs over, reduced to alpha-beta terms per direction.
struct FabricTerms {
  double intra_bandwidth_bytes_per_s = 0;  // per GPU per direction, after efficiency
  double intra_latency_s = 0;
  double nic_bandwidth_per_gpu_bytes_per_s = 0;  // node NIC total / gpus_per_node, after efficiency
  double net_latency_s = 0;
  double oversubscription = 1;
};
FabricTerms fabric_terms(const ClusterSpec& cluster);

struct CollectiveCost {
  double time_s = 0;
  double latency_s = 0;    // alpha part
  double bandwidth_s = 0;  // beta part
  CollectiveAlgo algo = CollectiveAlgo::kRing;
};

// Time of one collective of `bytes` (the per-rank buffer size as nccl-tests counts it: the
// full vector for all-reduce/reduce-scatter input/all-gather output/all-to-all send buffer).
// kAuto picks the cheapest algorithm, as NCCL's tuner does (src/graph/tuning.cc).
CollectiveCost collective_cost(CollectiveOp op, CollectiveAlgo algo, double bytes,
                               const GroupShape& group, const FabricTerms& fabric);

}  // namespace trainsim
