// The workload's op graph against closed forms it must reproduce: FLOPs (Narayanan et al.
// SC'21), TP collective bytes (Shoeybi et al.: two all-reduces a layer each way), ZeRO-3's 1.5x a
// DP all-reduce (Rajbhandari et al.), MoE all-to-all volume, and a behaviour published ZeRO-3
// runs show: without model parallelism, throughput per GPU falls as the GPU count grows at a
// fixed global batch.
#include "models/workload/workload.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"
#include "models/cost/compute/launch_model.hpp"
#include "models/cost/flops.hpp"
#include "models/cost/moe_routing.hpp"
#include "models/estimate/estimate.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/workload/layer_program.hpp"
#include "models/workload/program_reduce.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

// cluster: a preset's name, or a cluster object (its "base" and the fields it changes).
Scenario make(const json& plan, const json& model = "gpt-18.4b", int nodes = 8, const json& cluster = "dgx-a100-superpod") {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json c = cluster.is_string() ? json{{"base", cluster}} : cluster;
  c["nodes"] = nodes;
  json j = {{"schema_version", 1}, {"model", model}, {"cluster", c}, {"plan", plan}};
  return parse_scenario(resolve_scenario_json(j, o));
}

// The repeated layer block of a pass on the first device (the first block where none repeats).
const OpBlock& layer_block(const Workload& w, PassKind pass) {
  for (const OpBlock& b : w.programs[0].chunks[0].program(pass).blocks)
    if (b.repeat > 1) return b;
  return w.programs[0].chunks[0].program(pass).blocks.front();
}

Workload build(const Scenario& sc, Result& r) {
  Workload w;
  EXPECT_TRUE(build_workload(sc, w, r)) << r.reason;
  return w;
}

// One 100 Gb/s NIC a node: ZeRO-3's traffic outlasts the compute.
const json kOneSlowNic = {{"base", "dgx-a100-superpod"}, {"network", {{"nics_per_node", 1}, {"nic_bandwidth", "100Gbps"}}}};

// Sums over every op of every device's programs: per GPU of the stage, times micro-batches.
struct Totals {
  double gemm_flop = 0, attention_forward_flop = 0;
};
Totals totals(const Workload& w) {
  Totals t;
  for (const DeviceProgram& d : w.programs)
    for (const ChunkProgram& ch : d.chunks)
      for (const PassProgram& p : ch.pass)
        for (const OpBlock& b : p.blocks)
          for (const ComputeOp& op : b.compute) {
            if (op.kind == ComputeKind::kGemm) t.gemm_flop += op.flop * b.repeat;
            if (op.kind == ComputeKind::kAttention && op.pass == Pass::kForward)
              t.attention_forward_flop += op.flop * b.repeat;
          }
  return t;
}

TEST(OpGraph, GemmFlopsAreTheModelsTrainingFlops) {
  // SC'21 appendix: 3 x forward, forward GEMMs 24 h^2 per token a layer (+ logits 2 h V); full
  // recompute adds one forward of every layer. The op graph's GEMMs, summed over every device's
  // passes and every GPU of a stage, are exactly that.
  for (const char* rc : {"none", "full"}) {
    SCOPED_TRACE(rc);
    const Scenario sc = make({{"tp", 4}, {"pp", 2}, {"dp", 8}, {"global_batch", 64}, {"recompute", rc}});
    Result r;
    const Workload w = build(sc, r);
    const double tokens = r.tokens_per_step;
    const LayerFlops lf = layer_forward_flops_per_token(sc.model, false);
    const double passes = std::string(rc) == "full" ? 4 : 3;
    const double expected = (passes * lf.gemm * sc.model.layers + 3 * logits_forward_flops_per_token(sc.model)) * tokens;
    const double per_gpu_stage = w.micro_batches;  // programs are one micro-batch on one GPU
    const double gpus_per_stage = static_cast<double>(sc.plan.tp) * sc.plan.cp * sc.plan.dp;
    EXPECT_NEAR(totals(w).gemm_flop * per_gpu_stage * gpus_per_stage, expected, 1e-9 * expected);
    // Attention forward: causal, half of the full score and context work flops.cpp counts.
    const double attn = 0.5 * lf.attention * sc.model.layers * tokens;
    EXPECT_NEAR(totals(w).attention_forward_flop * per_gpu_stage * gpus_per_stage, attn, 1e-9 * attn);
  }
}

// The GEMMs a plan's selective recomputation runs again (MLA's up-projections; a dense layer's
// MLP) are what step_flops adds to the hardware FLOPs, summed over every op of the graph.
TEST(OpGraph, RecomputedModulesRunTheirForwardGemmsAgain) {
  const json model = {{"layers", 8}, {"hidden", 2048}, {"heads", 16}, {"ffn_hidden", 5632}, {"ffn_act", "swiglu"},
                      {"vocab", 32000}, {"seq_len", 2048}, {"dropout", 0.0},
                      {"mla", {{"q_lora_rank", 512}, {"kv_lora_rank", 256}, {"qk_nope_head_dim", 64},
                               {"qk_rope_head_dim", 32}, {"v_head_dim", 64}}}};
  const json base = {{"tp", 2}, {"pp", 1}, {"dp", 4}, {"global_batch", 8}, {"sp", true}, {"recompute", "selective"}};
  Result r0;
  const Workload w0 = build(make(base, model, 1), r0);
  for (const json& modules : {json{"mla_up_proj"}, json{"mlp", "layernorm"}, json{"core_attn", "mla_up_proj", "mlp"}}) {
    SCOPED_TRACE(modules.dump());
    json plan = base;
    plan["recompute_modules"] = modules;
    const Scenario sc = make(plan, model, 1);
    Result r;
    const Workload w = build(sc, r);
    const double gpus = static_cast<double>(sc.plan.tp) * sc.plan.dp;
    RecomputeModules gemms = sc.plan.recompute_modules;
    gemms.core_attn = false;  // the attention core is not a GEMM
    const double expected = recompute_forward_flops_per_token(sc.model, false, gemms) * sc.model.layers * r.tokens_per_step;
    EXPECT_GT(expected, 0);
    EXPECT_NEAR((totals(w).gemm_flop - totals(w0).gemm_flop) * w.micro_batches * gpus, expected, 1e-9 * expected);
    EXPECT_NEAR(r.hardware_flops_per_step - r.model_flops_per_step,
                (recompute_forward_flops_per_token(sc.model, false, sc.plan.recompute_modules)) * sc.model.layers * r.tokens_per_step,
                1e-6 * r.hardware_flops_per_step);
  }
}

TEST(OpGraph, LatentAttentionRunsItsDownProjectionsOnEveryTensorParallelRank) {
  // MLA (DeepSeek-V2 eqs. 9-14) on a small dense model: the op graph's GEMMs are the model's
  // training FLOPs when sequence parallelism gives each TP rank its own tokens to project down;
  // without it every rank projects all tokens, t - 1 redundant copies of W^DQ and W^DKV.
  const json model = {{"layers", 8}, {"hidden", 2048}, {"heads", 16}, {"ffn_hidden", 5632}, {"ffn_act", "swiglu"},
                      {"vocab", 32000}, {"seq_len", 2048}, {"dropout", 0.0},
                      {"mla", {{"q_lora_rank", 512}, {"kv_lora_rank", 256}, {"qk_nope_head_dim", 64},
                               {"qk_rope_head_dim", 32}, {"v_head_dim", 64}}}};
  const int t = 4;
  const double down = 2048.0 * 512 + 2048.0 * (256 + 32);  // W^DQ, W^DKV + W^KR
  for (bool sp : {true, false}) {
    SCOPED_TRACE(sp);
    const Scenario sc = make({{"tp", t}, {"pp", 1}, {"dp", 2}, {"global_batch", 8}, {"sp", sp}}, model, 1);
    Result r;
    const Workload w = build(sc, r);
    const double tokens = r.tokens_per_step;
    const LayerFlops lf = layer_forward_flops_per_token(sc.model, false);
    double expected = (3 * lf.gemm * sc.model.layers + 3 * logits_forward_flops_per_token(sc.model)) * tokens;
    if (!sp) expected += (t - 1) * 3 * 2 * down * sc.model.layers * tokens;
    const double gpus = static_cast<double>(t) * sc.plan.dp;
    EXPECT_NEAR(totals(w).gemm_flop * w.micro_batches * gpus, expected, 1e-9 * expected);
    const double attn = 0.5 * lf.attention * sc.model.layers * tokens;
    EXPECT_NEAR(totals(w).attention_forward_flop * w.micro_batches * gpus, attn, 1e-9 * attn);
    if (!sp) continue;
    // Sequence parallel: where a layer all-gathers the hidden state for QKV (forward, and again
    // for its weight gradient) and reduce-scatters its gradient, MLA moves the latents (q 512 +
    // kv 256 + rope 32 wide) instead; the rest of the traffic is the same as the MHA twin's.
    json mha = model;
    mha.erase("mla");
    Result rm;
    build(make({{"tp", t}, {"pp", 1}, {"dp", 2}, {"global_batch", 8}, {"sp", true}}, mha, 1), rm);
    const double latent = 512 + 256 + 32, h = 2048;
    const double saved = w.micro_batches * static_cast<double>(sc.model.seq_len) * 2 * (t - 1.0) / t *
                         sc.model.layers * 3 * (h - latent);
    EXPECT_NEAR(rm.tp_bytes - r.tp_bytes, saved, 1e-9 * saved);
  }
}

