// The memoised estimate (cost-only passes, memo tables, memoised playback) against the reference
// route (every pass built as an op graph and reduced, the pipeline played, nothing reused) on a
// grid of plans: schedules, p, m, v, TP, CP, EP/MoE, ZeRO 0-3, recompute, SP, uneven
// layers_per_stage, rank orders. Every figure of the result must agree to 1e-9 relative, cold
// and warm, in any order of evaluation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/estimate/estimate.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

constexpr double kRel = 1e-9;
// A difference of two nearly equal sums (a pipeline without a bubble: the step less its busy
// time) keeps rounding noise of a few 1e-16 s that the two routes need not share.
constexpr double kAbs = 1e-12;

bool close(double a, double b) {
  return std::abs(a - b) <= kRel * std::max(std::abs(a), std::abs(b)) || std::abs(a - b) <= kAbs;
}

#define EXPECT_CLOSE(a, b, what) EXPECT_TRUE(close((a), (b))) << what << ": " << (a) << " vs " << (b)

void expect_same_breakdown(const MemoryBreakdown& a, const MemoryBreakdown& b, const std::string& w) {
  EXPECT_CLOSE(a.params_bytes, b.params_bytes, w + " params");
  EXPECT_CLOSE(a.grads_bytes, b.grads_bytes, w + " grads");
  EXPECT_CLOSE(a.optimizer_bytes, b.optimizer_bytes, w + " optimizer");
  EXPECT_CLOSE(a.activations_bytes, b.activations_bytes, w + " activations");
  EXPECT_CLOSE(a.other_bytes, b.other_bytes, w + " other");
}

void expect_same(const Result& fast, const Result& full, bool times = true) {
  ASSERT_EQ(fast.feasible, full.feasible) << full.reason;
  EXPECT_EQ(fast.reason, full.reason);
  EXPECT_EQ(fast.warnings, full.warnings);
  EXPECT_EQ(fast.micro_batches, full.micro_batches);
  EXPECT_EQ(fast.gpus, full.gpus);
  EXPECT_CLOSE(fast.peak_memory_bytes, full.peak_memory_bytes, "peak memory");
  expect_same_breakdown(fast.peak_breakdown, full.peak_breakdown, "peak");
  ASSERT_EQ(fast.per_stage.size(), full.per_stage.size());
  for (std::size_t s = 0; s < full.per_stage.size(); ++s) {
    const std::string w = "stage " + std::to_string(s);
    EXPECT_EQ(fast.per_stage[s].layers, full.per_stage[s].layers);
    EXPECT_CLOSE(fast.per_stage[s].in_flight_micro_batches, full.per_stage[s].in_flight_micro_batches, w);
    EXPECT_CLOSE(fast.per_stage[s].total_bytes, full.per_stage[s].total_bytes, w);
    expect_same_breakdown(fast.per_stage[s].breakdown, full.per_stage[s].breakdown, w);
  }
  if (!times) return;
  EXPECT_CLOSE(fast.step_time_s, full.step_time_s, "step time");
  EXPECT_CLOSE(fast.tokens_per_s, full.tokens_per_s, "tokens/s");
  EXPECT_CLOSE(fast.mfu, full.mfu, "mfu");
  EXPECT_CLOSE(fast.hfu, full.hfu, "hfu");
  EXPECT_CLOSE(fast.bubble_fraction, full.bubble_fraction, "bubble fraction");
  EXPECT_CLOSE(fast.exposed_comm_s, full.exposed_comm_s, "exposed comm");
  EXPECT_CLOSE(fast.overlapped.total_s(), full.overlapped.total_s(), "overlapped comm");
  const TimeBreakdown& a = fast.breakdown;
  const TimeBreakdown& b = full.breakdown;
  EXPECT_CLOSE(a.compute_s, b.compute_s, "compute");
  EXPECT_CLOSE(a.tp_comm_s, b.tp_comm_s, "tp comm");
  EXPECT_CLOSE(a.pp_comm_s, b.pp_comm_s, "pp comm");
  EXPECT_CLOSE(a.dp_comm_s, b.dp_comm_s, "dp comm");
  EXPECT_CLOSE(a.ep_comm_s, b.ep_comm_s, "ep comm");
  EXPECT_CLOSE(a.cp_comm_s, b.cp_comm_s, "cp comm");
  EXPECT_CLOSE(a.bubble_s, b.bubble_s, "bubble");
  EXPECT_CLOSE(a.optimizer_s, b.optimizer_s, "optimizer");
  EXPECT_CLOSE(a.offload_s, b.offload_s, "offload");
  EXPECT_CLOSE(fast.tp_bytes, full.tp_bytes, "tp bytes");
  EXPECT_CLOSE(fast.pp_bytes, full.pp_bytes, "pp bytes");
  EXPECT_CLOSE(fast.dp_bytes, full.dp_bytes, "dp bytes");
  EXPECT_CLOSE(fast.ep_bytes, full.ep_bytes, "ep bytes");
  EXPECT_CLOSE(fast.cp_bytes, full.cp_bytes, "cp bytes");
}

