// The ranges every quantity of a scenario is checked against when it is read (CONVENTIONS.md
// #18): the loader, the importers (Hugging Face configs, Megatron command lines) and the plan
// structure check share them, so a value is refused at the field that carries it. Each bound is
// far past any model or cluster built, yet small enough that products of counts stay inside
// 64-bit integers and per-step counts inside the 32-bit fields of the results.
#pragma once

#include <cstdint>

namespace trainsim::limits {

constexpr int64_t kMaxGpus = int64_t{1} << 24;        // 16.7M GPUs in one cluster
constexpr int64_t kMaxGpusPerNode = 1024;
constexpr int64_t kMaxLayers = 100000;
constexpr int64_t kMaxHidden = int64_t{1} << 22;      // 4M (the largest published: 18432, 25600)
constexpr int64_t kMaxHeads = int64_t{1} << 16;
constexpr int64_t kMaxHeadDim = int64_t{1} << 12;  // 4096 (the widest published: 256)
constexpr int64_t kMaxFfnHidden = int64_t{1} << 24;
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxSeqLen = int64_t{1} << 24;
constexpr int64_t kMaxExperts = int64_t{1} << 16;
constexpr int64_t kMaxSharedExperts = 64;
constexpr int64_t kMaxVirtualStages = 1024;
constexpr int64_t kMaxMicroBatch = int64_t{1} << 30;   // sequences per micro-batch
constexpr int64_t kMaxGlobalBatch = int64_t{1} << 40;  // sequences per step
// Micro-batches per pipeline per step (global_batch / (micro_batch x dp)): 2^30 keeps the count
// inside the int fields of Workload and Result with room for products by small factors (the
// closed form answers 10^9 in milliseconds; the simulate tier has its own, lower bound:
// workload/cost_bounds.hpp).
constexpr int64_t kMaxMicroBatchesPerStep = int64_t{1} << 30;

// a x b, or -1 when the product exceeds `cap` (or a or b is negative). No overflow for any
// int64 inputs: the check divides before it multiplies.
constexpr int64_t checked_product(int64_t a, int64_t b, int64_t cap) {
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > cap / a) return -1;
  return a * b > cap ? -1 : a * b;
}

}  // namespace trainsim::limits
