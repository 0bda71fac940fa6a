#include "models/workload/fb_overlap.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "models/workload/program_reduce.hpp"
#include "tests/models/workload/program_test_ops.hpp"

namespace trainsim {
namespace {

using test::comm;

OpBlock block(const std::vector<double>& ops, int repeat = 1) { return test::block_of(ops, repeat); }

PassProgram program(std::vector<OpBlock> blocks) {
  PassProgram p;
  p.blocks = std::move(blocks);
  return p;
}

// An MoE layer as the two passes see it: attention (a), the all-to-all dispatch, the experts
// (e), the combine. Forward: a, dispatch, e, combine, then the next layer waits for it.
OpBlock moe_layer(double a, double e, double a2a, int repeat) {
  OpBlock b = block({a, e}, repeat);
  b.comm.push_back(comm(CommStream::kTensor, a2a, 0, 1, CommPurpose::kEp));  // dispatch: after a, before e
  b.comm.push_back(comm(CommStream::kTensor, a2a, 1, 2, CommPurpose::kEp));  // combine: after e, at the end
  return b;
}

TEST(FbOverlap, WithoutCollectivesThePairIsTheTwoPassesOneAfterTheOther) {
  const PassProgram f = program({block({1e-3}), block({2e-3, 3e-3}, 4)});
  const PassProgram b = program({block({4e-3, 5e-3}, 4), block({6e-3})});
  const PassProgram fb = overlap_forward_backward(f, b);
  // Repetition by repetition: F's first block with B's first repetition, then 3 repetitions of
  // both layers, then B's last block with F's last repetition.
  ASSERT_EQ(fb.blocks.size(), 3u);
  EXPECT_EQ(fb.blocks[0].repeat, 1);
  EXPECT_EQ(fb.blocks[1].repeat, 3);
  EXPECT_EQ(fb.blocks[2].repeat, 1);
  // Without a collective beside the stream a block is one segment: F's ops, then B's.
  EXPECT_EQ(fb.blocks[0].compute_s, (std::vector<double>{1e-3, 4e-3, 5e-3}));
  EXPECT_EQ(fb.blocks[2].compute_s, (std::vector<double>{2e-3, 3e-3, 6e-3}));
  EXPECT_NEAR(reduce_pass(fb, 0.2).time_s, reduce_pass(f, 0.2).time_s + reduce_pass(b, 0.2).time_s, 1e-15);
}

TEST(FbOverlap, EachSidesAllToAllRunsBesideTheOthersCompute) {
  // Attention 1 ms, experts 1 ms, each all-to-all 1.5 ms, 8 layers, no slowdown. Alone a pass
  // waits 2 x 1.5 ms a layer: 5 ms. Paired, the segments alternate F.a | B.a | F.e | B.e, and
  // each side's all-to-all runs beside the other's segment.
  const int layers = 8;
  const PassProgram f = program({moe_layer(1e-3, 1e-3, 1.5e-3, layers)});
  const PassProgram b = program({moe_layer(1e-3, 1e-3, 1.5e-3, layers)});
  const PassCost alone = reduce_pass(f, 0);
  EXPECT_NEAR(alone.time_s, layers * 5e-3, 1e-12);
  const PassProgram fb = overlap_forward_backward(f, b);
  ASSERT_EQ(fb.blocks.size(), 1u);
  ASSERT_EQ(fb.blocks[0].compute.size(), 4u);
  // The collectives keep their ops: F's dispatch after F.a (0), waited by F.e (2); B's dispatch
  // after B.a (1), waited by B.e (3); the combines end the repetition (4).
  EXPECT_EQ(fb.blocks[0].comm[0].after, 0);
  EXPECT_EQ(fb.blocks[0].comm[0].waited_by, 2);
  EXPECT_EQ(fb.blocks[0].comm[2].after, 1);
  EXPECT_EQ(fb.blocks[0].comm[2].waited_by, 3);
  EXPECT_EQ(fb.blocks[0].comm[3].waited_by, 4);
  const PassCost pair = reduce_pass(fb, 0);
  EXPECT_LT(pair.time_s, 2 * alone.time_s);
  EXPECT_GE(pair.time_s, 4e-3 * layers);  // never below the compute of both
  EXPECT_NEAR(pair.compute_s, 2 * alone.compute_s, 1e-15);
  // Per layer, one NCCL stream (FIFO): F.a 0-1, F's dispatch 1-2.5; B.a 1-2, B's dispatch
  // queued behind it, 2.5-4; F.e 2.5-3.5, F's combine 4-5.5; B.e 4-5, B's combine 5.5-7, which
  // ends the repetition: 7 ms a layer for both passes instead of 10.
  EXPECT_NEAR(pair.time_s, layers * 7e-3, 1e-12);
}

TEST(FbOverlap, ACollectiveOnTheComputeStreamRunsBesideTheOtherPass) {
  // Megatron's TP all-reduce without overlap sits on the compute stream: alone, the op after it
  // waits 0.5 ms; paired, the backward's 2 ms op runs in between, on an NCCL stream beside it.
  OpBlock tp = block({1e-3, 1e-3});
  tp.comm.push_back(comm(CommStream::kInline, 0.5e-3, 0, 1, CommPurpose::kTp));
  const PassProgram fb = overlap_forward_backward(program({tp}), program({block({2e-3})}));
  EXPECT_EQ(fb.blocks[0].compute_s, (std::vector<double>{1e-3, 2e-3, 1e-3}));
  EXPECT_EQ(fb.blocks[0].comm[0].stream, CommStream::kTensor);
  EXPECT_NEAR(reduce_pass(program({tp}), 0).time_s, 2.5e-3, 1e-15);
  EXPECT_NEAR(reduce_pass(fb, 0).time_s, 4e-3, 1e-15);
  // With the collective slowing the compute beside it (sigma 0.2): the backward's op runs at
  // 1/1.2 for the collective's 0.5 ms, 0.5 x 0.2/1.2 ms longer.
  EXPECT_NEAR(reduce_pass(fb, 0.2).time_s, 4e-3 + 0.5e-3 * 0.2 / 1.2, 1e-12);
}

}  // namespace
}  // namespace trainsim
