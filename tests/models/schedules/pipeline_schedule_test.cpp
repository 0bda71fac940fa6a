#include "models/schedules/pipeline_schedule.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "models/core/scenario_error.hpp"
#include "models/core/specs.hpp"
#include "models/schedules/schedule_order.hpp"
#include "models/workload/timeline.hpp"

namespace trainsim {
namespace {

double bubble(const char* name, const BubbleInputs& in) {
  return pipeline_schedule(name).bubble_time_s(in);
}
std::string constraint(const char* name, int pp, int vpp, int m) {
  return pipeline_schedule(name).constraint(pp, vpp, m);
}
double held(const char* name, int pp, int vpp, int stage, int m) {
  return pipeline_schedule(name).in_flight_micro_batches(pp, vpp, stage, m);
}

// REFERENCE.md "Pipeline schedules" with F = 1, B = 2 (B + W), W = 1.
TEST(PipelineSchedule, BubblesFollowThePublishedClosedForms) {
  BubbleInputs in{8, 1, 64, 1.0, 2.0, 1.0};
  EXPECT_DOUBLE_EQ(bubble("1f1b", in), 7 * 3.0);  // (p-1)(F+B)
  EXPECT_DOUBLE_EQ(bubble("gpipe", in), 7 * 3.0);
  EXPECT_DOUBLE_EQ(bubble("zb-h1", in), 7 * 1.0);  // (p-1)(F+B-2W): a third of 1F1B
  EXPECT_DOUBLE_EQ(bubble("zb-h2", in), 0.0);      // (p-1)(F+B-3W) <= 0
  EXPECT_DOUBLE_EQ(bubble("dualpipe", in), 3 * (3.0 + 2.0 - 3.0));  // (p/2-1)(F&B+B-3W)
  in.vpp = 4;
  EXPECT_DOUBLE_EQ(bubble("interleaved", in), 7 * 3.0 / 4);  // (p-1)(F+B)/v
  in.pp = 1;
  EXPECT_DOUBLE_EQ(bubble("1f1b", in), 0.0);
}

TEST(PipelineSchedule, ConstraintsNameTheField) {
  EXPECT_EQ(constraint("1f1b", 8, 1, 64), "");
  EXPECT_NE(constraint("interleaved", 8, 1, 64).find("plan.vpp >= 2"), std::string::npos);
  EXPECT_NE(constraint("interleaved", 8, 2, 12).find("multiple of plan.pp"), std::string::npos);
  EXPECT_EQ(constraint("1f1b", 8, 2, 64),
            "plan.vpp = 2 needs plan.schedule \"interleaved\", not \"1f1b\"");
  EXPECT_NE(constraint("dualpipe", 7, 1, 64).find("even"), std::string::npos);
  EXPECT_NE(constraint("gpipe", 1, 2, 64).find("needs a pipeline"), std::string::npos);
  EXPECT_NE(find_pipeline_schedule("zb-h1"), nullptr);
  EXPECT_EQ(find_pipeline_schedule("2f2b"), nullptr);
  EXPECT_THROW(pipeline_schedule("2f2b"), ScenarioError);
}

// Korthikanti et al. 2022 (1F1B: stage s holds p - s; interleaved stage 0: (1 + (p-1)/(p v)) p),
// Qi et al. ICLR'24 (ZB-H2: twice 1F1B), DeepSeek-V3 report (DualPipe: p + 1).
TEST(PipelineSchedule, InFlightMicroBatchesPerSchedule) {
  EXPECT_DOUBLE_EQ(held("1f1b", 8, 1, 0, 64), 8);
  EXPECT_DOUBLE_EQ(held("1f1b", 8, 1, 7, 64), 1);
  EXPECT_DOUBLE_EQ(held("gpipe", 8, 1, 3, 64), 64);
  EXPECT_DOUBLE_EQ(held("1f1b", 8, 1, 0, 4), 4);  // fewer than p
  EXPECT_DOUBLE_EQ(held("interleaved", 8, 2, 0, 64), 8 * (1 + 7.0 / 16));
  // Later stages run Megatron's warm-up of 2(p-s-1) + (v-1)p + 1 chunks: stage 7 holds 9 chunks.
  EXPECT_DOUBLE_EQ(held("interleaved", 8, 2, 7, 64), 4.5);
  EXPECT_DOUBLE_EQ(held("dualpipe", 8, 1, 0, 64), 9);
  EXPECT_DOUBLE_EQ(held("zb-h2", 8, 1, 0, 64), 16);
  EXPECT_DOUBLE_EQ(held("zb-h2", 1, 1, 0, 64), 1);  // no pipeline: one micro-batch at a time
}

TEST(PipelineSchedule, RegistryNamesEachScheduleOnceWithTheDefaultFirst) {
  std::set<std::string> names;
  for (const PipelineSchedule* s : pipeline_schedules()) {
    EXPECT_TRUE(names.insert(s->name()).second) << s->name();
    EXPECT_EQ(find_pipeline_schedule(s->name()), s);
    EXPECT_NE(std::string(s->summary()), "");
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "dualpipe"}));
  EXPECT_EQ(default_pipeline_schedule().name(),
            ParallelPlan{}.schedule);  // plan.schedule's default
}

