#include "models/reliability/straggler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "models/estimate/estimate.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario make(const json& plan, const json& faults, int nodes = 4,
              const std::string& model = "gpt-1.7b") {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json j = {{"schema_version", 1},
            {"model", model},
            {"cluster", {{"base", "dgx-h100-superpod"}, {"nodes", nodes}}},
            {"plan", plan}};
  if (!faults.is_null()) j["training"] = {{"faults", faults}};
  return parse_scenario(resolve_scenario_json(j, o));
}

// Every split of `layers` into n parts >= min_layers: the optimum max_i (x_i + e_i) / s_i and,
// among the optimal splits, the fewest layers moved from `current`.
struct BruteForce {
  double best = std::numeric_limits<double>::infinity();
  int fewest_moved = std::numeric_limits<int>::max();
};
BruteForce brute_force(const std::vector<double>& s, int layers, const std::vector<double>& e,
                       const std::vector<int>& current, int min_layers) {
  BruteForce out;
  const int n = static_cast<int>(s.size());
  std::vector<int> x(n);
  std::vector<std::pair<double, int>> all;
  std::function<void(int, int)> rec = [&](int i, int left) {
    if (i == n - 1) {
      if (left < min_layers) return;
      x[i] = left;
      const double t = bottleneck_time(x, s, e);
      int moved = 0;
      for (int k = 0; k < n; ++k) moved += std::max(0, current[k] - x[k]);
      all.emplace_back(t, moved);
      out.best = std::min(out.best, t);
      return;
    }
    for (int k = min_layers; k <= left - min_layers * (n - 1 - i); ++k) {
      x[i] = k;
      rec(i + 1, left - k);
    }
  };
  rec(0, layers);
  for (const auto& [t, moved] : all)
    if (t <= out.best + 1e-9) out.fewest_moved = std::min(out.fewest_moved, moved);
  return out;
}

TEST(Straggler, RebalanceMatchesBruteForce) {
  struct Case {
    std::vector<double> speed;
    int layers;
    std::vector<double> extra;
    std::vector<int> current;
    int min_layers;
    double optimum;  // closed form, in layer units
  };
  const Case cases[] = {
      // 4 stages, 32 layers, stage 2 at half speed: 3T + T/2 >= 32 -> T >= 9.14; integer layers:
      // fast stages hold <= 9 at T = 9 and the slow one 4 (27 + 4 = 31 < 32), so T = 10.
      {{1, 1, 0.5, 1}, 32, {}, {8, 8, 8, 8}, 1, 10},
      // The same at 0.8: T = 9 lets fast stages hold 9 and the slow one 7 (8.75), 27 + 7 >= 32;
      // T = 8.75 allows 3 x 8 + 7 = 31.
      {{1, 1, 0.8, 1}, 32, {}, {8, 8, 8, 8}, 1, 9},
      // Slow first stage of 2 at 0.25: x/0.25 = 24 - x -> x = 4.8 -> {4, 20} gives 20, {5, 19} 20.
      {{0.25, 1}, 24, {}, {12, 12}, 1, 20},
      // Logits GEMM worth 3 layers on the last stage, no straggler: 4 stages, 24 layers ->
      // T = (24 + 3) / 4 = 6.75 -> 7 (e.g. {7, 7, 6, 4}).
      {{1, 1, 1, 1}, 24, {0, 0, 0, 3}, {6, 6, 6, 6}, 1, 7},
      // Interleaved (min 2 layers per device), slow last stage with extras: its time is
      // (k + 1.5) / 0.5 >= 7 at k = 2, and 3 x 7 + 2 >= 16, so T = 7.
      {{1, 1, 1, 0.5}, 16, {0, 0, 0, 1.5}, {4, 4, 4, 4}, 2, 7},
      // 8 stages, two slow: T = 3.33 (3 / 0.9) holds 6 x 3 + 2 + 3 = 23 < 24; T = 4 holds 29.
      {{1, 0.7, 1, 1, 1, 1, 0.9, 1}, 24, {}, {3, 3, 3, 3, 3, 3, 3, 3}, 1, 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.speed) + " layers " + std::to_string(c.layers));
    const auto x = rebalance_layers(c.speed, c.layers, c.extra, c.current, c.min_layers);
    ASSERT_EQ(x.size(), c.speed.size());
    int sum = 0;
    for (int v : x) {
      EXPECT_GE(v, c.min_layers);
      sum += v;
    }
    EXPECT_EQ(sum, c.layers);
    const BruteForce bf = brute_force(c.speed, c.layers, c.extra, c.current, c.min_layers);
    EXPECT_NEAR(bottleneck_time(x, c.speed, c.extra), bf.best, 1e-9);
    EXPECT_NEAR(bf.best, c.optimum, 1e-9);
    int moved = 0;
    for (std::size_t k = 0; k < x.size(); ++k) moved += std::max(0, c.current[k] - x[k]);
    EXPECT_EQ(moved, bf.fewest_moved);
  }
}