TEST(OpGraph, TensorParallelLayersAllReduceTwiceEachWay) {
  // Without sequence parallelism each layer all-reduces the [s, b, h] activation twice forward
  // and twice backward (and twice more when the forward is recomputed); the first stage also
  // sums its vocabulary-parallel embedding. A ring all-reduce sends 2 (t-1)/t of the buffer.
  const int t = 8, m = 4;
  for (const char* rc : {"none", "full"}) {
    SCOPED_TRACE(rc);
    const Scenario sc = make({{"tp", t}, {"pp", 4}, {"dp", 2}, {"global_batch", 2 * m}, {"recompute", rc}});
    Result r;
    const Workload w = build(sc, r);
    const double act = static_cast<double>(sc.model.seq_len) * sc.model.hidden * 2;
    const int layers = sc.model.layers / 4;
    const int per_layer = std::string(rc) == "full" ? 6 : 4;
    const double expected = m * (layers * per_layer + 1) * 2.0 * (t - 1) / t * act;
    EXPECT_NEAR(r.tp_bytes, expected, 1e-9 * expected);
    // With sequence parallelism the same bytes move as reduce-scatters and all-gathers, plus the
    // all-gathers that bring fc1's and QKV's inputs back for their weight gradients.
    json plan = {{"tp", t}, {"pp", 4}, {"dp", 2}, {"global_batch", 2 * m}, {"recompute", rc}, {"sp", true}};
    Result rs;
    build(make(plan), rs);
    const double half = (t - 1.0) / t * act;  // one reduce-scatter or all-gather
    // The embedding reduce-scatters its output forward and all-gathers its gradient backward.
    const double sp_expected = m * (layers * (2 * per_layer + 2) + 2) * half;
    EXPECT_NEAR(rs.tp_bytes, sp_expected, 1e-9 * sp_expected);
  }
}

TEST(OpGraph, AReplicatedOutputLayerHoldsTheVocabularyWholeAndSendsNothingForIt) {
  // plan.vocab_parallel false: every TP rank holds the embedding and the LM head whole (2 V h
  // parameters instead of 2 V h / t) and computes the logits and the loss itself, so the TP
  // traffic is the layers' four all-reduces alone. Sequence parallelism splits what such an
  // output layer reads, so that plan is refused, naming the field.
  const int t = 8, m = 4;
  json plan = {{"tp", t}, {"pp", 1}, {"dp", 8}, {"global_batch", 8 * m}, {"vocab_parallel", false}};
  const Scenario sc = make(plan);
  Result r;
  const Workload w = build(sc, r);
  const double act = static_cast<double>(sc.model.seq_len) * sc.model.hidden * 2;
  const double expected = m * sc.model.layers * 4 * 2.0 * (t - 1) / t * act;
  EXPECT_NEAR(r.tp_bytes, expected, 1e-9 * expected);
  plan["vocab_parallel"] = true;
  Result rv;
  const Workload wv = build(make(plan), rv);
  EXPECT_GT(rv.tp_bytes, r.tp_bytes);
  const double copies = sc.model.tied_embeddings ? 1 : 2;  // one shared matrix when tied, on one stage
  const double extra = copies * static_cast<double>(sc.model.vocab) * sc.model.hidden * (1.0 - 1.0 / t);
  EXPECT_NEAR(w.stages[0].dense_params - wv.stages[0].dense_params, extra, 1e-9 * extra);
  plan["vocab_parallel"] = false;
  plan["sp"] = true;
  Workload ws;
  Result rs;
  EXPECT_FALSE(build_workload(make(plan), ws, rs));
  EXPECT_NE(rs.reason.find("plan.vocab_parallel"), std::string::npos) << rs.reason;
}

TEST(OpGraph, AFusedLossReadsTheLogitsTwiceAWayAndKeepsNoFp32Copy) {
  // plan.fused_loss: the loss is one kernel a pass over the 16-bit logits (2 bytes): the forward
  // reads them twice (maximum, then the sum of exponentials), the backward reads them and writes
  // the gradient in their place, 4 x 2 bytes a logit against PyTorch's fp32 path, (2 + 4 + 16)
  // + (20 + 4 + 2) with its casts, in three kernels a pass (the cast one of them, an op of its
  // own); and the last stage keeps the 16-bit logits, not an fp32
  // copy: 2 bytes a logit fewer. The step gets shorter by the bytes no longer moved.
  const int t = 2, mb = 2;
  json plan = {{"tp", t}, {"pp", 1}, {"dp", 4}, {"micro_batch", mb}, {"global_batch", 4 * mb},
               {"recompute", "none"}, {"precision", "bf16"}};
  struct Loss {
    double bytes = 0;
    int kernels = 0;
  };
  auto loss = [](const Workload& w) {
    Loss l;
    for (const ChunkProgram& ch : w.programs[0].chunks)
      for (const PassProgram& p : ch.pass)
        for (const OpBlock& b : p.blocks)
          for (const ComputeOp& op : b.compute)
            if ((op.role == OpRole::kSoftmaxXent || op.role == OpRole::kFusedSoftmaxXent || op.role == OpRole::kCast) &&
                (op.pass == Pass::kForward || op.pass == Pass::kBackwardInput)) {
              l.bytes += op.bytes * b.repeat;
              l.kernels += op.kernels * b.repeat;
            }
    return l;
  };
  const Scenario sc = make(plan, "gpt-1.7b", 1);
  const double logits = static_cast<double>(mb) * sc.model.seq_len * sc.model.vocab / t;
  Result ru, rf;
  const Workload wu = build(sc, ru);
  plan["fused_loss"] = true;
  const Workload wf = build(make(plan, "gpt-1.7b", 1), rf);
  const Loss lu = loss(wu), lf = loss(wf);
  EXPECT_NEAR(lu.bytes, (2 + 4 + 16 + 20 + 4 + 2) * logits, 1e-9 * lu.bytes);
  EXPECT_NEAR(lf.bytes, 4 * 2 * logits, 1e-9 * lf.bytes);
  EXPECT_EQ(lu.kernels, 6);
  EXPECT_EQ(lf.kernels, 2);
  const double saved = ru.per_stage.back().breakdown.activations_bytes - rf.per_stage.back().breakdown.activations_bytes;
  EXPECT_NEAR(saved, 2 * logits, 1e-9 * saved);  // the loss's logits are kept for one micro-batch
  const Result eu = estimate(sc), ef = estimate(make(plan, "gpt-1.7b", 1));
  EXPECT_LT(ef.step_time_s, eu.step_time_s);
}

TEST(OpGraph, CollectivesWaitForTheGroupsLastMemberBySegment) {
  // With a measured call-to-call spread cv, each TP collective waits e_2 cv sqrt(sum t^2) over
  // the ops since the group's previous one (arrival_wait.hpp). A block's TP collectives split
  // its ops into segments that cover it once (the first wraps round to the last), so the waits'
  // squares add up to (e_2 cv)^2 times the block's sum of squared op times; without a spread
  // there is no wait. The DP reduction waits for the slowest replica over the whole step.
  const json plan = {{"tp", 2}, {"pp", 1}, {"dp", 4}, {"global_batch", 16}, {"recompute", "none"}};
  Scenario sc = make(plan, "gpt-1.7b", 1);
  Result r0;
  const Workload w0 = build(sc, r0);
  const double cv = 0.05, e2 = 1 / std::sqrt(M_PI);
  sc.cluster.gpu.op_rates.op_time_cv = cv;
  Result r;
  const Workload w = build(sc, r);
  int blocks = 0;
  for (std::size_t c = 0; c < w.programs[0].chunks.size(); ++c)
    for (int k = 0; k < kPassKinds; ++k) {
      const PassProgram& p = w.programs[0].chunks[c].pass[k];
      const PassProgram& p0 = w0.programs[0].chunks[c].pass[k];
      for (std::size_t b = 0; b < p.blocks.size(); ++b) {
        const OpBlock& blk = p.blocks[b];
        double waits_sq = 0, ops_sq = 0;
        int tp = 0;
        for (std::size_t i = 0; i < blk.comm.size(); ++i) {
          const CommOp& op = blk.comm[i];
          EXPECT_DOUBLE_EQ(p0.blocks[b].comm[i].arrival_wait_s, 0.0);
          EXPECT_NEAR(op.time_s - op.arrival_wait_s, p0.blocks[b].comm[i].time_s, 1e-15);
          if (op.group != CommGroup::kTp || op.after < 0) continue;
          ++tp;
          waits_sq += op.arrival_wait_s * op.arrival_wait_s;
        }
        if (tp == 0) continue;
        for (double t : blk.compute_s) ops_sq += t * t;
        bool shared_after = false;  // two collectives after one op: the second does not wait
        for (std::size_t i = 0; i < blk.comm.size(); ++i)
          for (std::size_t j = 0; j < i; ++j)
            shared_after |= blk.comm[i].group == CommGroup::kTp && blk.comm[j].group == CommGroup::kTp &&
                            blk.comm[i].after >= 0 && blk.comm[i].after == blk.comm[j].after;
        if (shared_after) continue;
        EXPECT_NEAR(waits_sq, e2 * e2 * cv * cv * ops_sq, 1e-9 * waits_sq) << blk.name;
        ++blocks;
      }
    }
  EXPECT_GT(blocks, 0);
  double sq = 0;
  for (const ChunkProgram& ch : w.programs[0].chunks)
    for (const PassProgram& p : ch.pass)
      for (const OpBlock& blk : p.blocks)
        for (double t : blk.compute_s) sq += t * t * blk.repeat;
  EXPECT_NEAR(w.dp_arrival_wait_s, 1.02938 * cv * std::sqrt(sq * w.micro_batches), 1e-5 * w.dp_arrival_wait_s);
  EXPECT_GT(w.stages[0].tp_comm_s, w0.stages[0].tp_comm_s);  // the blocking TP collectives waited longer
}