// Every registered schedule plays through PipelineRunner: each op once, with F = B = W = 1 per
// stage (each chunk a 1/v share). Schedules that keep B and W together play their closed form
// exactly; those that split them (W filling the gaps) play, as their closed forms say, a
// smaller bubble than 1F1B's (p-1)(F+B) (Timeline tests bound each against its own).
TEST(PipelineSchedule, EveryRegisteredSchedulePlaysWithinItsClosedForm) {
  const int p = 4, m = 8;
  for (const PipelineSchedule* s : pipeline_schedules()) {
    SCOPED_TRACE(s->name());
    const int v = s->uses_virtual_stages() ? 2 : 1;
    ASSERT_EQ(s->constraint(p, v, m), "");
    const int chunks = s->chunks_per_device(p, v);
    const double share = 1.0 / s->layer_chunks(v);
    const std::vector<StageCosts> costs(p, StageCosts{share, share, share});
    const Timeline t = play_schedule(*s, p, v, m, costs, 0.0);
    // A backward that carries its W where the schedule splits them (DualPipe's reference order
    // runs some whole) stands for both.
    std::size_t ops = t.ops.size();
    for (const TimelineOp& o : t.ops)
      ops += s->splits_backward() && o.op.kind == PipeOpKind::kBackward && o.op.with_weight_grad;
    EXPECT_EQ(ops, static_cast<std::size_t>(m) * p * chunks * (s->splits_backward() ? 3 : 2) /
                       (s->bidirectional() ? 2 : 1));
    EXPECT_EQ(play_step_s(*s, p, v, m, costs.data(), costs.size(), 0.0), t.step_s);
    const double ideal = m * 3.0;  // F + B + W per micro-batch on every device
    const double closed = s->bubble_time_s(BubbleInputs{p, v, m, 1.0, 2.0, 1.0});
    if (s->splits_backward()) {
      EXPECT_LT(t.makespan_s - ideal, (p - 1) * 3.0);
      EXPECT_LT(closed, (p - 1) * 3.0);
    } else {
      EXPECT_NEAR(t.makespan_s - ideal, closed, 1e-9);
    }
  }
}