TEST(Straggler, RebalanceMovesFewestLayersOffTheSlowStage) {
  // From the even split 8/8/8/8 with stage 2 at half speed, the slow stage drops to 5 (10 units)
  // and the 3 displaced layers go one to each fast stage.
  EXPECT_EQ(rebalance_layers({1, 1, 0.5, 1}, 32, {}, {8, 8, 8, 8}), (std::vector<int>{9, 9, 5, 9}));
  // No straggler and an already optimal split: nothing moves.
  EXPECT_EQ(rebalance_layers({1, 1, 1, 1}, 32, {}, {8, 8, 8, 8}), (std::vector<int>{8, 8, 8, 8}));
  EXPECT_THROW(rebalance_layers({1, 1}, 1), std::invalid_argument);
  EXPECT_THROW(rebalance_layers({1, 0}, 8), std::invalid_argument);
}

TEST(Straggler, ChunkLayersSpreadsDevicesOverTheirChunks) {
  // Device d holds chunks d, d + pp, ...; earlier chunks take the remainder.
  EXPECT_EQ(chunk_layers({9, 9, 5, 9}, 1), (std::vector<int>{9, 9, 5, 9}));
  EXPECT_EQ(chunk_layers({9, 8, 5, 10}, 2), (std::vector<int>{5, 4, 3, 5, 4, 4, 2, 5}));
}

TEST(Straggler, ProbabilityAndForcedStage) {
  // 4 nodes x 8 H100 = 32 GPUs; tp 8, pp 4, dp 1.
  const json plan = {{"tp", 8}, {"pp", 4}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 16}};
  const Scenario sc = make(plan, {{"stragglers", {{"fraction", 0.01}, {"speed_factor", 0.5}, {"stage", 2}}}});
  const StragglerEffect e = straggler_effect(sc);
  EXPECT_NEAR(e.probability_any, 1 - std::pow(0.99, 32), 1e-12);
  EXPECT_NEAR(e.expected_slow_gpus, 0.32, 1e-12);
  EXPECT_EQ(e.stage, 2);
  EXPECT_DOUBLE_EQ(e.speed_factor, 0.5);
  EXPECT_EQ(e.stage_speed, (std::vector<double>{1, 1, 0.5, 1}));
  EXPECT_EQ(e.layers_per_stage, (std::vector<int>{6, 6, 6, 6}));  // gpt-1.7b: 24 layers
  // Stage time of the slow stage doubles: 6 layers / 0.5 = 12 layer-times against a nominal
  // bottleneck of the last stage, 6 layers + its logits GEMM (extra).
  ASSERT_EQ(e.stage_extra_s.size(), 4u);
  const double extra_last = e.stage_extra_s[3] / e.layer_cost_s;
  EXPECT_GT(extra_last, 0);
  // The first stage's extra is its embedding (the lookup and its TP all-reduce): small.
  EXPECT_GT(e.stage_extra_s[0], 0);
  EXPECT_LT(e.stage_extra_s[0], 0.2 * e.layer_cost_s);
  EXPECT_NEAR(e.bottleneck_slowdown, 12 / (6 + extra_last), 1e-9);
  // Rebalanced: optimal by brute force, and better than not rebalancing.
  ASSERT_EQ(e.rebalanced_layers_per_stage.size(), 4u);
  std::vector<double> extra(4);
  for (int d = 0; d < 4; ++d) extra[d] = e.stage_extra_s[d] / e.layer_cost_s;
  const BruteForce bf = brute_force(e.stage_speed, 24, extra, e.layers_per_stage, 1);
  EXPECT_NEAR(bottleneck_time(e.rebalanced_layers_per_stage, e.stage_speed, extra), bf.best, 1e-9);
  EXPECT_LT(e.rebalanced_bottleneck_slowdown, e.bottleneck_slowdown);
  EXPECT_LE(e.rebalanced_layers_per_stage[2], 3);  // slow stage: <= 3 layers (6 layer-times)

  // The rebalanced scenario is a valid plan for the estimate.
  const Scenario rb = rebalanced_scenario(sc, e);
  EXPECT_EQ(rb.plan.layers_per_stage, e.rebalanced_layers_per_stage);
  EXPECT_TRUE(check_plan_structure(rb).empty()) << check_plan_structure(rb);
}

