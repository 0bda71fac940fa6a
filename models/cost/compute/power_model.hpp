// The board's power limit on tensor-core work (docs/compute-model.md, "Training-loop share").
// Back to back, GEMMs draw the board to its limit and the SM clock falls (an H200 at 700 W: about
// 1550 MHz instead of 1980); between memory-bound kernels, which draw less, the clock recovers.
// So the rate a step's GEMMs and attention sustain depends on the share of the step they fill,
// which depends on that rate: a fixed point of the GPU's measured curve.
#pragma once

#include "models/core/specs.hpp"

namespace trainsim {

// Whether the GPU's tensor-core rate in a loop follows its power curve: it has one and no
// explicit training_tensor_share (a scenario's or a fit's) overrides it.
bool follows_power_curve(const GpuSpec& gpu);

// The curve at a busy share (linear between its points, flat beyond its ends).
double power_tensor_share_at(const GpuKernelParams& k, double busy_share);

// The rate share tensor-core ops sustain when they take tensor_s at the kernel-benchmark rate
// beside other_s of other GPU work: s = curve(b) with b = (tensor_s / s) / (tensor_s / s + other_s).
double power_limited_tensor_share(const GpuKernelParams& k, double tensor_s, double other_s);

}  // namespace trainsim
