// Attention as its own kernel (docs/compute-model.md "Attention"). Fused kernels
// (FlashAttention-2, and the generation's native kernel: FlashAttention-3 on Hopper) run at
//   eff = share(head_dim) * g(n),  n = seq_kv / block (KV blocks per query block),
//   g = n / (n + c)                      non-causal,
//   g = f_c * n / (n + 1 + 2c)           causal (the diagonal block is computed whole; the
//                                         per-CTA overhead c is spread over half the blocks),
// per pass, with share, c and f_c per generation fitted to the FlashAttention tables; the grid
// (batch x heads x query blocks) fills fewer SMs than the GPU has at small shapes. The unfused
// path runs the score and context GEMMs through the GEMM model and moves the score matrix
// through HBM for softmax, mask and dropout.
#pragma once

#include "models/core/specs.hpp"
#include "models/cost/compute/compute_op.hpp"

namespace trainsim {

// Seconds for one attention op (pass F/R forward, B backward), without the per-kernel fixed
// cost. `flop` is the op's FLOPs by FlashAttention's convention (AttentionShape::forward_flop,
// x2.5 backward); 0 = derive it from the shape.
double attention_time_s(const GpuSpec& gpu, const AttentionShape& shape, Pass pass, double flop = 0);

// Achieved share of the 16-bit peak of a fused kernel at this shape (the FA tables' metric).
// Returns 0 for the unfused path or a GPU without parameters for the kernel.
double fused_attention_efficiency(const GpuSpec& gpu, const AttentionShape& shape, bool backward);

// g(n) of the formula above for one pass's parameters (share excluded).
double attention_shape_factor(const AttentionPassParams& pass, double kv_blocks, bool causal);

// Kernels an unfused attention pass launches: forward QK^T, softmax (scale + mask fused),
// dropout, PV; backward the four gradient GEMMs, dropout and softmax backward.
constexpr int kUnfusedAttentionForwardKernels = 4;
constexpr int kUnfusedAttentionBackwardKernels = 6;
// Bytes per score element the unfused softmax and dropout move in the forward pass: read the
// 16-bit scores and write the probabilities (fused scale-mask-softmax), read them and write the
// dropout output and its 1-byte mask (Korthikanti et al. 2022 count 5 stored bytes per score);
// the backward pass reads and writes about twice as much.
constexpr double kUnfusedForwardBytesPerScore = 9;
// Kernels priced as FlashAttention-2's time times a ratio: FlashAttention-2 is 1.7-3.0x faster
// than FlashAttention (v1) and 1.3-2.5x faster than FlashAttention in Triton on A100, forward
// and backward at head dims 64 and 128 (Dao, arXiv:2307.08691, section 4.1 and Fig. 4-5). The
// ratios are the ranges' geometric midpoints.
constexpr double kFlash1TimeOverFlash2 = 2.26;       // sqrt(1.7 x 3.0)
constexpr double kFlashTritonTimeOverFlash2 = 1.80;  // sqrt(1.3 x 2.5)
constexpr double kUnfusedBackwardBytesPerScore = 19;

}  // namespace trainsim
