// Correctness check and timing of one collective, as nccl-tests does it: every rank fills its
// buffer with values that depend on (rank, index) and are exact in fp32, runs the collective,
// and counts the elements that differ from the closed-form expected result.
#pragma once

#include <cstddef>
#include <functional>

#include "kernels/backend.hpp"
#include "kernels/bus_bandwidth.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

struct CollectiveRun {
  size_t bytes = 0;       // as nccl-tests counts them (see bus_bandwidth.hpp)
  double time_s = 0.0;    // per call: see CollectiveTiming; max over ranks
  size_t wrong = 0;       // summed over ranks
  double algbw_bytes_per_s = 0.0;
  double busbw_bytes_per_s = 0.0;
};

// kBackToBack: the mean of `iters` calls issued back to back, as nccl-tests times them (a
// call's start may overlap the previous call's tail). kIsolated: each call alone, after the
// ranks met at a barrier, the median of `iters`: how a training step issues its collectives,
// one at a time between compute. Over MPI shared memory they can differ twofold for a
// megabyte reduce-scatter (Open MPI 4.1, vader and tuned), while all-reduce and all-gather time
// the same either way. `before_each` (kIsolated only) runs before each call's barrier, untimed:
// the compute the trainer runs before it.
enum class CollectiveTiming { kBackToBack, kIsolated };

// `bytes` is rounded down to whole elements (floats for the reductions, a multiple of size()).
// For send/recv, ranks pair up (0<->1, 2<->3, ...); an odd last rank idles. All ranks of `comm`
// must call with the same arguments.
CollectiveRun run_collective(Backend& be, Communicator& comm, CollectiveKind kind, size_t bytes,
                             int warmup, int iters, CollectiveTiming timing = CollectiveTiming::kBackToBack,
                             const std::function<void()>& before_each = {});

}  // namespace trainsim::kernels
