#include "models/workload/timeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

namespace trainsim {
namespace {

std::vector<StageCosts> uniform(int p, double f, double b, double w) {
  return std::vector<StageCosts>(p, StageCosts{f, b, w});
}

// Bubbles emerge from the dependencies and match the closed forms (REFERENCE.md).
TEST(Timeline, OneF1BAndGpipeMakespanIsMPlusPMinusOneSlots) {
  for (auto kind : {&pipeline_schedule("1f1b"), &pipeline_schedule("gpipe")}) {
    for (int p : {2, 4, 8}) {
      for (int m : {1, 4, 16}) {
        SCOPED_TRACE(testing::Message() << "kind " << kind->name() << " p " << p << " m " << m);
        const Timeline t = play_schedule(*kind, p, 1, m, uniform(p, 1.0, 1.5, 0.5), 0.0);
        EXPECT_DOUBLE_EQ(t.makespan_s, (m + p - 1) * 3.0);
        EXPECT_NEAR(t.bubble_fraction, (p - 1.0) / (m + p - 1.0), 1e-12);
        EXPECT_EQ(t.ops.size(), static_cast<size_t>(2 * m * p));
      }
    }
  }
}

TEST(Timeline, OneF1BHoldsAtMostPMinusSMicroBatches) {
  const int p = 4, m = 12;
  const Timeline t = play_schedule(pipeline_schedule("1f1b"), p, 1, m, uniform(p, 1, 2, 0), 0.0);
  for (int s = 0; s < p; ++s) {
    int in_flight = 0, peak = 0;
    for (const auto& op : t.ops) {
      if (op.stage != s) continue;
      in_flight += op.op.kind == PipeOpKind::kForward ? 1 : -1;
      peak = std::max(peak, in_flight);
    }
    EXPECT_EQ(peak, p - s) << "stage " << s;
  }
}

TEST(Timeline, InterleavedDividesTheBubbleByV) {
  const int p = 4, m = 8;
  for (int v : {2, 4}) {
    SCOPED_TRACE(v);
    // Per-chunk costs: a chunk is 1/v of the stage.
    const double fc = 1.0 / v, bc = 2.0 / v;
    const Timeline t = play_schedule(pipeline_schedule("interleaved"), p, v, m, uniform(p, fc, bc, 0), 0.0);
    const double ideal = m * 3.0;
    EXPECT_NEAR(t.makespan_s - ideal, (p - 1) * 3.0 / v, 1e-9);
  }
}

TEST(Timeline, ZeroBubbleSchedulesShrinkTheBubble) {
  const int p = 8, m = 32;
  // F = 1, B = 1, W = 1: 1F1B bubble (p-1)(F+B+W) = 21, ZB-H1 (p-1)(F+B-W)... ~ a third.
  const double ideal = m * 3.0;
  const Timeline t1 = play_schedule(pipeline_schedule("1f1b"), p, 1, m, uniform(p, 1, 1, 1), 0);
  const Timeline z1 = play_schedule(pipeline_schedule("zb-h1"), p, 1, m, uniform(p, 1, 1, 1), 0);
  const Timeline z2 = play_schedule(pipeline_schedule("zb-h2"), p, 1, m, uniform(p, 1, 1, 1), 0);
  const double b1 = t1.step_s - ideal, h1 = z1.step_s - ideal, h2 = z2.step_s - ideal;
  EXPECT_DOUBLE_EQ(b1, 21.0);
  // ZB-H1's closed form is (p-1)(F+B-2W) = 7, a third of 1F1B; a greedy device-local policy
  // (B first, then F within the in-flight limit, W in the gaps) gets within one slot per stage.
  std::printf("bubble: 1F1B %.1f, ZB-H1 %.1f (closed form 7), ZB-H2 %.1f (closed form 0), one ZB-H2 step "
              "alone %.1f\n", b1, h1, h2, z2.makespan_s - ideal);
  EXPECT_LE(h1, 7.0 + (p - 1) * 1.0);
  EXPECT_GE(h1, 7.0);
  // Steps end with a barrier for 1F1B and ZB-H1: the step is the makespan.
  EXPECT_EQ(t1.step_s, t1.makespan_s);
  EXPECT_EQ(z1.step_s, z1.makespan_s);
  // One ZB-H2 step alone still starts the last device (p-1)F late, so its makespan is no better
  // than ZB-H1's bound 3m + (p-1)F; back to back, without the optimizer's barrier, each step
  // takes a device's span, and the bubble is the paper's ~0 (one slot of the greedy rule's).
  EXPECT_GE(z2.makespan_s - ideal, (p - 1) * 1.0);
  EXPECT_LE(h2, 1.0);
  EXPECT_NEAR(z2.bubble_fraction, h2 / z2.step_s, 1e-12);
}

// The zero-bubble schedules run a fixed order per device (the rule's at equal F, B and W): a
// transfer far shorter than the ops costs them no more than it costs 1F1B (the transfers on its
// critical path). Played as a greedy rule, a device that found its B a transfer away started
// a W or an F instead: a delay of 0.4% of a forward added more than five forwards to the step.
TEST(Timeline, ZeroBubbleOrdersAreFixedSoAShortTransferCostsOnlyItsOwnTime) {
  const int p = 8, m = 32;
  const double delay = 0.005;  // against F = 1, B = 2, W = 1
  const double f1b_at_once = play_schedule(pipeline_schedule("1f1b"), p, 1, m, uniform(p, 1, 3, 0), 0.0).makespan_s;
  const double f1b_late = play_schedule(pipeline_schedule("1f1b"), p, 1, m, uniform(p, 1, 3, 0), delay).makespan_s;
  for (const char* name : {"zb-h1", "zb-h2"}) {
    SCOPED_TRACE(name);
    const double at_once = play_schedule(pipeline_schedule(name), p, 1, m, uniform(p, 1, 2, 1), 0.0).makespan_s;
    const Timeline late = play_schedule(pipeline_schedule(name), p, 1, m, uniform(p, 1, 2, 1), delay);
    EXPECT_EQ(late.ops.size(), static_cast<size_t>(3 * m * p));
    EXPECT_GE(late.makespan_s, at_once);
    EXPECT_LE(late.makespan_s - at_once, f1b_late - f1b_at_once);
  }
  // At equal F, B and W the rule reaches the published bubbles within one W: ZB-H1
  // (p-1)(F+B-W) = 14 plus 1, ZB-H2 (p-1)(F+B-2W) = 7 plus 1 (Qi et al., ICLR'24, sec. 3).
  const double h1 = play_schedule(pipeline_schedule("zb-h1"), p, 1, m, uniform(p, 1, 2, 1), 0.0).makespan_s;
  const double h2 = play_schedule(pipeline_schedule("zb-h2"), p, 1, m, uniform(p, 1, 2, 1), 0.0).makespan_s;
  EXPECT_DOUBLE_EQ(h1 - 4.0 * m, 15.0);
  EXPECT_DOUBLE_EQ(h2 - 4.0 * m, 8.0);
}

TEST(Timeline, DualPipeRunsEveryOpOnceAndBeatsOneF1B) {
  const int p = 8;
  for (int m : {16, 10}) {  // the reference's fixed order (m >= 2p), and the ready-op rule
    SCOPED_TRACE(m);
    const Timeline t = play_schedule(pipeline_schedule("dualpipe"), p, 1, m, uniform(p, 1, 1, 1), 0.0);
    // (mb, device, kind): each micro-batch passes each device once, F, B and W (a W run on its
    // own, or carried by its B).
    std::map<std::tuple<int, int, int>, int> seen;
    for (const auto& op : t.ops) {
      seen[{op.op.micro_batch, op.stage, int(op.op.kind)}]++;
      if (op.op.kind == PipeOpKind::kBackward && op.op.with_weight_grad)
        seen[{op.op.micro_batch, op.stage, int(PipeOpKind::kBackwardWeight)}]++;
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(3 * m * p));
    for (const auto& [k, n] : seen) EXPECT_EQ(n, 1);
    const double b1 = play_schedule(pipeline_schedule("1f1b"), p, 1, m, uniform(p, 1, 1, 1), 0).makespan_s;
    EXPECT_LT(t.makespan_s, b1);
  }
}

// DualPipe's devices run the reference implementation's order (deepseek-ai/DualPipe,
// dualpipe.py, DualPipe.step), here written out by hand from its eight phases for 4 ranks and 8
// micro-batches (direction 0 carries micro-batches 0-3, direction 1 (') 4-7; X&Y: a backward
// that carries its W beside a forward; +w: a backward alone that carries its W).
TEST(Timeline, DualPipeRunsTheReferenceOrderOfEachRank) {
  const char* expected[4] = {
      "F0 F1 F2 F4' B4' W4' F5' B5'&F3 B0&F6' B6'+w B1&F7' B7'+w B2 W2 B3 W3",
      // rank 1 is a middle rank: the main phase's first forward and backward run one by one
      "F0 F4' F1 F5' F2 B4'+w B0&F6' B5'&F3 B1&F7' B6'+w B2+w B7' B3 W7' W3",
      "F4' F0 F5' F1 F6' B0+w B4'&F2 B1&F7' B5'&F3 B2+w B6'+w B3 B7' W3 W7'",
      "F4' F5' F6' F0 B0 W0 F1 B1&F7' B4'&F2 B2+w B5'&F3 B3+w B6' W6' B7' W7'"};
  const PipelineSchedule& s = pipeline_schedule("dualpipe");
  ASSERT_TRUE(s.has_static_order(4, 8));
  for (int d = 0; d < 4; ++d) {
    std::vector<PipeOp> order;
    s.static_order(4, 2, 8, d, order);
    std::string got;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const PipeOp& op = order[i];
      if (!got.empty()) got += order[i - 1].pairs_next ? "&" : " ";
      got += std::string(to_string(op.kind)) + std::to_string(op.micro_batch) + (op.chunk ? "'" : "");
      if (op.kind == PipeOpKind::kBackward && op.with_weight_grad && !op.pairs_next) got += "+w";
    }
    EXPECT_EQ(got, expected[d]) << "rank " << d;
  }
  EXPECT_FALSE(s.has_static_order(4, 6));  // fewer than 2p micro-batches: the ready-op rule
  EXPECT_FALSE(s.has_static_order(4, 9));  // an odd number
}

// Played with every F, B and W taking one unit and a pair the sum of its ops (F + B + W), the
// reference order leaves the bubble of the DeepSeek-V3 report's Table 2, (p/2 - 1)(F&B + B -
// 3W) with B the whole backward, on the busiest device; and a pair that overlaps its ops
// shortens the step.
TEST(Timeline, DualPipesReferenceOrderLeavesTheReportsBubble) {
  for (int p : {4, 8, 16}) {
    const int m = 3 * p;
    std::vector<StageCosts> costs = uniform(p, 1, 1, 1);
    for (StageCosts& c : costs)
      for (auto& row : c.pair_s)
        for (double& x : row) x = 3.0;
    const Timeline t = play_schedule(pipeline_schedule("dualpipe"), p, 1, m, costs, 0.0);
    const double busy = *std::max_element(t.busy_s.begin(), t.busy_s.end());
    EXPECT_DOUBLE_EQ(busy, 3.0 * m);
    EXPECT_DOUBLE_EQ(t.makespan_s - busy, (p / 2 - 1) * ((1.0 + 2.0) + 2.0 - 3 * 1.0)) << p;
    for (StageCosts& c : costs)
      for (auto& row : c.pair_s)
        for (double& x : row) x = 2.5;
    EXPECT_LT(play_schedule(pipeline_schedule("dualpipe"), p, 1, m, costs, 0.0).makespan_s, t.makespan_s);
  }
}

TEST(Timeline, TransfersBetweenStagesLengthenTheFillAndDrain) {
  const int p = 4, m = 8;
  const double d = 0.25;
  const Timeline t = play_schedule(pipeline_schedule("1f1b"), p, 1, m, uniform(p, 1, 2, 0), d);
  // Fill and drain each cross p-1 links; in the steady state a stage waits for the round trip
  // of its oldest micro-batch, so the delay also stretches the steady state.
  EXPECT_GE(t.makespan_s, (m + p - 1) * 3.0 + 2 * (p - 1) * d - 1e-9);
  EXPECT_LE(t.makespan_s, (m + p - 1) * (3.0 + 2 * d) + 1e-9);
}

TEST(Timeline, EachBoundaryDelaysOnlyTheTransfersThatCrossIt) {
  // One micro-batch through three stages crosses boundary 0 and 1 forward and back: the makespan
  // is every pass plus each boundary's delay twice; the wrap boundary (2) is never crossed.
  const double per_boundary[3] = {0.1, 0.7, 50.0};
  const TransferDelays delays(per_boundary, 3);
  EXPECT_DOUBLE_EQ(delays.between(1, 2, 3), 0.7);
  EXPECT_DOUBLE_EQ(delays.between(2, 1, 3), 0.7);
  EXPECT_DOUBLE_EQ(delays.between(2, 0, 3), 50.0);
  const std::vector<StageCosts> costs = uniform(3, 1, 2, 0);
  for (auto kind : {&pipeline_schedule("1f1b"), &pipeline_schedule("gpipe")}) {
    SCOPED_TRACE(kind->name());
    EXPECT_DOUBLE_EQ(play_schedule(*kind, 3, 1, 1, costs, delays).makespan_s, 9.0 + 2 * (0.1 + 0.7));
    EXPECT_DOUBLE_EQ(play_step_s(*kind, 3, 1, 1, costs.data(), costs.size(), delays), 9.0 + 2 * (0.1 + 0.7));
  }
  // Two devices are one pair, whichever way a transfer goes.
  const double pair[2] = {0.3, 0.0};
  EXPECT_DOUBLE_EQ(TransferDelays(pair, 2).between(1, 0, 2), 0.3);
  EXPECT_DOUBLE_EQ(play_step_s(pipeline_schedule("1f1b"), 2, 1, 1, costs.data(), 2, TransferDelays(pair, 2)),
                   6.0 + 2 * 0.3);
  // Interleaved chunks cross the wrap: chunk 0 of the last device hands to chunk 1 of the first,
  // and that chunk's gradient comes back across it.
  const double wrap[3] = {0.0, 0.0, 5.0};
  const double interleaved =
      play_schedule(pipeline_schedule("interleaved"), 3, 2, 3, uniform(3, 1, 2, 0), TransferDelays(wrap, 3)).makespan_s;
  EXPECT_GE(interleaved, play_schedule(pipeline_schedule("interleaved"), 3, 2, 3, uniform(3, 1, 2, 0), 0.0).makespan_s + 2 * 5.0);
  // Equal delays at every boundary are the one delay for all, bit for bit.
  const double same[4] = {0.25, 0.25, 0.25, 0.25};
  for (auto kind : {&pipeline_schedule("1f1b"), &pipeline_schedule("zb-h1"), &pipeline_schedule("interleaved")}) {
    SCOPED_TRACE(kind->name());
    const int v = kind->uses_virtual_stages() ? 2 : 1;
    EXPECT_EQ(play_schedule(*kind, 4, v, 8, uniform(4, 1, 2, 0.5), TransferDelays(same, 4)).makespan_s,
              play_schedule(*kind, 4, v, 8, uniform(4, 1, 2, 0.5), 0.25).makespan_s);
  }
}

// The estimate tier's makespan-only playback (per-thread buffers, zero-delay inputs delivered at
// once) against the full playback, on a grid of schedules, p, m, v and uneven stages (a heavy
// first and last stage, a slow middle one, zero-cost W), and against the 1F1B closed form
// (m + p - 1)(f + b) where the stages are even.
TEST(Timeline, MakespanOnlyPlaybackIsTheFullPlaybacksMakespan) {
  struct Case {
    const PipelineSchedule* kind;
    int v;
  };
  const Case cases[] = {{&pipeline_schedule("gpipe"), 1},       {&pipeline_schedule("1f1b"), 1},
                        {&pipeline_schedule("interleaved"), 2}, {&pipeline_schedule("interleaved"), 3},
                        {&pipeline_schedule("zb-h1"), 1},        {&pipeline_schedule("zb-h2"), 1},
                        {&pipeline_schedule("dualpipe"), 1}};
  int compared = 0;
  for (const Case& c : cases)
    for (int p : {1, 2, 3, 4, 8, 16})
      for (int m : {1, 2, 3, 4, 6, 8, 12, 16, 31, 32})
        for (int shape = 0; shape < 4; ++shape) {
          std::vector<StageCosts> costs(p, StageCosts{1.0, 1.75, 0.5});
          if (shape == 1) {  // embedding on the first stage, the loss on the last
            costs.front().forward_s *= 1.3;
            costs.back().forward_s *= 1.6, costs.back().backward_s *= 1.4;
          } else if (shape == 2) {  // a straggler in the middle, no W
            for (auto& s : costs) s.backward_weight_s = 0;
            costs[p / 2] = {1.9, 3.1, 0};
          } else if (shape == 3) {  // every stage different
            for (int k = 0; k < p; ++k) costs[k] = {0.7 + 0.11 * k, 1.3 + 0.07 * ((k * 5) % 3), 0.2 + 0.05 * k};
          }
          SCOPED_TRACE(testing::Message() << "kind " << c.kind->name() << " v " << c.v << " p " << p << " m " << m
                                          << " shape " << shape);
          double full = -1;
          try {
            full = play_schedule(*c.kind, p, c.v, m, costs, 0.0).step_s;
          } catch (const std::logic_error&) {  // a combination the schedule cannot run
            EXPECT_THROW(play_step_s(*c.kind, p, c.v, m, costs.data(), costs.size(), 0.0), std::logic_error);
            continue;
          }
          const double fast = play_step_s(*c.kind, p, c.v, m, costs.data(), costs.size(), 0.0);
          EXPECT_NEAR(fast, full, 1e-9 * full);
          EXPECT_EQ(fast, full);  // the same arithmetic in the same order
          if (c.kind == &pipeline_schedule("1f1b") && shape == 0) {
            EXPECT_NEAR(fast, (m + p - 1) * 3.25, 1e-9);
          }
          // With a transfer delay the makespan-only route keeps its events.
          const double d = 0.125;
          EXPECT_EQ(play_step_s(*c.kind, p, c.v, m, costs.data(), costs.size(), d),
                    play_schedule(*c.kind, p, c.v, m, costs, d).step_s);
          ++compared;
        }
  EXPECT_GT(compared, 1000);
}

}  // namespace
}  // namespace trainsim
