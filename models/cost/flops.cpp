#include "models/cost/flops.hpp"

#include <algorithm>

namespace trainsim {

namespace {
// Width of the K and V projections under grouped-query attention: h * g / a.
double kv_width(const ModelSpec& m) {
  return static_cast<double>(m.hidden) * m.kv_heads / m.heads;
}
// Weight matrices of one FFN of inner width f: GeLU two (h x f, f x h), SwiGLU three.
double ffn_matrices(const ModelSpec& m) { return m.ffn_act == FfnActivation::kSwiglu ? 3.0 : 2.0; }
}  // namespace

bool is_moe_layer(const ModelSpec& model, int index) {
  return model.moe.has_value() && index >= model.moe->dense_layers;
}

LayerParams layer_params(const ModelSpec& m, bool moe_layer) {
  const double h = static_cast<double>(m.hidden);
  LayerParams p;
  // QKV h x (h + 2 h_kv) and output projection h x h.
  p.attention = h * (h + 2 * kv_width(m)) + h * h;
  p.norms = 4 * h;  // two layernorms, weight + bias
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
  // QKV 2h(h + 2h_kv) (= 6h^2 for MHA), output projection 2h^2.
  f.gemm = 2 * h * (h + 2 * kv_width(m)) + 2 * h * h;
  // Scores 2sh + context 2sh (Narayanan et al. SC'21 appendix).
  f.attention = 4 * s * h;
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

StepFlops step_flops(const ModelSpec& m, Recompute recompute, double tokens) {
  double layers_fwd = 0, attention_fwd = 0;
  const int dense = m.moe ? std::min(m.moe->dense_layers, m.layers) : m.layers;
  const LayerFlops dense_f = layer_forward_flops_per_token(m, false);
  layers_fwd += dense * dense_f.total();
  attention_fwd += dense * dense_f.attention;
  if (m.layers > dense) {
    const LayerFlops moe_f = layer_forward_flops_per_token(m, true);
    layers_fwd += (m.layers - dense) * moe_f.total();
    attention_fwd += (m.layers - dense) * moe_f.attention;
  }
  const double fwd = layers_fwd + logits_forward_flops_per_token(m);
  StepFlops out;
  out.model = 3 * fwd * tokens;
  double extra = 0;
  if (recompute == Recompute::kFull) extra = layers_fwd;
  else if (recompute == Recompute::kSelective) extra = attention_fwd;
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
    c.total += p.attention + p.mlp_dense + p.experts + p.norms;
    c.experts += p.experts;
    c.active_per_token += p.attention + p.mlp_dense + p.norms;
    if (moe && m.moe) c.active_per_token += p.experts * m.moe->top_k / m.moe->experts;
  }
  return c;
}

}  // namespace trainsim
