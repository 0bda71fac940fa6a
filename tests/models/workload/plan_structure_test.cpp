// The structure check holds for scenarios built in code too (the planner and the sweeps edit
// parsed scenarios): products of degrees and the micro-batch count never wrap.
#include "models/workload/plan_structure.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "models/estimate/estimate.hpp"
#include "models/scenario/limits.hpp"
#include "models/schedules/pipeline_schedule.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

Scenario base() {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  return parse_scenario(resolve_scenario_json(nlohmann::json::parse(R"({
    "schema_version": 1, "model": "gpt-1.7b",
    "cluster": {"base": "dgx-a100-superpod", "nodes": 4},
    "plan": {"dp": 32, "micro_batch": 1, "global_batch": 512}})"), o));
}

TEST(PlanStructure, MicroBatchCountMustFitTheCap) {
  Scenario s = base();
  EXPECT_EQ(check_plan_structure(s), "");
  // 2^37 / 32 = 2^32 micro-batches: an int holds 0 of them.
  s.plan.global_batch = int64_t{1} << 37;
  EXPECT_NE(check_plan_structure(s).find("= 4294967296 micro-batches per step; at most 1073741824"),
            std::string::npos)
      << check_plan_structure(s);
  // 2^36 + 32: 2^31 + 1 micro-batches, -2147483647 as an int.
  s.plan.global_batch = (int64_t{1} << 36) + 32;
  EXPECT_NE(check_plan_structure(s).find("2147483649 micro-batches"), std::string::npos);
  s.plan.global_batch = limits::kMaxMicroBatchesPerStep * 32;
  EXPECT_EQ(check_plan_structure(s), "");
  s.plan.micro_batch = int64_t{1} << 62;  // micro_batch x dp overflows int64
  EXPECT_NE(check_plan_structure(s).find("plan.global_batch"), std::string::npos);
}

TEST(PlanStructure, DegreeProductsDoNotOverflow) {
  Scenario s = base();
  s.plan.tp = s.plan.pp = s.plan.dp = s.plan.cp = 1 << 20;  // 2^80 GPUs
  EXPECT_NE(check_plan_structure(s).find("exceeds 16777216 GPUs"), std::string::npos)
      << check_plan_structure(s);
  s = base();
  s.plan.tp = 0;
  EXPECT_NE(check_plan_structure(s).find("must be >= 1"), std::string::npos);
}


std::vector<int> split_of(int layers, int pp, int vpp = 1, std::vector<int> given = {}) {
  ModelSpec m;
  m.layers = layers;
  ParallelPlan p;
  p.pp = pp;
  p.vpp = vpp;
  p.layers_per_stage = std::move(given);
  return stage_layer_split(m, p);
}

// Llama 3 405B's 126 layers on 16 stages: "we reduce one Transformer layer each from the first
// and the last stages" (The Llama 3 Herd of Models, 2024, section 3.3.2), i.e. 7, 8 x 14, 7.
TEST(PlanStructure, AnUnevenSplitGivesTheEmbeddingAndTheLossALayersPlace) {
  std::vector<int> llama(16, 8);
  llama.front() = llama.back() = 7;
  EXPECT_EQ(split_of(126, 16), llama);
  // 61 layers (DeepSeek-V3's) on 16: 63 places, 15 stages with the extra one; the embedding's
  // stage has 3 places (2 layers), the loss's 4 (3 layers), the others 4 layers.
  std::vector<int> v3(16, 4);
  v3.front() = 2;
  v3.back() = 3;
  EXPECT_EQ(split_of(61, 16), v3);
  // Interleaved: the virtual stages, 126 on 16 x 2 = 3, 4 x 30, 3.
  const std::vector<int> virt = split_of(126, 16, 2);
  ASSERT_EQ(virt.size(), 32u);
  EXPECT_EQ(virt.front(), 3);
  EXPECT_EQ(virt.back(), 3);
  EXPECT_EQ(std::count(virt.begin(), virt.end(), 4), 30);
  // Even where the layers divide (Megatron's default), and the plan's own split where given.
  EXPECT_EQ(split_of(96, 8), std::vector<int>(8, 12));
  EXPECT_EQ(split_of(10, 2, 1, {3, 7}), (std::vector<int>{3, 7}));
  // Too few places for the rule (20 layers on 16 stages would leave the first none): even, the
  // extra layers on the last stages.
  std::vector<int> few(16, 1);
  for (int i = 12; i < 16; ++i) few[i] = 2;
  EXPECT_EQ(split_of(20, 16), few);
}

TEST(PlanStructure, EveryStageNeedsALayer) {
  Scenario s = base();  // gpt-1.7b: 24 layers, 4 nodes of 8
  s.plan.dp = 1;
  s.plan.pp = 32;
  EXPECT_NE(check_plan_structure(s).find("model.layers (24) is fewer than plan.pp x plan.vpp = 32 stages"),
            std::string::npos)
      << check_plan_structure(s);
  s.plan.pp = 16;  // 24 on 16: uneven, feasible
  s.plan.dp = 2;
  EXPECT_EQ(check_plan_structure(s), "");
  const std::vector<int> split = stage_layer_split(s.model, s.plan);
  EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0), 24);
  EXPECT_TRUE(layers_split_unevenly(s.model, s.plan));
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(PlanStructure, FieldsThePlanDoesNotUseAreNamed) {
  Scenario s = base();
  EXPECT_TRUE(unused_plan_fields(s).empty());
  s.plan.recompute = Recompute::kFull;
  s.plan.recompute_modules.mlp = true;
  s.plan.zero3_prefetch_params = 5e7;
  s.plan.zero3_per_parameter = true;
  s.plan.fp8_activation_cache = true;
  s.plan.moe_dispatcher = MoeDispatcher::kDeepEp;
  s.plan.flash_attention = false;
  s.plan.attention_kernel = "flash3";
  const std::vector<std::string> unused = unused_plan_fields(s);
  const std::vector<std::string> fields = {"plan.recompute_modules", "plan.zero3_prefetch_params",
                                           "plan.zero3_collectives", "plan.fp8_activation_cache", "plan.moe_dispatcher",
                                           "plan.attention_kernel"};
  ASSERT_EQ(unused.size(), fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(unused[i].rfind(fields[i] + " is unused", 0), 0u) << unused[i];
  EXPECT_NE(unused[0].find("plan.recompute is \"full\""), std::string::npos) << unused[0];

  // Each goes quiet once the mode it belongs to is on.
  s.plan.recompute = Recompute::kSelective;
  s.plan.zero_stage = 3;
  s.plan.precision_stages = {{1000, Precision::kFp8}};
  s.plan.flash_attention = true;
  EXPECT_EQ(unused_plan_fields(s).size(), 1u);  // the dispatcher: gpt-1.7b has no experts
  s.plan.recompute = Recompute::kNone;
  s.plan.recompute_modules = RecomputeModules{};
  s.plan.recompute_early_stop = true;
  ASSERT_EQ(unused_plan_fields(s).size(), 2u);
  EXPECT_EQ(unused_plan_fields(s).front().rfind("plan.recompute_early_stop is unused", 0), 0u);
}

// Without a pipeline there is nothing to schedule: frameworks run each micro-batch's forward
// then its backward (Megatron-LM's forward_backward_no_pipelining) whatever plan.schedule says.
// A split-backward schedule played there would leave only its W passes to hide the gradient
// reduction behind, and DualPipe would hold a second copy of the model.
TEST(PlanStructure, WithOneStageEveryScheduleRunsTheNoPipelineLoop) {
  Scenario s = base();
  s.plan.schedule = default_pipeline_schedule().name();
  const Result plain = estimate(s);
  ASSERT_TRUE(plain.feasible) << plain.reason;
  for (const PipelineSchedule* schedule : pipeline_schedules()) {
    if (schedule == &default_pipeline_schedule()) continue;
    s.plan.schedule = schedule->name();
    const Result r = estimate(s);
    ASSERT_TRUE(r.feasible) << schedule->name() << ": " << r.reason;
    EXPECT_EQ(r.step_time_s, plain.step_time_s) << schedule->name();
    EXPECT_EQ(r.peak_memory_bytes, plain.peak_memory_bytes) << schedule->name();
    const std::vector<std::string> unused = unused_plan_fields(s);
    ASSERT_EQ(unused.size(), 1u) << schedule->name();
    EXPECT_EQ(unused.front().rfind("plan.schedule \"" + std::string(schedule->name()) + "\" is unused", 0), 0u)
        << unused.front();
  }
}

}  // namespace
}  // namespace trainsim
