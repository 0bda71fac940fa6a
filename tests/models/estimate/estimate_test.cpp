#include "models/estimate/estimate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/flops.hpp"
#include "models/cost/memory.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/workload/program_reduce.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario make(const json& plan, const std::string& model = "gpt-18.4b", int nodes = 32,
              const json& cluster_extra = json::object()) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json cluster = {{"base", "dgx-a100-superpod"}, {"nodes", nodes}};
  for (auto it = cluster_extra.begin(); it != cluster_extra.end(); ++it) cluster[it.key()] = it.value();
  json j = {{"schema_version", 1}, {"model", model}, {"cluster", cluster}, {"plan", plan}};
  return parse_scenario(resolve_scenario_json(j, o));
}

TEST(Estimate, BucketedGradientReductionRunsOnceItsFirstBucketIsFinal) {
  // DDP-style overlap: buckets of dp_bucket_params gradients reduce as the last backward makes
  // them final, one collective each, one after another on one stream. The first is final only
  // after its share s of the pass (b seconds), so a reduction of R seconds that outlasts the
  // pass ends R - b (1 - s) after it (the first bucket waits s b, then the buckets run back to
  // back); one that does not leaves the last bucket, s R. The last bucket holds the input
  // embedding whole (its gradient is made last, and a bucket never splits a parameter):
  // GPT 1.7B's 51,200 x 2,304 (its padded vocabulary) are about three buckets. DP 16 over 2 nodes, fp32 gradients:
  // 512-token sequences make the reduction outlast the backward, 4,096-token ones hide it.
  for (int seq : {512, 4096}) {
    SCOPED_TRACE(seq);
    Scenario sc = make({{"tp", 1}, {"pp", 1}, {"dp", 16}, {"micro_batch", 1}, {"global_batch", 16},
                        {"grad_reduce_precision", "fp32"}},
                       "gpt-1.7b", 2);
    sc.model.seq_len = seq;
    Workload w;
    Result built;
    ASSERT_TRUE(build_workload(sc, w, built)) << built.reason;
    const StageWork& stage = w.stages[0];
    EXPECT_EQ(stage.params_final_at_end, 51200.0 * 2304);
    // R: one all-reduce per Megatron bucket of 40M parameters and one of the rest.
    const double params = stage.dense_params, bucket = 40e6, full = std::floor(params / bucket);
    auto all_reduce = [&](double n) {
      return collective_cost(CollectiveOp::kAllReduce, w.algo, w.protocol, n * 4, w.dp_group, w.fabric).time_s;
    };
    const double reduce = stage.dp_reduce_s, pass = stage.backward_s;
    EXPECT_NEAR(reduce, full * all_reduce(bucket) + all_reduce(params - full * bucket) + w.dp_arrival_wait_s,
                1e-9 * reduce);
    EXPECT_GT(reduce, all_reduce(params) + w.dp_arrival_wait_s);  // each bucket pays its latency
    const double share = stage.params_final_at_end / params;
    ASSERT_GT(share, 0.05);
    ASSERT_LT(share, 0.1);
    const Result r = estimate(sc);
    ASSERT_TRUE(r.feasible) << r.reason;
    const double expected = std::max(share * reduce, reduce - pass * (1 - share));
    if (seq == 512) EXPECT_GT(reduce, pass);
    else EXPECT_LT(reduce, 0.9 * pass);
    EXPECT_NEAR(r.breakdown.dp_comm_s, expected, 1e-9 * r.step_time_s);
  }
}

