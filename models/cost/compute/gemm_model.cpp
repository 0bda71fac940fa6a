#include "models/cost/compute/gemm_model.hpp"

#include <algorithm>
#include <cmath>

#include "models/cost/compute/memory_bound_model.hpp"
#include "models/cost/compute/launch_model.hpp"

namespace trainsim {

namespace {

double element_bytes(Precision p) {
  switch (p) {
    case Precision::kFp8: return 1;
    case Precision::kFp32: return 4;
    default: return 2;
  }
}

double sustained_share(const GpuKernelParams& k, Precision p) {
  const double s16 = k.gemm_share_16bit > 0 ? k.gemm_share_16bit : kDefaultGemmShare16bit;
  switch (p) {
    case Precision::kFp8: return k.gemm_share_fp8 > 0 ? k.gemm_share_fp8 : kDefaultGemmShareFp8;
    case Precision::kFp32: return k.gemm_share_fp32 > 0 ? k.gemm_share_fp32 : s16;
    default: return s16;
  }
}

// cuBLAS's fast kernels need every leading dimension to be a multiple of 16 bytes (TMA on
// Hopper, 16-byte cp.async on Ampere); otherwise a slower kernel runs (gemm_h100_bmm_fp16_*).
bool misaligned(const GemmShape& g, Precision p) {
  const double align = 16 / element_bytes(p);
  auto off = [&](double v) { return std::fmod(v, align) != 0; };
  return off(g.m) || off(g.n) || off(g.k);
}

}  // namespace

Precision gemm_dtype_on(const GpuSpec& gpu, Precision p) {
  if (p == Precision::kFp8 && gpu.peak_flops_fp8 <= 0) return Precision::kBf16;
  if (p == Precision::kBf16 && gpu.peak_flops_bf16 <= 0) return Precision::kFp16;
  return p;
}

double gemm_time_from_flop_s(const GpuSpec& gpu, double flop, Precision precision) {
  const Precision p = gemm_dtype_on(gpu, precision);
  const double rate = gpu.peak_flops(p) * sustained_share(gpu.kernel, p);
  return rate > 0 ? flop / rate : 0;
}

double expert_gemm_rows(double tokens, int top_k, int experts_local) {
  return experts_local > 0 ? tokens * top_k / experts_local : 0;
}

GemmTiming gemm_timing(const GpuSpec& gpu, const GemmShape& g, Precision precision) {
  GemmTiming out;
  const Precision p = gemm_dtype_on(gpu, precision);
  const GpuKernelParams& k = gpu.kernel;
  const double m = std::max(1.0, g.m), n = std::max(1.0, g.n), kk = std::max(1.0, g.k);
  const double groups = std::max(1.0, g.groups);
  const double rate = gpu.peak_flops(p) * sustained_share(k, p);
  if (rate <= 0) return out;
  const double es = element_bytes(p);
  const double out_es = p == Precision::kFp32 ? 4 : 2;  // fp8 GEMMs write bf16 (TE, DeepGEMM)
  const double ab_bytes = (m * kk + kk * n) * groups * es;
  const double c_bytes = m * n * groups * out_es;
  const double bw = achieved_bandwidth_bytes_per_s(gpu);
  out.misaligned = misaligned(g, p);
  const double align_factor = out.misaligned ? k.gemm_misaligned_factor : 1.0;

  if (k.sm_count <= 0 || k.gemm_tiles.empty()) {
    // No tile model: the sustained rate against the memory roofline.
    out.compute_s = 2 * m * n * kk * groups / (rate * align_factor);
    out.memory_s = (ab_bytes + c_bytes) / bw;
    out.time_s = std::max(out.compute_s, out.memory_s);
    return out;
  }

  const double sms = k.sm_count;
  const double per_sm = rate * align_factor / sms;
  // Operand reuse of a tile (FLOPs per byte loaded into shared memory ~ tm tn / (tm + tn));
  // a tile with less reuse than the generation's largest loses rate by the penalty.
  double best_reuse = 0;
  for (const auto& [tm, tn] : k.gemm_tiles) best_reuse = std::max(best_reuse, double(tm) * tn / (tm + tn));
  // K step of one main-loop iteration: 64 elements of 16-bit, 128 of fp8 (128 bytes).
  const double k_step = 128 / es;

  bool have = false;
  for (const auto& tile : k.gemm_tiles) {
    // Plain names, not structured bindings: lambdas cannot capture those before C++20's P1091
    // (clang < 16 refuses them, and the fuzz build uses clang).
    const auto tm_i = tile.first, tn_i = tile.second;
    const double tm = tm_i, tn = tn_i;
    const double reuse = tm * tn / (tm + tn);
    const double tile_rate = per_sm / (1 + k.gemm_small_tile_penalty * (best_reuse / reuse - 1));
    const double tiles = std::ceil(m / tm) * std::ceil(n / tn) * groups;
    auto consider = [&](double compute_s, double extra_bytes, int split) {
      const double store_s = (c_bytes + extra_bytes) / bw;
      const double load_s = ab_bytes / bw;
      const double t = k.gemm_epilogue_overlap ? std::max(compute_s, load_s + store_s)
                                               : std::max(compute_s, load_s) + store_s;
      if (!have || t < out.time_s) {
        have = true;
        out.time_s = t;
        out.compute_s = compute_s;
        out.memory_s = load_s + store_s;
        out.tile_m = tm_i;
        out.tile_n = tn_i;
        out.split_k = split;
      }
    };
    if (k.gemm_scheduler == GemmScheduler::kStreamK) {
      // Stream-K (CUTLASS 3 persistent kernels, cuBLAS on sm90+): the tiles' K iterations are
      // split evenly over the SMs, so only whole iterations quantise.
      const double iters = tiles * std::ceil(kk / k_step);
      consider(std::ceil(iters / sms) * 2 * tm * tn * k_step / tile_rate, 0, 1);
    } else {
      // One output tile per CTA, one CTA per SM at these tile sizes: whole waves. Split-K
      // spreads K over 2-8 CTAs per tile at the cost of fp32 partial sums written and read
      // back; it is a candidate whenever K is long enough, not only when there are fewer tiles
      // than SMs: a grid of 1.2 waves (a weight-gradient GEMM, K = the tokens) leaves most
      // SMs idle in its second wave. cuBLAS's heuristic picks split-K variants from its kernel
      // ensemble (cuBLASLt CUBLASLT_ALGO_CONFIG_SPLITK_NUM; Osama et al., "Stream-K", PPoPP
      // 2023, on A100: libraries "select from a large ensemble of kernel variants").
      for (int split : {1, 2, 3, 4, 6, 8}) {
        if (split > 1 && kk / split < 256) break;
        const double waves = std::ceil(tiles * split / sms);
        const double partial_bytes = split > 1 ? 2.0 * 4 * m * n * groups * split : 0;
        consider(waves * 2 * tm * tn * (kk / split) / tile_rate, partial_bytes, split);
      }
    }
  }
  return out;
}

double gemm_efficiency_from_shape(const GpuSpec& gpu, const GemmShape& g, Precision precision) {
  const Precision p = gemm_dtype_on(gpu, precision);
  const double t = gemm_timing(gpu, g, p).time_s + kernel_fixed_s(gpu);
  const double peak = gpu.peak_flops(p);
  return t > 0 && peak > 0 ? g.flop() / (t * peak) : 0;
}

}  // namespace trainsim
