#include "models/estimate/precision_schedule.hpp"

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"
#include "models/estimate/estimate.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/workload/cost_bounds.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

json scenario_json(const json& plan_extra, int64_t steps = 1000) {
  json plan = {{"tp", 8}, {"pp", 2}, {"dp", 4}, {"micro_batch", 1}, {"global_batch", 64}, {"zero_stage", 1}};
  for (auto it = plan_extra.begin(); it != plan_extra.end(); ++it) plan[it.key()] = it.value();
  return {{"schema_version", 1},
          {"model", "gpt-7.5b"},
          {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 8}}},
          {"plan", plan},
          {"training", {{"steps", steps}}}};
}

Scenario load(const json& j) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  return parse_scenario(resolve_scenario_json(j, o));
}

std::string error_of(const json& plan_extra) {
  try {
    load(scenario_json(plan_extra));
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(PrecisionSchedule, RunIsTheStepWeightedMixOfItsTwoPrecisions) {
  // 250 of 1000 steps in fp32, the rest in bf16: the mean step is 1/4 of the fp32 run's step
  // plus 3/4 of the bf16 run's, and so is every per-step figure.
  const Scenario mixed = load(scenario_json(
      {{"precision_stages", {{{"from_step", 0}, {"precision", "fp32"}}, {{"from_step", 250}, {"precision", "bf16"}}}}}));
  const Result fp32 = estimate(load(scenario_json({{"precision", "fp32"}})));
  const Result bf16 = estimate(load(scenario_json({{"precision", "bf16"}})));
  const Result r = estimate(mixed);
  ASSERT_TRUE(fp32.feasible && bf16.feasible && r.feasible) << r.reason;
  ASSERT_GT(fp32.step_time_s, 2 * bf16.step_time_s);  // the two runs differ (fp32 has no tensor cores)
  EXPECT_DOUBLE_EQ(r.step_time_s, 0.25 * fp32.step_time_s + 0.75 * bf16.step_time_s);
  EXPECT_DOUBLE_EQ(r.breakdown.compute_s, 0.25 * fp32.breakdown.compute_s + 0.75 * bf16.breakdown.compute_s);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s, 0.25 * fp32.exposed_comm_s + 0.75 * bf16.exposed_comm_s);
  EXPECT_DOUBLE_EQ(r.dp_bytes, 0.25 * fp32.dp_bytes + 0.75 * bf16.dp_bytes);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, r.tokens_per_step / r.step_time_s);
  // The run holds its largest step: fp32's 4-byte parameters and gradients.
  EXPECT_DOUBLE_EQ(r.peak_memory_bytes, std::max(fp32.peak_memory_bytes, bf16.peak_memory_bytes));
  // MFU: model FLOPs of the run over the peak on offer while it ran (per precision).
  const double gpus = r.gpus;
  const GpuSpec& gpu = mixed.cluster.gpu;
  const double offered = gpus * (0.25 * fp32.step_time_s * gpu.peak_flops(Precision::kFp32) +
                                 0.75 * bf16.step_time_s * gpu.peak_flops(Precision::kBf16));
  EXPECT_DOUBLE_EQ(r.mfu, r.model_flops_per_step / offered);
}

TEST(PrecisionSchedule, OneStageIsTheSinglePrecisionRun) {
  const Result staged = estimate(load(scenario_json({{"precision_stages", {{{"from_step", 0}, {"precision", "fp16"}}}}})));
  const Result fixed = estimate(load(scenario_json({{"precision", "fp16"}})));
  EXPECT_DOUBLE_EQ(staged.step_time_s, fixed.step_time_s);
  EXPECT_DOUBLE_EQ(staged.mfu, fixed.mfu);
  EXPECT_DOUBLE_EQ(staged.peak_memory_bytes, fixed.peak_memory_bytes);
}