TEST(Estimate, PipelineSendsArePricedAtTheBoundaryThatCrossesALeaf) {
  // 8 nodes of 8 GPUs, one NIC a node, two nodes a leaf (switch radix 4), TP8 PP8: stage s on
  // node s. Stages 0 and 1 share a leaf, stages 1 and 2 do not: a 16:1 uplink taper slows the
  // sends that cross it (nccl_model.cpp, taper), and every micro-batch crosses every boundary.
  auto run = [&](double oversubscription) {
    const json network = {{"topology", "fat-tree"}, {"nics_per_node", 1}, {"switch_radix", 4},
                          {"oversubscription", oversubscription}};
    return estimate(make({{"tp", 8}, {"pp", 8}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 64}}, "gpt-1.7b", 8,
                         {{"network", network}}));
  };
  const Result flat = run(1), tapered = run(16);
  ASSERT_TRUE(flat.feasible && tapered.feasible) << flat.reason << tapered.reason;
  EXPECT_GT(flat.breakdown.pp_comm_s, 0);
  EXPECT_GT(tapered.breakdown.pp_comm_s, 8 * flat.breakdown.pp_comm_s);
}

TEST(Estimate, SlowPipelineTransfersPaceTheSteadyState) {
  // 1F1B holds p - s micro-batches on stage s, so stage 0's steady state waits for each one's
  // round trip through every stage and across every boundary twice: m micro-batches take at
  // least m (sum over stages of (F + B) + 2 x the sum over boundaries of a transfer) / p
  // (Narayanan et al., SC'21, on 1F1B's in-flight bound), whether or not the sends overlap
  // compute. 8 nodes of 8 GPUs, one NIC a node, two nodes a leaf, a 32:1 uplink taper: the
  // transfers across leaves (stages 1-2, 3-4, 5-6) take longer than a micro-batch's passes.
  const json network = {{"topology", "fat-tree"}, {"nics_per_node", 1}, {"switch_radix", 4}, {"oversubscription", 32}};
  const Scenario sc = make({{"tp", 8}, {"pp", 8}, {"dp", 1}, {"micro_batch", 1}, {"global_batch", 64}}, "gpt-1.7b", 8,
                           {{"network", network}});
  const EstimatedStep e = estimate_step(sc);
  ASSERT_TRUE(e.result.feasible) << e.result.reason;
  const Workload& w = e.workload;
  ASSERT_EQ(w.p2p_boundary_s.size(), 8u);
  double passes = 0, transfers = 0;
  for (const StageWork& s : w.stages) passes += s.forward_s + s.backward_s;
  for (int d = 0; d < 7; ++d) transfers += w.p2p_boundary_s[d];
  EXPECT_GT(w.p2p_boundary_s[1], 4 * w.p2p_boundary_s[0]);  // crosses the taper; 0-1 share a leaf
  EXPECT_EQ(w.p2p_boundary_s[7], 0.0);                       // no 1F1B chunk wraps around
  const double cycle_bound = w.micro_batches * (passes + 2 * transfers) / w.pp;
  ASSERT_GT(cycle_bound, 1.5 * w.micro_batches * (passes / w.pp));  // the transfers matter here
  EXPECT_GE(e.result.step_time_s, cycle_bound);
  EXPECT_GT(e.result.breakdown.pp_comm_s, 0.5 * (cycle_bound - w.micro_batches * passes / w.pp));
}

TEST(Estimate, InfeasiblePlansSayWhy) {
  struct Case {
    json plan;
    const char* reason;
  };
  const Case cases[] = {
      {{{"tp", 5}, {"dp", 1}, {"global_batch", 8}}, "plan.tp x plan.pp x plan.dp"},
      {{{"tp", 32}, {"dp", 8}, {"global_batch", 64}}, "does not divide model.heads (48)"},
      {{{"tp", 8}, {"pp", 3}, {"dp", 32}, {"global_batch", 96}}, "plan.tp x plan.pp x plan.dp"},
      {{{"tp", 8}, {"dp", 32}, {"global_batch", 100}}, "not a multiple of plan.micro_batch x plan.dp"},
      {{{"tp", 8}, {"pp", 2}, {"dp", 16}, {"vpp", 2}, {"global_batch", 96}}, "needs plan.schedule \"interleaved\""},
      {{{"tp", 8}, {"dp", 32}, {"ep", 2}, {"global_batch", 64}}, "no experts"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.plan.dump());
    const Result r = estimate(make(c.plan));
    EXPECT_FALSE(r.feasible);
    EXPECT_NE(r.reason.find(c.reason), std::string::npos) << r.reason;
  }
}

