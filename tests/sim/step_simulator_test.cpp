// The simulate tier against independent references: bubbles that emerge
// from playing schedules with real p2p flows against the closed forms of REFERENCE.md
// ("Pipeline schedules"), agreement with the estimate tier where nothing contends, contention
// on an oversubscribed fat-tree, determinism, and a trace Perfetto can load. Every simulation
// runs in a forked child (one s4u::Engine per process).
#include <gtest/gtest.h>

#include <map>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/cost/flops.hpp"
#include "models/estimate/estimate.hpp"
#include "models/core/result_json.hpp"
#include "models/workload/timeline.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "sim/platform.hpp"
#include "models/workload/placement.hpp"
#include "sim/step_player.hpp"
#include "sim/step_simulation.hpp"
#include "sim_test_util.hpp"

namespace trainsim::sim {
namespace {

using testing::in_child_process;
using testing::test_cluster;

// A synthetic workload: every stage F, B+W, W (seconds), no data parallelism, 1-byte p2p (its
// ~2 us latency against millisecond ops makes transfers negligible).
Workload uniform_workload(const PipelineSchedule* kind, int pp, int vpp, int m, double f, double b, double w) {
  Workload wl;
  wl.schedule = kind;
  wl.pp = pp;
  wl.vpp = vpp;
  wl.micro_batches = m;
  wl.p2p_bytes = 1;
  wl.stages.resize(pp);
  for (auto& s : wl.stages) {
    s.forward_s = s.forward_compute_s = f;
    s.backward_s = s.backward_compute_s = b;
    s.backward_weight_s = w;
  }
  testing::give_programs(wl);
  return wl;
}

// Emergent bubble fraction: mean over stages of idle / pipeline makespan.
double played_bubble(const Workload& wl) {
  return in_child_process([&] {
           Platform& p = Platform::create(test_cluster(1, 8, 600e9, 25e9, 8));
           const StepTimeline tl = play_step(p, wl, RankPlacement(1, 1, 1, wl.pp));
           double idle = 0;
           for (double busy : tl.busy_s) idle += (tl.pipeline_end_s - busy) / tl.pipeline_end_s;
           return std::vector<double>{idle / tl.busy_s.size()};
         })
      .at(0);
}

TEST(StepSimulator, Uniform1F1BBubbleMatchesClosedForm) {
  for (auto [p, m] : {std::pair{4, 8}, std::pair{8, 32}, std::pair{4, 4}}) {
    SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
    const double expected = double(p - 1) / (m + p - 1);  // REFERENCE.md: (p-1)/(m+p-1)
    const double got = played_bubble(uniform_workload(&pipeline_schedule("1f1b"), p, 1, m, 1e-3, 2e-3, 1e-3));
    EXPECT_NEAR(got, expected, 0.01 * expected);
    const double gpipe = played_bubble(uniform_workload(&pipeline_schedule("gpipe"), p, 1, m, 1e-3, 2e-3, 1e-3));
    EXPECT_NEAR(gpipe, expected, 0.01 * expected);
  }
}

TEST(StepSimulator, InterleavedDividesTheBubbleByV) {
  const int p = 4, m = 8, v = 2;
  // Bubble (p-1)(F+B)/v against m(F+B) of work: fraction ((p-1)/v) / (m + (p-1)/v).
  const double expected = (double(p - 1) / v) / (m + double(p - 1) / v);
  const double got = played_bubble(uniform_workload(&pipeline_schedule("interleaved"), p, v, m, 1e-3, 2e-3, 1e-3));
  EXPECT_NEAR(got, expected, 0.02 * expected);
  const double one_f_one_b = double(p - 1) / (m + p - 1);
  EXPECT_LT(got, 0.6 * one_f_one_b);
}

TEST(StepSimulator, ZeroBubbleSchedulesShrinkTheBubble) {
  const int p = 4, m = 12;
  // F = 1, B = 1, W = 1 (B+W = 2): ZB-H1 (p-1)(F+B-2W) = 0 ideal vs 1F1B (p-1)(F+B) = 9.
  const double f1b = played_bubble(uniform_workload(&pipeline_schedule("1f1b"), p, 1, m, 1e-3, 2e-3, 1e-3));
  const double h1 = played_bubble(uniform_workload(&pipeline_schedule("zb-h1"), p, 1, m, 1e-3, 2e-3, 1e-3));
  const double h2 = played_bubble(uniform_workload(&pipeline_schedule("zb-h2"), p, 1, m, 1e-3, 2e-3, 1e-3));
  const double dual = played_bubble(uniform_workload(&pipeline_schedule("dualpipe"), p, 1, m, 1e-3, 2e-3, 1e-3));
  std::printf("bubble fraction p=%d m=%d: 1f1b %.4f zb-h1 %.4f zb-h2 %.4f dualpipe %.4f\n", p, m, f1b,
              h1, h2, dual);
  EXPECT_LT(h1, 0.8 * f1b);
  // ZB-H2's steps overlap (no barrier at the optimizer): a step is a device's span, about
  // m (F + B + W) with one slot to spare (the timeline's 37 against 36, a bubble of 1/37).
  EXPECT_LT(h2, 0.5 * h1);
  EXPECT_NEAR(h2, 1.0 / 37, 0.01);
  EXPECT_LT(dual, f1b);
}

// Where transfers do not contend, the SimGrid step plays exactly what models' fixed-delay
// timeline plays (same PipelineRunner rules; the ~2 us transfer as the delay).
TEST(StepSimulator, MatchesFixedDelayTimelineForEverySchedule) {
  for (const PipelineSchedule* kind : pipeline_schedules()) {
    SCOPED_TRACE(kind->name());
    const int p = 4, m = 16, v = kind->uses_virtual_stages() ? 2 : 1;
    const Workload wl = uniform_workload(kind, p, v, m, 1e-3, 2.5e-3, 1e-3);
    std::vector<StageCosts> costs(p, StageCosts{1e-3 / v, 1.5e-3 / v, 1e-3 / v});
    const Timeline ref = play_schedule(*kind, p, v, m, costs, 2e-6);
    const double got = played_bubble(wl);
    EXPECT_NEAR(got, ref.bubble_fraction, 0.01 * ref.bubble_fraction + 1e-4);
  }
}

LoadOptions presets() {
  LoadOptions o;
  o.preset_dirs = {std::string(TRAINSIM_SOURCE_DIR) + "/scenarios"};
  return o;
}

Scenario scenario(const nlohmann::json& raw) {
  return parse_scenario(resolve_scenario_json(raw, presets(), "."));
}

nlohmann::json base_raw() {
  return {{"schema_version", 1},
          {"name", "step-test"},
          {"model", "gpt-1.7b"},
          {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 1}}},
          {"plan", {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 16}}},
          {"training", {{"steps", 1}}}};
}

