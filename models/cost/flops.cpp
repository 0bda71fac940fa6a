#include "models/cost/flops.hpp"

#include <algorithm>

namespace trainsim {

namespace {
// Weight matrices of one FFN of inner width f: GeLU two (h x f, f x h), SwiGLU three.
double ffn_matrices(const ModelSpec& m) { return m.ffn_act == FfnActivation::kSwiglu ? 3.0 : 2.0; }
}  // namespace

HeadDims head_dims(const ModelSpec& m) {
  if (m.mla) return {static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim),
                     static_cast<double>(m.mla->v_head_dim)};
  const double d = m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
  return {d, d};
}

double query_width(const ModelSpec& m) { return m.heads * head_dims(m).qk; }
double kv_head_count(const ModelSpec& m) { return m.mla ? m.heads : m.kv_heads; }
double key_value_width(const ModelSpec& m) {
  const HeadDims d = head_dims(m);
  return kv_head_count(m) * (d.qk + d.v);
}
double context_width(const ModelSpec& m) { return m.heads * head_dims(m).v; }

double mla_gathered_width(const ModelSpec& m) {
  if (!m.mla) return 0;
  const double q = m.mla->q_lora_rank > 0 ? static_cast<double>(m.mla->q_lora_rank) : static_cast<double>(m.hidden);
  return q + static_cast<double>(m.mla->kv_lora_rank) + m.mla->qk_rope_head_dim;
}

double mla_up_kv_width(const ModelSpec& m) {
  if (!m.mla) return 0;
  return static_cast<double>(m.heads) * (m.mla->qk_nope_head_dim + m.mla->v_head_dim);
}

bool is_moe_layer(const ModelSpec& model, int index) {
  return model.moe.has_value() && index >= model.moe->dense_layers;
}

LayerParams layer_params(const ModelSpec& m, bool moe_layer) {
  const double h = static_cast<double>(m.hidden);
  LayerParams p;
  p.norms = 4 * h;  // two layernorms, weight + bias
  if (m.mla) {
    // DeepSeek-V2 eqs. 9-14: W^DQ h x r_q, W^UQ r_q x a(d_nope + d_rope) (or W^Q h x a d_qk
    // without a query latent), W^DKV + W^KR h x (r_kv + d_rope), W^UK, W^UV r_kv x a(d_nope + d_v),
    // W^O a d_v x h; an RMSNorm on each latent.
    const MlaSpec& l = *m.mla;
    const double rq = static_cast<double>(l.q_lora_rank), rkv = static_cast<double>(l.kv_lora_rank);
    const double up_kv = rkv * mla_up_kv_width(m);
    p.attention = (rq > 0 ? rq : h) * query_width(m) + up_kv + context_width(m) * h;
    p.attention_replicated = (rq > 0 ? h * rq + rq : 0) + h * (rkv + l.qk_rope_head_dim) + rkv;
  } else {
    // Q h x a d, K and V h x g d each, output projection a d x h.
    p.attention = h * (query_width(m) + key_value_width(m)) + context_width(m) * h;
  }
  if (moe_layer && m.moe) {
    const double expert = ffn_matrices(m) * h * static_cast<double>(m.moe->expert_ffn_hidden);
    p.experts = m.moe->experts * expert;
    p.mlp_dense = m.moe->shared_experts * expert + h * m.moe->experts;  // + router
  } else {
    p.mlp_dense = ffn_matrices(m) * h * static_cast<double>(m.ffn_hidden);
  }
  return p;
}