TEST(OpGraph, ZeroThreeMovesOneAndAHalfTimesADataParallelAllReduce) {
  // ZeRO paper sec. 7.2.2 (fp16 parameters and gradients): parameters gathered for the forward
  // and again for the backward, and gradients reduce-scattered: 3 x (n-1)/n Psi against the
  // all-reduce's 2 x (n-1)/n Psi (one micro-batch, no model parallelism).
  json base = {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"global_batch", 64}, {"recompute", "full"}, {"precision", "fp16"}};
  auto ratio = [](const json& plan) {
    json z3 = plan;
    z3["zero_stage"] = 3;
    Result r0, r3;
    build(make(plan, "gpt-1.7b"), r0);
    build(make(z3, "gpt-1.7b"), r3);
    return r3.dp_bytes / r0.dp_bytes;
  };
  EXPECT_NEAR(ratio(base), 1.5, 0.01);
  // bf16 with fp32 gradients: two 2-byte gathers and a 4-byte reduce-scatter against a 4-byte
  // all-reduce, (2 + 2 + 4) / (2 x 4).
  base["precision"] = "bf16";
  EXPECT_NEAR(ratio(base), 1.0, 0.01);
  base["grad_reduce_precision"] = "bf16";
  EXPECT_NEAR(ratio(base), 1.5, 0.01);
}

TEST(OpGraph, MoeLayersDispatchAndCombineOverTheExpertGroup) {
  // Each MoE layer all-to-alls its tokens' top-k copies out and back, forward and backward:
  // 4 x (tokens/tp) top_k h 2 bytes x (ep-1)/ep per GPU per micro-batch.
  const json moe_model = {{"base", "mixtral-8x7b"}};
  const Scenario sc = make({{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"global_batch", 8}, {"zero_stage", 1},
                            {"recompute", "full"}},
                           moe_model, 1);
  Result r;
  const Workload w = build(sc, r);
  ASSERT_TRUE(sc.model.moe);
  const double tokens = static_cast<double>(sc.model.seq_len);
  const double per_layer = 4 * tokens * sc.model.moe->top_k * sc.model.hidden * 2.0 * 7 / 8;
  const int moe_layers = sc.model.layers - sc.model.moe->dense_layers;
  // Full recompute replays the forward's two all-to-alls as well.
  EXPECT_NEAR(r.ep_bytes, w.micro_batches * moe_layers * per_layer * 1.5, 1e-9 * r.ep_bytes);
}

TEST(OpGraph, ZeroThreeThroughputPerGpuFallsAsGpusGrowAtAFixedBatch) {
  // ZeRO-3 / FSDP without model parallelism, global batch fixed: more GPUs mean fewer tokens
  // per GPU per step, while each layer's gather still moves the whole layer; past the point
  // where compute no longer hides it, throughput per GPU falls.
  double last = 1e30;
  double last_exposed = -1, first_exposed = -1;  // exposed share of the step
  for (int nodes : {4, 8, 16, 32}) {
    SCOPED_TRACE(nodes);
    const Scenario sc = make({{"tp", 1}, {"pp", 1}, {"global_batch", 256}, {"micro_batch", 1}, {"zero_stage", 3},
                              {"recompute", "full"}},
                             "gpt-18.4b", nodes);
    const Result r = estimate(sc);
    ASSERT_GT(r.step_time_s, 0) << r.reason;
    const double per_gpu = r.tokens_per_s / r.gpus;
    EXPECT_LT(per_gpu, last);
    const double exposed = r.breakdown.dp_comm_s / r.step_time_s;
    EXPECT_GT(exposed, last_exposed);
    if (first_exposed < 0) first_exposed = exposed;
    last = per_gpu;
    last_exposed = exposed;
  }
  EXPECT_GT(last_exposed, first_exposed);
}

// A synchronous job runs at its slowest GPU's pace: tensor-core ops take 1 + sigma e_n times
// their time, with sigma the fleet's spread (Sinha et al. SC'22: 1.5%) and e_n the expected
// maximum of n standard normals (e_2 = 1/sqrt(pi); e_10 = 1.53875, e_100 = 2.50759 in Tippett's
// 1925 table). Memory-bound ops keep their time; one GPU, or a spread of 0, pays nothing.
TEST(OpGraph, TheJobsSlowestGpuPacesItsTensorCoreOps) {
  GpuSpec gpu;
  EXPECT_DOUBLE_EQ(slowest_gpu_slowdown(gpu, 1), 1.0);
  EXPECT_NEAR(slowest_gpu_slowdown(gpu, 2), 1 + 0.015 / std::sqrt(M_PI), 1e-7);
  EXPECT_NEAR(slowest_gpu_slowdown(gpu, 10), 1 + 0.015 * 1.53875, 1e-6);
  EXPECT_NEAR(slowest_gpu_slowdown(gpu, 100), 1 + 0.015 * 2.50759, 1e-6);
  gpu.speed_spread = 0.03;
  EXPECT_NEAR(slowest_gpu_slowdown(gpu, 2), 1 + 0.03 / std::sqrt(M_PI), 1e-7);

  // The same replica alone and as one of two data-parallel replicas on one node.
  const json plan = {{"tp", 1}, {"pp", 1}, {"micro_batch", 1}, {"recompute", "none"}};
  auto layer = [&](int gpus, const json& spread) {
    json c = {{"base", "dgx-a100-superpod"}, {"gpus_per_node", gpus}};
    if (!spread.is_null()) c["gpu"] = {{"base", "A100-SXM4-80GB"}, {"speed_spread", spread}};
    json p = plan;
    p["global_batch"] = gpus;
    Result r;
    const Workload w = build(make(p, "gpt-1.7b", 1, c), r);
    return layer_block(w, PassKind::kForward);
  };
  const OpBlock one = layer(1, nullptr), two = layer(2, nullptr), flat = layer(2, 0.0);
  ASSERT_EQ(one.compute.size(), two.compute.size());
  int tensor = 0, other = 0;
  for (std::size_t i = 0; i < one.compute.size(); ++i) {
    SCOPED_TRACE(i);
    const ComputeKind k = one.compute[i].kind;
    const bool tensor_op = k == ComputeKind::kGemm || k == ComputeKind::kAttention;
    (tensor_op ? tensor : other) += 1;
    EXPECT_NEAR(two.compute_s[i] / one.compute_s[i], tensor_op ? 1 + 0.015 / std::sqrt(M_PI) : 1.0, 1e-9);
    EXPECT_NEAR(flat.compute_s[i] / one.compute_s[i], 1.0, 1e-9);
  }
  EXPECT_GT(tensor, 2);
  EXPECT_GT(other, 2);
}

