#include "models/cost/compute_cost.hpp"

namespace trainsim {

namespace {
double gemm_s(const OpRates& r, double flop, double eff) { return eff > 0 ? flop / (r.peak_flop_per_s * eff) : 0; }
}  // namespace

LayerComputeTimes layer_times_from_op_rates(const OpRates& r, const LayerOpCounts& n) {
  LayerComputeTimes t;
  if (!r.present()) return t;
  const double fwd_elem = n.norm_elements * r.layernorm_fwd_s_per_element +
                          n.residual_elements * r.residual_add_s_per_element +
                          n.activation_elements * r.gelu_fwd_s_per_element;
  const double bwd_elem = n.norm_elements * r.layernorm_bwd_s_per_element +
                          n.residual_elements * r.residual_add_s_per_element +
                          n.activation_elements * r.gelu_bwd_s_per_element;
  const double attn_f = gemm_s(r, n.attention_flop, r.attention_forward_efficiency);
  t.forward_s = gemm_s(r, n.gemm_flop, r.gemm_forward_efficiency) + attn_f + fwd_elem;
  t.backward_weight_s = gemm_s(r, n.gemm_flop, r.gemm_backward_weight_efficiency);
  t.backward_s = gemm_s(r, n.gemm_flop, r.gemm_backward_input_efficiency) + t.backward_weight_s +
                 gemm_s(r, 2.5 * n.attention_flop, r.attention_backward_efficiency) + bwd_elem;
  t.attention_forward_s = attn_f;
  return t;
}

LayerComputeTimes layer_times_from_op_rates(const OpRates& r, const RankLayerShape& s) {
  const double T = s.tokens(), h = s.hidden, hl = h / s.tp, fl = 4 * h / s.tp;
  LayerOpCounts n;
  n.gemm_flop = 2 * T * h * (4 * hl + 2 * fl);  // Q, K, V, O, up, down
  n.attention_flop = 2 * s.micro_batch * (s.heads / s.tp) * s.seq * s.seq * (h / s.heads);
  n.norm_elements = 2 * T * h;
  n.residual_elements = 2 * T * h;
  n.activation_elements = T * fl;
  return layer_times_from_op_rates(r, n);
}

double embedding_time_from_op_rates(const OpRates& r, const RankLayerShape& s, bool backward) {
  return s.tokens() * s.hidden * (backward ? r.embedding_bwd_s_per_element : r.embedding_fwd_s_per_element);
}

double lm_head_time_from_op_rates(const OpRates& r, const RankLayerShape& s) {
  const double T = s.tokens(), h = s.hidden;
  return T * h * (r.layernorm_fwd_s_per_element + r.layernorm_bwd_s_per_element) +
         gemm_s(r, 3 * 2 * T * h * s.vocab, r.lm_head_gemm_efficiency) + T * s.vocab * r.softmax_xent_s_per_element;
}

double optimizer_time_from_op_rates(const OpRates& r, double params, double grad_elements) {
  return params * r.adamw_s_per_param + grad_elements * r.fill_zero_s_per_element;
}

}  // namespace trainsim
