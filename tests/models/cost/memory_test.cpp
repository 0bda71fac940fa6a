#include "models/cost/memory.hpp"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

// ZeRO paper (Rajbhandari et al. SC'20) Figure 1: 7.5B parameters, Nd = 64, K = 12.
TEST(Memory, ReproducesZeroPaperFigure1) {
  const double psi = 7.5e9;
  const double expected_gb[] = {120, 31.4, 16.6, 1.88};
  for (int stage = 0; stage <= 3; ++stage) {
    SCOPED_TRACE(stage);
    const MemoryBreakdown m = model_state_bytes(psi, stage, 64, Precision::kFp16);
    EXPECT_NEAR((m.params_bytes + m.grads_bytes + m.optimizer_bytes) / 1e9, expected_gb[stage], 0.06);
  }
}

TEST(Memory, Fp32TrainingHasNoMasterCopy) {
  const MemoryBreakdown m = model_state_bytes(1e9, 0, 1, Precision::kFp32);
  EXPECT_DOUBLE_EQ(m.params_bytes + m.grads_bytes + m.optimizer_bytes, 16e9);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8e9);
}

// The GPT-3 175B layer Korthikanti et al. work with: MHA, GeLU, f = 4h, s = 2048.
ModelSpec gpt3_layer_model() {
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * m.hidden;
  m.vocab = 51200;
  m.seq_len = 2048;
  return m;
}

// Korthikanti et al. 2022 section 4: the generalised per-term inventory must reduce to the
// paper's closed forms for a GPT layer (MHA, GeLU, f = 4h, no flash attention).
TEST(Memory, ActivationInventoryReducesToKorthikantiClosedForms) {
  ModelSpec m = gpt3_layer_model();
  for (int t : {1, 2, 8}) {
    for (bool sp : {false, true}) {
      for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        SCOPED_TRACE(testing::Message() << "t=" << t << " sp=" << sp << " rc=" << to_string(rc));
        ActivationOptions o;
        o.tp = t;
        o.sp = sp;
        o.recompute = rc;
        o.flash_attention = false;
        o.micro_batch = 4;
        const double ours = layer_activation_bytes(m, false, o);
        const double paper = korthikanti_activation_bytes(2048, 4, 12288, 96, t, sp, rc);
        EXPECT_NEAR(ours / paper, 1.0, 1e-12);
      }
    }
  }
}

TEST(Memory, WithoutDropoutNoMaskIsKept) {
  // Korthikanti et al.'s 34 sbh counts three 1-byte dropout masks (attention output, MLP
  // output... and the score matrix's a s^2 b); without dropout the GPT layer keeps 32 sbh and
  // 2 a s^2 b of scores (the softmax output), and the embedding output loses its mask.
  ModelSpec m = gpt3_layer_model();
  m.dropout = 0;
  const double sbh = 2048.0 * 12288;
  ActivationOptions o;
  o.flash_attention = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, false, o), 32 * sbh);
  o.flash_attention = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, false, o), sbh * (32 + 2.0 * 96 * 2048 / 12288));
  EXPECT_DOUBLE_EQ(first_stage_extra_activation_bytes(m, o), 2 * sbh);
  m.dropout = 0.1;
  EXPECT_DOUBLE_EQ(first_stage_extra_activation_bytes(m, o), 3 * sbh);
}

TEST(Memory, KorthikantiTable2GptThreeExample) {
  // 175B-like layer, s=2048, b=1, t=8 with SP and selective recompute: 34 sbh / t bytes.
  EXPECT_DOUBLE_EQ(korthikanti_activation_bytes(2048, 1, 12288, 96, 8, true, Recompute::kSelective),
                   34.0 * 2048 * 12288 / 8);
  // No parallelism: sbh (34 + 5as/h).
  EXPECT_DOUBLE_EQ(korthikanti_activation_bytes(2048, 1, 12288, 96, 1, false, Recompute::kNone),
                   2048.0 * 12288 * (34 + 5.0 * 96 * 2048 / 12288));
}

TEST(Memory, FlashAttentionRemovesTheScoreMatrix) {
  ModelSpec m;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn_hidden = 16384;
  m.seq_len = 4096;
  ActivationOptions o;
  o.flash_attention = false;
  const double unfused = layer_activation_bytes(m, false, o);
  o.flash_attention = true;
  const double flash = layer_activation_bytes(m, false, o);
  EXPECT_DOUBLE_EQ(unfused - flash, 5.0 * 32 * 4096 * 4096);
}