TEST(Estimate, OutOfMemoryIsAResultWithTheStageAndBreakdown) {
  // GPT-3 175B on one DGX node: 175B x 16 B / 8 GPUs (350 GB) does not fit in 80 GiB.
  const Result r = estimate(make({{"tp", 8}, {"global_batch", 8}}, "gpt3-175b", 1));
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.reason.find("out of memory: pipeline stage 0"), std::string::npos) << r.reason;
  EXPECT_GT(r.peak_memory_bytes, r.hbm_capacity_bytes);
  EXPECT_GT(r.step_time_s, 0);  // the figures are still there for the user
}

TEST(Estimate, GradientBucketsHoldNoMoreThanTheStagesGradients) {
  // Megatron's bucket rule, max(40M, 1M x dp) parameters, asks 4.1e9 parameters a bucket at
  // dp 4096; gpt-1.7b's single stage has 1.76e9 to put in one. ZeRO-2 keeps two buckets of
  // fp32 gradients (bf16 training reduces in fp32): 2 x 1.76e9 x 4 bytes, not 2 x 4.1e9 x 4.
  const Result r = estimate(make({{"tp", 1}, {"dp", 4096}, {"zero_stage", 2}, {"global_batch", 4096}},
                                 "gpt-1.7b", 512));
  ASSERT_EQ(r.per_stage.size(), 1u);
  const double stage_params = r.per_stage[0].breakdown.params_bytes / 2;  // bf16, unsharded under ZeRO-2
  EXPECT_NEAR(stage_params, 1.76e9, 0.02e9);
  EXPECT_NEAR(r.per_stage[0].breakdown.other_bytes - kFrameworkReserveBytes, 2 * stage_params * 4, 1e6);
}

TEST(Estimate, APeakWithLittleHeadroomIsWarnedAbout) {
  Scenario sc = make({{"tp", 8}, {"pp", 4}, {"dp", 8}, {"global_batch", 64}});
  const double peak = estimate(sc).peak_memory_bytes;
  ASSERT_GT(peak, 0);
  auto tight_warning = [](const Result& r) {
    for (const std::string& w : r.warnings)
      if (w.rfind("memory: the peak", 0) == 0) return w;
    return std::string();
  };
  // The same plan on GPUs holding 1/0.95 and 1/0.8 of its peak: both fit, only the first warns.
  sc.cluster.gpu.hbm_capacity_bytes = peak / 0.95;
  Result r = estimate(sc);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_DOUBLE_EQ(r.peak_memory_bytes, peak);
  EXPECT_NE(tight_warning(r).find("above 90%"), std::string::npos) << tight_warning(r);
  sc.cluster.gpu.hbm_capacity_bytes = peak / 0.8;
  r = estimate(sc);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(tight_warning(r), "");
}

TEST(Estimate, OneF1BBubbleFractionIsPMinusOneOverMPlusPMinusOne) {
  // Uniform stages (a vocabulary so small that the embedding and the output layer cost nothing
  // beside a layer): every stage idles (p-1)/(m+p-1) of the makespan.
  for (int m : {8, 16, 64}) {
    SCOPED_TRACE(m);
    Scenario sc = make({{"tp", 8}, {"pp", 4}, {"dp", 8}, {"global_batch", 8 * m}});
    sc.model.vocab = 64;
    const Result r = estimate(sc);
    ASSERT_TRUE(r.feasible) << r.reason;
    EXPECT_EQ(r.micro_batches, m);
    // (The first stage's embedding all-reduce and the last's loss leave the stages 0.3-0.4
    // points of imbalance idle.)
    EXPECT_NEAR(r.bubble_fraction, 3.0 / (m + 3.0), 0.005);
  }
  // With the real vocabulary the last stage carries the output layer: the others idle longer.
  const Result real = estimate(make({{"tp", 8}, {"pp", 4}, {"dp", 8}, {"global_batch", 64}}));
  EXPECT_GT(real.bubble_fraction, 3.0 / 11.0);
}

