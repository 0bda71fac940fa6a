// FLOP counts (REFERENCE.md "FLOPs"). Conventions, stated once:
// - A multiply-add is 2 FLOPs. Attention scores and context are counted in full (2sh each per
//   token), not halved for causal masking: this is the Megatron SC'21 / PaLM convention that the
//   published TFLOP/s and MFU figures use.
// - Training = forward + backward (2x forward) = 3x forward; full recompute adds one forward of
//   every transformer layer (not the logits), selective recompute adds the attention core.
#pragma once

#include "models/core/specs.hpp"

namespace trainsim {

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

// For a step of `tokens` tokens (global batch x sequence length).
StepFlops step_flops(const ModelSpec& model, Recompute recompute, double tokens);

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
  double attention = 0;
  double mlp_dense = 0;  // dense MLP, or shared experts + router in an MoE layer
  double experts = 0;    // all routed experts of an MoE layer
  double norms = 0;
};
LayerParams layer_params(const ModelSpec& model, bool moe_layer);

}  // namespace trainsim