// DeepSeek-V3's layer shape (hidden 7168, 128 heads, SwiGLU 18432, s = 4096, no dropout) with
// multi-head attention; the tests add its MLA and MoE blocks.
ModelSpec deepseek_v3_shape_mha() {
  ModelSpec m;
  m.hidden = 7168;
  m.heads = m.kv_heads = 128;
  m.ffn_hidden = 18432;
  m.ffn_act = FfnActivation::kSwiglu;
  m.seq_len = 4096;
  m.dropout = 0;
  return m;
}

TEST(Memory, LatentAttentionKeepsItsHeadsAtTheirOwnWidths) {
  // MLA's saved tensors per token, 2 bytes each, beside an MHA layer of the same hidden size:
  // Q and K of a 192-wide heads and V and the context of 128 (instead of 4 h), and the latents
  // q 1536, kv 512 before and after their norms plus the 64-wide rotary key, which tensor
  // parallelism does not split (sequence parallelism does).
  const ModelSpec mha = deepseek_v3_shape_mha();
  ModelSpec mla = mha;
  mla.mla = MlaSpec{1536, 512, 128, 64, 128};
  const double a = 128, s = 4096, h = 7168;
  for (int t : {1, 8}) {
    SCOPED_TRACE(t);
    ActivationOptions o;
    o.tp = t;
    o.flash_attention = true;
    const double heads = 2 * a * (192 + 192 + 128 + 128) - 8 * h;
    const double latents = 4 * (1536 + 512) + 2 * 64;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(mla, false, o) - layer_activation_bytes(mha, false, o),
                     s * (heads / t + latents));
    o.sp = true;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(mla, false, o) - layer_activation_bytes(mha, false, o),
                     s * (heads + latents) / t);
  }
}

// Selective recomputation of DeepSeek-V3's parts (Megatron-Core --recompute-modules; the report's
// section 3.2.3 recomputes "all RMSNorm operations and MLA up-projections"), per token at TP 1,
// 2 bytes an element: layernorm drops the two pre-norms' outputs (2 x 2h) and the latents' norm
// outputs (2 (1536 + 512)) = 32,768 B; mla_up_proj drops Q (128 x 192) and K, V (128 x (192 +
// 128)) = 131,072 B; moe_act the 8 routed experts' activation outputs (8 x 2048) = 32,768 B;
// mlp a dense SwiGLU MLP's gate, up and product (3 x 18,432) = 110,592 B.
TEST(Memory, RecomputedModulesKeepNothingOfWhatTheyRebuild) {
  ModelSpec m = deepseek_v3_shape_mha();
  m.mla = MlaSpec{1536, 512, 128, 64, 128};
  m.moe = MoeSpec{256, 8, 2048, 1, 3};
  const double s = 4096;
  ActivationOptions base;
  base.recompute = Recompute::kSelective;  // core_attn alone: nothing kept with flash attention
  auto with = [&](void (*set)(RecomputeModules&)) {
    ActivationOptions o = base;
    set(o.recompute_modules);
    return o;
  };
  const ActivationOptions norms = with([](RecomputeModules& r) { r.layernorm = true; });
  const ActivationOptions up = with([](RecomputeModules& r) { r.mla_up_proj = true; });
  const ActivationOptions act = with([](RecomputeModules& r) { r.moe_act = true; });
  const ActivationOptions mlp = with([](RecomputeModules& r) { r.mlp = true; });
  for (bool moe : {false, true}) {
    SCOPED_TRACE(moe);
    const double kept = layer_activation_bytes(m, moe, base);
    EXPECT_DOUBLE_EQ(kept - layer_activation_bytes(m, moe, norms), s * 32768);
    EXPECT_DOUBLE_EQ(kept - layer_activation_bytes(m, moe, up), s * 131072);
    EXPECT_DOUBLE_EQ(kept - layer_activation_bytes(m, moe, act), moe ? s * 32768 : 0.0);
    EXPECT_DOUBLE_EQ(kept - layer_activation_bytes(m, moe, mlp), moe ? 0.0 : s * 110592);
    // Under none and full the modules do nothing.
    for (Recompute rc : {Recompute::kNone, Recompute::kFull}) {
      ActivationOptions a = norms, b = base;
      a.recompute = b.recompute = rc;
      EXPECT_DOUBLE_EQ(layer_activation_bytes(m, moe, a), layer_activation_bytes(m, moe, b));
    }
  }
}