TEST(Estimate, InterleavingAndZeroBubbleShrinkTheBubble) {
  const json base = {{"tp", 8}, {"pp", 4}, {"dp", 8}, {"global_batch", 128}};
  const double b1f1b = estimate(make(base)).bubble_fraction;
  json inter = base;
  inter["schedule"] = "interleaved";
  inter["vpp"] = 2;
  json zb = base;
  zb["schedule"] = "zb-h1";
  EXPECT_LT(estimate(make(inter)).bubble_fraction, b1f1b);
  EXPECT_LT(estimate(make(zb)).bubble_fraction, b1f1b);
}

TEST(Estimate, DualPipeTakesEachMicroBatchThroughOneOfTheTwoStagesADeviceHolds) {
  // DualPipe (DeepSeek-V3 report, sec. 3.2.1 and Table 2): device d holds stage d of one
  // direction and stage p-1-d of the other, each direction carrying half the micro-batches. So
  // a device computes what a 1F1B device computes (m micro-batches through one stage's layers),
  // sends as many activations, and holds twice the parameters and gradients.
  const json base = {{"tp", 8}, {"pp", 4}, {"dp", 8}, {"global_batch", 64}};
  json dual = base;
  dual["schedule"] = "dualpipe";
  Scenario sa = make(base), sb = make(dual);
  sa.model.vocab = sb.model.vocab = 64;  // uniform stages: the embedding and the head cost nothing
  const Result one = estimate(sa), two = estimate(sb);
  ASSERT_TRUE(one.feasible) << one.reason;
  ASSERT_TRUE(two.feasible) << two.reason;
  EXPECT_NEAR(two.breakdown.compute_s, one.breakdown.compute_s, 1e-3 * one.breakdown.compute_s);
  EXPECT_NEAR(two.pp_bytes, one.pp_bytes, 1e-9 * one.pp_bytes);
  const MemoryBreakdown& m1 = one.per_stage[1].breakdown;
  const MemoryBreakdown& m2 = two.per_stage[1].breakdown;
  EXPECT_EQ(two.per_stage[1].layers, 2 * one.per_stage[1].layers);
  EXPECT_NEAR(m2.params_bytes, 2 * m1.params_bytes, 1e-9 * m1.params_bytes);
  EXPECT_NEAR(m2.grads_bytes, 2 * m1.grads_bytes, 1e-9 * m1.grads_bytes);
  // Its smaller bubble, (p/2 - 1)(F&B + B - 3W) against (p-1)(F + B), makes the pipeline
  // shorter; the step pays for the doubled parameters' gradient reduction (fp32 in bf16
  // training), exposed after the last backward.
  EXPECT_LT(two.breakdown.bubble_s, 0.6 * one.breakdown.bubble_s);
  EXPECT_LT(two.step_time_s - two.breakdown.dp_comm_s, one.step_time_s - one.breakdown.dp_comm_s);
  EXPECT_GT(two.breakdown.dp_comm_s, 1.5 * one.breakdown.dp_comm_s);
}

// DeepSeek-V3's report (arXiv:2412.19437, Table 1 and sec. 1) gives its pre-training cost:
// 180K H800 GPU hours per trillion tokens on its 2,048-GPU cluster, so a step of 15,360
// sequences of 4,096 tokens takes 180e3 * 3600 / 1e12 * 15360 * 4096 / 2048 = 19.9 s. The
// example scenario (its plan as the report states it) runs within 5% of that: it depends on
// DualPipe's reference order pairing every backward of the main phase with a forward (the
// ready-op rule left 10% more).
TEST(Estimate, DeepSeekV3sExampleStepsAtItsReportedTrainingCost) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  const char* dir = std::getenv("TRAINSIM_SCENARIOS");
  ASSERT_NE(dir, nullptr) << "ctest sets TRAINSIM_SCENARIOS";
  const Scenario s = load_scenario_file(std::string(dir) + "/examples/deepseek-v3-2048xH800.json", o);
  const Result r = estimate(s);
  ASSERT_TRUE(r.feasible) << r.reason;
  const double reported_s = 180e3 * 3600 / 1e12 * 15360.0 * 4096 / 2048;
  EXPECT_NEAR(reported_s, 19.9, 0.05);
  EXPECT_NEAR(r.step_time_s, reported_s, 0.05 * reported_s);
}

