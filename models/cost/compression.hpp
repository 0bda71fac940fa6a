// Gradient compression methods by name (REFERENCE.md "Gradient compression"): wire bytes
// relative to 16-bit gradients, whether the method composes with all-reduce, and what it costs.
#pragma once

#include <string>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

struct CompressionEffect {
  double wire_ratio = 1.0;      // bytes on the wire / 16-bit gradient bytes
  bool needs_allgather = false;  // top-k: sparse values do not sum in place
  double hbm_passes = 0;         // extra read+write passes over the gradient (quantize etc.)
  bool error_feedback_buffer = false;
  int all_reduces = 1;  // PowerSGD runs two (P and Q)
};

// matrix_width: typical gradient matrix side (hidden) for PowerSGD's (n + m) r / (n m).
CompressionEffect compression_effect(const CompressionStage& stage, double matrix_width);

std::vector<std::string> compression_method_names();

// Per-block scale overhead: one fp32 scale per 128 values (ZeRO++ / bitsandbytes practice).
constexpr double kQuantBlockValues = 128;

}  // namespace trainsim
