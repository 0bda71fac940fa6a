// The closed form of a pass program (op_graph.hpp) on one GPU: compute ops one after another on
// the compute stream; each collective starts when the op it follows ends and its stream (one
// NCCL stream per kind, FIFO) is free, and lasts its contention-free time; an op waits for the
// collectives it needs. What the compute stream waits for is exposed communication; nothing is
// assumed hidden (no max(0, comm - compute)).
//
// Overlap slows compute: a collective running beside a kernel occupies SMs (one CTA per NCCL
// channel) and HBM bandwidth, so compute progresses at 1 / (1 + sigma * k) of its rate while
// collectives of other streams run, k the sum of their SM shares (CommOp::sm_share: 1 for each
// NCCL collective); a fluid model, sigma from overlap_slowdown(). The simulate tier applies the
// same rule to its compute timers, against the flows' real durations.
#pragma once

#include <cstddef>
#include <vector>

#include "models/core/specs.hpp"
#include "models/workload/op_graph.hpp"

namespace trainsim {

// The SMs one NCCL collective occupies beside compute: one CTA per channel, NCCL's default
// maximum of 16 channels for ring/tree on NVLink + IB without NVLS (src/graph/search.cc,
// MAXCHANNELS/2). CommOp::sm_share counts a collective's SMs in these units.
constexpr double kOverlapChannels = 16;

// Compute slowdown per concurrent collective: NCCL runs one CTA per channel, taking `channels`
// of the GPU's SMs from a GEMM that would fill them all, so compute runs at (S - c) / S of its
// rate: sigma = c / (S - c), c = kOverlapChannels, S the SM count of the GPU's generation. A
// collective whose kernels hold another number of SMs counts as sm_share of one. A forum
// measurement of an FSDP all-gather beside a one-wave H100 GEMM (24 NCCL blocks on 132 SMs)
// shows the worst case, a second wave: up to 2x.
double overlap_slowdown(const GpuSpec& gpu);

// The pass's time on one GPU, starting with idle streams. A block repeated many times (a
// chunk's layers) settles into a steady state: once the state after a repetition (the streams'
// and the prefetched copies' times, the collectives running, seen from the clock) is the one
// the repetition before left, to rounding (1e-9 of a repetition), every later repetition repeats
// its steps, and the rest up to the last are taken at once, each adding the last one's time and
// costs; the last (it issues no prefetch) is played. Checked from the third repetition on.
// `steady_jump` false plays every repetition (the reference the jump is tested against).
PassCost reduce_pass(const PassProgram& program, double overlap_slowdown, bool steady_jump = true);

// Repetitions of blocks this thread has played one by one, by reduce_pass and RepeatedPass
// (those the steady jump takes at once are not counted).
std::size_t repetitions_played();

// Passes that differ only in how many times one block repeats (the chunks of L layers of the
// stage lengths a plan search tries) share the playing of its repetitions. reduce_pass plays a
// block's repetitions in order, and what repetition r does depends on the repeat count only in
// whether it issues a prefetch for repetition r + 1 (all but the last do). So the player's state
// after k repetitions is the same for every repeat count above k. A RepeatedPass keeps the states
// after 0, 1, ..., K repetitions of `block` (played after `lead`, if any) and reduces
// lead, block x L, tail from the state after L - 1: the same operations on the same doubles, in
// the same order, as reduce_pass of that program (the steady state found at the same repetition
// and taken at once the same way), so the cost is the same bit for bit.
class RepeatedPass {
 public:
  // A new pass prefix (forgets the states of the previous one, keeps their buffers): plays
  // `lead` (nullptr: none) from idle streams and keeps a copy of `block`. Empty blocks are the
  // caller's to drop, as a PassProgram holds none.
  void start(const OpBlock* lead, const OpBlock& block, double overlap_slowdown);
  // reduce_pass of {lead, block with repeat = `repeat` (>= 1), tail[0], ..., tail[tails - 1]}.
  PassCost reduce(int repeat, const OpBlock* const* tail, std::size_t tails);

  const OpBlock& block() const { return block_; }

 private:
  OpBlock block_;
  double sigma_ = 0;
  // The states after 0 .. K repetitions, each one after the other in `states_` from `at_[k]`.
  std::vector<double> states_;
  std::vector<std::size_t> at_;
  // The first k whose state repeats the one before (0: none yet); states beyond it are not kept.
  std::size_t steady_at_ = 0;
};

}  // namespace trainsim
