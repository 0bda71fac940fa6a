// A collective algorithm as a cost model (CONVENTIONS.md #17): one file per algorithm in this
// folder defines one CollectiveAlgorithm and collective_registry.cpp lists it. The model is
// NCCL's (src/graph/tuning.cc ncclTopoTuneModel + ncclTopoGetAlgoTime, NCCL 2.30.7): for one
// protocol, a latency (a base term plus NCCL's per-step hardware latencies, not a full network
// hop per step: chunks are pipelined) and an algorithm bandwidth; time = latency + bytes / bw.
// The bandwidth comes from the links the algorithm loads (nccl_model.hpp), NCCL's protocol
// factors and per-channel caps on top.
#pragma once

#include <vector>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/collectives/nccl_model.hpp"

namespace trainsim {

struct AlgorithmCost {
  bool supported = false;  // false: NCCL would not run this (op, protocol) here
  double latency_s = 0;
  double algbw_bytes_per_s = 0;  // bytes / algbw = the bandwidth part of the time
  int channels = 1;
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  virtual const char* name() const = 0;       // registry key (--algo, plan.collective_algorithm)
  virtual const char* nccl_name() const = 0;  // NCCL_ALGO spelling, for reports
  // True for NCCL's own algorithms: the auto tuner considers them. Others (textbook algorithms
  // NCCL does not ship) run only when forced.
  virtual bool tuned() const { return true; }
  virtual bool supports(CollectiveOp op) const = 0;
  // NCCL's model for one protocol, at this size (some corrections depend on it).
  virtual AlgorithmCost cost(CollectiveOp op, CollectiveProtocol protocol, double bytes,
                             const nccl::Terms& terms) const = 0;
};

// Every registered algorithm, in registry order (collective_registry.cpp).
const std::vector<const CollectiveAlgorithm*>& collective_algorithms();
// nullptr when no algorithm has this name.
const CollectiveAlgorithm* find_collective_algorithm(const std::string& name);

}  // namespace trainsim
