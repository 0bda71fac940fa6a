// Compute time of the ops of one layer on one GPU: a roofline per op (FLOPs at a shape-dependent
// share of peak vs bytes at HBM bandwidth) plus kernel launch overhead. Calibration files
// (trainsim calibrate) replace the default efficiency curve.
#pragma once

#include "models/specs.hpp"

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

// Per-op rates measured at one training job's shapes (calibration "op_rates", kernels/README.md).
// On a CPU the elementwise ops (GELU's tanh ~20-40 ns/element) and naive attention are
// compute-bound, so the roofline above (peak x GEMM curve, bytes at memory bandwidth) is far off;
// these rates replace it op by op. GEMM and attention rates are shares of peak_flop_per_s with
// the calibration's FLOP conventions; the rest are seconds per element (per parameter for AdamW).
struct OpRates {
  double peak_flop_per_s = 0;  // the peak the efficiencies refer to; 0 = no rates
  double gemm_forward_efficiency = 0;          // the layer's 6 forward GEMMs (A W)
  double gemm_backward_input_efficiency = 0;   // their input gradients (dY W^T)
  double gemm_backward_weight_efficiency = 0;  // their weight gradients (X^T dY)
  double lm_head_gemm_efficiency = 0;          // the 3 GEMMs of the LM head
  double attention_forward_efficiency = 0;     // causal FLOPs 2 b h s^2 d
  double attention_backward_efficiency = 0;    // 2.5 x forward
  double layernorm_fwd_s_per_element = 0, layernorm_bwd_s_per_element = 0;
  double gelu_fwd_s_per_element = 0, gelu_bwd_s_per_element = 0;
  double residual_add_s_per_element = 0;
  double softmax_xent_s_per_element = 0;  // per logit, loss and gradient
  double embedding_fwd_s_per_element = 0, embedding_bwd_s_per_element = 0;
  double copy_s_per_element = 0, fill_zero_s_per_element = 0;  // fp32 elements
  double adamw_s_per_param = 0;
  bool present() const { return peak_flop_per_s > 0; }
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