TEST(Straggler, NeverMovesLayersOntoASlowerStep) {
  // Every layer already on stage 0 and a straggler at a hundredth of the speed on stage 1, which
  // holds only the output layer (about two layers' time): the bottleneck. Any split with a layer
  // on every stage adds a layer to the straggler, which is slower still.
  const json plan = {{"tp", 8}, {"pp", 2}, {"dp", 2}, {"micro_batch", 1}, {"global_batch", 16},
                     {"layers_per_stage", {24, 0}}};
  const Scenario sc = make(plan, {{"stragglers", {{"fraction", 0.5}, {"speed_factor", 0.01}, {"stage", 1}}}});
  const StragglerEffect e = straggler_effect(sc);
  EXPECT_TRUE(e.rebalanced_layers_per_stage.empty());
  EXPECT_DOUBLE_EQ(e.rebalanced_bottleneck_slowdown, e.bottleneck_slowdown);
  EXPECT_NE(e.note.find("already faster"), std::string::npos) << e.note;
  EXPECT_EQ(rebalanced_scenario(sc, e).plan.layers_per_stage, sc.plan.layers_per_stage);
}

TEST(Straggler, SeedPicksAStageDeterministically) {
  const json plan = {{"tp", 8}, {"pp", 4}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 16}};
  std::vector<int> seen(4, 0);
  for (int seed = 1; seed <= 64; ++seed) {
    const Scenario sc = make(plan, {{"seed", seed}, {"stragglers", {{"fraction", 0.02}, {"speed_factor", 0.7}}}});
    const StragglerEffect a = straggler_effect(sc), b = straggler_effect(sc);
    ASSERT_EQ(a.stage, b.stage);
    ASSERT_GE(a.stage, 0);
    ASSERT_LT(a.stage, 4);
    ++seen[a.stage];
  }
  for (int s = 0; s < 4; ++s) EXPECT_GT(seen[s], 0) << "stage " << s << " never drawn";
}

TEST(Straggler, NoStragglerCases) {
  const json plan = {{"tp", 8}, {"pp", 4}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 16}};
  // No faults section; fraction 0 without a forced stage; speed factor 1.
  for (const json& faults : {json(), json{{"stragglers", {{"fraction", 0.0}, {"speed_factor", 0.5}}}},
                             json{{"stragglers", {{"fraction", 0.1}, {"speed_factor", 1.0}}}}}) {
    SCOPED_TRACE(faults.dump());
    const StragglerEffect e = straggler_effect(make(plan, faults));
    EXPECT_EQ(e.stage, -1);
    EXPECT_TRUE(e.rebalanced_layers_per_stage.empty());
    EXPECT_DOUBLE_EQ(e.bottleneck_slowdown, 1);
  }
  // pp = 1: the straggler slows the only stage; nothing to rebalance.
  const StragglerEffect one = straggler_effect(make(
      {{"tp", 8}, {"dp", 4}, {"micro_batch", 1}, {"global_batch", 16}},
      {{"stragglers", {{"fraction", 0.01}, {"speed_factor", 0.5}, {"stage", 0}}}}));
  EXPECT_EQ(one.stage, 0);
  EXPECT_TRUE(one.rebalanced_layers_per_stage.empty());
  EXPECT_NEAR(one.bottleneck_slowdown, 2, 1e-12);
  // A forced stage outside plan.pp is bad input naming the path.
  try {
    straggler_effect(make(plan, {{"stragglers", {{"fraction", 0.01}, {"speed_factor", 0.5}, {"stage", 4}}}}));
    FAIL() << "expected a ScenarioError";
  } catch (const ScenarioError& err) {
    EXPECT_EQ(err.path(), "training.faults.stragglers.stage");
  }
}

TEST(Straggler, ApplyStageSpeedsSlowsComputeNotCommunication) {
  const Scenario sc = make({{"tp", 8}, {"pp", 4}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 16}}, json());
  Workload w;
  Result r;
  ASSERT_TRUE(build_workload(sc, w, r)) << r.reason;
  const Workload before = w;
  apply_stage_speeds(w, {1, 0.5, 1, 1});
  EXPECT_DOUBLE_EQ(w.stages[0].forward_s, before.stages[0].forward_s);
  EXPECT_DOUBLE_EQ(w.stages[1].forward_compute_s, 2 * before.stages[1].forward_compute_s);
  EXPECT_DOUBLE_EQ(w.stages[1].backward_weight_s, 2 * before.stages[1].backward_weight_s);
  EXPECT_NEAR(w.stages[1].forward_s - w.stages[1].forward_compute_s,
              before.stages[1].forward_s - before.stages[1].forward_compute_s, 1e-15);
  EXPECT_NEAR(w.stages[1].backward_s,
              before.stages[1].backward_s + before.stages[1].backward_compute_s, 1e-15);
}

}  // namespace
}  // namespace trainsim
