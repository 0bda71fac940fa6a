#include "models/workload/program_reduce.hpp"

#include "tests/models/workload/program_test_ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace trainsim {
namespace {

using test::comm;

// A block of `ops` compute ops of `c` seconds each.
OpBlock block(int ops, double c, int repeat = 1) { return test::block_of(std::vector<double>(ops, c), repeat); }

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
    CommOp ag = comm(CommStream::kSharded, g, -1, 0, CommPurpose::kDp);
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

TEST(ProgramReduce, ACollectiveSlowsComputeByItsShareOfSms) {
  // Two collectives beside one op, of SM shares 0.625 and 1 (10 SMs of a DeepEP hop and an NCCL
  // collective's 16): while both run the op advances at 1 / (1 + 1.625 sigma), then at
  // 1 / (1 + sigma) while the longer one runs on, then at full rate. While both run, the
  // slowdown is charged to them by share, 0.625 : 1.
  const double w = 4e-3, d1 = 1e-3, d2 = 2e-3, sigma = 0.25, k = 1.625;
  OpBlock b = block(2, w);
  b.compute_s[0] = 0;
  CommOp hop = comm(CommStream::kEpForward, d1, 0, -1, CommPurpose::kEp);
  hop.sm_share = 0.625;
  b.comm.push_back(hop);
  b.comm.push_back(comm(CommStream::kTensor, d2, 0, -1, CommPurpose::kTp));
  const PassCost r = reduce_pass(program(b), sigma);
  // Work done: d1 / (1 + k sigma) while both run, (d2 - d1) / (1 + sigma) while one does.
  const double done = d1 / (1 + k * sigma) + (d2 - d1) / (1 + sigma);
  EXPECT_NEAR(r.time_s, d2 + (w - done), 1e-12);
  const double both = d1 - d1 / (1 + k * sigma), one = (d2 - d1) - (d2 - d1) / (1 + sigma);
  EXPECT_NEAR(r.exposed_s[static_cast<int>(CommPurpose::kEp)], both * 0.625 / k, 1e-12);
  EXPECT_NEAR(r.exposed_s[static_cast<int>(CommPurpose::kTp)], both * 1 / k + one, 1e-12);
  EXPECT_NEAR(r.slowdown_s, both + one, 1e-12);
}

TEST(ProgramReduce, CollectivesOfOneStreamRunOneAfterAnother) {
  // Two reduce-scatters of 1 ms issued at once on one stream, after an op of 0.5 ms: the second
  // ends 2 ms after the issue, 1.5 ms past the pass.
  OpBlock b = block(1, 0.5e-3);
  b.comm.push_back(comm(CommStream::kSharded, 1e-3, -1, -1, CommPurpose::kDp));
  b.comm.push_back(comm(CommStream::kSharded, 1e-3, -1, -1, CommPurpose::kDp));
  const PassCost r = reduce_pass(program(b), 0.0);
  EXPECT_NEAR(r.time_s, 0.5e-3, 1e-15);
  EXPECT_NEAR(r.async_tail_s, 1.5e-3, 1e-12);
}

// A layer-like block with every kind of collective the reducer treats differently: an inline
// TP all-reduce, an overlapped exchange (slows the op beside it), a ZeRO-3 gather prefetched one
// repetition ahead, an asynchronous reduce-scatter and a collective waited by the end of the
// repetition. `scale` varies the durations so that communication is hidden or exposed.
OpBlock layer_like(double scale, bool prefetch) {
  OpBlock b;
  b.name = "layer";
  const double ops[] = {0.4e-3, 1.1e-3, 0.0, 0.7e-3, 0.2e-3};
  for (double c : ops) {
    b.compute.push_back(ComputeOp{});
    b.compute_s.push_back(c);
  }
  b.compute[3].pass = Pass::kBackwardWeight;
  b.comm.push_back(comm(CommStream::kInline, 0.3e-3 * scale, 0, 1));
  b.comm.push_back(comm(CommStream::kTensor, 0.9e-3 * scale, 1, 3, CommPurpose::kCp));
  b.comm.push_back(comm(CommStream::kSharded, 1.3e-3 * scale, 3, -1, CommPurpose::kDp));
  b.comm.push_back(comm(CommStream::kGradients, 0.5e-3 * scale, 2, 5, CommPurpose::kEp));
  if (prefetch) {
    CommOp ag = comm(CommStream::kSharded, 1.7e-3 * scale, -1, 0, CommPurpose::kDp);
    ag.prefetch = true;
    b.comm.push_back(ag);
  }
  for (CommOp& c : b.comm) c.wire_bytes = 1e6;
  return b;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// check(a, b, name) on each field of two costs.
template <class Check>
void each_cost_field(const PassCost& a, const PassCost& b, Check check) {
  check(a.time_s, b.time_s, "time");
  check(a.compute_s, b.compute_s, "compute");
  check(a.slowdown_s, b.slowdown_s, "slowdown");
  for (int k = 0; k < kCommPurposes; ++k) check(a.exposed_s[k], b.exposed_s[k], "exposed");
  check(a.async_tail_s, b.async_tail_s, "async tail");
  check(a.async_busy_s, b.async_busy_s, "async busy");
}

void expect_same_cost(const PassCost& fast, const PassCost& full) {
  each_cost_field(fast, full, [](double a, double b, const char* what) {
    EXPECT_TRUE(same_bits(a, b)) << what << ": " << a << " vs " << b;
    EXPECT_LE(std::abs(a - b), 1e-9 * std::max(std::abs(a), std::abs(b))) << what;
  });
}

TEST(ProgramReduce, ABacklogOfCollectivesSlowsEveryLaterOpByTheFluidRule) {
  // A reduce-scatter of d after each op of c, d > c (1 + sigma), nothing waiting for it (ZeRO-3
  // gradients behind a short W pass): from the first issue on, one collective always runs, so
  // every later op takes c (1 + sigma), and the last collective ends R d after the first op.
  // Thousands of repetitions keep a backlog of thousands of collectives: the reduction (directly
  // and through RepeatedPass) gives the closed form, whether it tracks each or merges them.
  const double c = 1e-3, d = 3e-3, sigma = 0.25;
  for (int repeat : {50, 5000}) {
    SCOPED_TRACE(repeat);
    OpBlock b = block(1, c, repeat);
    b.comm.push_back(comm(CommStream::kSharded, d, 0, -1, CommPurpose::kDp));
    const PassCost r = reduce_pass(program(b), sigma);
    const double end = c + (repeat - 1) * c * (1 + sigma);
    EXPECT_NEAR(r.time_s, end, 1e-9 * end);
    EXPECT_NEAR(r.slowdown_s, (repeat - 1) * c * sigma, 1e-9 * end);
    EXPECT_NEAR(r.exposed_s[static_cast<int>(CommPurpose::kDp)], r.slowdown_s, 1e-9 * end);
    EXPECT_NEAR(r.async_tail_s, c + repeat * d - end, 1e-9 * end);
    EXPECT_NEAR(r.async_busy_s, repeat * d, 1e-9 * end);
    RepeatedPass rp;
    rp.start(nullptr, b, sigma);
    expect_same_cost(rp.reduce(repeat, nullptr, 0), r);
  }
}

TEST(ProgramReduce, ARepeatedPassIsReducePassOfTheWholeProgram) {
  // Reduced from the state after L - 1 repetitions, a pass of L repetitions costs what
  // reduce_pass of the whole program costs, bit for bit: for every L, asked in any order
  // (states kept from a longer pass serve a shorter one, a longer one extends them), with and
  // without a lead block and tail blocks, prefetches, slowdown, hidden and exposed collectives.
  const std::vector<std::vector<int>> orders = {
      {1, 2, 3, 5, 8, 13, 96}, {96, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1}, {7, 1, 30, 2, 30, 15, 29, 31}};
  int checked = 0;
  for (double scale : {0.2, 1.0, 3.0})
    for (bool prefetch : {false, true})
      for (double sigma : {0.0, 16.0 / 92.0})
        for (int lead = 0; lead < 2; ++lead)
          for (int tails = 0; tails < 3; ++tails) {
            OpBlock head = layer_like(0.5 * scale, prefetch);
            head.name = "lead";
            head.compute_s[1] = 3e-3;
            const OpBlock layer = layer_like(scale, prefetch);
            OpBlock second = layer_like(2 * scale, !prefetch);
            second.repeat = 3;
            const OpBlock end = block(2, 0.8e-3);
            std::vector<const OpBlock*> tail;
            if (tails >= 1) tail.push_back(&second);
            if (tails >= 2) tail.push_back(&end);
            RepeatedPass rp;
            rp.start(lead ? &head : nullptr, layer, sigma);
            for (const std::vector<int>& order : orders) {
              for (int layers : order) {
                SCOPED_TRACE("scale " + std::to_string(scale) + " prefetch " + std::to_string(prefetch) +
                             " sigma " + std::to_string(sigma) + " lead " + std::to_string(lead) + " tails " +
                             std::to_string(tails) + " layers " + std::to_string(layers));
                PassProgram whole;
                if (lead) whole.blocks.push_back(head);
                whole.blocks.push_back(layer);
                whole.blocks.back().repeat = layers;
                for (const OpBlock* t : tail) whole.blocks.push_back(*t);
                expect_same_cost(rp.reduce(layers, tail.data(), tail.size()), reduce_pass(whole, sigma));
                ++checked;
              }
              // A new prefix forgets the states of the old one.
              rp.start(lead ? &head : nullptr, layer, sigma);
            }
          }
  EXPECT_EQ(checked, 3 * 2 * 2 * 2 * 3 * 27);
}

TEST(ProgramReduce, TheSteadyStateTakenAtOnceIsEveryRepetitionPlayed) {
  // A chunk's layers settle into a repeating state after a few repetitions; taking the rest at
  // once costs what playing them costs, to rounding, in every field, whether communication hides
  // or not, with prefetches, slowdown and asynchronous collectives. Where it hides (the streams
  // drain within a repetition) 96 layers are played in a handful of repetitions; where a stream
  // falls further behind each layer there is no steady state and every repetition is played.
  int jumped = 0;
  for (double scale : {0.2, 1.0, 3.0})
    for (bool prefetch : {false, true})
      for (double sigma : {0.0, 16.0 / 92.0})
        for (int layers : {1, 2, 3, 4, 7, 96}) {
          SCOPED_TRACE("scale " + std::to_string(scale) + " prefetch " + std::to_string(prefetch) + " sigma " +
                       std::to_string(sigma) + " layers " + std::to_string(layers));
          OpBlock layer = layer_like(scale, prefetch);
          layer.repeat = layers;
          PassProgram whole;
          whole.blocks.push_back(block(2, 0.8e-3));
          whole.blocks.push_back(layer);
          whole.blocks.push_back(block(1, 0.5e-3));
          const std::size_t before = repetitions_played();
          const PassCost played = reduce_pass(whole, sigma, false);
          const std::size_t all = repetitions_played() - before;
          const PassCost fast = reduce_pass(whole, sigma);
          const std::size_t few = repetitions_played() - before - all;
          // Within rounding of the pass's clock (a slowdown of zero sums to +-1e-16).
          each_cost_field(fast, played, [&](double a, double b, const char* what) {
            EXPECT_LE(std::abs(a - b), 1e-12 * played.time_s) << what << ": " << a << " vs " << b;
          });
          EXPECT_EQ(all, static_cast<std::size_t>(layers + 2));
          if (layers == 96 && scale < 3) {
            EXPECT_LE(few, 2u + 8u);
            ++jumped;
          }
          if (layers <= 3) {
            EXPECT_EQ(few, all);
          }
        }
  EXPECT_EQ(jumped, 2 * 2 * 2);
}

TEST(ProgramReduce, ARepeatedPassKeepsThePrefetchedGathersClosedForm) {
  // From the states of one prefix, every length has the closed form: with a gather longer than the layer's compute
  // the per-layer time is the gather's, and with a shorter one the compute's (the same figures
  // PrefetchedGathersHideBehindComputeUntilTheyAreLonger derives), from one kept state each.
  for (double g : {0.5e-3, 2e-3}) {
    const double c = 1e-3;
    OpBlock b = block(1, c);
    CommOp ag = comm(CommStream::kSharded, g, -1, 0, CommPurpose::kDp);
    ag.prefetch = true;
    b.comm.push_back(ag);
    RepeatedPass rp;
    rp.start(nullptr, b, 0.0);
    for (int layers : {6, 2, 9}) {
      const PassCost r = rp.reduce(layers, nullptr, 0);
      EXPECT_NEAR(r.time_s, g + (layers - 1) * std::max(c, g) + c, 1e-12);
    }
  }
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