Scenario base(const std::string& model, int nodes) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  const json j = {{"schema_version", 1},
                  {"model", model},
                  {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", nodes}}},
                  {"plan", {{"global_batch", 64}}}};
  return parse_scenario(resolve_scenario_json(j, o));
}

// Every combination of the axes, thinned to about `want` plans with a stride that is prime
// against the axes' sizes (so every value of every axis is kept).
std::vector<Scenario> grid(std::size_t want) {
  std::vector<Scenario> all;
  const Scenario dense = base("gpt-18.4b", 8);
  const Scenario moe = base("mixtral-8x7b", 8);
  const char* schedules[] = {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "dualpipe"};
  const char* placements[] = {"tp-cp-dp-pp", "tp-pp-dp", "dp-tp-pp"};
  for (const Scenario* b : {&dense, &moe})
    for (const char* sched : schedules)
      for (int pp : {1, 2, 4, 8})
        for (int vpp : {1, 2})
          for (int tp : {1, 2, 4, 8})
            for (int cp : {1, 2})
              for (int ep : {1, 2, 4})
                for (int zero = 0; zero <= 3; ++zero)
                  for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
                    for (bool sp : {false, true})
                      for (int gb : {16, 64, 256})
                        for (bool uneven : {false, true})
                          for (const char* place : placements) {
                            const bool interleaved = std::string(sched) == "interleaved";
                            if (interleaved != (vpp > 1) || (pp == 1 && std::string(sched) != "1f1b")) continue;
                            if (ep > 1 && !b->model.moe) continue;
                            if (uneven && pp == 1) continue;
                            const int gpus = b->cluster.total_gpus();
                            if (gpus % (tp * pp * cp)) continue;
                            Scenario s = *b;
                            ParallelPlan& p = s.plan;
                            p.tp = tp, p.pp = pp, p.cp = cp, p.ep = ep, p.vpp = vpp;
                            p.dp = gpus / (tp * pp * cp);
                            p.schedule = sched;
                            p.zero_stage = zero;
                            p.recompute = rc;
                            p.sp = sp && tp > 1;
                            p.global_batch = gb;
                            p.micro_batch = gb >= 64 * p.dp ? 2 : 1;
                            p.placement = place;
                            p.expert_tp = ep > 1 && tp > 1 ? 1 : tp;
                            p.overlap.tp = zero == 2;
                            if (uneven) {
                              const int chunks = pp * vpp;
                              const int per = s.model.layers / chunks;
                              p.layers_per_stage.assign(chunks, per);
                              p.layers_per_stage.front() -= 1;
                              p.layers_per_stage.back() += 1 + (s.model.layers - per * chunks);
                            }
                            all.push_back(std::move(s));
                          }
  std::vector<Scenario> out;
  const std::size_t stride = std::max<std::size_t>(1, all.size() / want) | 1;
  for (std::size_t i = 0; i < all.size(); i += stride) out.push_back(all[i]);
  return out;
}

TEST(EstimateMemo, EqualsTheReferenceRouteOnAGridOfPlans) {
  const std::vector<Scenario> plans = grid(1500);
  ASSERT_GT(plans.size(), 1000u);
  EstimateOptions reference;
  reference.memoise = false;
  std::vector<Result> full;
  int feasible = 0, small_m = 0;
  for (const Scenario& s : plans) {
    full.push_back(estimate_step(s, reference).result);
    feasible += full.back().feasible;
    small_m += full.back().micro_batches < 2 * s.plan.pp && s.plan.pp > 1;
  }
  // The grid must exercise what it claims: feasible plans, and played (m < 2p) bubbles.
  EXPECT_GT(feasible, 300);
  EXPECT_GT(small_m, 100);
  // Cold then warm, forwards then backwards: no entry may leak between plans.
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t k = 0; k < plans.size(); ++k) {
      const std::size_t i = pass == 0 ? k : plans.size() - 1 - k;
      SCOPED_TRACE(to_json(plans[i]).dump());
      expect_same(estimate(plans[i]), full[i]);
      if (::testing::Test::HasFailure()) return;
    }
}

