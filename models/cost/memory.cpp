#include "models/cost/memory.hpp"

#include <algorithm>

#include "models/cost/flops.hpp"

namespace trainsim {

StateBytes state_bytes_per_param(Precision precision) {
  if (precision == Precision::kFp32) return {4, 4, 8};
  return {2, 2, 12};
}

Precision state_precision(const ParallelPlan& plan) {
  const bool sixteen = plan.precision == Precision::kBf16 || plan.precision == Precision::kFp16;
  return plan.autocast && sixteen ? Precision::kFp32 : plan.precision;
}

Precision grad_reduce_precision(const ParallelPlan& plan) {
  if (plan.grad_reduce) return *plan.grad_reduce;
  return plan.precision == Precision::kFp16 && !plan.autocast ? Precision::kFp16 : Precision::kFp32;
}

double adam_moment_bytes(const ParallelPlan& plan) { return plan.adam_moments == Precision::kFp32 ? 4 : 2; }

StateBytes state_bytes(const ParallelPlan& plan) {
  StateBytes b = state_bytes_per_param(state_precision(plan));
  b.grads = grad_reduce_precision(plan) == Precision::kFp32 ? 4 : 2;
  // Adam's m and v; a 16-bit training precision adds the fp32 master weights.
  const double moments = 2 * adam_moment_bytes(plan);
  b.optimizer = state_precision(plan) == Precision::kFp32 ? moments : 4 + moments;
  return b;
}

MemoryBreakdown model_state_bytes(double params, int zero_stage, int zero_degree,
                                  Precision precision) {
  return model_state_bytes(params, zero_stage, zero_degree, state_bytes_per_param(precision));
}

MemoryBreakdown model_state_bytes(double params, int zero_stage, int zero_degree, const StateBytes& b) {
  const double d = std::max(1, zero_degree);
  MemoryBreakdown m;
  m.params_bytes = params * b.params / (zero_stage >= 3 ? d : 1.0);
  m.grads_bytes = params * b.grads / (zero_stage >= 2 ? d : 1.0);
  m.optimizer_bytes = params * b.optimizer / (zero_stage >= 1 ? d : 1.0);
  return m;
}

double deepspeed_zero2_gpu_bytes(double params, int gpus, bool offload_optimizer) {
  if (offload_optimizer) return 2 * params;
  return 2 * params + 18 * params / gpus;
}

double deepspeed_zero3_gpu_bytes(double params, double largest_layer_params, int gpus,
                                 bool offload_optimizer, bool offload_params) {
  const double largest = 4 * largest_layer_params;
  if (offload_optimizer && offload_params) return largest;
  if (offload_optimizer) return largest + 2 * params / gpus;
  return largest + 18 * params / gpus;
}

double korthikanti_activation_bytes(double s, double b, double h, double a, int t, bool sp,
                                    Recompute recompute) {
  const double sbh = s * b * h;
  if (recompute == Recompute::kFull) return sp ? 2 * sbh / t : 2 * sbh;
  const double attn_core = recompute == Recompute::kSelective ? 0.0 : 5 * a * s / h;
  if (sp) return sbh / t * (34 + attn_core);
  return sbh * (10 + 24.0 / t + attn_core / t);
}

double layer_activation_bytes(const ModelSpec& m, bool moe_layer, const ActivationOptions& o) {
  const double t = o.tp;
  const double h = static_cast<double>(m.hidden);
  const double a = m.heads;
  const double s = static_cast<double>(m.seq_len) / o.cp;  // context parallel splits the sequence
  const double tokens = s * o.micro_batch;
  if (o.recompute == Recompute::kFull) return tokens * 2 * h / (o.sp ? t : 1.0);
  const bool dropout = m.dropout > 0;  // a 1-byte mask per dropout, else none
  // What selective recomputation rebuilds in the backward pass is not kept.
  const RecomputeModules rc = piecewise_recompute(o.recompute, o.recompute_modules);

  // Per token, Korthikanti's inventory: terms that TP does not split unless SP is on ...
  // (the QKV and MLP inputs are the two pre-norms' outputs).
  // The linears' inputs: 2 bytes (bf16, or TransformerEngine's fp8 copy and its transpose), or
  // fp8 with tile scales under the fp8 activation cache.
  const double lin = o.fp8_cache ? kFp8CachedBytes : 2.0;
  const double norm_output = rc.layernorm ? 0 : lin * h;
  double replicated = norm_output /* QKV input */ + (dropout ? h : 0) /* attention-out dropout mask */ +
                      norm_output /* MLP input */ + (dropout ? h : 0) /* MLP dropout mask */ +
                      4 * h;   /* two layernorm inputs */
  if (m.mla) {
    // MLA's latents, computed on every TP rank's own tokens: each norm's input and output (the
    // up-projection's input), and the rotary key.
    const double latents = static_cast<double>(m.mla->q_lora_rank + m.mla->kv_lora_rank);
    replicated += (2 + (rc.layernorm ? 0 : lin)) * latents + 2.0 * m.mla->qk_rope_head_dim;
  }
  // ... and terms that TP splits: Q, K, V (2h + 4h_kv for MHA/GQA) and the output-projection
  // input (2h), at their own widths (MLA: 192-wide queries and keys, one K/V head per query head).
  // MLA's up-projection recompute rebuilds K and V, and Q where it has a latent, from the
  // latents; queries projected from the hidden state are kept.
  double split = 2 * query_width(m) + 2 * key_value_width(m) + (o.fp8_cache ? kE5m6CachedBytes : 2.0) * context_width(m);
  if (m.mla && rc.mla_up_proj)
    split -= (m.mla->q_lora_rank > 0 ? 2 * query_width(m) : 0) + 2 * key_value_width(m);
  double ffn_inner;
  double ffn_width = static_cast<double>(m.ffn_hidden);
  double ffn_copies = 1;
  if (moe_layer && m.moe) {
    ffn_width = static_cast<double>(m.moe->expert_ffn_hidden);
    ffn_copies = m.moe->top_k + m.moe->shared_experts;  // tokens pass through top_k experts
  }
  // GeLU keeps its input and output (2f + 2f = 16h at f = 4h); SwiGLU keeps the gate and up
  // projections (4f) and their product (2f). Under the fp8 cache the product (the down
  // projection's input) is fp8, and so are SwiGLU's inputs (the report's sec. 3.3.2 keeps them in
  // fp8 to recompute the product from); GeLU's input stays 16-bit.
  const double act_inputs = m.ffn_act == FfnActivation::kSwiglu ? 2 * lin : 2.0;
  ffn_inner = (act_inputs + lin) * ffn_width * ffn_copies;
  // moe_act: the routed experts' activation output is computed again; mlp: a dense MLP keeps
  // only its input (the norm output, above).
  if (moe_layer && m.moe && rc.moe_act) ffn_inner -= lin * ffn_width * m.moe->top_k;
  if (!(moe_layer && m.moe) && rc.mlp) ffn_inner = 0;
  split += ffn_inner;
  // Softmax output (2), dropout mask (1) and dropout output (2) of the a x s score matrix per
  // token, the softmax output alone without dropout; flash attention and selective recompute
  // do not keep them.
  double attn_core = 0;
  if (!o.flash_attention && !rc.core_attn) attn_core = (dropout ? 5 : 2) * a * s;
  const double per_token = (o.sp ? replicated / t : replicated) + (split + attn_core) / t;
  return tokens * per_token;
}

double first_stage_extra_activation_bytes(const ModelSpec& m, const ActivationOptions& o) {
  // Embedding output (2 bytes) + its dropout mask (1 byte, with dropout), per token.
  const double tokens = static_cast<double>(m.seq_len) / o.cp * o.micro_batch;
  return tokens * (m.dropout > 0 ? 3.0 : 2.0) * static_cast<double>(m.hidden) / (o.sp ? o.tp : 1);
}

double last_stage_extra_activation_bytes(const ModelSpec& m, const ActivationOptions& o) {
  const double tokens = static_cast<double>(m.seq_len) / o.cp * o.micro_batch;
  const double h = static_cast<double>(m.hidden), v = static_cast<double>(m.vocab);
  // 4sbh (final layernorm input/output) + 4sbV (fp32 logits; 2sbV, the 16-bit logits, under a
  // fused loss), logits split over TP when the output layer is vocab-parallel.
  const double logit_bytes = o.fused_loss ? 2 : 4;
  return tokens * (4 * h / (o.sp ? o.tp : 1) + logit_bytes * v / (o.vocab_parallel ? o.tp : 1));
}

}  // namespace trainsim
