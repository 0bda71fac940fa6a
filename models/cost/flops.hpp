// FLOP counts (REFERENCE.md "FLOPs"). Conventions, stated once:
// - A multiply-add is 2 FLOPs. Attention scores and context are counted in full (2sh each per
//   token), not halved for causal masking: this is the Megatron SC'21 / PaLM convention that the
//   published TFLOP/s and MFU figures use.
// - Training = forward + backward (2x forward) = 3x forward; full recompute adds one forward of
//   every transformer layer (not the logits), selective recompute adds the attention core.
#pragma once

#include "models/core/specs.hpp"

namespace trainsim {

// Per-head widths of the attention: queries and keys (qk), values and the context (v). MHA and
// GQA: head_dim (hidden / heads unless the model sets it); MLA: nope + rope for qk, v_head_dim.
struct HeadDims {
  double qk = 0;
  double v = 0;
};
HeadDims head_dims(const ModelSpec& model);
// Columns of the attention's projections, all heads together: Q heads x qk, K and V kv_heads x
// (qk + v) (MLA: one K/V head per query head), and the output projection's input heads x v.
double query_width(const ModelSpec& model);
// Key/value heads: kv_heads (MHA, GQA); MLA up-projects one key and one value head per query head.
double kv_head_count(const ModelSpec& model);
double key_value_width(const ModelSpec& model);
double context_width(const ModelSpec& model);
// MLA's latents that a TP group all-gathers before the up-projections (sequence parallel) and
// reduces after their backward: q_lora_rank (or the hidden state when queries are not
// compressed) + kv_lora_rank + qk_rope_head_dim per token.
double mla_gathered_width(const ModelSpec& model);
// MLA's key and value up-projections W^UK and W^UV together: heads x (qk_nope + v) columns.
double mla_up_kv_width(const ModelSpec& model);

// Forward FLOPs per token of one transformer layer, split by kind.
struct LayerFlops {
  double gemm = 0;       // QKV, output projection, MLP / experts, router
  double attention = 0;  // QK^T and attention x V (grows with sequence length)
  double total() const { return gemm + attention; }
};

LayerFlops layer_forward_flops_per_token(const ModelSpec& model, bool moe_layer);
// Logits GEMM: 2hV per token forward.
double logits_forward_flops_per_token(const ModelSpec& model);
// Whether layer `index` (0-based) is an MoE layer.
bool is_moe_layer(const ModelSpec& model, int index);

struct StepFlops {
  double model = 0;     // 3x forward, PaLM's model FLOPs
  double hardware = 0;  // plus recompute
};

// Forward FLOPs per token of one layer that selective recomputation runs again: the attention
// core (core_attn), MLA's up-projections (mla_up_proj; the query's only where it has a latent)
// and a dense layer's MLP (mlp). Norms and activations add memory traffic, no FLOPs.
double recompute_forward_flops_per_token(const ModelSpec& model, bool moe_layer, const RecomputeModules& modules);

// For a step of `tokens` tokens (global batch x sequence length). `modules`: what selective
// recomputation runs again (plan.recompute_modules).
// early_stop (plan.recompute_early_stop): a full recomputation without the dense layers' MLP
// down projection.
StepFlops step_flops(const ModelSpec& model, Recompute recompute, double tokens,
                     const RecomputeModules& modules = RecomputeModules{}, bool early_stop = false);

// Parameter count of the whole model (embeddings included; the output layer counted once more
// unless tied), and the part that sits in MoE experts.
struct ParamCount {
  double total = 0;
  double experts = 0;
  double active_per_token = 0;  // dense + top_k experts + shared experts
};
ParamCount count_params(const ModelSpec& model);

// Parameters of one transformer layer (all of it, before any sharding).
struct LayerParams {
  double attention = 0;  // the projections tensor parallelism splits (by heads)
  // MLA's down-projections and latent norms: every TP rank holds them whole (Megatron-Core
  // builds them duplicated).
  double attention_replicated = 0;
  double mlp_dense = 0;  // dense MLP, or shared experts + router in an MoE layer
  double experts = 0;    // all routed experts of an MoE layer
  double norms = 0;
  // One TP rank's share of the non-expert parameters.
  double dense_per_tp_rank(int tp) const { return (attention + mlp_dense) / tp + attention_replicated + norms; }
};
LayerParams layer_params(const ModelSpec& model, bool moe_layer);

}  // namespace trainsim