// Simulated result as JSON text (extras merged), run in a child.
std::string simulate_json(const Scenario& s, const std::string& trace = "", int max_buckets_per_chunk = 0) {
  const auto bytes = in_child_process([&] {
    SimulateOptions o;
    o.trace_path = trace;
    if (max_buckets_per_chunk > 0) o.step.max_buckets_per_chunk = max_buckets_per_chunk;
    nlohmann::json extra = nlohmann::json::object();
    const Result r = simulate_step(s, o, extra);
    nlohmann::json out = result_to_json(r);
    for (auto it = extra.begin(); it != extra.end(); ++it) out[it.key()] = it.value();
    const std::string text = out.dump();
    return std::vector<double>(text.begin(), text.end());
  });
  return std::string(bytes.begin(), bytes.end());
}

TEST(StepSimulator, AgreesWithEstimateWithoutContention) {
  nlohmann::json tp8 = base_raw();  // one node, TP8: nothing crosses a shared link
  nlohmann::json pp4 = base_raw();  // one node, TP2 PP4, 1F1B: p2p over NVLink
  pp4["plan"]["tp"] = 2;
  pp4["plan"]["pp"] = 4;
  pp4["plan"]["global_batch"] = 32;
  nlohmann::json dp2 = pp4;  // plus DP over two nodes (rail-optimised, full bisection)
  dp2["cluster"]["nodes"] = 2;
  dp2["plan"]["dp"] = 2;
  dp2["plan"]["global_batch"] = 64;
  // DualPipe: each micro-batch through one of a device's two stages, each played with its own
  // passes in both tiers (devices 0 and p-1 hold the embedding's stage and the output layer's).
  nlohmann::json dual = pp4;
  dual["plan"]["schedule"] = "dualpipe";
  // ZB-H2, whose steps overlap: the estimate's closed-form bubble (m >= 2p) and its played one
  // (m < 2p) against the simulated devices' spans.
  nlohmann::json zb = pp4;
  zb["plan"]["schedule"] = "zb-h2";
  nlohmann::json zb_short = zb;
  zb_short["plan"]["global_batch"] = 6;
  // ZB-H1 with data parallelism: a stage's gradients are final in its last W, not in its last
  // B + W, so its reduction has only that W to hide behind.
  nlohmann::json zb_dp = dp2;
  zb_dp["plan"]["schedule"] = "zb-h1";
  for (const auto& raw : {tp8, pp4, dp2, dual, zb, zb_short, zb_dp}) {
    SCOPED_TRACE(raw["plan"].dump());
    const Scenario s = scenario(raw);
    const Result est = estimate(s);
    const auto sim = nlohmann::json::parse(simulate_json(s));
    std::printf("estimate %.6f s, simulate %.6f s (%s)\n", est.step_time_s,
                sim["step_time_s"].get<double>(), raw["plan"].dump().c_str());
    EXPECT_EQ(sim["fidelity"], "simulate");
    EXPECT_NEAR(sim["step_time_s"].get<double>(), est.step_time_s, 0.02 * est.step_time_s);
  }
}