// DualPipe's F&B chunk: a device that starts a backward runs the forward its rule would start
// next beside it, as one program (fb_overlap.hpp), so each one's expert all-to-alls run beside
// the other's compute. Mixtral 8x7B, EP8 over 4 H100 nodes, PP4: every pair is shorter than its
// two passes alone and no shorter than their compute; the played timeline has pairs (a forward
// and a backward over the same interval, the pair's time); the all-to-all exposure the step
// reports is what the pairs left.
TEST(Estimate, DualPipeOverlapsAForwardWithABackward) {
  const json plan = {{"tp", 1}, {"pp", 4}, {"dp", 8}, {"ep", 8}, {"schedule", "dualpipe"}, {"global_batch", 64},
                     {"zero_stage", 1}, {"recompute", "full"}};
  const Scenario sc = make(plan, "mixtral-8x7b", 4, {{"base", "dgx-h100-superpod"}});
  Workload w;
  Result r;
  ASSERT_TRUE(build_workload(sc, w, r)) << r.reason;
  for (int d = 0; d < w.pp; ++d) {
    SCOPED_TRACE(d);
    const StageWork& s = w.stages[d];
    ASSERT_EQ(w.programs[d].paired.size(), 4u);
    for (int f = 0; f < 2; ++f)
      for (int b = 0; b < 2; ++b) {
        const PassProgram& pair = w.programs[d].pair(f, b);
        EXPECT_EQ(s.pair_s[f][b], reduce_pass(pair, w.overlap_slowdown).time_s);  // the same reduction
        // The pair runs the whole backward, B + W (DualPipe's overlapped chunk).
        const double alone = s.direction_forward_s[f] + s.direction_backward_s[b];
        EXPECT_LT(s.pair_s[f][b], alone);
        EXPECT_GE(s.pair_s[f][b], pair.compute_total_s());
      }
  }
  const Timeline t = pipeline_timeline(w, 0.0);
  int pairs = 0;
  for (std::size_t i = 1; i < t.ops.size(); ++i) {
    const TimelineOp &a = t.ops[i - 1], &c = t.ops[i];
    if (a.stage == c.stage && a.start_s == c.start_s && a.end_s == c.end_s) {
      ++pairs;
      EXPECT_EQ(a.op.kind, PipeOpKind::kBackward);
      EXPECT_EQ(c.op.kind, PipeOpKind::kForward);
      EXPECT_NEAR(c.end_s - c.start_s, w.stages[c.stage].pair_s[c.op.chunk][a.op.chunk], 1e-12);
    }
  }
  EXPECT_GT(pairs, w.pp * w.micro_batches / 4);
  const Result est = estimate(sc);
  ASSERT_TRUE(est.feasible) << est.reason;
  double alone_ep = 0;
  for (const StageWork& s : w.stages) alone_ep = std::max(alone_ep, w.micro_batches * s.ep_comm_s);
  EXPECT_GT(est.breakdown.ep_comm_s, 0);
  EXPECT_LT(est.breakdown.ep_comm_s, alone_ep);
}

