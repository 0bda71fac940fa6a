// The one collective tuner (NCCL's ncclGetAlgoInfo / topoGetAlgoInfo: the (algorithm,
// protocol) of least modelled time), used by collective_cost() and so by the estimate tier, the
// simulator's plans and the importers alike.
#pragma once

#include "models/cost/collectives/collective_algorithm.hpp"

namespace trainsim {

// Every (algorithm, protocol) the tuner weighed for this op, size and group, fastest first;
// unsupported pairs are left out. `forced_algo` / `forced_protocol` restrict the set as
// NCCL_ALGO / NCCL_PROTO do (kAuto: no restriction; LL128 is then offered only where NCCL
// enables it by default).
struct TunerCandidate {
  const CollectiveAlgorithm* algorithm = nullptr;
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;
  AlgorithmCost cost;
  double time_s = 0;
};
std::vector<TunerCandidate> tuner_candidates(CollectiveOp op, CollectiveAlgo forced_algo,
                                             CollectiveProtocol forced_protocol, double bytes,
                                             const nccl::Terms& terms);

}  // namespace trainsim