// FSDP's HYBRID_SHARD (plan.dp_shard) on 4 nodes: a layer's parameters are gathered over its
// node's 8 GPUs (an NVLink group), its gradients reduce-scattered there and the 1/8 shard then
// all-reduced across the 4 nodes; the model states take 1/8 of the layer, not 1/32. The bytes a
// GPU sends: the gathers' and reduce-scatter's (n-1)/n of the layer over n = 8 and the
// all-reduce's 2 (m-1)/m of the shard over m = 4 (ring volumes, Rajbhandari et al.; FSDP paper,
// Zhao et al. 2023 sec. 3.2.2).
TEST(OpGraph, HybridShardingGathersWithinTheShardGroupAndAllReducesAcrossReplicas) {
  json plan = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}, {"zero_stage", 3}, {"recompute", "none"},
               {"precision", "bf16"}};
  Result r_full, r_hybrid;
  const Workload full = build(make(plan, "gpt-1.7b", 4), r_full);
  plan["dp_shard"] = 8;
  const Scenario sc = make(plan, "gpt-1.7b", 4);
  const Workload hybrid = build(sc, r_hybrid);
  const GroupShape shard = hybrid.group_shapes[static_cast<int>(CommGroup::kDpShard)];
  const GroupShape replica = hybrid.group_shapes[static_cast<int>(CommGroup::kDpReplicate)];
  EXPECT_EQ(shard.ranks, 8);
  EXPECT_EQ(shard.nodes, 1);
  EXPECT_EQ(replica.ranks, 4);
  EXPECT_EQ(replica.nodes, 4);
  EXPECT_NEAR(r_hybrid.per_stage[0].breakdown.params_bytes, 4 * r_full.per_stage[0].breakdown.params_bytes,
              1e-9 * r_hybrid.per_stage[0].breakdown.params_bytes);
  EXPECT_NEAR(r_hybrid.per_stage[0].breakdown.optimizer_bytes, 4 * r_full.per_stage[0].breakdown.optimizer_bytes,
              1e-9 * r_hybrid.per_stage[0].breakdown.optimizer_bytes);
  const LayerParams lp = layer_params(sc.model, false);
  const double layer = lp.attention + lp.mlp_dense + lp.norms;
  const double grad_bytes = 4;  // bf16 with fp32 gradient reduction (the plan's default)
  for (const OpBlock& b : hybrid.programs[0].chunks[0].program(PassKind::kBackward).blocks) {
    if (b.repeat <= 1) continue;
    int gathers = 0, scatters = 0, all_reduces = 0;
    for (const CommOp& c : b.comm) {
      if (c.op == CollectiveOp::kAllGather) {
        ++gathers;
        EXPECT_EQ(c.group, CommGroup::kDpShard);
        EXPECT_NEAR(c.wire_bytes, layer * 2 * 7.0 / 8, 1e-9 * c.wire_bytes);
      } else if (c.op == CollectiveOp::kReduceScatter) {
        ++scatters;
        EXPECT_EQ(c.group, CommGroup::kDpShard);
        EXPECT_NEAR(c.bytes, layer * grad_bytes, 1e-9 * c.bytes);
      } else if (c.op == CollectiveOp::kAllReduce) {
        ++all_reduces;
        EXPECT_EQ(c.group, CommGroup::kDpReplicate);
        EXPECT_NEAR(c.wire_bytes, layer / 8 * grad_bytes * 2 * 3.0 / 4, 1e-9 * c.wire_bytes);
      }
    }
    EXPECT_EQ(gathers, 1);  // one layer ahead, as FSDP prefetches
    EXPECT_EQ(scatters, 1);
    EXPECT_EQ(all_reduces, 1);
  }
  // Whole step, per GPU: 2 gathers + 1 reduce-scatter over 8, 1 all-reduce of the shard over 4.
  const double params = count_params(sc.model).total;
  const double expect = params * (2 + 2) * 7.0 / 8 + params * grad_bytes * 7.0 / 8 + params / 8 * grad_bytes * 2 * 3.0 / 4;
  EXPECT_NEAR(r_hybrid.dp_bytes, expect, 0.02 * expect);
  // ZeRO-0 shards nothing, and a shard group must divide dp.
  plan["zero_stage"] = 0;
  EXPECT_NE(estimate(make(plan, "gpt-1.7b", 4)).reason.find("plan.dp_shard: ZeRO-0 shards nothing"), std::string::npos);
  plan["zero_stage"] = 3;
  plan["dp_shard"] = 5;
  EXPECT_NE(estimate(make(plan, "gpt-1.7b", 4)).reason.find("does not divide plan.dp"), std::string::npos);
}

// ZeRO-1/2 under plan.dp_shard (Megatron-Core's partial distributed optimizer, FSDP's hybrid
// ZeRO-2): the gradients reduce-scattered over the shard group, the 1/s shard all-reduced across
// its replicas, the parameters all-gathered over the shard group; optimizer states 1/s.
TEST(OpGraph, PartialShardingReducesWithinTheShardGroupAndAcrossReplicas) {
  json plan = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}, {"zero_stage", 1}, {"recompute", "none"},
               {"precision", "bf16"}};
  Result r_full, r_part;
  build(make(plan, "gpt-1.7b", 4), r_full);
  plan["dp_shard"] = 8;
  const Scenario sc = make(plan, "gpt-1.7b", 4);
  const Workload w = build(sc, r_part);
  EXPECT_EQ(w.dp_shard_group.ranks, 8);
  EXPECT_EQ(w.dp_shard_group.nodes, 1);
  EXPECT_EQ(w.dp_replica_group.ranks, 4);
  EXPECT_NEAR(r_part.per_stage[0].breakdown.optimizer_bytes, 4 * r_full.per_stage[0].breakdown.optimizer_bytes,
              1e-9 * r_part.per_stage[0].breakdown.optimizer_bytes);
  EXPECT_NEAR(r_part.per_stage[0].breakdown.params_bytes, r_full.per_stage[0].breakdown.params_bytes,
              1e-9 * r_part.per_stage[0].breakdown.params_bytes);  // ZeRO-1 keeps every parameter
  const double params = w.stages[0].dense_params;
  const double g = 4, p = 2;  // fp32 gradients, bf16 parameters
  const double expect = params * (g + p) * 7.0 / 8 + params / 8 * g * 2 * 3.0 / 4;
  EXPECT_NEAR(r_part.dp_bytes, expect, 1e-9 * expect);
  EXPECT_NEAR(r_full.dp_bytes, params * (g + p) * 31.0 / 32, 1e-9 * r_full.dp_bytes);

  // A shard group of one rank shards nothing: the reduction is the replicas' all-reduce of the
  // whole gradient over all 32, priced as ZeRO-0's all-reduce over the data-parallel group.
  plan["dp_shard"] = 1;
  Result r_one, r_zero0;
  const Workload one = build(make(plan, "gpt-1.7b", 4), r_one);
  plan.erase("dp_shard");
  plan["zero_stage"] = 0;
  const Workload zero0 = build(make(plan, "gpt-1.7b", 4), r_zero0);
  EXPECT_EQ(one.dp_replica_group.ranks, 32);
  EXPECT_GT(zero0.stages[0].dp_reduce_s, 0);
  EXPECT_NEAR(one.stages[0].dp_reduce_s, zero0.stages[0].dp_reduce_s, 1e-9 * zero0.stages[0].dp_reduce_s);
  EXPECT_NEAR(r_one.dp_bytes, params * g * 2 * 31.0 / 32, 1e-9 * r_one.dp_bytes);
}

// FSDP's HYBRID_SHARD (Zhao et al., VLDB 2023, sec. 3.2.2): ZeRO-3 sharded over a node's 8 GPUs,
// replicated over 4 nodes of one slow NIC each. A layer's gradients are reduce-scattered in the
// node (NVLink) on the gathers' stream, then its shard all-reduced across the nodes over the
// replicas' own process group, so on its own stream: the next layers' gathers, on NVLink, do
// not wait for the slow all-reduces, and the backward pass takes little beyond its compute
// though the all-reduces outlast it.
TEST(OpGraph, HybridShardingAllReducesTheShardBesideTheNextGathers) {
  const json plan = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}, {"zero_stage", 3}, {"dp_shard", 8},
                     {"recompute", "none"}, {"precision", "bf16"}};
  const json slow = {{"base", "dgx-a100-superpod"}, {"network", {{"nics_per_node", 1}, {"nic_bandwidth", "10Gbps"}}}};
  Result r;
  const Workload w = build(make(plan, "gpt-1.7b", 4, slow), r);
  const OpBlock& b = layer_block(w, PassKind::kBackward);
  double all_reduce_s = 0;
  for (const CommOp& c : b.comm) {
    if (c.group == CommGroup::kDpReplicate) {
      EXPECT_EQ(c.op, CollectiveOp::kAllReduce);
      EXPECT_NE(c.stream, CommStream::kSharded);
      all_reduce_s += c.time_s * b.repeat;
    } else {
      EXPECT_EQ(c.stream, CommStream::kSharded);
    }
  }
  const StageWork& s = w.stages[0];
  EXPECT_GT(all_reduce_s, s.backward_compute_s);
  EXPECT_LT(s.backward_s - s.backward_compute_s, 0.1 * all_reduce_s);
}

// ZeRO++ (Wang et al. 2023) on 4 nodes: hpZ keeps a secondary copy of each layer sharded over a
// node, so the backward gathers over the node's 8 GPUs while the forward still gathers over all
// 32; qwZ gathers the forward's weights as int8 with a scale per block (quantize and dequantize
// kernels beside it); the secondary copy adds 2/8 bytes a parameter.
TEST(OpGraph, ZeroPlusPlusGathersTheBackwardWithinANodeAndTheForwardInInt8) {
  json plan = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}, {"zero_stage", 3}, {"recompute", "none"},
               {"precision", "bf16"}};
  Result r_base, r_zpp;
  const Workload base = build(make(plan, "gpt-1.7b", 4), r_base);
  plan["zero_hpz_partition_size"] = 8;
  plan["zero_quantized_weights"] = true;
  const Scenario sc = make(plan, "gpt-1.7b", 4);
  const Workload zpp = build(sc, r_zpp);
  const GroupShape secondary = zpp.group_shapes[static_cast<int>(CommGroup::kDpSecondary)];
  EXPECT_EQ(secondary.ranks, 8);
  EXPECT_EQ(secondary.nodes, 1);
  EXPECT_EQ(base.group_shapes[static_cast<int>(CommGroup::kDpSecondary)].ranks, 1);
  const LayerParams lp = layer_params(sc.model, false);
  const double layer = lp.attention + lp.mlp_dense + lp.norms;
  const OpBlock& fwd = layer_block(zpp, PassKind::kForward);
  int casts = 0;
  for (const ComputeOp& op : fwd.compute) casts += op.role == OpRole::kCast;
  EXPECT_EQ(casts, 2);  // quantize the shard, dequantize the layer
  for (const CommOp& c : fwd.comm) {
    ASSERT_EQ(c.op, CollectiveOp::kAllGather);
    EXPECT_EQ(c.group, CommGroup::kDpShard);
    EXPECT_NEAR(c.wire_bytes, layer * kQwzBytesPerParam * 31 / 32, 1e-9 * c.wire_bytes);
  }
  for (const CommOp& c : layer_block(zpp, PassKind::kBackward).comm) {
    if (c.op != CollectiveOp::kAllGather) continue;
    EXPECT_EQ(c.group, CommGroup::kDpSecondary);
    EXPECT_NEAR(c.wire_bytes, layer * 2 * 7.0 / 8, 1e-9 * c.wire_bytes);
  }
  const double params = zpp.stages[0].dense_params;
  EXPECT_NEAR(r_zpp.per_stage[0].breakdown.params_bytes, r_base.per_stage[0].breakdown.params_bytes + params * 2 / 8,
              1e-9 * r_zpp.per_stage[0].breakdown.params_bytes);
  // ZeRO++ is ZeRO-3's; a secondary partition must divide the shard group.
  plan["zero_stage"] = 2;
  EXPECT_NE(estimate(make(plan, "gpt-1.7b", 4)).reason.find("ZeRO++"), std::string::npos);
  plan["zero_stage"] = 3;
  plan["zero_hpz_partition_size"] = 5;
  EXPECT_NE(estimate(make(plan, "gpt-1.7b", 4)).reason.find("does not divide"), std::string::npos);
}