TEST(Estimate, DeferredPairsArePricedAsTheWorkloadWouldHavePricedThem) {
  // The estimate's rank floor may reject a DualPipe plan before its pairs are priced
  // (WorkloadOptions::defer_pairs); price_pairs then gives what build_workload gives at once,
  // and what a pair saves never exceeds what its two passes spend beyond their compute (the
  // bound the floor reads while the pairs are unpriced).
  const json plan = {{"tp", 2}, {"pp", 4}, {"dp", 4}, {"ep", 4}, {"sp", true}, {"schedule", "dualpipe"},
                     {"global_batch", 64}, {"zero_stage", 1}};
  const Scenario sc = make(plan, "mixtral-8x7b", 4, {{"base", "dgx-h100-superpod"}});
  WorkloadOptions now, later;
  now.keep_programs = later.keep_programs = false;
  later.defer_pairs = true;
  Workload a, b;
  Result ra, rb;
  ASSERT_TRUE(build_workload(sc, a, ra, now)) << ra.reason;
  ASSERT_TRUE(build_workload(sc, b, rb, later)) << rb.reason;
  EXPECT_FALSE(a.pending_pairs.pending);
  ASSERT_TRUE(b.pending_pairs.pending);
  for (const StageWork& s : b.stages) EXPECT_EQ(s.pair_s[0][0], -1);  // not priced yet
  price_pairs(b);
  EXPECT_FALSE(b.pending_pairs.pending);
  for (int d = 0; d < a.pp; ++d) {
    SCOPED_TRACE(d);
    const StageWork &x = a.stages[d], &y = b.stages[d];
    for (int f = 0; f < 2; ++f)
      for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(y.pair_s[f][k], x.pair_s[f][k]);
        const double alone = x.direction_forward_s[f] + x.direction_backward_s[k];  // F, B and W
        const double beyond = x.direction_forward_beyond_compute_s[f] + x.direction_backward_beyond_compute_s[k];
        EXPECT_GT(alone - x.pair_s[f][k], 0);  // the pair saves something here (EP all-to-alls, TP collectives)
        EXPECT_LE(alone - x.pair_s[f][k], beyond * (1 + 1e-12));
      }
  }
}

TEST(Estimate, FlopsAndUtilisationAreConsistent) {
  const Scenario s = make({{"tp", 8}, {"pp", 2}, {"dp", 16}, {"global_batch", 512}, {"recompute", "full"}});
  const Result r = estimate(s);
  ASSERT_TRUE(r.feasible) << r.reason;
  const StepFlops f = step_flops(s.model, Recompute::kFull, 512.0 * s.model.seq_len);
  EXPECT_DOUBLE_EQ(r.model_flops_per_step, f.model);
  EXPECT_DOUBLE_EQ(r.hardware_flops_per_step, f.hardware);
  EXPECT_NEAR(r.mfu * r.step_time_s * 256 * 312e12, f.model, f.model * 1e-12);
  EXPECT_NEAR(r.hfu / r.mfu, f.hardware / f.model, 1e-12);
  EXPECT_NEAR(r.tokens_per_s * r.step_time_s, 512.0 * 2048, 1e-6);
  // The breakdown adds up to the step.
  const auto& b = r.breakdown;
  EXPECT_NEAR(b.compute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.dp_comm_s +
                  b.bubble_s + b.optimizer_s + b.offload_s,
              r.step_time_s, r.step_time_s * 1e-9);
}

TEST(Estimate, SingleGpuStepIsComputePlusOptimizer) {
  // One GPU, no communication at all: compute = 3 passes of forward work.
  const Scenario s = make({{"global_batch", 4}, {"micro_batch", 1}}, "gpt-1.7b", 1,
                          {{"gpus_per_node", 1}});
  const Result r = estimate(s);
  EXPECT_EQ(r.exposed_comm_s, 0);
  EXPECT_EQ(r.breakdown.bubble_s, 0);
  EXPECT_NEAR(r.breakdown.compute_s + r.breakdown.optimizer_s, r.step_time_s, 1e-12);
  EXPECT_GT(r.hfu, 0.3);
  EXPECT_LT(r.hfu, 0.8);
}

TEST(Estimate, ZeroStagesShrinkModelStatesByTheZeroPaperRatios) {
  const json base = {{"tp", 8}, {"dp", 32}, {"global_batch", 256}};
  double prev = 1e300;
  for (int z = 0; z <= 3; ++z) {
    json p = base;
    p["zero_stage"] = z;
    const Result r = estimate(make(p));
    const auto& b = r.peak_breakdown;
    const double states = b.params_bytes + b.grads_bytes + b.optimizer_bytes;
    EXPECT_LT(states, prev);
    prev = states;
  }
}