// DeepSpeed's estimators as written in its source; e.g. a 13B model on 8 GPUs with a 325M
// largest layer (the example users run): ZeRO-3 without offload 4*325M + 18*13B/8 bytes.
TEST(Memory, ReproducesDeepSpeedEstimators) {
  EXPECT_DOUBLE_EQ(deepspeed_zero3_gpu_bytes(13e9, 325e6, 8, false, false), 4 * 325e6 + 18 * 13e9 / 8);
  EXPECT_DOUBLE_EQ(deepspeed_zero3_gpu_bytes(13e9, 325e6, 8, true, false), 4 * 325e6 + 2 * 13e9 / 8);
  EXPECT_DOUBLE_EQ(deepspeed_zero3_gpu_bytes(13e9, 325e6, 8, true, true), 4 * 325e6);
  EXPECT_DOUBLE_EQ(deepspeed_zero2_gpu_bytes(13e9, 8, false), 2 * 13e9 + 18 * 13e9 / 8);
  // A bf16 plan's ZeRO-3 model states keep fp32 gradient partitions (plan.grad_reduce), 18P/N,
  // DeepSpeed's count without the gathered layer (4L), which trainsim adds as a buffer
  // ("other") with the activations on top.
  ParallelPlan plan;
  plan.precision = Precision::kBf16;
  const MemoryBreakdown ours = model_state_bytes(13e9, 3, 8, state_bytes(plan));
  EXPECT_DOUBLE_EQ(ours.params_bytes + ours.grads_bytes + ours.optimizer_bytes,
                   deepspeed_zero3_gpu_bytes(13e9, 325e6, 8, false, false) - 4 * 325e6);
}

// Megatron-LM docs/source/distrib_optimizer.md, bytes per parameter without and with the
// distributed optimizer (ZeRO-1 over d ranks): bf16 parameters with fp32 gradients 18 and
// 6 + 12/d; fp32 parameters and gradients 16 and 8 + 8/d.
TEST(Memory, ReproducesMegatronDistributedOptimizerTable) {
  const double d = 8;
  ParallelPlan bf16;
  bf16.precision = Precision::kBf16;
  bf16.grad_reduce = Precision::kFp32;
  ParallelPlan fp32;
  fp32.precision = Precision::kFp32;
  fp32.grad_reduce = Precision::kFp32;
  auto per_param = [&](const ParallelPlan& p, int stage) {
    const MemoryBreakdown m = model_state_bytes(1e9, stage, static_cast<int>(d), state_bytes(p));
    return (m.params_bytes + m.grads_bytes + m.optimizer_bytes) / 1e9;
  };
  EXPECT_DOUBLE_EQ(per_param(bf16, 0), 18);
  EXPECT_DOUBLE_EQ(per_param(bf16, 1), 6 + 12 / d);
  EXPECT_DOUBLE_EQ(per_param(fp32, 0), 16);
  EXPECT_DOUBLE_EQ(per_param(fp32, 1), 8 + 8 / d);
  // Gradients reduced in 16 bits (fp16 with loss scaling, FSDP's PURE policy): the ZeRO paper's
  // 2 + 2 + 12.
  bf16.grad_reduce = Precision::kBf16;
  EXPECT_DOUBLE_EQ(per_param(bf16, 0), 16);
  // DeepSeek-V3's bf16 Adam moments (arXiv:2412.19437 sec. 3.3.3) beside fp32 master weights:
  // 4 + 2 + 2 bytes of optimizer state.
  bf16.adam_moments = Precision::kBf16;
  EXPECT_DOUBLE_EQ(model_state_bytes(1e9, 0, 1, state_bytes(bf16)).optimizer_bytes, 8e9);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(Memory, TheFp8CacheKeepsTheLinearsInputsInOneByteAndAScale) {
  // Llama-3-8B's widths (h 4096, SwiGLU f 14336, no dropout), one GPU, selective recompute:
  // the two norm outputs (2h), the SwiGLU gate and up outputs (2f) and their product (f) go from
  // 2 bytes to 1 + 4/128 (fp8 with a scale per 1 x 128 tile), the output projection's input (h)
  // to 1.5 (E5M6): DeepSeek-V3 report sec. 3.3.1-3.3.2.
  ModelSpec m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.ffn_act = FfnActivation::kSwiglu;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.dropout = 0;
  ActivationOptions bf16;
  bf16.recompute = Recompute::kSelective;
  ActivationOptions fp8 = bf16;
  fp8.fp8_cache = true;
  const double saved_per_token = (2 - 1.03125) * (2 * 4096 + 3 * 14336) + (2 - 1.5) * 4096;
  EXPECT_DOUBLE_EQ(saved_per_token, 51648);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, false, bf16) - layer_activation_bytes(m, false, fp8), 8192 * saved_per_token);
  // Full recompute keeps only the layer's input (16-bit residual stream): nothing to cache.
  bf16.recompute = fp8.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, false, bf16), layer_activation_bytes(m, false, fp8));
}

}  // namespace
}  // namespace trainsim
