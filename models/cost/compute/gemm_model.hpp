// GEMM time from the shape (docs/compute-model.md "GEMM"): the dense peak of the dtype times
// the generation's sustained share (cuBLAS MAMF), tile quantisation of M and N on the CTA tiles
// cuBLAS/CUTLASS pick from, wave quantisation over the SMs (or stream-K's even split on
// Hopper and later), a small-tile reuse penalty, a misalignment penalty, and the roofline of the
// bytes A, B and C move through HBM, which is what bounds small-M (decode-like, MoE expert) GEMMs.
#pragma once

#include "models/core/specs.hpp"
#include "models/cost/compute/compute_op.hpp"

namespace trainsim {

struct GemmTiming {
  double time_s = 0;     // kernel time, without the per-kernel fixed cost (launch_model.hpp)
  double compute_s = 0;  // the tensor-core term of the chosen tiling
  double memory_s = 0;   // A + B + C bytes at the achieved HBM bandwidth
  int tile_m = 0, tile_n = 0, split_k = 1;
  bool misaligned = false;
};

// The tiling the model expects the library to choose (the fastest of the candidates).
GemmTiming gemm_timing(const GpuSpec& gpu, const GemmShape& shape, Precision precision);

// Achieved FLOP/s / dense peak of `precision`, fixed cost included: what a GEMM benchmark of
// back-to-back launches reports.
double gemm_efficiency_from_shape(const GpuSpec& gpu, const GemmShape& shape, Precision precision);

// A GEMM known only by its FLOPs (no shape): the sustained rate, no tile model.
double gemm_time_from_flop_s(const GpuSpec& gpu, double flop, Precision precision);

// Per-expert M of a grouped expert GEMM: every local token is routed to top_k experts, spread
// evenly over the experts of the EP group; a rank holding `experts_local` of them sees
// tokens * top_k / experts_local rows per expert (tokens = the rank's tokens before dispatch).
double expert_gemm_rows(double tokens, int top_k, int experts_local);

// The dtype a GEMM of `precision` computes in on this GPU: fp8 falls back to bf16 on GPUs
// without fp8 tensor cores (peak_flops_fp8 == 0).
Precision gemm_dtype_on(const GpuSpec& gpu, Precision precision);

// Defaults for GPUs whose preset has no "kernels" block: the medians of the MAMF records
// (gemm_mamf_bf16_*: 0.776-0.869; fp8_mamf_e4m3_*: 0.709-0.763).
constexpr double kDefaultGemmShare16bit = 0.80;
constexpr double kDefaultGemmShareFp8 = 0.73;

}  // namespace trainsim