// With the optimizer on the host, gradients stream there as they are produced: the GPU's model
// states are what DeepSpeed's ZeRO-Offload estimators count (memory.hpp; stage_1_and_2.py,
// stage3.py), 2P for ZeRO-2 and 4L for ZeRO-3 with parameters offloaded too, plus at most the
// prefetched layer (L = the largest layer's parameters per GPU: 12 h^2 + 13 h over TP 8).
TEST(Estimate, OptimizerOffloadKeepsOnlyTheLayerInFlightsGradients) {
  const double h = 6144;  // gpt-18.4b
  const double layer = (12 * h * h + 13 * h) / 8;
  auto states = [](const Result& r) {
    const auto& b = r.peak_breakdown;
    return b.params_bytes + b.grads_bytes + b.optimizer_bytes;
  };
  const Result z3 = estimate(make({{"tp", 8}, {"dp", 32}, {"global_batch", 256}, {"zero_stage", 3},
                                   {"offload", {{"optimizer", true}, {"params", true}}}}));
  ASSERT_TRUE(z3.feasible) << z3.reason;
  EXPECT_GE(states(z3), 4 * layer * 0.99);
  EXPECT_LE(states(z3), 2 * 4 * layer);
  const Result z2 = estimate(make({{"tp", 8}, {"dp", 32}, {"global_batch", 256}, {"zero_stage", 2},
                                   {"offload", {{"optimizer", true}}}}));
  ASSERT_TRUE(z2.feasible) << z2.reason;
  const double params_per_gpu = z2.peak_breakdown.params_bytes / 2;  // bf16 weights, not sharded
  EXPECT_GT(params_per_gpu, 18.4e9 / 8 * 0.95);
  EXPECT_GE(states(z2), 2 * params_per_gpu);
  EXPECT_LE(states(z2), 2 * params_per_gpu + 4 * layer);
}

// Compression stages act on the ZeRO-0/1/2 gradient reduction; under ZeRO-3 they change
// neither the traffic nor the memory (no error-feedback residual), and the result says so.
TEST(Estimate, CompressionUnderZero3IsWarnedAndCostsNothing) {
  const json plan = {{"tp", 8}, {"dp", 32}, {"global_batch", 256}, {"zero_stage", 3}};
  json compressed = plan;
  compressed["compression"] = {{{"from_step", 0}, {"method", "int4"}}};
  const Result plain = estimate(make(plan));
  const Result r = estimate(make(compressed));
  EXPECT_DOUBLE_EQ(r.peak_memory_bytes, plain.peak_memory_bytes);
  EXPECT_DOUBLE_EQ(r.dp_bytes, plain.dp_bytes);
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("plan.compression is not applied under ZeRO-3") != std::string::npos;
  EXPECT_TRUE(warned);
}

// Layers that do not divide the stages: the split stage_layers gives (the embedding and the
// loss a layer's place each), priced exactly as the same split given in the plan, and said.
TEST(Estimate, AnUnevenSplitIsPricedAsTheSplitItNames) {
  const json plan = {{"tp", 8}, {"pp", 3}, {"dp", 1}, {"global_batch", 12}};  // gpt-18.4b: 40 layers
  const Result uneven = estimate(make(plan, "gpt-18.4b", 3));
  json given = plan;
  given["layers_per_stage"] = {13, 14, 13};  // 42 places over 3 stages
  const Result named = estimate(make(given, "gpt-18.4b", 3));
  ASSERT_TRUE(uneven.feasible) << uneven.reason;
  EXPECT_EQ(uneven.step_time_s, named.step_time_s);
  EXPECT_EQ(uneven.peak_memory_bytes, named.peak_memory_bytes);
  bool warned = false;
  for (const std::string& w : uneven.warnings) warned |= w.find("layers per stage 13,14,13") != std::string::npos;
  EXPECT_TRUE(warned);
  for (const std::string& w : named.warnings) EXPECT_EQ(w.find("layers per stage"), std::string::npos) << w;
}

