#include "models/workload/program_reduce.hpp"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

// A block of `ops` compute ops of `c` seconds each.
OpBlock block(int ops, double c, int repeat = 1) {
  OpBlock b;
  b.name = "test";
  b.repeat = repeat;
  for (int i = 0; i < ops; ++i) {
    b.compute.push_back(ComputeOp{});
    b.compute_s.push_back(c);
  }
  return b;
}

CommOp comm(CommStream stream, double t, int after, int waited_by, CommPurpose p = CommPurpose::kTp) {
  CommOp c;
  c.stream = stream;
  c.time_s = t;
  c.after = after;
  c.waited_by = waited_by;
  c.purpose = p;
  return c;
}

PassProgram program(OpBlock b) {
  PassProgram p;
  p.blocks.push_back(std::move(b));
  return p;
}

TEST(ProgramReduce, InlineCollectivesAddToTheCriticalPath) {
  // Megatron's TP all-reduce between two GEMMs of 1 ms: 1 + 0.3 + 1 ms per layer, 4 layers.
  OpBlock b = block(2, 1e-3, 4);
  b.comm.push_back(comm(CommStream::kInline, 0.3e-3, 0, 1));
  const PassCost c = reduce_pass(program(b), 0.2);
  EXPECT_NEAR(c.time_s, 4 * 2.3e-3, 1e-12);
  EXPECT_NEAR(c.compute_s, 8e-3, 1e-12);
  EXPECT_NEAR(c.exposed_s[static_cast<int>(CommPurpose::kTp)], 4 * 0.3e-3, 1e-12);
  EXPECT_NEAR(c.slowdown_s, 0, 1e-15);  // compute is idle while an inline collective runs
}

TEST(ProgramReduce, PrefetchedGathersHideBehindComputeUntilTheyAreLonger) {
  // ZeRO-3: each layer's gather issued one layer ahead (the first at the start), the layer's
  // first op waits for it. Compute c per layer, gather g, no slowdown: the first gather is
  // exposed, then each layer takes max(c, g).
  for (double g : {0.5e-3, 2e-3}) {
    SCOPED_TRACE(g);
    const double c = 1e-3;
    const int layers = 6;
    OpBlock b = block(1, c, layers);
    CommOp ag = comm(CommStream::kGather, g, -1, 0, CommPurpose::kDp);
    ag.prefetch = true;
    b.comm.push_back(ag);
    const PassCost r = reduce_pass(program(b), 0.0);
    EXPECT_NEAR(r.time_s, g + (layers - 1) * std::max(c, g) + c, 1e-12);
    EXPECT_NEAR(r.exposed_s[static_cast<int>(CommPurpose::kDp)], r.time_s - layers * c, 1e-12);
  }
}

TEST(ProgramReduce, OverlappedCollectivesSlowComputeByTheFluidRule) {
  // One op of work w beside a collective of duration d < w (1 + sigma): the op runs at
  // 1 / (1 + sigma) while the collective runs, then at full rate: end = w + d sigma / (1 + sigma).
  const double w = 2e-3, d = 1e-3, sigma = 0.25;
  OpBlock b = block(2, w);
  b.compute_s[0] = 0;  // op 0 only issues the collective
  b.comm.push_back(comm(CommStream::kTensor, d, 0, -1));
  const PassCost r = reduce_pass(program(b), sigma);
  EXPECT_NEAR(r.time_s, w + d * sigma / (1 + sigma), 1e-12);
  EXPECT_NEAR(r.slowdown_s, d * sigma / (1 + sigma), 1e-12);
  // The slowdown is charged to the collective's purpose.
  EXPECT_NEAR(r.exposed_s[static_cast<int>(CommPurpose::kTp)], r.slowdown_s, 1e-12);
  // Not waited in the pass: it finished before the op did, so nothing runs past the pass.
  EXPECT_NEAR(r.async_tail_s, 0, 1e-15);
  EXPECT_NEAR(r.async_busy_s, d, 1e-15);
}

TEST(ProgramReduce, CollectivesOfOneStreamRunOneAfterAnother) {
  // Two reduce-scatters of 1 ms issued at once on one stream, after an op of 0.5 ms: the second
  // ends 2 ms after the issue, 1.5 ms past the pass.
  OpBlock b = block(1, 0.5e-3);
  b.comm.push_back(comm(CommStream::kReduceScatter, 1e-3, -1, -1, CommPurpose::kDp));
  b.comm.push_back(comm(CommStream::kReduceScatter, 1e-3, -1, -1, CommPurpose::kDp));
  const PassCost r = reduce_pass(program(b), 0.0);
  EXPECT_NEAR(r.time_s, 0.5e-3, 1e-15);
  EXPECT_NEAR(r.async_tail_s, 1.5e-3, 1e-12);
}

TEST(ProgramReduce, OverlapSlowdownIsTheShareOfSmsNcclTakes) {
  GpuSpec a100;
  a100.kernel.sm_count = 108;
  EXPECT_NEAR(overlap_slowdown(a100), 16.0 / 92.0, 1e-12);
  GpuSpec h100;
  h100.kernel.sm_count = 132;
  EXPECT_NEAR(overlap_slowdown(h100), 16.0 / 116.0, 1e-12);
}

}  // namespace
}  // namespace trainsim