TEST(EstimateMemo, TheTimelineIsTheReferenceTimeline) {
  // The GUI's timeline comes from the memoised workload: its ops must be the reference's.
  EstimateOptions reference;
  reference.memoise = false;
  for (const Scenario& s : grid(60)) {
    SCOPED_TRACE(to_json(s).dump());
    const EstimatedStep fast = estimate_step(s), full = estimate_step(s, reference);
    EXPECT_TRUE(fast.workload.programs.empty());
    ASSERT_EQ(fast.timeline.ops.size(), full.timeline.ops.size());
    EXPECT_CLOSE(fast.timeline.makespan_s, full.timeline.makespan_s, "makespan");
    for (std::size_t i = 0; i < full.timeline.ops.size(); ++i) {
      EXPECT_CLOSE(fast.timeline.ops[i].start_s, full.timeline.ops[i].start_s, "op start");
      EXPECT_CLOSE(fast.timeline.ops[i].end_s, full.timeline.ops[i].end_s, "op end");
    }
  }
}

TEST(EstimateMemo, StoppingAtInfeasibilityKeepsTheVerdictAndTheMemory) {
  EstimateOptions stop;
  stop.stop_when_infeasible = true;
  int rejected = 0;
  for (const Scenario& s : grid(400)) {
    SCOPED_TRACE(to_json(s).dump());
    const Result all = estimate(s), quick = estimate(s, stop);
    expect_same(quick, all, all.feasible);
    if (!all.feasible) {
      ++rejected;
      EXPECT_EQ(quick.step_time_s, 0);  // no time computed
    }
  }
  EXPECT_GT(rejected, 20);
}

TEST(EstimateMemo, ARankFloorSkipsOnlyPlaybacksOfPlansThatCannotBeatIt) {
  // With a floor, a plan is either the full estimate (bit for bit) or, when its pipeline
  // would be played and even a bubble-free step cannot beat the floor, a bound: tokens/s at
  // least the estimate's and at most the floor.
  int bounded = 0, kept = 0;
  for (const Scenario& s : grid(400)) {
    const Result all = estimate(s);
    if (!all.feasible) continue;
    for (double share : {0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 4.0}) {
      SCOPED_TRACE(to_json(s).dump() + " share " + std::to_string(share));
      EstimateOptions floor;
      floor.rank_floor_tokens_per_s = share * all.tokens_per_s;
      const Result r = estimate(s, floor);
      ASSERT_TRUE(r.feasible);
      if (r.step_time_s == all.step_time_s && r.tokens_per_s == all.tokens_per_s && r.mfu == all.mfu) {
        ++kept;
        continue;
      }
      ++bounded;
      EXPECT_GT(r.micro_batches, 0);
      // Only played pipelines are skipped: those that do not fill, and DualPipe's.
      if (s.plan.schedule != "dualpipe") {
        EXPECT_LT(r.micro_batches, 2 * s.plan.pp);
      }
      EXPECT_GE(r.tokens_per_s, all.tokens_per_s);
      EXPECT_LE(r.tokens_per_s, floor.rank_floor_tokens_per_s);
      EXPECT_LE(r.step_time_s, all.step_time_s);
      EXPECT_GE(share, 1.0);  // a plan the floor skips never had the throughput to beat it
    }
  }
  EXPECT_GT(bounded, 20);
  EXPECT_GT(kept, 100);
}

TEST(EstimateMemo, ScenariosThatDifferOnlyInTheGpuDoNotShareEntries) {
  // Content keys: the same plan on a GPU with another peak must not reuse the first's passes.
  Scenario a = base("gpt-18.4b", 8);
  a.plan.tp = 8;
  a.plan.dp = 8;
  a.plan.global_batch = 64;
  Scenario b = a;
  b.cluster.gpu.peak_flops_fp16 *= 2;
  b.cluster.gpu.peak_flops_bf16 *= 2;
  EstimateOptions reference;
  reference.memoise = false;
  const Result ra = estimate(a), rb = estimate(b);
  expect_same(ra, estimate_step(a, reference).result);
  expect_same(rb, estimate_step(b, reference).result);
  EXPECT_LT(rb.breakdown.compute_s, ra.breakdown.compute_s);
}

}  // namespace
}  // namespace trainsim