TEST(StepSimulator, MergedGradientBucketsPayEachMegatronBucketsLatency) {
  // GPT 1.7B, DP 16 over two nodes, fp32 gradients, 512-token sequences: the reduction, 52
  // Megatron buckets of 40M parameters and one of the rest, outlasts the backward. Merged into
  // two simulated buckets it moves the same bytes in fewer flows and still waits the latency of
  // every collective it stands for: its contention-free time is the buckets' sum, and the step
  // is within a percent of the one that plays every bucket.
  nlohmann::json raw = base_raw();
  raw["cluster"]["nodes"] = 2;
  raw["plan"] = {{"tp", 1}, {"pp", 1}, {"dp", 16}, {"micro_batch", 1}, {"global_batch", 16},
                 {"grad_reduce_precision", "fp32"}};
  Scenario s = scenario(raw);
  s.model.seq_len = 512;
  const auto merged = nlohmann::json::parse(simulate_json(s, "", 2));
  const auto each = nlohmann::json::parse(simulate_json(s, "", 64));
  ASSERT_EQ(merged["simulation"]["dp_buckets_per_chunk_max"], 2);
  ASSERT_GT(each["simulation"]["dp_buckets_simulated"].get<int>(), 40);
  const double free_merged = merged["simulation"]["collectives_by_purpose"]["dp"]["contention_free_s"].get<double>();
  const double free_each = each["simulation"]["collectives_by_purpose"]["dp"]["contention_free_s"].get<double>();
  EXPECT_NEAR(free_merged, free_each, 1e-6 * free_each);
  EXPECT_NEAR(merged["step_time_s"].get<double>(), each["step_time_s"].get<double>(),
              0.01 * each["step_time_s"].get<double>());
}

TEST(StepSimulator, PlaysDualPipesOverlappedForwardAndBackwardAsTheEstimateDoes) {
  // Mixtral 8x7B, EP8 over 4 H100 nodes, DualPipe PP4: each pair of a backward and a forward
  // plays as one program, the expert all-to-alls as flows beside the other pass's compute.
  nlohmann::json raw = base_raw();
  raw["model"] = "mixtral-8x7b";
  raw["cluster"] = {{"base", "dgx-h100-superpod"}, {"nodes", 4}};
  raw["plan"] = {{"tp", 1}, {"pp", 4}, {"dp", 8}, {"ep", 8}, {"schedule", "dualpipe"}, {"micro_batch", 1},
                 {"global_batch", 64}, {"zero_stage", 1}, {"recompute", "full"}};
  const Scenario s = scenario(raw);
  const Result est = estimate(s);
  const auto sim = nlohmann::json::parse(simulate_json(s));
  std::printf("dualpipe: estimate %.4f s, simulate %.4f s; exposed ep %.4f / %.4f s\n", est.step_time_s,
              sim["step_time_s"].get<double>(), est.breakdown.ep_comm_s, sim["breakdown_s"]["ep_comm"].get<double>());
  EXPECT_NEAR(sim["step_time_s"].get<double>(), est.step_time_s, 0.02 * est.step_time_s);
  EXPECT_NEAR(sim["breakdown_s"]["ep_comm"].get<double>(), est.breakdown.ep_comm_s, 0.25 * est.breakdown.ep_comm_s);
}

