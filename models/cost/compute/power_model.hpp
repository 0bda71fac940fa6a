// The board's power limit on tensor-core work (docs/compute-model.md, "Training-loop share").
// Back to back, GEMMs draw the board to its limit and the SM clock falls (an H200 at 700 W: about
// 1550 MHz instead of 1980); between memory-bound kernels, which draw less, the clock recovers.
// So the rate a step's GEMMs and attention sustain depends on the share of the step the GEMMs
// fill, which depends on that rate: a fixed point of the GPU's measured curve. The curve's busy
// share is a GEMM's (it was measured with a large GEMM between copies); attention kernels keep
// their tensor cores a third to two thirds as busy (FlashAttention on Hopper, 0.25-0.7 of peak),
// so they follow the clock without counting as busy. Their profiles say so: in the H200 1.3B
// step the GEMMs ran at the benchmark rate (168.5 ms measured, 170.4 ms at share 1) with 60% of
// the step in GEMMs, where counting attention as busy (79%) would have slowed them by 8%.
#pragma once

#include "models/core/specs.hpp"

namespace trainsim {

// Whether the GPU's tensor-core rate in a loop follows its power curve: it has one and no
// explicit training_tensor_share (a scenario's or a fit's) overrides it.
bool follows_power_curve(const GpuSpec& gpu);

// The curve at a busy share (linear between its points, flat beyond its ends).
double power_tensor_share_at(const GpuKernelParams& k, double busy_share);

// The rate share tensor-core ops sustain when GEMMs take gemm_s and attention attention_s at the
// kernel-benchmark rate beside other_s of other GPU work: s = curve(b) with
// b = (gemm_s / s) / ((gemm_s + attention_s) / s + other_s).
double power_limited_tensor_share(const GpuKernelParams& k, double gemm_s, double attention_s, double other_s);

}  // namespace trainsim