// ZeRO++'s qgZ (Wang et al. 2023, sec. 3.3) on 4 nodes of 8: each layer's gradients leave as
// int4, all-to-all among the node's 8 GPUs (7/8 of half a byte a parameter on NVLink), then the
// eighth each GPU reduced all-to-all among the 4 GPUs at its in-node index (3/4 of it across the
// nodes), in place of a 16-bit reduce-scatter over all 32; quantize, reduce and dequantize
// kernels beside them. With one slow NIC a node the step is shorter for it.
TEST(OpGraph, QuantizedGradientsCrossTheNodesAsAnInt4AllToAllOfTheReducedEighth) {
  json plan = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}, {"zero_stage", 3}, {"recompute", "none"},
               {"precision", "bf16"}};
  Result r_base, r_qgz;
  const Workload base = build(make(plan, "gpt-1.7b", 4), r_base);
  plan["zero_quantized_gradients"] = true;
  const Scenario sc = make(plan, "gpt-1.7b", 4);
  const Workload qgz = build(sc, r_qgz);
  const GroupShape intra = qgz.group_shapes[static_cast<int>(CommGroup::kDpShardIntra)];
  const GroupShape inter = qgz.group_shapes[static_cast<int>(CommGroup::kDpShardInter)];
  EXPECT_EQ(intra.ranks, 8);
  EXPECT_EQ(intra.nodes, 1);
  EXPECT_EQ(inter.ranks, 4);
  EXPECT_EQ(inter.nodes, 4);
  EXPECT_EQ(inter.ranks_per_node, 1);
  EXPECT_EQ(base.group_shapes[static_cast<int>(CommGroup::kDpShardInter)].ranks, 1);
  const LayerParams lp = layer_params(sc.model, false);
  const double layer = lp.attention + lp.mlp_dense + lp.norms;
  auto reductions = [](const OpBlock& b) {
    std::vector<const CommOp*> out;
    for (const CommOp& c : b.comm)
      if (c.op != CollectiveOp::kAllGather) out.push_back(&c);
    return out;
  };
  const auto base_ops = reductions(layer_block(base, PassKind::kBackward));
  ASSERT_EQ(base_ops.size(), 1u);
  EXPECT_EQ(base_ops[0]->op, CollectiveOp::kReduceScatter);
  const OpBlock& bwd = layer_block(qgz, PassKind::kBackward);
  const auto ops = reductions(bwd);
  ASSERT_EQ(ops.size(), 2u);
  for (const CommOp* c : ops) {
    EXPECT_EQ(c->op, CollectiveOp::kAllToAll);
    EXPECT_EQ(c->stream, CommStream::kSharded);
  }
  EXPECT_EQ(ops[0]->group, CommGroup::kDpShardIntra);
  EXPECT_NEAR(ops[0]->wire_bytes, layer * 0.5 * 7 / 8, 1e-9 * ops[0]->wire_bytes);
  EXPECT_EQ(ops[1]->group, CommGroup::kDpShardInter);
  EXPECT_NEAR(ops[1]->wire_bytes, layer * 0.5 / 8 * 3 / 4, 1e-9 * ops[1]->wire_bytes);
  int casts = 0, base_casts = 0;
  for (const ComputeOp& op : bwd.compute) casts += op.role == OpRole::kCast;
  for (const ComputeOp& op : layer_block(base, PassKind::kBackward).compute) base_casts += op.role == OpRole::kCast;
  EXPECT_EQ(casts - base_casts, 3);  // quantize; reduce and requantize; dequantize and sum
  // The DP traffic a GPU sends shrinks: gathers unchanged, the 16-bit reduce-scatter's 31/32 of
  // two bytes a parameter becomes 7/16 + 3/64 of a byte.
  EXPECT_LT(r_qgz.dp_bytes, r_base.dp_bytes);
  const double step_base = estimate(make({{"tp", 1}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}, {"zero_stage", 3},
                                          {"recompute", "none"}, {"precision", "bf16"}},
                                         "gpt-1.7b", 4, kOneSlowNic))
                               .step_time_s;
  plan["zero_quantized_gradients"] = true;
  EXPECT_LT(estimate(make(plan, "gpt-1.7b", 4, kOneSlowNic)).step_time_s, 0.9 * step_base);
  // ZeRO++ is ZeRO-3's.
  plan["zero_stage"] = 2;
  EXPECT_NE(estimate(make(plan, "gpt-1.7b", 4)).reason.find("ZeRO++"), std::string::npos);
}

// ZeRO-3's gathers and reduce-scatters run over one process group, so on one NCCL stream: where
// they outlast the compute (one 100 Gb/s NIC a node), a layer's backward takes its gather plus
// its reduce-scatter, not the longer of the two.
TEST(OpGraph, ZeroThreeGathersAndReduceScattersShareOneStream) {
  const Scenario sc = make({{"tp", 1}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}, {"zero_stage", 3}, {"recompute", "none"}},
                           "gpt-1.7b", 4, kOneSlowNic);
  Result r;
  const Workload w = build(sc, r);
  const PassProgram& bwd = w.programs[0].chunks[0].program(PassKind::kBackward);
  double gather = 0, scatter = 0, compute = 0;
  int layers = 0;
  for (const OpBlock& b : bwd.blocks) {
    if (b.repeat <= 1) continue;
    layers = b.repeat;
    compute = b.compute_total_s() / b.repeat;
    for (const CommOp& c : b.comm) {
      EXPECT_EQ(c.stream, CommStream::kSharded);
      (c.op == CollectiveOp::kAllGather ? gather : scatter) += c.time_s;
    }
  }
  ASSERT_GT(layers, 1);
  // Communication-bound, and the two of comparable length: their sum and the longer of them
  // differ by a third or more.
  ASSERT_GT(std::max(gather, scatter), compute);
  ASSERT_GT(std::min(gather, scatter), 0.3 * std::max(gather, scatter));
  const PassCost cost = reduce_pass(bwd, 0);
  EXPECT_GT(cost.time_s + cost.async_tail_s, 0.9 * (layers - 1) * (gather + scatter));
}

TEST(OpGraph, ABoundedPrefetchBufferGathersTheRestWhenTheLayerStarts) {
  // DeepSpeed's stage3_prefetch_bucket_size counts the parameter elements fetched ahead of use.
  // With a quarter of a layer's parameters in the buffer, a quarter of each gather is issued one
  // layer ahead and three quarters when the layer starts, listed first (the layer's own before
  // the next layer's on the gather stream); the bytes moved do not change.
  json plan = {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"global_batch", 64}, {"zero_stage", 3}, {"recompute", "full"}};
  Result r_all, r_quarter, r_none;
  const Workload all = build(make(plan, "gpt-1.7b"), r_all);
  const Scenario sc = make(plan, "gpt-1.7b");
  const LayerParams lp = layer_params(sc.model, false);
  const double module_params = lp.attention + lp.mlp_dense + lp.norms;
  plan["zero3_prefetch_params"] = module_params / 4;
  const Workload quarter = build(make(plan, "gpt-1.7b"), r_quarter);
  plan["zero3_prefetch_params"] = 1;
  const Workload none = build(make(plan, "gpt-1.7b"), r_none);
  EXPECT_NEAR(r_quarter.dp_bytes, r_all.dp_bytes, 1e-9 * r_all.dp_bytes);
  const OpBlock& full = layer_block(all, PassKind::kForward);
  const OpBlock& part = layer_block(quarter, PassKind::kForward);
  ASSERT_EQ(full.comm.size(), 1u);
  ASSERT_EQ(part.comm.size(), 2u);
  EXPECT_FALSE(part.comm[0].prefetch);
  EXPECT_TRUE(part.comm[1].prefetch);
  EXPECT_NEAR(part.comm[0].bytes, 0.75 * full.comm[0].bytes, 1e-9 * full.comm[0].bytes);
  EXPECT_NEAR(part.comm[1].bytes, 0.25 * full.comm[0].bytes, 1e-9 * full.comm[0].bytes);
  // A one-element buffer leaves every layer's gather on the critical path: the forward pass's
  // exposed DP communication is its layers' gathers, one after another (the closed form of each
  // gather from the collective model, times the layers; the one-element prefetches hide).
  const OpBlock& bare = layer_block(none, PassKind::kForward);
  const PassCost fwd = reduce_pass(none.programs[0].chunks[0].program(PassKind::kForward), 0);
  double gathers = 0;
  for (const OpBlock& b : none.programs[0].chunks[0].program(PassKind::kForward).blocks)
    for (const CommOp& c : b.comm)
      if (c.op == CollectiveOp::kAllGather && c.purpose == CommPurpose::kDp && !c.prefetch)
        gathers += c.time_s * b.repeat;
  EXPECT_GT(bare.repeat, 1);
  EXPECT_NEAR(fwd.exposed_s[static_cast<int>(CommPurpose::kDp)], gathers, 0.02 * gathers);
  // And the whole step waits longer for them, less with a larger buffer.
  const double exposed_none = estimate(make(plan, "gpt-1.7b")).breakdown.dp_comm_s;
  plan["zero3_prefetch_params"] = module_params / 4;
  const double exposed_quarter = estimate(make(plan, "gpt-1.7b")).breakdown.dp_comm_s;
  plan.erase("zero3_prefetch_params");
  const double exposed_all = estimate(make(plan, "gpt-1.7b")).breakdown.dp_comm_s;
  EXPECT_GT(exposed_none, exposed_quarter);
  EXPECT_GT(exposed_quarter, exposed_all);
}

