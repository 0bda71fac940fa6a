#include "models/core/pareto.hpp"

#include <algorithm>
#include <numeric>

namespace trainsim {

std::vector<ParetoEntry> pareto_front(const std::vector<ParetoPoint>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Throughput descending, then memory and GPUs ascending: a point can only be dominated by one
  // before it, so each is compared with the front found so far.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const ParetoPoint &x = points[a], &y = points[b];
    if (x.tokens_per_s != y.tokens_per_s) return x.tokens_per_s > y.tokens_per_s;
    if (x.peak_bytes != y.peak_bytes) return x.peak_bytes < y.peak_bytes;
    return x.gpus < y.gpus;
  });
  std::vector<ParetoEntry> front;
  for (std::size_t i : order) {
    const ParetoPoint& p = points[i];
    bool dominated = false;
    for (ParetoEntry& f : front) {
      const ParetoPoint& q = points[f.index];
      if (q.tokens_per_s == p.tokens_per_s && q.peak_bytes == p.peak_bytes && q.gpus == p.gpus) {
        f.same.push_back(i);  // the same trade-off: counted once
        dominated = true;
        break;
      }
      if (q.tokens_per_s >= p.tokens_per_s && q.peak_bytes <= p.peak_bytes && q.gpus <= p.gpus) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back({i, {}});
  }
  return front;
}

}  // namespace trainsim
