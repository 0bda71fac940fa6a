#include "models/cost/collectives/collective_tuner.hpp"

#include <algorithm>

namespace trainsim {

std::vector<TunerCandidate> tuner_candidates(CollectiveOp op, CollectiveAlgo forced_algo,
                                             CollectiveProtocol forced_protocol, double bytes,
                                             const nccl::Terms& terms) {
  std::vector<TunerCandidate> out;
  for (const CollectiveAlgorithm* a : collective_algorithms()) {
    if (!a->supports(op)) continue;
    if (forced_algo.is_auto() ? !a->tuned() : forced_algo != CollectiveAlgo(a->name())) continue;
    for (CollectiveProtocol p :
         {CollectiveProtocol::kLL, CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
      if (forced_protocol != CollectiveProtocol::kAuto && p != forced_protocol) continue;
      if (forced_protocol == CollectiveProtocol::kAuto && p == CollectiveProtocol::kLL128 && !terms.ll128)
        continue;
      const AlgorithmCost c = a->cost(op, p, bytes, terms);
      if (!c.supported || !(c.algbw_bytes_per_s > 0)) continue;
      // ncclTopoGetAlgoTime: time = lat * latCount + nBytes / bw (one operation: latCount 1).
      out.push_back({a, p, c, c.latency_s + bytes / c.algbw_bytes_per_s});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TunerCandidate& x, const TunerCandidate& y) { return x.time_s < y.time_s; });
  return out;
}

}  // namespace trainsim