TEST(OpGraph, PerParameterCollectivesGatherEachTensorAndCopyItPerRank) {
  // plan.zero3_collectives "parameter": a GPT layer with linear biases holds 12 tensors (fused
  // QKV, projection, fc1, fc2, their biases, two LayerNorms' weights and biases), each gathered
  // and reduce-scattered on its own, the module's bytes in all. Each collective on a list of 64
  // views copies once per rank: 64 kernels of at least their fixed time on the gather stream,
  // and 64 more (+2 for DeepSpeed's zeroing and own-shard copy in a gather) for the training
  // thread to issue.
  json plan = {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"global_batch", 64}, {"zero_stage", 3}};
  Result r_module, r_param;
  const Workload module = build(make(plan, "gpt-1.7b"), r_module);
  plan["zero3_collectives"] = "parameter";
  const Scenario sc = make(plan, "gpt-1.7b");
  ASSERT_TRUE(sc.plan.zero3_per_parameter);
  ASSERT_TRUE(sc.model.linear_bias);
  const Workload param = build(sc, r_param);
  EXPECT_NEAR(r_param.dp_bytes, r_module.dp_bytes, 1e-9 * r_module.dp_bytes);
  const OpBlock& one = layer_block(module, PassKind::kForward);
  const OpBlock& each = layer_block(param, PassKind::kForward);
  ASSERT_EQ(one.comm.size(), 1u);
  ASSERT_EQ(each.comm.size(), 12u);
  const double fixed_s = kernel_fixed_s(sc.cluster.gpu), host_s = host_launch_s(sc.cluster.gpu);
  double bytes = 0;
  for (const CommOp& c : each.comm) {
    bytes += c.bytes;
    EXPECT_TRUE(c.prefetch);
    EXPECT_GE(c.local_s, 64 * fixed_s);
    EXPECT_GE(c.time_s, c.local_s);
  }
  EXPECT_NEAR(bytes, one.comm[0].bytes, 1e-9 * one.comm[0].bytes);
  // The training thread issues 12 x 66 kernels for the gathers besides the layer's own: the
  // forward block takes at least that long, where the module-wise one takes its GPU time.
  EXPECT_GE(each.compute_total_s(), 12 * 66 * host_s);
  EXPECT_GT(each.compute_total_s(), 1.5 * one.compute_total_s());
  const OpBlock& bwd = layer_block(param, PassKind::kBackward);
  int scatters = 0;
  for (const CommOp& c : bwd.comm) scatters += c.op == CollectiveOp::kReduceScatter;
  EXPECT_EQ(scatters, 12);
  // Each list collective passes its tensor through a flat buffer of the tensor's size: memory
  // holds one more tensor than the module-wise gather, the largest, a weight matrix. GPT's four
  // matrices hold 12 h^2 of the layer's 12 h^2 + 13 h parameters; the split gives each an equal
  // share, 3 h^2, at the larger of its two precisions: bf16 parameters, and gradients reduced
  // in fp32 (bf16 training's default, grad_reduce_precision), 4 bytes.
  const double h = sc.model.hidden;
  ASSERT_EQ(sc.plan.precision, Precision::kBf16);
  EXPECT_NEAR(r_param.peak_breakdown.other_bytes - r_module.peak_breakdown.other_bytes, 3 * h * h * 4,
              0.01 * 3 * h * h * 4);
  // The copies grow with the group: per GPU, the step slows as the same per-GPU work spreads
  // over more GPUs, where gathering a module at once barely changes it.
  auto step = [&](int dp, const char* collectives) {
    json p = plan;
    p["dp"] = dp;
    p["global_batch"] = dp;
    p["zero3_collectives"] = collectives;
    return estimate(make(p, "gpt-1.7b", dp / 8)).step_time_s;
  };
  const double module_growth = step(256, "module") / step(64, "module");
  const double param_growth = step(256, "parameter") / step(64, "parameter");
  EXPECT_LT(module_growth, 1.1);
  EXPECT_GT(param_growth, module_growth + 0.2);
}

TEST(OpGraph, StraddlingTensorParallelGroupsAreCostedAndWarnedAbout) {
  // TP 6 on 8-GPU nodes: some groups cross a node, and their all-reduces run at NIC speed.
  const json plan = {{"tp", 6}, {"pp", 1}, {"dp", 8}, {"global_batch", 8}};
  Result r6;
  const Workload w = build(make(plan, {{"base", "gpt-18.4b"}, {"heads", 48}, {"ffn_hidden", 24576}}, 6), r6);
  EXPECT_EQ(w.group_shapes[static_cast<int>(CommGroup::kTp)].nodes, 2);
  bool warned = false;
  for (const auto& s : r6.warnings) warned |= s.find("straddle") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A small MoE model with DeepSeek-V3's routing shape: 64 experts in 8 groups, a token's top 8
// from 4 groups; EP 32 over four 8-GPU nodes.
json grouped_moe_model() {
  return {{"name", "moe-grouped"}, {"layers", 4}, {"hidden", 2048}, {"heads", 16}, {"ffn_hidden", 4096},
          {"ffn_act", "swiglu"}, {"vocab", 32000}, {"seq_len", 2048},
          {"moe", {{"experts", 64}, {"top_k", 8}, {"expert_ffn_hidden", 1024}, {"groups", 8}, {"groups_per_token", 4}}}};
}

TEST(OpGraph, DeepEpSendsATokenOncePerNodeAndFansItOutOverNvlink) {
  const json plan = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"ep", 32}, {"global_batch", 32}};
  json deepep_plan = plan;
  deepep_plan["moe_dispatcher"] = "deepep";
  const Scenario a2a = make(plan, grouped_moe_model(), 4, "h800-cluster");
  const Scenario deepep = make(deepep_plan, grouped_moe_model(), 4, "h800-cluster");
  Result ra, rd;
  const Workload wa = build(a2a, ra), wd = build(deepep, rd);
  const ExpertRouting routing{64, 8, 8, 4};
  const double token_bytes = 2048.0 * 2048 * 2;  // a micro-batch's tokens x hidden x bf16
  int inter = 0, intra = 0, plain = 0;
  for (const OpBlock& b : wd.programs[0].chunks[0].program(PassKind::kForward).blocks)
    for (const CommOp& c : b.comm) {
      if (c.group == CommGroup::kEpInter) {
        ++inter;
        // One GPU a node, at this rank's in-node index: the network hop, deduplicated per node.
        EXPECT_EQ(wd.group_shapes[static_cast<int>(c.group)].ranks, 4);
        EXPECT_EQ(wd.group_shapes[static_cast<int>(c.group)].nodes, 4);
        EXPECT_NEAR(c.bytes, token_bytes * expected_places_per_token(routing, 4), 1e-6 * c.bytes);
        EXPECT_EQ(c.stream, CommStream::kInline);
      }
      if (c.group == CommGroup::kEpIntra) {
        ++intra;
        // The node's 8 EP members: deduplicated per GPU, beside the network hop.
        EXPECT_EQ(wd.group_shapes[static_cast<int>(c.group)].ranks, 8);
        EXPECT_EQ(wd.group_shapes[static_cast<int>(c.group)].nodes, 1);
        EXPECT_NEAR(c.bytes, token_bytes * expected_places_per_token(routing, 32), 1e-6 * c.bytes);
        EXPECT_EQ(c.stream, CommStream::kEpForward);
      }
      plain += c.group == CommGroup::kEp;
    }
  EXPECT_EQ(inter, 2);  // dispatch and combine
  EXPECT_EQ(intra, 2);
  EXPECT_EQ(plain, 0);
  // One DeepEP kernel drives both hops on the report's 20 SMs (sec. 3.2.2): each hop holds 10,
  // 10/16 of what an NCCL collective (16 channels) takes from compute beside it.
  for (const OpBlock& b : wd.programs[0].chunks[0].program(PassKind::kForward).blocks)
    for (const CommOp& c : b.comm) {
      if (c.group == CommGroup::kEpInter || c.group == CommGroup::kEpIntra) {
        EXPECT_DOUBLE_EQ(c.sm_share, 10.0 / 16.0);
      }
    }
  for (const OpBlock& b : wa.programs[0].chunks[0].program(PassKind::kForward).blocks)
    for (const CommOp& c : b.comm) EXPECT_DOUBLE_EQ(c.sm_share, 1.0);
  // What crosses the network: DeepEP's (3/4 of each node copy leaves the node) against the
  // alltoall dispatcher's top_k copies, 24 of whose 32 destinations are off the node.
  const double nodes = expected_places_per_token(routing, 4);
  EXPECT_LT(nodes, 4.0);
  const double deepep_nic = nodes * 3 / 4, a2a_nic = 8.0 * 24 / 32;
  EXPECT_LT(deepep_nic, a2a_nic / 2);
  // Fewer network bytes: the exchanges take less time though they move more bytes in all.
  EXPECT_LT(estimate(deepep).breakdown.ep_comm_s, 0.6 * estimate(a2a).breakdown.ep_comm_s);
}

