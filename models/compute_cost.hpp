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

}  // namespace trainsim
