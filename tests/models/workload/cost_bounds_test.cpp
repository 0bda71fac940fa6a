// The bounds of the tiers that play a plan op by op, checked in closed form before they start.
#include "models/workload/cost_bounds.hpp"

#include <gtest/gtest.h>

#include "models/scenario/scenario_loader.hpp"
#include "models/workload/timeline.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario scenario(const json& plan) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json s = {{"schema_version", 1}, {"model", "gpt-1.7b"},
            {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 4}}}, {"plan", plan}};
  return parse_scenario(resolve_scenario_json(s, o));
}

TEST(CostBounds, CountsOfOneStep) {
  // 1F1B, 4 stages, TP 2, 8 micro-batches: 4 x 8 x 2 ops; 2 x 8 x 3 hand-offs of 2 flows each.
  PlanCost c = plan_cost(scenario({{"tp", 2}, {"pp", 4}, {"dp", 4}, {"micro_batch", 1}, {"global_batch", 32}}));
  EXPECT_EQ(c.micro_batches, 8);
  EXPECT_EQ(c.pipeline_ops, 64);
  EXPECT_EQ(c.handoffs, 48);
  EXPECT_EQ(c.p2p_flows, 96);
  EXPECT_EQ(c.chakra_nodes, 64 + 96);
  EXPECT_EQ(c.trace_events, 64 + 4 * 48);
  // Interleaved with 2 chunks: twice the ops, 7 boundaries; zero-bubble: W apart (3 passes).
  c = plan_cost(scenario({{"tp", 2}, {"pp", 4}, {"dp", 4}, {"vpp", 2}, {"micro_batch", 1},
                          {"global_batch", 32}, {"schedule", "interleaved"}}));
  EXPECT_EQ(c.pipeline_ops, 128);
  EXPECT_EQ(c.handoffs, 2 * 8 * 7);
  c = plan_cost(scenario({{"tp", 2}, {"pp", 4}, {"dp", 4}, {"micro_batch", 1}, {"global_batch", 32},
                          {"schedule", "zb-h1"}}));
  EXPECT_EQ(c.pipeline_ops, 96);
}

TEST(CostBounds, TheTimelineRunsTheOpsItCounts) {
  // The closed-form playback (what the GUI draws) starts each counted op once.
  const Scenario s = scenario({{"tp", 1}, {"pp", 4}, {"dp", 8}, {"micro_batch", 1}, {"global_batch", 96},
                               {"schedule", "zb-h1"}});
  const PlanCost c = plan_cost(s);
  struct Count : PlaybackObserver {
    double ops = 0;
    void started(int, const PipeOp&, double, double, const PipeOp*) override { ops += 1; }
  } count;
  std::vector<StageCosts> costs(4, StageCosts{1.0, 1.0, 0.5});
  play_schedule(pipeline_schedule("zb-h1"), 4, 1, static_cast<int>(c.micro_batches), costs, 0.1, &count);
  EXPECT_EQ(count.ops, c.pipeline_ops);
}

TEST(CostBounds, BillionMicroBatchesAreRefusedWithTheReason) {
  const Scenario s = scenario({{"tp", 1}, {"pp", 4}, {"dp", 8}, {"micro_batch", 1},
                               {"global_batch", int64_t{8} * 1000000000}});
  const CostCheck sim = check_cost_bounds(s, CostTier::kSimulate);
  EXPECT_FALSE(sim.within);
  EXPECT_NE(sim.reason.find("1e+09 micro-batches x 4 pipeline stages x 1 chunks x 2 passes = 8e+09 pipeline ops, "
                            "beyond the 2e+06 the simulate tier plays"),
            std::string::npos)
      << sim.reason;
  EXPECT_NE(sim.reason.find("--fidelity estimate"), std::string::npos);
  EXPECT_FALSE(check_cost_bounds(s, CostTier::kChakraExport).within);
  // Flows bound the hand-offs when TP multiplies them.
  const Scenario wide = scenario({{"tp", 8}, {"pp", 4}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 200000}});
  const CostCheck w = check_cost_bounds(wide, CostTier::kSimulate);
  EXPECT_FALSE(w.within);
  EXPECT_NE(w.reason.find("hand-off flows (x plan.tp 8)"), std::string::npos) << w.reason;
  // A trace has more events than the simulation ops: 1F1B over 8 stages with 100,000
  // micro-batches plays (1.6 M ops, 1.4 M hand-off flows) but its trace would hold 7.2 M events.
  const Scenario traced = scenario({{"tp", 1}, {"pp", 8}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 100000}});
  EXPECT_TRUE(check_cost_bounds(traced, CostTier::kSimulate).within);
  const CostCheck t = check_cost_bounds(traced, CostTier::kTrace);
  EXPECT_FALSE(t.within);
  EXPECT_NE(t.reason.find("= 7.2e+06 trace events"), std::string::npos) << t.reason;
  EXPECT_FALSE(check_cost_bounds(s, CostTier::kTrace).within);
  // Ordinary plans are within all three.
  const Scenario usual = scenario({{"tp", 2}, {"pp", 4}, {"dp", 4}, {"micro_batch", 1}, {"global_batch", 512}});
  EXPECT_TRUE(check_cost_bounds(usual, CostTier::kSimulate).within);
  EXPECT_TRUE(check_cost_bounds(usual, CostTier::kChakraExport).within);
  EXPECT_TRUE(check_cost_bounds(usual, CostTier::kTrace).within);
}

}  // namespace
}  // namespace trainsim