TEST(Estimate, RecomputeTradesMemoryForFlops) {
  const json base = {{"tp", 8}, {"dp", 32}, {"global_batch", 256}, {"micro_batch", 2}};
  json full = base;
  full["recompute"] = "full";
  const Result none_r = estimate(make(base));
  const Result full_r = estimate(make(full));
  EXPECT_LT(full_r.peak_breakdown.activations_bytes, none_r.peak_breakdown.activations_bytes / 5);
  EXPECT_GT(full_r.step_time_s, none_r.step_time_s);
}

TEST(Estimate, GradientCompressionCutsDataParallelBytes) {
  const json base = {{"tp", 8}, {"dp", 32}, {"global_batch", 256}};
  json int4 = base;
  int4["compression"] = json::array({{{"from_step", 0}, {"method", "int4"}}});
  // bf16 training reduces fp32 gradients: 4 bits and a 4-byte scale per 128 values are 1/8 of
  // them and 1/128 more (the claim "communication to 1/8 of fp32").
  const Result plain = estimate(make(base));
  const Result q = estimate(make(int4));
  EXPECT_NEAR(q.dp_bytes / plain.dp_bytes, (0.5 + 4.0 / 128) / 4, 1e-9);
  // Against gradients reduced in bf16, a quarter and 1/64.
  json bf16 = base;
  bf16["grad_reduce_precision"] = "bf16";
  json bf16_int4 = int4;
  bf16_int4["grad_reduce_precision"] = "bf16";
  EXPECT_NEAR(estimate(make(bf16_int4)).dp_bytes / estimate(make(bf16)).dp_bytes, (0.5 + 4.0 / 128) / 2, 1e-9);
}

TEST(Estimate, ForcedCollectiveProtocolReachesEveryCollective) {
  // plan.collective_protocol is NCCL_PROTO: LL carries 8 data bytes per 16-byte line, so a
  // TP8 all-reduce of a 25 MB activation takes at least twice Simple's time (collectives.md).
  const json base = {{"tp", 8}, {"dp", 32}, {"global_batch", 256}};
  json ll = base, simple = base;
  ll["collective_protocol"] = "LL";
  simple["collective_protocol"] = "Simple";
  EstimateOptions reference;
  reference.memoise = false;
  const EstimatedStep a = estimate_step(make(base), reference);
  const EstimatedStep l = estimate_step(make(ll), reference);
  const EstimatedStep s = estimate_step(make(simple), reference);
  EXPECT_GT(l.result.breakdown.tp_comm_s, 1.8 * a.result.breakdown.tp_comm_s);
  EXPECT_NEAR(s.result.breakdown.tp_comm_s, a.result.breakdown.tp_comm_s, 0.05 * a.result.breakdown.tp_comm_s);
  int tp_ops = 0;
  for (const auto& dev : l.workload.programs)
    for (const auto& chunk : dev.chunks)
      for (const auto& pass : chunk.pass)
        for (const auto& block : pass.blocks)
          for (const auto& c : block.comm) {
            EXPECT_EQ(c.protocol, CollectiveProtocol::kLL);
            tp_ops += c.purpose == CommPurpose::kTp;
          }
  EXPECT_GT(tp_ops, 0);
  EXPECT_EQ(l.workload.protocol, CollectiveProtocol::kLL);
  // The memoised route agrees with the reference one.
  EXPECT_DOUBLE_EQ(estimate(make(ll)).step_time_s, l.result.step_time_s);
}

TEST(Estimate, ExpertParallelMoeRuns) {
  const Scenario s = make({{"tp", 1}, {"pp", 1}, {"dp", 64}, {"ep", 8}, {"global_batch", 256},
                           {"zero_stage", 1}, {"recompute", "full"}},
                          "mixtral-8x7b", 8);
  const Result r = estimate(s);
  EXPECT_TRUE(r.feasible) << r.reason;
  EXPECT_GT(r.breakdown.ep_comm_s, 0);
  EXPECT_GT(r.ep_bytes, 0);
}

}  // namespace
}  // namespace trainsim
