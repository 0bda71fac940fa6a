#include "models/cost/flops.hpp"

#include <gtest/gtest.h>

#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

ModelSpec preset(const std::string& name) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  nlohmann::json j = {{"schema_version", 1}, {"model", name},
                      {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 1}}},
                      {"plan", {{"global_batch", 8}}}};
  return parse_scenario(resolve_scenario_json(j, o)).model;
}

// Narayanan et al. SC'21 appendix, eq. (3): 72 B s L h^2 (1 + s/(6h) + V/(12 h L)) per step, and
// with full recompute 96 B s L h^2 (1 + s/(6h) + V/(16 h L)).
TEST(Flops, MatchesMegatronClosedFormForEveryTable1Model) {
  for (const char* name : {"gpt-1.7b", "gpt-18.4b", "gpt-145.6b", "gpt-1008b", "gpt3-175b"}) {
    SCOPED_TRACE(name);
    const ModelSpec m = preset(name);
    const double B = 1536, s = m.seq_len, L = m.layers, h = m.hidden, V = m.vocab;
    const StepFlops none = step_flops(m, Recompute::kNone, B * s);
    const StepFlops full = step_flops(m, Recompute::kFull, B * s);
    EXPECT_NEAR(none.model / (72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L))), 1.0, 1e-12);
    EXPECT_NEAR(full.hardware / (96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * h * L))), 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(none.hardware, none.model);
    EXPECT_DOUBLE_EQ(full.model, none.model);  // recompute is not model work (PaLM appendix B)
  }
}

TEST(Flops, SelectiveRecomputeAddsOnlyTheAttentionCore) {
  const ModelSpec m = preset("gpt3-175b");
  const double tokens = 2048;
  const StepFlops sel = step_flops(m, Recompute::kSelective, tokens);
  EXPECT_DOUBLE_EQ(sel.hardware - sel.model, m.layers * 4.0 * m.seq_len * m.hidden * tokens);
}

// DeepSeek-V3's MLA up-projections computed again: W^UQ 1536 x 128*192 and W^UK+W^UV 512 x
// 128*(128+128), 2 FLOPs a weight = 109,051,904 FLOPs per token a layer; with core_attn too, the
// attention core's forward (2 s a (192 + 128)) on top.
TEST(Flops, RecomputedUpProjectionsAddTheirForwardGemms) {
  ModelSpec m = preset("deepseek-v3");
  const double tokens = 4096;
  RecomputeModules up;
  up.core_attn = false;
  up.mla_up_proj = true;
  const StepFlops sel = step_flops(m, Recompute::kSelective, tokens, up);
  EXPECT_DOUBLE_EQ(sel.hardware - sel.model, m.layers * 109051904.0 * tokens);
  up.core_attn = true;
  const StepFlops both = step_flops(m, Recompute::kSelective, tokens, up);
  EXPECT_DOUBLE_EQ(both.hardware - both.model, m.layers * (109051904.0 + 2.0 * m.seq_len * 128 * 320) * tokens);
  EXPECT_DOUBLE_EQ(step_flops(m, Recompute::kNone, tokens, up).hardware, sel.model);
}

// Published parameter counts (model cards / papers).
TEST(Flops, ParameterCountsMatchPublishedModels) {
  struct Case {
    const char* name;
    double total_b, active_b, tolerance;
  };
  const Case cases[] = {
      {"gpt3-175b", 175.0, 175.0, 0.01},     // GPT-3 paper (tied embeddings: 174.6B)
      {"llama2-7b", 6.738, 6.738, 0.005},    // HF config: 6,738,415,616
      {"llama2-70b", 68.98, 68.98, 0.01},
      {"llama3-8b", 8.03, 8.03, 0.01},
      {"llama3-405b", 405.9, 405.9, 0.01},
      {"mixtral-8x7b", 46.7, 12.9, 0.01},    // Mixtral paper: 47B total, 13B active
      {"deepseek-v3", 671, 37, 0.02},        // DeepSeek-V3 report: 671B, 37B activated (37.55B here)
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const ParamCount p = count_params(preset(c.name));
    EXPECT_NEAR(p.total / 1e9 / c.total_b, 1.0, c.tolerance);
    EXPECT_NEAR(p.active_per_token / 1e9 / c.active_b, 1.0, c.tolerance);
  }
}

TEST(Flops, GqaAndSwigluChangeTheCounts) {
  ModelSpec m = preset("llama2-7b");
  const double h = m.hidden, f = m.ffn_hidden, s = m.seq_len;
  LayerFlops lf = layer_forward_flops_per_token(m, false);
  EXPECT_DOUBLE_EQ(lf.gemm, 8 * h * h + 6 * h * f);  // MHA QKV+O, SwiGLU 3 matrices
  EXPECT_DOUBLE_EQ(lf.attention, 4 * s * h);
  m.kv_heads = 8;  // GQA: K and V shrink to h * g / a
  lf = layer_forward_flops_per_token(m, false);
  EXPECT_DOUBLE_EQ(lf.gemm, 2 * h * (h + 2 * h / 4) + 2 * h * h + 6 * h * f);
}

// Multi-head latent attention, DeepSeek-V2 (arXiv:2405.04434) eqs. 9-14 with DeepSeek-V3's
// widths: the projections W^DQ, W^UQ (+ W^QR), W^DKV + W^KR, W^UK + W^UV and W^O, 2 FLOPs per
// weight; scores over 192-wide query/key heads, context over 128-wide value heads.
TEST(Flops, MultiHeadLatentAttentionCountsItsOwnProjectionsAndHeadWidths) {
  const ModelSpec m = preset("deepseek-v3");
  ASSERT_TRUE(m.mla.has_value());
  const double h = 7168, a = 128, rq = 1536, rkv = 512, nope = 128, rope = 64, dv = 128, s = m.seq_len;
  const double projections = h * rq + rq * a * (nope + rope) + h * (rkv + rope) + rkv * a * (nope + dv) + a * dv * h;
  const LayerFlops dense = layer_forward_flops_per_token(m, false);
  EXPECT_DOUBLE_EQ(dense.gemm, 2 * projections + 6 * h * m.ffn_hidden);
  EXPECT_DOUBLE_EQ(dense.attention, 2 * s * a * (nope + rope) + 2 * s * a * dv);
  // 2.9x the attention core of MHA at hidden / heads = 56 wide heads (4 s h).
  EXPECT_NEAR(dense.attention / (4 * s * h), 320.0 / 112.0, 1e-12);
  // The down-projections and latent norms are whole on every tensor-parallel rank.
  const LayerParams p = layer_params(m, false);
  EXPECT_DOUBLE_EQ(p.attention_replicated, h * rq + rq + h * (rkv + rope) + rkv);
  EXPECT_DOUBLE_EQ(p.dense_per_tp_rank(8), (p.attention + p.mlp_dense) / 8 + p.attention_replicated + p.norms);
}

TEST(Flops, MoeLayersCountTopKAndSharedExperts) {
  const ModelSpec m = preset("deepseek-v3");
  EXPECT_FALSE(is_moe_layer(m, 2));
  EXPECT_TRUE(is_moe_layer(m, 3));
  const double h = m.hidden, fe = m.moe->expert_ffn_hidden;
  const LayerFlops dense = layer_forward_flops_per_token(m, false);
  const LayerFlops moe = layer_forward_flops_per_token(m, true);
  EXPECT_DOUBLE_EQ(moe.gemm - (dense.gemm - 6 * h * m.ffn_hidden),
                   (8 + 1) * 6 * h * fe + 2 * h * 256);
}

}  // namespace
}  // namespace trainsim
