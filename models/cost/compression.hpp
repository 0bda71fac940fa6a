// Gradient compression methods by name (REFERENCE.md "Gradient compression"): bytes on the wire,
// whether the method composes with all-reduce, and the kernels it adds.
#pragma once

#include <string>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

struct CompressionEffect {
  // Bytes on the wire / the gradient's own bytes. A quantizer's payload does not depend on the
  // precision it quantizes from (int8 is one byte a value from bf16 or fp32 alike); 2:4 and
  // top-k keep values at the gradient's precision.
  double wire_ratio = 1.0;
  bool needs_allgather = false;  // top-k: sparse values do not sum in place
  bool error_feedback_buffer = false;
  int all_reduces = 1;  // PowerSGD runs two (P and Q)
};

// matrix_width: typical gradient matrix side (hidden) for PowerSGD's (n + m) r / (n m);
// grad_bytes_per_value: the gradient's precision (2 for bf16/fp16, 4 for fp32).
CompressionEffect compression_effect(const CompressionStage& stage, double matrix_width,
                                     double grad_bytes_per_value = 2);

// Seconds of the compression kernels of one compressed reduction of `values` gradient values
// over `ranks` ranks. The kernels, for the all-reduce of a quantizer or 2:4 (a reduce-scatter
// as an all-to-all of compressed chunks, then an all-gather of the compressed reduced chunk, as
// ZeRO++ qgZ does): compress the gradient and then the reduced chunk, (1 + 1/p) v values;
// decompress-accumulate the p received chunks and the p gathered ones, 2 v; with error feedback
// (Seide et al. 2014; Karimireddy et al. 2019) the residual of each compression, a further
// (1 + 1/p) v decompressed and 2 (1 + 1/p) v element-wise updates (add the residual, subtract
// the decoded). Top-k gathers instead: select over v, scatter-add p payloads. Each kernel costs
// the calibration's measured time per value where the GPU spec carries one (op_rates), else its
// bytes at HBM bandwidth (memory-bound kernels).
double compression_kernel_time_s(const CompressionStage& stage, const CompressionEffect& effect, double values,
                                 int ranks, double grad_bytes_per_value, const GpuSpec& gpu);

std::vector<std::string> compression_method_names();

// Per-block scale overhead: one fp32 scale per 128 values (ZeRO++ / bitsandbytes practice).
constexpr double kQuantBlockValues = 128;

}  // namespace trainsim
