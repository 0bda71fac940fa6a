// Collective algorithms as plans of transfers, independent of SimGrid (CONVENTIONS.md #2): the
// engine (collective_engine.cpp) only plays them. A plan is a sequence of stages; a stage ends
// when all its transfers have arrived, and the next starts then.
//
//  - FlowStage (granularity "flow"): one flow per ring edge / tree edge / exchange carrying the
//    whole volume of that edge; the stage lasts max_i(bytes_i / rate_i) + latency_s, where the
//    latency (e.g. 2(n-1)*alpha for a ring all-reduce) is added analytically, because a flow
//    pays its route latency once while the algorithm pays it once per step.
//  - RingStepStage (granularity "step"): every step of every ring is one transfer of one chunk;
//    rank r starts step k+1 when its step-k send is done and its step-k chunk has arrived.
#pragma once

#include <string>
#include <vector>

#include "models/cost/collectives/collective_cost.hpp"
#include "sim/rank_order.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

enum class Granularity { kFlow, kStep };
const char* to_string(Granularity g);
Granularity granularity_from_string(const std::string& name, const std::string& path);

struct Transfer {
  int src_gpu = 0;
  int dst_gpu = 0;
  double bytes = 0;
};

struct FlowStage {
  std::vector<Transfer> transfers;
  double latency_s = 0;  // analytic latency of the stage (route latency not double-counted)
};

struct RingStepStage {
  std::vector<std::vector<int>> rings;  // independent rings played concurrently
  int steps = 0;                        // per ring
  double chunk_bytes = 0;               // per step per rank
};

struct CollectiveStage {
  bool ring_steps = false;
  FlowStage flow;
  RingStepStage steps;
};

struct CollectivePlan {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kRing;  // after resolving kAuto and fallbacks
  std::vector<CollectiveStage> stages;
  int channels = 1;
  std::size_t transfer_count() const;  // transfers the engine will start
};

struct PlanRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  double bytes = 0;        // per-rank buffer as nccl-tests counts it
  std::vector<int> group;  // GPU ids, in rank order; group[0] is the root of broadcast/reduce
  Granularity granularity = Granularity::kFlow;
  RingOrder order = RingOrder::kTopologyAware;
  int channels = 0;  // 0: one per NIC of a node used by the group
};

// Where the group sits, for the closed forms and the kAuto tuner (models/collective_cost.hpp).
GroupShape group_shape(const Topology& topo, const std::vector<int>& group);

// kAuto's choice: models' NCCL-like tuner (collective_cost) with the cross-node bandwidth of
// halving-doubling corrected (see collective_plan.cpp).
CollectiveAlgo tuned_algorithm(CollectiveOp op, double bytes, const GroupShape& shape,
                               const ClusterSpec& cluster);

// Builds the plan. kAuto asks models' NCCL-like tuner (collective_cost with kAuto) which
// algorithm is fastest for this size and group, then plans that one. Algorithms that do not
// apply to an op fall back as models' collective_cost does (reported in plan.algo).
CollectivePlan make_plan(const Topology& topo, const PlanRequest& request);

}  // namespace trainsim::sim