// The fill and the drain pass through the other stages, not through p - 1 copies of the slowest:
// with one stage heavier than the rest, 1F1B and GPipe make (m - 1)(F + B)_slowest + the sum of
// every stage's F + B, which the closed form gives exactly from the other stages' sums. Where
// the heavy stage is not the last, the backward of the stages after it waits less than the
// closed form counts: it stays an upper bound, within a few percent.
TEST(PipelineSchedule, TheFillAndDrainAreTheOtherStagesOwnPasses) {
  const int p = 8, m = 32;
  auto closed_makespan = [&](const char* name, const std::vector<StageCosts>& c, int v) {
    std::size_t worst = 0;
    auto fb = [&](std::size_t s) { return c[s].forward_s + c[s].backward_s + c[s].backward_weight_s; };
    for (std::size_t s = 1; s < c.size(); ++s)
      if (fb(s) > fb(worst)) worst = s;
    BubbleInputs in{p, v, m, v * c[worst].forward_s, v * (c[worst].backward_s + c[worst].backward_weight_s),
                    v * c[worst].backward_weight_s};
    in.others_forward_s = in.others_backward_s = in.others_backward_weight_s = 0;
    for (std::size_t s = 0; s < c.size(); ++s) {
      if (s == worst) continue;
      in.others_forward_s += v * c[s].forward_s;
      in.others_backward_s += v * (c[s].backward_s + c[s].backward_weight_s);
      in.others_backward_weight_s += v * c[s].backward_weight_s;
    }
    BubbleInputs alike = in;  // p - 1 stages like the slowest: the form before the sums
    alike.others_forward_s = alike.others_backward_s = alike.others_backward_weight_s = -1;
    const double steady = m * v * fb(worst);
    return std::pair{steady + pipeline_schedule(name).bubble_time_s(in),
                     steady + pipeline_schedule(name).bubble_time_s(alike)};
  };
  for (const char* name : {"1f1b", "gpipe"}) {
    SCOPED_TRACE(name);
    std::vector<StageCosts> heavy_last(p, StageCosts{1.0, 1.5, 0.5});
    heavy_last.back() = StageCosts{2.0, 3.0, 1.0};  // the output layer's stage
    const double played = play_step_s(pipeline_schedule(name), p, 1, m, heavy_last.data(), p, 0.0);
    const auto [closed, alike] = closed_makespan(name, heavy_last, 1);
    EXPECT_NEAR(closed, played, 1e-9 * played);  // 31 x 6 + 7 x 3 + 6 = 213
    EXPECT_NEAR(played, 213.0, 1e-9);
    EXPECT_GT(alike, played * 1.09);  // 234: the slowest stage's fill counted p - 1 times
    std::vector<StageCosts> heavy_first(p, StageCosts{1.0, 1.5, 0.5});
    heavy_first.front() = StageCosts{1.5, 2.0, 0.5};
    const double played_first = play_step_s(pipeline_schedule(name), p, 1, m, heavy_first.data(), p, 0.0);
    const auto [closed_first, alike_first] = closed_makespan(name, heavy_first, 1);
    EXPECT_GE(closed_first, played_first);
    EXPECT_LT(closed_first, played_first * 1.05);
    EXPECT_LT(closed_first, alike_first);
  }
  // Interleaved (v = 2, each chunk half a stage): a heavy last device, within 2%.
  std::vector<StageCosts> inter(p, StageCosts{0.5, 0.75, 0.25});
  inter.back() = StageCosts{1.0, 1.5, 0.5};
  const double played = play_step_s(pipeline_schedule("interleaved"), p, 2, m, inter.data(), p, 0.0);
  const auto [closed, alike] = closed_makespan("interleaved", inter, 2);
  EXPECT_NEAR(closed, played, 0.02 * played);
  EXPECT_LT(std::abs(closed - played), std::abs(alike - played));
}

// A schedule defined here only, as a new file would define one: GPipe's rule under another
// name. Nothing else is needed for PipelineRunner to play it, and it plays its closed form,
// (p-1)(F+B) (Huang et al. 2019), through the event loop (it offers no fixed-delay order).
class TestOnlyFillDrain final : public PipelineSchedule {
 public:
  TestOnlyFillDrain()
      : PipelineSchedule("test-fill-drain", "GPipe's rule, defined in a test", ScheduleTraits{}) {}
  std::optional<PipeOp> pick(PipeDevice& d, int, int, int) const override {
    if (!d.ready_f.empty()) return d.ready_f.take_smallest();
    if (d.f_done == d.f_total && !d.ready_b.empty()) return d.ready_b.take_smallest();
    return std::nullopt;
  }

 protected:
  double pipeline_bubble_s(const BubbleInputs& in) const override {
    return (in.pp - 1) * (in.forward_s + in.backward_s);
  }
  double held_micro_batches(int, int, int, int m) const override { return m; }
};

TEST(PipelineSchedule, AScheduleDefinedInATestPlaysItsClosedForm) {
  const TestOnlyFillDrain s;
  EXPECT_EQ(find_pipeline_schedule(s.name()), nullptr);
  for (int p : {2, 4, 8})
    for (int m : {1, 5, 16}) {
      SCOPED_TRACE(testing::Message() << "p " << p << " m " << m);
      const std::vector<StageCosts> costs(p, StageCosts{1.0, 1.5, 0.5});
      const Timeline t = play_schedule(s, p, 1, m, costs, 0.0);
      EXPECT_EQ(t.ops.size(), static_cast<std::size_t>(2 * m * p));
      const double closed = s.bubble_time_s(BubbleInputs{p, 1, m, 1.0, 2.0, 0.5});
      EXPECT_DOUBLE_EQ(t.makespan_s - m * 3.0, closed);
      EXPECT_DOUBLE_EQ(play_step_s(s, p, 1, m, costs.data(), costs.size(), 0.0), t.step_s);
      // The registered GPipe plays the same op order.
      const Timeline g = play_schedule(pipeline_schedule("gpipe"), p, 1, m, costs, 0.0);
      ASSERT_EQ(g.ops.size(), t.ops.size());
      for (std::size_t i = 0; i < t.ops.size(); ++i) {
        EXPECT_EQ(t.ops[i].stage, g.ops[i].stage);
        EXPECT_FALSE(t.ops[i].op < g.ops[i].op || g.ops[i].op < t.ops[i].op);
        EXPECT_DOUBLE_EQ(t.ops[i].start_s, g.ops[i].start_s);
      }
    }
}

}  // namespace
}  // namespace trainsim