TEST(PrecisionSchedule, SharesCoverTheRunFromPlanPrecisionOn) {
  // plan.precision (bf16) before the first stage; a stage past the run is left out; a
  // precision used twice is one share.
  const Scenario s = load(scenario_json({{"precision", "bf16"},
                                         {"precision_stages",
                                          {{{"from_step", 100}, {"precision", "fp16"}},
                                           {{"from_step", 400}, {"precision", "bf16"}},
                                           {{"from_step", 5000}, {"precision", "fp32"}}}}}));
  const auto shares = precision_shares(s);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].precision, Precision::kBf16);
  EXPECT_DOUBLE_EQ(shares[0].steps, 100 + 600);
  EXPECT_EQ(shares[1].precision, Precision::kFp16);
  EXPECT_DOUBLE_EQ(shares[1].steps, 300);
  const Scenario single = at_precision(s, Precision::kFp32);
  EXPECT_TRUE(single.plan.precision_stages.empty());
  EXPECT_EQ(single.plan.precision, Precision::kFp32);
}

TEST(PrecisionSchedule, AnUnsupportedPrecisionMakesTheRunInfeasible) {
  // A100 has no fp8 rate: a run that switches to fp8 cannot run, and says which steps.
  const Result r = estimate(load(scenario_json(
      {{"precision_stages", {{{"from_step", 0}, {"precision", "bf16"}}, {{"from_step", 500}, {"precision", "fp8"}}}}})));
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.reason.find("plan.precision_stages: the fp8 steps"), std::string::npos) << r.reason;
}

TEST(PrecisionSchedule, TiersThatPlayOneStepRefuseWithTheReason) {
  const Scenario s = load(scenario_json({{"precision_stages", {{{"from_step", 0}, {"precision", "fp16"}}}}}));
  for (CostTier tier : {CostTier::kSimulate, CostTier::kChakraExport}) {
    const CostCheck c = check_cost_bounds(s, tier);
    EXPECT_FALSE(c.within);
    EXPECT_NE(c.reason.find("plan.precision_stages"), std::string::npos) << c.reason;
  }
}

TEST(PrecisionSchedule, LoaderNamesTheField) {
  struct Case {
    json plan;
    const char* message;
  };
  const Case cases[] = {
      {{{"precision_stages", json::array()}}, "plan.precision_stages: expected a non-empty list"},
      {{{"precision_stages", "fp16"}}, "plan.precision_stages: expected a non-empty list"},
      {{{"precision_stages", {{{"from_step", 10}, {"precision", "fp16"}}, {{"from_step", 10}, {"precision", "bf16"}}}}},
       "plan.precision_stages[1].from_step"},
      {{{"precision_stages", {{{"from_step", 0}, {"precision", "tf32"}}}}}, "plan.precision_stages[0].precision"},
      {{{"precision_stages", {{{"from_step", 0}}}}}, "plan.precision_stages[0].precision"},
      {{{"precision_stages", {{{"precision", "fp16"}}}}}, "plan.precision_stages[0].from_step"},
      {{{"precision_stages", {{{"from_step", -1}, {"precision", "fp16"}}}}}, "plan.precision_stages[0].from_step"},
      {{{"precision_stages", {{{"from_step", 0}, {"precision", "fp16"}, {"method", "int8"}}}}},
       "plan.precision_stages[0].method"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.plan.dump());
    const std::string e = error_of(c.plan);
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
  }
}

TEST(PrecisionSchedule, ResolvedScenarioKeepsTheStages) {
  const Scenario s = load(scenario_json({{"precision_stages", {{{"from_step", 3}, {"precision", "fp32"}}}}}));
  const json j = to_json(s);
  ASSERT_TRUE(j["plan"].contains("precision_stages"));
  EXPECT_EQ(j["plan"]["precision_stages"][0]["precision"], "fp32");
  EXPECT_EQ(j["plan"]["precision_stages"][0]["from_step"], 3);
  // ... and loads back to the same plan.
  const Scenario back = parse_scenario(j);
  ASSERT_EQ(back.plan.precision_stages.size(), 1u);
  EXPECT_EQ(back.plan.precision_stages[0].precision, Precision::kFp32);
}

}  // namespace
}  // namespace trainsim
