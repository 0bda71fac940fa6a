#include "validate/measured_run.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/core/scenario_error.hpp"

namespace trainsim::validate {
namespace {

TEST(MedianCi, OrderStatisticsOfTheBinomialTable) {
  // Conover (3rd ed., sec. 3.2, Table A3): for n = 10 the 95% interval of the median is
  // [x(2), x(9)] (P(B(10, 1/2) <= 1) = 11/1024 <= 2.5% < P(B <= 2) = 56/1024); for n = 6 it is
  // [x(1), x(6)] (1/64 <= 2.5% < 7/64); for n = 5 no order statistic reaches 95% (1/32 > 2.5%).
  Stat s = median_ci({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.lo, 2);
  EXPECT_DOUBLE_EQ(s.hi, 9);
  EXPECT_TRUE(s.exact);
  s = median_ci({6, 5, 4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.lo, 1);
  EXPECT_DOUBLE_EQ(s.hi, 6);
  EXPECT_TRUE(s.exact);
  s = median_ci({5, 4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_FALSE(s.exact);
  // n = 20: P(B <= 5) = 21700/2^20 = 2.07% <= 2.5% < P(B <= 6) = 5.77%: [x(6), x(15)].
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  s = median_ci(v);
  EXPECT_DOUBLE_EQ(s.lo, 6);
  EXPECT_DOUBLE_EQ(s.hi, 15);
  EXPECT_NEAR(s.half_width_rel(), 4.5 / 10.5, 1e-12);
}

// One rank's step line in the trainer's timeline format (kernels/README.md).
std::string step_line(int step, int rank, int pp_rank, double wall_s, double cpu_s, const std::string& events) {
  return R"({"event":"step","step":)" + std::to_string(step) + R"(,"rank":)" + std::to_string(rank) +
         R"(,"tp_rank":0,"pp_rank":)" + std::to_string(pp_rank) + R"(,"dp_rank":0,"core":)" + std::to_string(rank) +
         R"(,"wall_s":)" + std::to_string(wall_s) + R"(,"cpu_s":)" + std::to_string(cpu_s) +
         R"(,"involuntary_switches":0,"persistent_bytes":1000,"peak_bytes":2000,"optimizer_step":true,"events":[)" +
         events + "]}\n";
}

TEST(MeasuredRun, EventsAreSortedIntoComponentsAndTheRestIsHostTime) {
  const std::string ev =
      R"(["gemm","","F",0,0.0,0.2,1e6],["gemm_wgrad","","B",0,0.2,0.3,1e6],["gelu_fwd","","F",0,0.3,0.35,10],)"
      R"(["all_reduce","tp","F",0,0.35,0.4,64],["send","pp","F",0,0.4,0.45,64],)"
      R"(["reduce_scatter","dp","DP",-1,0.45,0.5,64],["quantize","","DP",-1,0.5,0.55,64],)"
      R"(["adamw","","OPT",-1,0.55,0.7,100])";
  const std::vector<RankStep> steps = parse_timeline(R"({"event":"config"})" "\n" + step_line(0, 0, 0, 1.0, 1.0, ev), "t");
  ASSERT_EQ(steps.size(), 1u);
  const RankStep& r = steps[0];
  EXPECT_NEAR(r.component_s[int(Component::kCompute)], 0.35, 1e-12);
  EXPECT_NEAR(r.component_s[int(Component::kTp)], 0.05, 1e-12);
  EXPECT_NEAR(r.component_s[int(Component::kPipeline)], 0.05, 1e-12);
  // The compression op of the DP reduction counts as DP, not compute.
  EXPECT_NEAR(r.component_s[int(Component::kDp)], 0.10, 1e-12);
  EXPECT_NEAR(r.component_s[int(Component::kOptimizer)], 0.15, 1e-12);
  EXPECT_NEAR(r.component_s[int(Component::kOther)], 0.30, 1e-12);
  EXPECT_NEAR(r.compute_class_s.at("gemm"), 0.3, 1e-12);
  EXPECT_NEAR(r.compute_class_s.at("gelu"), 0.05, 1e-12);
  EXPECT_THROW(parse_timeline("not json\n", "t"), ScenarioError);
  EXPECT_THROW(parse_timeline(R"({"event":"step","step":0})" "\n", "t"), ScenarioError);
}

MeasuredRun run_of(const std::vector<double>& step_s, const std::vector<double>& cpu_share) {
  MeasuredRun run;
  run.ranks = 2;
  for (std::size_t s = 0; s < step_s.size(); ++s) {
    std::vector<RankStep> ranks;
    for (int r = 0; r < 2; ++r) {
      RankStep rs;
      rs.step = int(s);
      rs.rank = r;
      rs.pp_rank = r;
      rs.wall_s = step_s[s] * (r ? 1.0 : 0.99);
      rs.cpu_s = rs.wall_s * (r ? cpu_share[s] : 1.0);
      ranks.push_back(rs);
    }
    run.steps.push_back(ranks);
  }
  return run;
}

TEST(StepSelection, WarmUpEndsAtTheFirstStableRunAndDisturbedStepsAreLeftOut) {
  // Steps 0-2 slow (warm-up), then stable at 1.0 except one step whose rank lost 10% of its core.
  std::vector<double> t = {3, 2, 1.5, 1.0, 1.01, 0.99, 1.0, 1.02, 1.0, 0.98, 1.0, 1.01, 1.0};
  std::vector<double> share(t.size(), 0.995);
  share[7] = 0.90;
  const StepSelection sel = select_steps(run_of(t, share));
  EXPECT_TRUE(sel.warmup_found);
  EXPECT_EQ(sel.warmup, 3);
  ASSERT_EQ(sel.disturbed.size(), 1u);
  EXPECT_EQ(sel.disturbed[0], 7);
  EXPECT_EQ(sel.used.size(), t.size() - 3 - 1);
  // The step time is the last rank's end.
  EXPECT_DOUBLE_EQ(step_time_s(run_of(t, share), 0), 3.0);
}

TEST(MeasuredRun, AStageDoneEarlyWaitsForTheLastRankInThePipelineComponent) {
  // Rank 0 (stage 0) ends at 0.99 of the step, rank 1 (stage 1) at its end: with a pipeline
  // stage 0's drain counts as pipeline time; without one (both ranks on stage 0) as other.
  MeasuredRun run = run_of({1.0}, {1.0});
  EXPECT_NEAR(stage_component_s(run, 0, 0, Component::kPipeline), 0.01, 1e-12);
  EXPECT_NEAR(stage_component_s(run, 0, 1, Component::kPipeline), 0.0, 1e-12);
  run.steps[0][1].pp_rank = 0;
  EXPECT_NEAR(stage_component_s(run, 0, 0, Component::kPipeline), 0.0, 1e-12);
  EXPECT_NEAR(stage_component_s(run, 0, 0, Component::kOther), 0.005, 1e-12);  // mean over the two ranks
}

TEST(StepSelection, NoStableRunTakesTheFirstHalfAsWarmUp) {
  std::vector<double> t = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  const StepSelection sel = select_steps(run_of(t, std::vector<double>(t.size(), 1.0)));
  EXPECT_FALSE(sel.warmup_found);
  EXPECT_EQ(sel.warmup, 6);
}

TEST(OpClass, BackendOpsMapToTheOpGraphsClasses) {
  EXPECT_EQ(op_class("gemm_dgrad"), "gemm");
  EXPECT_EQ(op_class("attention_bwd"), "attention");
  EXPECT_EQ(op_class("swiglu_fwd"), "gelu");
  EXPECT_EQ(op_class("axpy"), "residual");
  EXPECT_EQ(op_class("embedding_bwd"), "embedding");
  EXPECT_EQ(op_class("fill_zero"), "copy");
}

}  // namespace
}  // namespace trainsim::validate