// ZeRO-3 over one node's 8 GPUs (GPT 1.7B, TP1 DP8): the next layer's parameters prefetched
// (the default) and a one-element prefetch buffer.
std::pair<Scenario, Scenario> zero3_prefetch_pair() {
  nlohmann::json raw = base_raw();
  raw["plan"]["tp"] = 1;
  raw["plan"]["dp"] = 8;
  raw["plan"]["zero_stage"] = 3;
  const Scenario ahead = scenario(raw);
  raw["plan"]["zero3_prefetch_params"] = 1;
  return {ahead, scenario(raw)};
}

TEST(StepSimulator, PlaysTheGathersABoundedPrefetchBufferLeavesOnTheCriticalPath) {
  // ZeRO-3 over one node's 8 GPUs: with the whole next layer prefetched the gathers hide behind
  // compute; with a one-element buffer (DeepSpeed's stage3_prefetch_bucket_size at its floor)
  // every layer waits for its own gather, in the flows as in the closed form. The simulated
  // gathers also share NVLink with the backward pass's reduce-scatters, so the simulation waits
  // somewhat longer.
  const auto [ahead, bare] = zero3_prefetch_pair();
  const Result est_ahead = estimate(ahead), est_bare = estimate(bare);
  const auto sim_ahead = nlohmann::json::parse(simulate_json(ahead));
  const auto sim_bare = nlohmann::json::parse(simulate_json(bare));
  const double est_extra = est_bare.breakdown.dp_comm_s - est_ahead.breakdown.dp_comm_s;
  const double sim_extra =
      sim_bare["breakdown_s"]["dp_comm"].get<double>() - sim_ahead["breakdown_s"]["dp_comm"].get<double>();
  std::printf("exposed dp: whole layer ahead %.4f / %.4f s, no prefetch %.4f / %.4f s (estimate / simulate)\n",
              est_ahead.breakdown.dp_comm_s, sim_ahead["breakdown_s"]["dp_comm"].get<double>(),
              est_bare.breakdown.dp_comm_s, sim_bare["breakdown_s"]["dp_comm"].get<double>());
  EXPECT_GT(est_extra, 0.5 * est_ahead.breakdown.dp_comm_s);
  EXPECT_GT(sim_extra, 0.8 * est_extra);
  EXPECT_LT(sim_extra, 1.5 * est_extra);
  EXPECT_NEAR(sim_bare["step_time_s"].get<double>(), est_bare.step_time_s, 0.1 * est_bare.step_time_s);
}

TEST(StepSimulator, BothTiersCountTheZeroThreeCollectivesThatRanBesideCompute) {
  // ZeRO-3 over one node's 8 GPUs, GPT 1.7B in bf16: each micro-batch gathers the parameters
  // twice (forward, backward) and reduce-scatters the gradients once, on the NVLink line rate
  // (300 GB/s a direction) at best. What of it ran beside compute (overlapped_s.dp_comm) and what
  // the compute waited for (breakdown_s.dp_comm) add up to that busy time in both tiers; with the
  // next layer prefetched most of it is hidden, with a one-element buffer less of it.
  const auto [ahead, bare] = zero3_prefetch_pair();
  const double params = count_params(ahead.model).total;
  const double m = 2;  // global batch 16 over DP 8, micro-batch 1
  const double floor_s = m * 3 * 2 * params * 7.0 / 8.0 / 300e9;
  struct Split {
    double hidden, exposed;
  };
  const auto tiers = [&](const Scenario& s) {
    const Result est = estimate(s);
    const auto sim = nlohmann::json::parse(simulate_json(s));
    return std::pair<Split, Split>{{est.overlapped.dp_s, est.breakdown.dp_comm_s},
                                   {sim["overlapped_s"]["dp_comm"].get<double>(),
                                    sim["breakdown_s"]["dp_comm"].get<double>()}};
  };
  const auto [est_ahead, sim_ahead] = tiers(ahead);
  const auto [est_bare, sim_bare] = tiers(bare);
  std::printf("line-rate floor %.4f s; hidden / exposed: prefetched %.4f / %.4f (estimate), %.4f / %.4f "
              "(simulate); one-element buffer %.4f / %.4f, %.4f / %.4f\n",
              floor_s, est_ahead.hidden, est_ahead.exposed, sim_ahead.hidden, sim_ahead.exposed, est_bare.hidden,
              est_bare.exposed, sim_bare.hidden, sim_bare.exposed);
  for (const Split& x : {est_ahead, sim_ahead, est_bare, sim_bare}) {
    EXPECT_GT(x.hidden + x.exposed, floor_s);
    EXPECT_LT(x.hidden + x.exposed, 3 * floor_s);
  }
  EXPECT_GT(est_ahead.hidden, 2 * est_ahead.exposed);
  EXPECT_GT(sim_ahead.hidden, 2 * sim_ahead.exposed);
  EXPECT_NEAR(sim_ahead.hidden, est_ahead.hidden, 0.2 * est_ahead.hidden);
  EXPECT_LT(est_bare.hidden, 0.8 * est_ahead.hidden);
  EXPECT_LT(sim_bare.hidden, 0.8 * sim_ahead.hidden);
}