// A norm's traffic per element, counted from its definition: forward reads x and writes y (2
// activations); backward reads x and dy and writes dx, then reduces the weight and bias
// gradients over the tokens in a second pass over x and dy (5; the two kernels the H200
// traces show, layer_norm_grad_input and GammaBetaBackward). Per layer: two pre-norms.
TEST(OpGraph, NormsReadTheirInputsAgainForTheWeightGradients) {
  const Scenario sc = make({{"tp", 1}, {"pp", 1}, {"dp", 64}, {"micro_batch", 1}, {"global_batch", 64},
                            {"precision", "bf16"}, {"recompute", "none"}});
  Result r;
  const Workload w = build(sc, r);
  double fwd_bytes = 0, bwd_bytes = 0, fwd_elems = 0, bwd_elems = 0;
  for (const auto& ch : w.programs[0].chunks)
    for (int k = 0; k < kPassKinds; ++k)
      for (const auto& b : ch.pass[k].blocks)
        for (const auto& op : b.compute) {
          if (op.role != OpRole::kNorm) continue;
          (op.pass == Pass::kForward ? fwd_bytes : bwd_bytes) += op.bytes * b.repeat;
          (op.pass == Pass::kForward ? fwd_elems : bwd_elems) += op.elements * b.repeat;
        }
  ASSERT_GT(fwd_elems, 0);
  const double tokens = sc.model.seq_len;  // micro-batch 1
  EXPECT_DOUBLE_EQ(fwd_elems, (2 * sc.model.layers + 1) * tokens * sc.model.hidden);  // + the final norm
  EXPECT_DOUBLE_EQ(fwd_bytes / fwd_elems, 2 * 2.0);
  EXPECT_DOUBLE_EQ(bwd_bytes / bwd_elems, 5 * 2.0);
}

// A biased linear's bias gradient sums its output gradient over the tokens it holds: QKV and
// fc1 (column-parallel: their columns split over TP) over the micro-batch's T tokens, the
// attention output and fc2 biases (whole on every rank, after the TP reduction) over the Te = T /
// tp tokens sequence parallelism leaves. TP2 with SP: T (3h + 4h) / 2 + 2 (T / 2) h = 4.5 T h
// elements a layer, 2 bytes each, in the weight-gradient pass; none without biases.
TEST(OpGraph, BiasGradientsSumEachBiasedLinearsOutputGradient) {
  auto bias_grads = [](bool bias, double& bytes, double& elements) {
    json model = "gpt-18.4b";
    LoadOptions o;
    o.preset_dirs = default_preset_dirs();
    json m = resolve_scenario_json({{"schema_version", 1}, {"model", model}, {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 8}}},
                                    {"plan", {{"tp", 2}, {"sp", true}, {"pp", 1}, {"dp", 32}, {"global_batch", 32}}}},
                                   o)["model"];
    m["linear_bias"] = bias;
    const Scenario sc = make({{"tp", 2}, {"sp", true}, {"pp", 1}, {"dp", 32}, {"micro_batch", 1}, {"global_batch", 32},
                              {"precision", "bf16"}, {"recompute", "none"}},
                             m);
    Result r;
    const Workload w = build(sc, r);
    bytes = elements = 0;
    for (const auto& ch : w.programs[0].chunks)
      for (int k = 0; k < kPassKinds; ++k)
        for (const auto& b : ch.pass[k].blocks)
          for (const auto& op : b.compute) {
            if (op.role != OpRole::kBiasGrad) continue;
            EXPECT_EQ(op.pass, Pass::kBackwardWeight);
            bytes += op.bytes * b.repeat;
            elements += op.elements * b.repeat;
          }
    return sc;
  };
  double bytes = 0, elements = 0;
  const Scenario sc = bias_grads(true, bytes, elements);
  ASSERT_TRUE(sc.model.linear_bias);
  const double T = sc.model.seq_len, h = static_cast<double>(sc.model.hidden);
  ASSERT_EQ(sc.model.ffn_hidden, 4 * sc.model.hidden);
  EXPECT_DOUBLE_EQ(elements, sc.model.layers * 4.5 * T * h);
  EXPECT_DOUBLE_EQ(bytes, 2 * elements);
  bias_grads(false, bytes, elements);
  EXPECT_EQ(elements, 0);
}

// PyTorch autocast over fp32 weights (plan.autocast): every micro-batch casts each weight to
// bf16 in its forward (read 4, write 2 bytes) and each weight gradient back to fp32 in its
// weight-gradient pass; the residual stream and the norms run in fp32, a norm's output cast to
// bf16 by a copy of its own (and its gradient back before the norm's backward). Per element:
// norm forward 2 x 4 = 8 bytes (4 without autocast: 2 x 2), backward 5 x 4 = 20 (10), each cast
// 4 + 2 = 6; residual add 2 x 4 + 2 = 10 forward (6), 2 x 4 backward (4). The model states are
// fp32's: 4 bytes a parameter, no separate master copy.
TEST(OpGraph, AutocastCastsTheWeightsEveryMicroBatchAndKeepsTheResidualStreamInFp32) {
  struct Bytes {
    double cast_fwd = 0, cast_fwd_elems = 0, cast_w = 0, cast_w_elems = 0;
    double norm_fwd = 0, norm_fwd_elems = 0, norm_bwd = 0, norm_bwd_elems = 0;
    double res_fwd = 0, res_fwd_elems = 0, res_bwd = 0, res_bwd_elems = 0;
    double params_bytes = 0, loss_cast_elems = 0;
    double norm_cast_fwd = 0, norm_cast_fwd_elems = 0, norm_cast_bwd = 0, norm_cast_bwd_elems = 0;
  };
  auto measure = [](bool autocast) {
    const Scenario sc = make({{"tp", 1}, {"pp", 1}, {"dp", 64}, {"micro_batch", 1}, {"global_batch", 128},
                              {"precision", "bf16"}, {"recompute", "none"}, {"autocast", autocast}});
    const double logits = static_cast<double>(sc.model.seq_len) * sc.model.vocab;
    const double norm_elems = static_cast<double>(sc.model.seq_len) * sc.model.hidden;
    Result r;
    const Workload w = build(sc, r);
    Bytes x;
    for (const auto& ch : w.programs[0].chunks)
      for (int k = 0; k < kPassKinds; ++k)
        for (const auto& b : ch.pass[k].blocks)
          for (const auto& op : b.compute) {
            const double by = op.bytes * b.repeat, el = op.elements * b.repeat;
            const bool fwd = op.pass == Pass::kForward;
            if (op.role == OpRole::kCast && op.elements == logits) {
              x.loss_cast_elems += el;  // the loss's logits to fp32 and their gradient back
            } else if (op.role == OpRole::kCast && op.elements == norm_elems && op.pass != Pass::kBackwardWeight) {
              // a norm's output to bf16, its gradient back to fp32
              const bool bwd = op.pass == Pass::kBackwardInput;
              EXPECT_TRUE(fwd || bwd);
              (bwd ? x.norm_cast_bwd : x.norm_cast_fwd) += by;
              (bwd ? x.norm_cast_bwd_elems : x.norm_cast_fwd_elems) += el;
            } else if (op.role == OpRole::kCast) {
              (fwd ? x.cast_fwd : x.cast_w) += by;
              (fwd ? x.cast_fwd_elems : x.cast_w_elems) += el;
              if (!fwd) {
                EXPECT_EQ(op.pass, Pass::kBackwardWeight);
              }
            } else if (op.role == OpRole::kNorm) {
              (fwd ? x.norm_fwd : x.norm_bwd) += by;
              (fwd ? x.norm_fwd_elems : x.norm_bwd_elems) += el;
            } else if (op.role == OpRole::kResidual) {
              (fwd ? x.res_fwd : x.res_bwd) += by;
              (fwd ? x.res_fwd_elems : x.res_bwd_elems) += el;
            }
          }
    x.params_bytes = estimate(sc).per_stage.at(0).breakdown.params_bytes;
    return std::make_pair(sc, x);
  };
  const auto [sc, on] = measure(true);
  const auto [sc_off, off] = measure(false);
  // Every weight but the embedding's (a gather reads the fp32 rows it needs) is cast, once each way.
  const ModelSpec& m = sc.model;
  auto norm_elems_of = [](const ModelSpec& mm) { return static_cast<double>(mm.seq_len) * mm.hidden; };
  const double embedding = static_cast<double>(m.vocab) * m.hidden;
  EXPECT_NEAR(on.cast_fwd_elems, count_params(m).total - embedding, 0.001 * count_params(m).total);
  EXPECT_DOUBLE_EQ(on.cast_w_elems, on.cast_fwd_elems);
  EXPECT_DOUBLE_EQ(on.cast_fwd, 6 * on.cast_fwd_elems);
  EXPECT_DOUBLE_EQ(on.cast_w, 6 * on.cast_w_elems);
  EXPECT_EQ(off.cast_fwd_elems + off.cast_w_elems, 0);
  const double logits = static_cast<double>(m.seq_len) * m.vocab;
  EXPECT_DOUBLE_EQ(on.loss_cast_elems, 2 * logits);
  EXPECT_DOUBLE_EQ(off.loss_cast_elems, 2 * logits);
  EXPECT_DOUBLE_EQ(on.norm_fwd / on.norm_fwd_elems, 8);
  EXPECT_DOUBLE_EQ(on.norm_bwd / on.norm_bwd_elems, 20);
  EXPECT_DOUBLE_EQ(off.norm_fwd / off.norm_fwd_elems, 4);
  EXPECT_DOUBLE_EQ(off.norm_bwd / off.norm_bwd_elems, 10);
  // One cast per norm each way: two norms a layer and the final one.
  EXPECT_DOUBLE_EQ(on.norm_cast_fwd_elems, on.norm_fwd_elems);
  EXPECT_DOUBLE_EQ(on.norm_cast_bwd_elems, on.norm_bwd_elems);
  EXPECT_DOUBLE_EQ(on.norm_cast_fwd_elems, (2.0 * m.layers + 1) * norm_elems_of(m));
  EXPECT_DOUBLE_EQ(on.norm_cast_fwd, 6 * on.norm_cast_fwd_elems);
  EXPECT_DOUBLE_EQ(on.norm_cast_bwd, 6 * on.norm_cast_bwd_elems);
  EXPECT_EQ(off.norm_cast_fwd_elems + off.norm_cast_bwd_elems, 0);
  // The layers' residual adds and the embedding's sum of token and position rows (2 x 4 in fp32).
  const double layer_res = 2.0 * m.layers * m.seq_len * m.hidden;
  EXPECT_DOUBLE_EQ(on.res_fwd, 10 * layer_res + 8 * m.seq_len * m.hidden);
  EXPECT_DOUBLE_EQ(on.res_bwd / on.res_bwd_elems, 8);
  EXPECT_DOUBLE_EQ(off.res_bwd / off.res_bwd_elems, 4);
  EXPECT_DOUBLE_EQ(on.params_bytes, 2 * off.params_bytes);
}

