// Compute time of the ops of one layer on one GPU: a roofline per op (FLOPs at a shape-dependent
// share of peak vs bytes at HBM bandwidth) plus kernel launch overhead. Calibration files
// (trainsim calibrate) replace the default efficiency curve.
#pragma once

#include "models/core/specs.hpp"

namespace trainsim {

// Default GEMM efficiency curve: eff(w) = eff_max * w / (w + w_half), w = the harmonic mean of
// the per-GPU weight dimensions (2h / (tp + 1)), which sets the GEMMs' arithmetic intensity. Saturating in w because narrow GEMMs leave tensor
// cores idle in tile quantisation and wave tails. eff_max and w_half are per GPU preset
// (fitted on published runs, see README "Calibration of the defaults").
double gemm_efficiency(const GpuSpec& gpu, double width);

// Defaults for GPUs whose preset gives none.
constexpr double kDefaultGemmEfficiencyMax = 0.60;
constexpr double kDefaultGemmHalfWidth = 128;

// Kernel launch + framework overhead per kernel (PyTorch eager, measured ~5-10 us).
constexpr double kKernelOverheadS = 6e-6;
// Memory-bound elementwise work (layernorm, activation, dropout, residual, bias) per token per
// layer forward, in bytes per unit of hidden: about the tensors Korthikanti lists (34h bytes)
// written once and read once. GPU presets may carry a fitted value.
constexpr double kDefaultElementwiseBytesPerHidden = 68;
double elementwise_bytes_per_hidden(const GpuSpec& gpu);
constexpr int kKernelsPerLayerForward = 14;
// Unfused attention: bytes moved per score element per forward (write + read of the 16-bit
// scores, softmax output and dropout output, the 1-byte mask): 2x Korthikanti's 5 bytes.
constexpr double kUnfusedAttentionBytesPerScore = 10;

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
