// Plays collectives on the Platform at the current simulated time.
// Several collectives may run at once; where they share links they contend through SimGrid's
// max-min sharing. The training-step simulator starts its collectives through this class and
// continues from the completion callbacks. No SimGrid header here.
#pragma once

#include <cstddef>
#include <functional>

#include "sim/collective_plan.hpp"
#include "sim/platform.hpp"

namespace trainsim::sim {

struct CollectiveResult {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kRing;  // the algorithm played (kAuto resolved)
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;  // the protocol played
  CollectiveCost model;  // the closed form of what was played (the shared tuner's answer)
  int ranks = 0;
  double bytes = 0;
  double start_s = 0;
  double end_s = 0;
  double time_s = 0;
  int channels = 1;
  std::size_t transfers = 0;   // transfers of the plan
  std::size_t activities = 0;  // SimGrid activities played (large stages bundle transfers)
  double algbw_bytes_per_s() const { return time_s > 0 ? bytes / time_s : 0; }
  // nccl-tests bus bandwidth: algbw * bus_bandwidth_factor(op, ranks) (models/collective_cost).
  double busbw_bytes_per_s() const;
};

class CollectiveEngine {
 public:
  explicit CollectiveEngine(Platform& platform) : platform_(platform) {}

  using Callback = std::function<void(const CollectiveResult&)>;
  // Plans the collective (make_plan) and starts it now; on_done runs at its simulated end.
  void start(const PlanRequest& request, Callback on_done);
  void start(CollectivePlan plan, const PlanRequest& request, Callback on_done);

  // Convenience for a lone collective: starts it, runs the engine, returns its result.
  CollectiveResult run_one(const PlanRequest& request);

  Platform& platform() { return platform_; }

 private:
  Platform& platform_;
  uint64_t next_id_ = 1;
};

}  // namespace trainsim::sim
