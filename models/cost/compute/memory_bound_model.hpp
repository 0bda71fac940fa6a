// Memory-bound kernels (norms, activations, softmax, dropout, residual adds, rotary, casts,
// amax, permutes, the optimizer step): their bytes at the HBM bandwidth a large streaming
// kernel achieves on the generation (docs/compute-model.md "Memory-bound kernels").
#pragma once

#include "models/core/specs.hpp"

namespace trainsim {

// hbm_bandwidth x the generation's achieved share (memory_bound records).
double achieved_bandwidth_bytes_per_s(const GpuSpec& gpu);

// Seconds to stream `bytes` (read + write), without the per-kernel fixed cost.
double memory_bound_time_s(const GpuSpec& gpu, double bytes);

// The same for a norm (LayerNorm, RMSNorm): each row is reduced twice (mean and variance
// forward; the two dot products backward) before it is written, and its kernels reach less of
// the bandwidth than a stream does: achieved x norm_bandwidth_ratio (norm records of the
// generation; docs/compute-model.md "Memory-bound kernels").
double norm_time_s(const GpuSpec& gpu, double bytes);

// The same for a scatter-add of rows into another order (a MoE combine: PyTorch's index_add_ /
// scatter_add_, which Megatron-Core's unpermute and Hugging Face's MoE blocks run): rows that
// collide are added with atomics, and the kernel reaches achieved x scatter_add_bandwidth_ratio
// (moe_*_torch_unpermute_scatter_add records; 1 where the generation has none).
double scatter_add_time_s(const GpuSpec& gpu, double bytes);

// A strided copy between layouts (PyTorch's copy_ of a permuted 5-D view, cat of non-contiguous
// gradients): the generic element-wise kernel computes every element's offset over the view's
// dimensions and moves 2 bytes a thread, so it is bound by the SMs' instruction issue, not by
// HBM; it reaches achieved x relayout_bandwidth_ratio (1 where the generation has none).
double relayout_time_s(const GpuSpec& gpu, double bytes);

// The optimizer step (fused Adam/AdamW: PyTorch's fused=True, Apex's and Megatron's multi-tensor
// FusedAdam): `bytes` (optimizer_bytes_per_param x parameters) at achieved x
// optimizer_bandwidth_ratio (mem_*_torch_adamw_fused records; 1 where the generation has none).
double optimizer_time_s(const GpuSpec& gpu, double bytes);

// HBM bytes AdamW moves per parameter in one step, for the optimizer op's bytes:
//   16-bit and fp8 training keep fp32 master weights, m and v (ZeRO paper section 3): read
//   master, m, v and the gradient, write master, m, v and the 16-bit working copy that the
//   forward pass reads (fp8 weights are cast from it per micro-batch, precision.hpp);
//   fp16 adds one read of the gradients for the loss-scaler's inf/nan check;
//   fp32 training updates the weights in place (no copy).
// `fp32_grads`: the gradient the optimizer reads is fp32 (Megatron's main_grad, DeepSpeed);
// false when it reads the 16-bit gradient (PyTorch FSDP mixed precision). `moment_bytes`: an
// element of m and v (4; 2 for DeepSeek-V3's bf16 moments, plan.adam_moments).
double optimizer_bytes_per_param(Precision precision, bool fp32_grads = true, double moment_bytes = 4);

// Large streaming kernels reach 79-87% of the device-properties peak on H100 and 81-84% on
// B200 (mem_h100_blockfp8_*, mem_b200_mx_cast_*, mem_b300_pct_achievable_bw): the default for
// presets without a "kernels" block.
constexpr double kDefaultMemoryBandwidthShare = 0.83;

}  // namespace trainsim
