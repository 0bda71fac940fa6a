// Collective algorithms as plans of transfers, independent of SimGrid (CONVENTIONS.md #2): the
// engine (collective_engine.cpp) only plays them. A plan is a sequence of stages; a stage ends
// when all its transfers have arrived, and the next starts then.
//
//  - FlowStage (granularity "flow"): one flow per ring edge / tree edge / exchange carrying the
//    whole volume of that edge; the stage lasts max_i(bytes_i / rate_i) + latency_s, where the
//    latency (NCCL's latency term of the algorithm, models/cost/collectives) is added
//    analytically, because a flow pays its route latency once while the algorithm pays a step
//    latency per step. NCCL's algorithms play one stage whose flows carry the protocol's wire
//    bytes (LL 16 per 8 of data, LL128 128 per 120) and which lasts at least the closed form's
//    bandwidth time (protocol factors, per-channel caps and tree corrections are NCCL's
//    model, not link loads): without contention the simulation reproduces the closed form, and
//    where links are shared max-min sharing makes the flows, and so the stage, slower.
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
  int channel = -1;             // which of a GPU's NICs carries it (-1: its first)
};

struct FlowStage {
  std::vector<Transfer> transfers;
  double latency_s = 0;  // analytic latency of the stage (route latency not double-counted)
  double min_bandwidth_s = 0;  // the stage's bandwidth part lasts at least this (closed form)
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
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;
  CollectiveCost model;  // the closed form of what is played (the shared tuner's answer)
  CollectiveCost pace;   // the same without the closed form's taper: the floor of the flows
  std::vector<CollectiveStage> stages;
  int channels = 1;
  std::size_t transfer_count() const;  // transfers the engine will start
};

struct PlanRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;
  double bytes = 0;        // per-rank buffer as nccl-tests counts it
  std::vector<int> group;  // GPU ids, in rank order; group[0] is the root of broadcast/reduce
  Granularity granularity = Granularity::kFlow;
  RingOrder order = RingOrder::kTopologyAware;
  int channels = 0;  // 0: one per NIC of a node used by the group
};

// Where the group sits, for the closed forms and the tuner (models' group_shape_of).
GroupShape group_shape(const Topology& topo, const std::vector<int>& group);

// Builds the plan. The (algorithm, protocol) is the shared tuner's (models' collective_cost):
// kAuto / protocol kAuto pick as NCCL does, a forced choice the op cannot run falls back as the
// closed form does (reported in plan.algo / plan.protocol).
CollectivePlan make_plan(const Topology& topo, const PlanRequest& request);

}  // namespace trainsim::sim