TEST(StepSimulator, PlaysTheArrivalWaitsTheEstimatePrices) {
  // With a measured call-to-call spread, each collective waits for its group's last member
  // (arrival_wait.hpp): the simulate tier delays the flows by the same wait the estimate adds,
  // so the two still agree, and both are slower than without it.
  nlohmann::json raw = base_raw();
  raw["plan"]["tp"] = 2;
  raw["plan"]["pp"] = 2;
  raw["plan"]["dp"] = 2;
  raw["plan"]["global_batch"] = 32;
  raw["plan"]["overlap"] = {{"dp", false}};
  const Scenario plain = scenario(raw);
  Scenario noisy = plain;
  noisy.cluster.gpu.op_rates.op_time_cv = 0.1;
  const Result est0 = estimate(plain), est = estimate(noisy);
  const auto sim0 = nlohmann::json::parse(simulate_json(plain));
  const auto sim = nlohmann::json::parse(simulate_json(noisy));
  std::printf("estimate %.6f -> %.6f s, simulate %.6f -> %.6f s\n", est0.step_time_s, est.step_time_s,
              sim0["step_time_s"].get<double>(), sim["step_time_s"].get<double>());
  EXPECT_GT(est.step_time_s, est0.step_time_s * 1.001);
  EXPECT_GT(sim["step_time_s"].get<double>(), sim0["step_time_s"].get<double>() * 1.001);
  EXPECT_NEAR(sim["step_time_s"].get<double>(), est.step_time_s, 0.02 * est.step_time_s);
}

TEST(StepSimulator, DpContentionOnOversubscribedFatTree) {
  nlohmann::json raw = base_raw();
  raw["cluster"] = {{"base", "dgx-a100-superpod"},
                    {"nodes", 8},
                    {"network", {{"topology", "fat-tree"}, {"oversubscription", 4}, {"switch_radix", 16},
                                 {"routing", "ecmp"}}}};
  raw["plan"]["dp"] = 8;
  raw["plan"]["global_batch"] = 64;
  raw["plan"]["overlap"] = {{"dp", false}};
  const Scenario s = scenario(raw);
  const Result est = estimate(s);
  const auto sim = nlohmann::json::parse(simulate_json(s));
  const double sim_dp = sim["breakdown_s"]["dp_comm"].get<double>();
  std::printf("dp exposed: estimate %.6f s, simulate %.6f s; step %.6f vs %.6f s\n",
              est.breakdown.dp_comm_s, sim_dp, est.step_time_s, sim["step_time_s"].get<double>());
  EXPECT_GT(sim_dp, 1.05 * est.breakdown.dp_comm_s);
  EXPECT_GT(sim["step_time_s"].get<double>(), est.step_time_s);
  EXPECT_FALSE(sim["hottest_links"].empty());
  EXPECT_EQ(sim["estimate_vs_simulate"]["cause"], "contention");
  // ECMP by flow hash piles several rings on some leaf-spine uplinks: the busiest of them is
  // busier than any NIC (hottest_links lists the hottest of each kind).
  std::map<std::string, double> busiest;
  for (const auto& l : sim["hottest_links"])
    busiest[l["kind"].get<std::string>()] = std::max(busiest[l["kind"].get<std::string>()], l["utilisation"].get<double>());
  ASSERT_TRUE(busiest.count("switch") && busiest.count("nic")) << sim["hottest_links"].dump();
  EXPECT_GT(busiest["switch"], busiest["nic"]);
}