LayerFlops layer_forward_flops_per_token(const ModelSpec& m, bool moe_layer) {
  const double h = static_cast<double>(m.hidden);
  const double s = static_cast<double>(m.seq_len);
  LayerFlops f;
  // The projections: 2 FLOPs per weight (QKV 6h^2 and the output projection 2h^2 for MHA).
  const LayerParams lp = layer_params(m, false);
  const double latent_norms = m.mla ? static_cast<double>(m.mla->q_lora_rank + m.mla->kv_lora_rank) : 0.0;
  f.gemm = 2 * (lp.attention + lp.attention_replicated - latent_norms);
  // Scores 2 s a d_qk + context 2 s a d_v (= 2sh + 2sh for MHA, Narayanan et al. SC'21 appendix).
  f.attention = 2 * s * (query_width(m) + context_width(m));
  if (moe_layer && m.moe) {
    const double expert = 2 * ffn_matrices(m) * h * static_cast<double>(m.moe->expert_ffn_hidden);
    f.gemm += (m.moe->top_k + m.moe->shared_experts) * expert + 2 * h * m.moe->experts;
  } else {
    // GeLU MLP 4hf (16h^2 at f = 4h); SwiGLU 6hf.
    f.gemm += 2 * ffn_matrices(m) * h * static_cast<double>(m.ffn_hidden);
  }
  return f;
}

double logits_forward_flops_per_token(const ModelSpec& m) {
  return 2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.vocab);
}

double recompute_forward_flops_per_token(const ModelSpec& m, bool moe_layer, const RecomputeModules& rc) {
  const double h = static_cast<double>(m.hidden);
  double f = 0;
  if (rc.core_attn) f += layer_forward_flops_per_token(m, moe_layer).attention;
  if (rc.mla_up_proj && m.mla) {
    const double rq = static_cast<double>(m.mla->q_lora_rank);
    f += 2 * (rq * query_width(m) + static_cast<double>(m.mla->kv_lora_rank) * mla_up_kv_width(m));
  }
  if (rc.mlp && !(moe_layer && m.moe)) f += 2 * ffn_matrices(m) * h * static_cast<double>(m.ffn_hidden);
  return f;
}

StepFlops step_flops(const ModelSpec& m, Recompute recompute, double tokens, const RecomputeModules& modules,
                     bool early_stop) {
  double layers_fwd = 0;
  const int dense = m.moe ? std::min(m.moe->dense_layers, m.layers) : m.layers;
  const LayerFlops dense_f = layer_forward_flops_per_token(m, false);
  layers_fwd += dense * dense_f.total();
  if (m.layers > dense) {
    const LayerFlops moe_f = layer_forward_flops_per_token(m, true);
    layers_fwd += (m.layers - dense) * moe_f.total();
  }
  const double fwd = layers_fwd + logits_forward_flops_per_token(m);
  StepFlops out;
  out.model = 3 * fwd * tokens;
  double extra = 0;
  if (recompute == Recompute::kFull) {
    extra = layers_fwd;
    if (early_stop) extra -= dense * 2 * static_cast<double>(m.hidden) * static_cast<double>(m.ffn_hidden);
  } else {
    const RecomputeModules rc = piecewise_recompute(recompute, modules);
    extra = dense * recompute_forward_flops_per_token(m, false, rc) +
            (m.layers - dense) * recompute_forward_flops_per_token(m, true, rc);
  }
  out.hardware = out.model + extra * tokens;
  return out;
}

ParamCount count_params(const ModelSpec& m) {
  ParamCount c;
  const double h = static_cast<double>(m.hidden);
  const double embed = h * static_cast<double>(m.vocab);
  c.total = embed * (m.tied_embeddings ? 1 : 2) + 2 * h;  // + final layernorm
  c.active_per_token = c.total;
  for (int i = 0; i < m.layers; ++i) {
    const bool moe = is_moe_layer(m, i);
    const LayerParams p = layer_params(m, moe);
    c.total += p.attention + p.attention_replicated + p.mlp_dense + p.experts + p.norms;
    c.experts += p.experts;
    c.active_per_token += p.attention + p.attention_replicated + p.mlp_dense + p.norms;
    if (moe && m.moe) c.active_per_token += p.experts * m.moe->top_k / m.moe->experts;
  }
  return c;
}

}  // namespace trainsim
