// nccl-tests bus bandwidth (doc/PERFORMANCE.md): busbw = algbw * factor with all-reduce
// 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n; send/recv 1.
// The shared definition is models/collective_cost.hpp `bus_bandwidth_factor`; kernels/ may not
// include models/ (layering), so this copies only that formula. Keep the two in step.
#pragma once

#include <string>

namespace trainsim::kernels {

enum class CollectiveKind { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kSendRecv };

inline double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  if (ranks <= 1) return kind == CollectiveKind::kSendRecv ? 1.0 : 0.0;
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2.0 * (n - 1.0) / n;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll: return (n - 1.0) / n;
    case CollectiveKind::kSendRecv: return 1.0;
  }
  return 1.0;
}

inline const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kSendRecv: return "send_recv";
  }
  return "?";
}

}  // namespace trainsim::kernels
