// Compute time of one layer's ops from per-op rates measured at a job's shapes (a calibration's
// op_rates, kernels/README.md), which replace the kernel model (models/cost/compute/) op by op.
#pragma once

#include "models/core/specs.hpp"

namespace trainsim {

struct LayerComputeTimes {
  double forward_s = 0;
  double backward_s = 0;        // input-grad (B) + weight-grad (W)
  double backward_weight_s = 0;  // the W part alone (zero-bubble schedules defer it)
  double recompute_s = 0;       // extra forward work in the backward pass
  double attention_forward_s = 0;
};

// One rank's share of one micro-batch of a GPT layer (pre-LN, MLP 4h, GELU, MHA, no biases),
// tensor-parallel as Megatron splits it.
struct RankLayerShape {
  double micro_batch = 1;
  double seq = 0;
  double hidden = 0;
  double heads = 0;
  double vocab = 0;
  int tp = 1;
  double tokens() const { return micro_batch * seq; }
};

// What one layer does for one micro-batch on one rank, counted the way the calibration's op
// rates are (kernels/README.md): forward GEMM FLOPs (the input- and weight-gradient GEMMs do as
// many each), causal attention FLOPs 2 b (a/tp) s^2 d (backward 2.5x), and the elements the
// memory-bound ops touch.
struct LayerOpCounts {
  double gemm_flop = 0;
  double attention_flop = 0;
  double norm_elements = 0;        // both LayerNorms' inputs
  double residual_elements = 0;    // both residual adds
  double activation_elements = 0;  // GELU / SwiGLU inputs
};
LayerComputeTimes layer_times_from_op_rates(const OpRates& rates, const LayerOpCounts& counts);

// One layer, one micro-batch, one rank, from per-op rates (no launch overhead: counted in the
// measured rates). GEMM FLOPs per pass 2 T h (4 h/tp + 2 ffn/tp); attention forward
// 2 b (a/tp) s^2 d, backward 2.5x (FlashAttention-2's convention, as the calibration counts);
// elementwise: 2 LayerNorms and 2 residual adds of T h, GELU of T ffn/tp.
LayerComputeTimes layer_times_from_op_rates(const OpRates& rates, const RankLayerShape& shape);
// The pipeline ends: token + position embedding (first stage), final LayerNorm + LM head GEMMs +
// softmax cross-entropy (last stage), for one micro-batch, forward and backward together.
double embedding_time_from_op_rates(const OpRates& rates, const RankLayerShape& shape, bool backward);
double lm_head_time_from_op_rates(const OpRates& rates, const RankLayerShape& shape);
// AdamW over `params` parameters plus zeroing `grad_elements` gradients before the step.
double optimizer_time_from_op_rates(const OpRates& rates, double params, double grad_elements);



}  // namespace trainsim
