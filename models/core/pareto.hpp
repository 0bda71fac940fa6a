// The Pareto front of a set of plans: the trade-off between throughput (more is better), peak
// memory per GPU and GPU count (less is better). One definition for every reader of a sweep:
// the CLI's sweep summary and the GUI's Sweep view call this function on the same rows.
#pragma once

#include <cstddef>
#include <vector>

namespace trainsim {

// One plan's figures. The caller chooses which plans compete (a sweep: the feasible rows that
// meet its constraints); the front only compares figures.
struct ParetoPoint {
  double tokens_per_s = 0;
  double peak_bytes = 0;
  double gpus = 0;
};

// A point of the front, and the other plans with exactly the same three figures (ZeRO-1 and
// ZeRO-2 at DP 1, the schedules of a PP-1 plan): they are one trade-off, so they count once;
// `index` (the first of them in input order) stands for them and `same` lists the others.
struct ParetoEntry {
  std::size_t index = 0;
  std::vector<std::size_t> same;
};

// The points no other point dominates, where a dominates b when a has at least b's throughput,
// at most its memory and at most its GPUs, and is strictly better in one of them. Ordered by
// throughput, highest first (ties: memory, then GPUs, then input order). O(n log n + n·front).
std::vector<ParetoEntry> pareto_front(const std::vector<ParetoPoint>& points);

}  // namespace trainsim