// gpt-1.7b TP8 PP8 1F1B, 64 micro-batches, on 8 DGX A100 nodes with `network` over the preset's.
nlohmann::json tp8_pp8_1f1b_raw(const nlohmann::json& network = nlohmann::json::object()) {
  nlohmann::json raw = base_raw();
  raw["cluster"] = {{"base", "dgx-a100-superpod"}, {"nodes", 8}};
  if (!network.empty()) raw["cluster"]["network"] = network;
  raw["plan"]["pp"] = 8;
  raw["plan"]["global_batch"] = 64;
  raw["plan"]["schedule"] = "1f1b";
  return raw;
}

TEST(StepSimulator, APipelinePacedByItsTransfersReportsThemAsPipelineCommunication) {
  // TP8 PP8 on 8 nodes with one NIC, two nodes a leaf, a 16:1 uplink taper: the sends across
  // leaves (stages 1-2, 3-4, 5-6) outlast a micro-batch's passes, and 1F1B's in-flight bound
  // makes every stage wait for them. The schedule's own bubble (its ops as played, transfers
  // instant) stays the bubble; the rest of the idle time is exposed PP communication, in both
  // tiers, and the two step times agree.
  const Scenario s = scenario(tp8_pp8_1f1b_raw({{"topology", "fat-tree"}, {"nics_per_node", 1}, {"switch_radix", 4},
                                                {"oversubscription", 16}}));
  const Result est = estimate(s);
  const auto sim = nlohmann::json::parse(simulate_json(s));
  const double sim_step = sim["step_time_s"].get<double>();
  const double sim_pp = sim["breakdown_s"]["pp_comm"].get<double>();
  const double sim_bubble = sim["breakdown_s"]["bubble"].get<double>();
  std::printf("pp comm: estimate %.4f simulate %.4f s; bubble %.4f / %.4f s; step %.4f / %.4f s\n",
              est.breakdown.pp_comm_s, sim_pp, est.breakdown.bubble_s, sim_bubble, est.step_time_s, sim_step);
  EXPECT_GT(sim_pp, 0.3 * sim_step);
  EXPECT_LT(sim_bubble, 0.5 * sim_pp);
  EXPECT_GT(est.breakdown.pp_comm_s, 0.3 * est.step_time_s);
  EXPECT_NEAR(est.step_time_s, sim_step, 0.1 * sim_step);
  EXPECT_NEAR(est.breakdown.pp_comm_s, sim_pp, 0.25 * sim_pp);
}

TEST(StepSimulator, OnlyTheSendsThatLeaveALeafShareItsTaper) {
  // TP8 PP8 on 8 nodes of 8 NICs under 64-port leaves (4 nodes a leaf), a 32:1 taper: only
  // the boundary 3 -> 4 leaves a leaf, and its 8 sends share uplinks of 32 / 32 ports, an
  // eighth of a NIC each, not the 32nd the full taper would give. Micro-batch 8 makes the
  // sends weigh. Both tiers charge the taper alike.
  auto plan = [](double oversubscription) {
    nlohmann::json raw = tp8_pp8_1f1b_raw({{"topology", "fat-tree"}, {"oversubscription", oversubscription}});
    raw["plan"]["micro_batch"] = 8;
    raw["plan"]["global_batch"] = 256;
    return scenario(raw);
  };
  const Result flat = estimate(plan(1)), tapered = estimate(plan(32));
  const auto sim_flat = nlohmann::json::parse(simulate_json(plan(1)));
  const auto sim = nlohmann::json::parse(simulate_json(plan(32)));
  const double sim_flat_pp = sim_flat["breakdown_s"]["pp_comm"].get<double>();
  const double sim_pp = sim["breakdown_s"]["pp_comm"].get<double>();
  std::printf("pp comm: full bisection estimate %.4f simulate %.4f s; 32:1 estimate %.4f simulate %.4f s\n",
              flat.breakdown.pp_comm_s, sim_flat_pp, tapered.breakdown.pp_comm_s, sim_pp);
  const double added_est = tapered.breakdown.pp_comm_s - flat.breakdown.pp_comm_s;
  const double added_sim = sim_pp - sim_flat_pp;
  EXPECT_GT(added_sim, 0);
  EXPECT_NEAR(added_est, added_sim, 0.25 * added_sim);
}