// PyTorch's non-reentrant checkpoint stops recomputing once the backward has what it needs: the
// full recomputation less every dense layer's MLP down projection (2 h f FLOPs a token), in the
// op graph's GEMMs and in the hardware FLOPs alike, and less the residual add after it.
TEST(OpGraph, AnEarlyStoppingRecomputationSkipsEachLayersLastGemm) {
  const json plan = {{"tp", 2}, {"pp", 2}, {"dp", 16}, {"global_batch", 64}, {"recompute", "full"}};
  json early = plan;
  early["recompute_early_stop"] = true;
  Result rf, re;
  const Scenario full_sc = make(plan), early_sc = make(early);
  const Workload wf = build(full_sc, rf), we = build(early_sc, re);
  const ModelSpec& m = full_sc.model;
  const double down = 2.0 * m.hidden * m.ffn_hidden * m.layers * rf.tokens_per_step;
  const double gpus = static_cast<double>(plan["tp"].get<int>()) * plan["dp"].get<int>();
  EXPECT_NEAR((totals(wf).gemm_flop - totals(we).gemm_flop) * wf.micro_batches * gpus, down, 1e-9 * down);
  EXPECT_NEAR(rf.hardware_flops_per_step - re.hardware_flops_per_step, down, 1e-9 * down);
  EXPECT_EQ(rf.model_flops_per_step, re.model_flops_per_step);
  const auto recomputed_residuals = [](const Workload& w) {
    int n = 0;
    for (const OpBlock& b : w.programs[0].chunks[0].program(PassKind::kBackward).blocks)
      for (const ComputeOp& op : b.compute) n += op.role == OpRole::kResidual && op.pass == Pass::kRecompute;
    return n;
  };
  EXPECT_EQ(recomputed_residuals(wf), 2);  // per layer block: after the attention and the MLP
  EXPECT_EQ(recomputed_residuals(we), 1);
  try {
    json bad = early;
    bad["recompute"] = "selective";
    make(bad);
    ADD_FAILURE() << "early stop accepted without a full recomputation";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("plan.recompute_early_stop"), std::string::npos) << e.what();
  }
}

// plan.attention_relayout: Q, K and V copied out of the fused QKV output in the forward (and its
// recomputation), their gradients concatenated back in the backward: each reads and writes the
// T x (h + 2 kv) / tp elements once, 2 bytes each.
TEST(OpGraph, TheQkvRelayoutMovesTheQkvOutputOnceEachWay) {
  for (bool relayout : {true, false}) {
    SCOPED_TRACE(relayout);
    const Scenario sc = make({{"tp", 4}, {"pp", 1}, {"dp", 16}, {"global_batch", 64}, {"recompute", "full"},
                              {"attention_relayout", relayout}});
    Result r;
    const Workload w = build(sc, r);
    const double T = static_cast<double>(sc.plan.micro_batch) * sc.model.seq_len;
    const double qkv_n = 3.0 * sc.model.hidden / sc.plan.tp;  // multi-head: h + 2 h
    double forward = 0, recompute = 0, backward = 0;
    for (const OpBlock& b : w.programs[0].chunks[0].program(PassKind::kForward).blocks)
      for (const ComputeOp& op : b.compute)
        if (op.role == OpRole::kRelayout) forward += op.bytes * b.repeat;
    for (const OpBlock& b : w.programs[0].chunks[0].program(PassKind::kBackward).blocks)
      for (const ComputeOp& op : b.compute)
        if (op.role == OpRole::kRelayout) (op.pass == Pass::kRecompute ? recompute : backward) += op.bytes * b.repeat;
    const double per_pass = relayout ? sc.model.layers * 2 * 2 * T * qkv_n : 0;
    EXPECT_NEAR(forward, per_pass, 1e-9 * per_pass + 1e-9);
    EXPECT_NEAR(recompute, per_pass, 1e-9 * per_pass + 1e-9);
    EXPECT_NEAR(backward, per_pass, 1e-9 * per_pass + 1e-9);
  }
}

TEST(OpGraph, AutocastNeedsASixteenBitPrecision) {
  try {
    make({{"tp", 1}, {"pp", 1}, {"dp", 64}, {"global_batch", 64}, {"precision", "fp32"}, {"autocast", true}});
    ADD_FAILURE() << "autocast accepted under fp32";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("plan.autocast"), std::string::npos) << e.what();
  }
}

TEST(OpGraph, TheFp8ActivationCacheAppliesUnderFp8Only) {
  auto activations = [](const char* precision, bool cache) {
    const json plan = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"ep", 32}, {"global_batch", 32}, {"precision", precision},
                       {"recompute", "selective"}, {"fp8_activation_cache", cache}};
    return estimate(make(plan, grouped_moe_model(), 4, "h800-cluster")).per_stage.at(0).breakdown.activations_bytes;
  };
  EXPECT_LT(activations("fp8", true), 0.8 * activations("fp8", false));
  EXPECT_DOUBLE_EQ(activations("bf16", true), activations("bf16", false));
}

TEST(OpGraph, DeepSeekV3sPlanFitsOnlyWithItsMemoryMeasures) {
  // The report's plan (arXiv:2412.19437 sec. 3.1-3.3: PP16 DualPipe, EP64, ZeRO-1, fp8, 2,048
  // H800): with its recompute of the norms and MLA's up-projections, the SwiGLU output recomputed,
  // the linears' inputs cached in fp8 and Adam's moments in bf16 (fp32 master weights and
  // gradients), a stage fits the H800's 80 GB; without the fp8 cache, or with fp32 moments, it
  // does not. DeepEP's node-limited dispatch exposes less of the expert traffic.
  json plan = {{"tp", 1}, {"pp", 16}, {"dp", 128}, {"ep", 64}, {"schedule", "dualpipe"}, {"micro_batch", 1},
               {"global_batch", 15360}, {"zero_stage", 1}, {"recompute", "selective"},
               {"recompute_modules", {"layernorm", "mla_up_proj", "moe_act"}}, {"precision", "fp8"},
               {"fp8_activation_cache", true}, {"adam_moments_precision", "bf16"}, {"moe_dispatcher", "deepep"}};
  const Result reported = estimate(make(plan, "deepseek-v3", 256, "h800-cluster"));
  EXPECT_TRUE(reported.feasible) << reported.reason;
  plan["fp8_activation_cache"] = false;
  EXPECT_FALSE(estimate(make(plan, "deepseek-v3", 256, "h800-cluster")).feasible);
  plan["fp8_activation_cache"] = true;
  plan["adam_moments_precision"] = "fp32";
  EXPECT_FALSE(estimate(make(plan, "deepseek-v3", 256, "h800-cluster")).feasible);
  plan["adam_moments_precision"] = "bf16";
  plan["moe_dispatcher"] = "alltoall";
  const Result a2a = estimate(make(plan, "deepseek-v3", 256, "h800-cluster"));
  EXPECT_LT(reported.breakdown.ep_comm_s, 0.5 * a2a.breakdown.ep_comm_s);
}

}  // namespace
}  // namespace trainsim
