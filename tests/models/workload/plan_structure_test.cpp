// The structure check holds for scenarios built in code too (the planner and the sweeps edit
// parsed scenarios): products of degrees and the micro-batch count never wrap.
#include "models/workload/plan_structure.hpp"

#include <gtest/gtest.h>

#include "models/scenario/limits.hpp"
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

}  // namespace
}  // namespace trainsim