TEST(StepSimulator, BothTiersBreakDownTheSameStage) {
  // TP8 PP8 1F1B, gpt-1.7b: the last stage carries the logits and the loss besides its three
  // layers, so it is the busiest and sits idle least; stage 0 finishes last and idles most.
  // Both tiers describe the busiest stage: the same compute, and the same bubble (its idle
  // over the pipeline's span), so "where the step goes" reads alike in both.
  const Scenario s = scenario(tp8_pp8_1f1b_raw());
  const Result est = estimate(s);
  const auto sim = nlohmann::json::parse(simulate_json(s));
  const auto& bd = sim["breakdown_s"];
  EXPECT_EQ(sim["simulation"]["critical_stage"].get<int>(), 7);
  EXPECT_NEAR(bd["compute"].get<double>(), est.breakdown.compute_s, 0.01 * est.breakdown.compute_s);
  EXPECT_NEAR(bd["bubble"].get<double>(), est.breakdown.bubble_s, 0.1 * est.breakdown.bubble_s);
  // The busiest stage idles less than the mean stage (bubble_fraction).
  EXPECT_LT(bd["bubble"].get<double>(), sim["bubble_fraction"].get<double>() * sim["step_time_s"].get<double>());
  double sum = 0;
  for (auto it = bd.begin(); it != bd.end(); ++it) sum += it.value().get<double>();
  EXPECT_NEAR(sum, sim["step_time_s"].get<double>(), 1e-9 * sum);
}

TEST(StepSimulator, ARingUnderOneLeafDoesNotPayTheTaper) {
  // Four nodes on a fat-tree of 64-port switches: 32 down ports, 8 NICs a node, so all four
  // hang off one leaf and the DP ring turns there. The 4:1 taper above the leaf must cost it
  // nothing, in the closed form as in the flows. On 32-port switches the nodes sit two to a
  // leaf: the ring leaves each leaf on one node's links of two, and its four uplinks of the
  // sixteen ports halve it, in both tiers.
  auto plan = [](int radix, double oversubscription) {
    nlohmann::json raw = base_raw();
    raw["cluster"] = {{"base", "dgx-a100-superpod"},
                      {"nodes", 4},
                      {"network", {{"topology", "fat-tree"}, {"oversubscription", oversubscription},
                                   {"switch_radix", radix}}}};
    raw["plan"]["tp"] = 1;
    raw["plan"]["dp"] = 32;
    raw["plan"]["global_batch"] = 32;
    raw["plan"]["overlap"] = {{"dp", false}};
    return scenario(raw);
  };
  const Result flat = estimate(plan(64, 1)), one_leaf = estimate(plan(64, 4)), two_leaves = estimate(plan(32, 4));
  const auto sim_one = nlohmann::json::parse(simulate_json(plan(64, 4)));
  const auto sim_two = nlohmann::json::parse(simulate_json(plan(32, 4)));
  const double sim_one_dp = sim_one["breakdown_s"]["dp_comm"].get<double>();
  const double sim_two_dp = sim_two["breakdown_s"]["dp_comm"].get<double>();
  std::printf("dp exposed: full bisection %.4f s; one leaf: estimate %.4f simulate %.4f s; "
              "two leaves: estimate %.4f simulate %.4f s\n",
              flat.breakdown.dp_comm_s, one_leaf.breakdown.dp_comm_s, sim_one_dp,
              two_leaves.breakdown.dp_comm_s, sim_two_dp);
  EXPECT_DOUBLE_EQ(one_leaf.breakdown.dp_comm_s, flat.breakdown.dp_comm_s);
  EXPECT_NEAR(sim_one_dp, one_leaf.breakdown.dp_comm_s, 0.15 * one_leaf.breakdown.dp_comm_s);
  EXPECT_GT(sim_two_dp, 1.5 * sim_one_dp);
  EXPECT_NEAR(two_leaves.breakdown.dp_comm_s, sim_two_dp, 0.15 * sim_two_dp);
}

TEST(StepSimulator, SameScenarioGivesIdenticalJson) {
  nlohmann::json raw = base_raw();
  raw["cluster"]["nodes"] = 2;
  raw["plan"] = {{"tp", 2}, {"pp", 4}, {"dp", 2}, {"vpp", 2}, {"schedule", "interleaved"},
                 {"micro_batch", 1}, {"global_batch", 32}};
  const Scenario s = scenario(raw);
  const std::string a = simulate_json(s), b = simulate_json(s);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

TEST(StepSimulator, TraceLoadsAsChromeJson) {
  nlohmann::json raw = base_raw();
  raw["cluster"]["nodes"] = 2;
  raw["plan"] = {{"tp", 2}, {"pp", 4}, {"dp", 2}, {"micro_batch", 1}, {"global_batch", 16}};
  const std::string path = ::testing::TempDir() + "step_trace_test.json";
  simulate_json(scenario(raw), path);
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);  // throws on invalid JSON
  ASSERT_TRUE(trace["traceEvents"].is_array());
  bool forward = false, flow_s = false, flow_f = false, counter = false, dp = false;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    if (ph == "X" && e.value("name", "") == "F mb3 c0" && e["pid"] == 1) forward = true;
    if (ph == "s") flow_s = true;
    if (ph == "f") flow_f = true;
    if (ph == "C") counter = true;
    if (ph == "X" && e.value("cat", "") == "dp") dp = true;
  }
  EXPECT_TRUE(forward);
  EXPECT_TRUE(flow_s && flow_f);
  EXPECT_TRUE(counter);
  EXPECT_TRUE(dp);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace trainsim::sim

namespace trainsim::sim {
namespace {

TEST(StepSimulator, DeepEpPlaysItsNetworkAndNvlinkHopsAsFlows) {
  // DeepSeek-V3's routing shape on four 8-GPU nodes, EP 32: DeepEP's two hops run as flows on
  // the NICs and on NVLink, move what the closed form counts, and take the time it says (no
  // contention on a rail-optimised fabric); the alltoall dispatcher's step is slower.
  auto raw = [](const char* dispatcher) {
    return nlohmann::json{
        {"schema_version", 1},
        {"name", "deepep"},
        {"model",
         {{"name", "moe-grouped"}, {"layers", 4}, {"hidden", 2048}, {"heads", 16}, {"ffn_hidden", 4096},
          {"ffn_act", "swiglu"}, {"vocab", 32000}, {"seq_len", 2048},
          {"moe", {{"experts", 64}, {"top_k", 8}, {"expert_ffn_hidden", 1024}, {"groups", 8}, {"groups_per_token", 4}}}}},
        {"cluster", {{"base", "h800-cluster"}, {"nodes", 4}}},
        {"plan", {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"ep", 32}, {"global_batch", 64}, {"moe_dispatcher", dispatcher}}}};
  };
  const Scenario deepep = scenario(raw("deepep")), a2a = scenario(raw("alltoall"));
  const Result est = estimate(deepep);
  const auto sim = nlohmann::json::parse(simulate_json(deepep));
  const auto sim_a2a = nlohmann::json::parse(simulate_json(a2a));
  const double moved = sim["simulation"]["traffic_bytes"]["ep"].get<double>();
  const double closed = sim["simulation"]["traffic_bytes_closed_form"]["ep"].get<double>();
  EXPECT_NEAR(moved, closed, 0.05 * closed);
  EXPECT_NEAR(closed, est.ep_bytes * est.gpus, 0.05 * closed);
  // The flows add what the closed form leaves out: the last micro-batch's exchanges share the
  // NICs with the gradient buckets (a few percent here).
  EXPECT_GE(sim["step_time_s"].get<double>(), est.step_time_s * 0.99);
  EXPECT_NEAR(sim["step_time_s"].get<double>(), est.step_time_s, 0.1 * est.step_time_s);
  EXPECT_LT(sim["step_time_s"].get<double>(), 0.8 * sim_a2a["step_time_s"].get<double>());
  std::map<std::string, double> busiest;
  for (const auto& l : sim["hottest_links"])
    busiest[l["kind"].get<std::string>()] = std::max(busiest[l["kind"].get<std::string>()], l["utilisation"].get<double>());
  EXPECT_TRUE(busiest.count("nvlink") && busiest.count("nic")) << sim["hottest_links"].dump();
}

}  // namespace
}  // namespace trainsim::sim
