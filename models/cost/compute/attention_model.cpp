#include "models/cost/compute/attention_model.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/piecewise.hpp"
#include "models/cost/compute/gemm_model.hpp"
#include "models/cost/compute/memory_bound_model.hpp"

namespace trainsim {

namespace {

bool is_backward(Pass p) { return p == Pass::kBackwardInput || p == Pass::kBackwardWeight; }

// Attention computes in 16-bit: TransformerEngine-style fp8 training keeps it in bf16.
Precision attention_dtype(const GpuSpec& gpu, Precision p) {
  if (p == Precision::kFp8 || p == Precision::kFp32) p = Precision::kBf16;
  return gemm_dtype_on(gpu, p);
}

double share_at(const AttentionPassParams& p, double head_dim) {
  return piecewise_linear(p.share_by_head_dim, head_dim, [](double d) { return std::log2(d); });
}

// The kernel's parameters on this GPU: FlashAttention-3 needs Hopper or later; a GPU without
// them runs FlashAttention-2 (and vice versa).
const AttentionKernelParams* fused_params(const GpuSpec& gpu, AttentionKernel kernel) {
  const GpuKernelParams& k = gpu.kernel;
  if (kernel == AttentionKernel::kFlash3 && k.flash3.present()) return &k.flash3;
  if (k.flash2.present()) return &k.flash2;
  if (k.flash3.present()) return &k.flash3;
  return nullptr;
}

// FlashAttention-2 (and v1 and the Triton kernel) take one head width for Q, K and V: a model
// whose value heads are narrower (MLA: 128 against 192) pads V with zeros to the query/key width
// before the call (Hugging Face's DeepSeek-V2/V3 attention under "flash_attention_2"), so the
// kernel computes 2 b s_q s_kv h (d_qk + d_qk) while the FLOP count keeps d_v. FlashAttention-3
// and the generation's native kernels take the two widths as they are. A "flash3" plan on a GPU
// without FlashAttention-3 runs FlashAttention-2.
double padded_value_work(const GpuSpec& gpu, const AttentionShape& a) {
  const double dqk = a.head_dim, dv = a.value_dim();
  if (dv >= dqk) return 1.0;
  const bool native = a.kernel == AttentionKernel::kFlash3 && gpu.kernel.flash3.present();
  return native ? 1.0 : 2 * dqk / (dqk + dv);
}

double default_flop(const AttentionShape& a, bool backward) {
  return a.forward_flop() * (backward ? 2.5 : 1.0);
}

// Unfused: the batched GEMMs of the pass through the GEMM model, plus the score matrix's trips
// through HBM for softmax and dropout. Causal masking saves no GEMM work here: the full score
// matrix is computed and then masked.
double unfused_time_s(const GpuSpec& gpu, const AttentionShape& a, bool backward, Precision p) {
  const double bh = std::max(1.0, a.batch * a.heads);
  const double dqk = a.head_dim, dv = a.value_dim();
  double t = 0;
  if (!backward) {
    t += gemm_timing(gpu, GemmShape{a.seq_q, a.seq_kv, dqk, bh}, p).time_s;  // S = Q K^T
    t += gemm_timing(gpu, GemmShape{a.seq_q, dv, a.seq_kv, bh}, p).time_s;   // O = P V
  } else {
    t += gemm_timing(gpu, GemmShape{a.seq_q, a.seq_kv, dv, bh}, p).time_s;   // dP = dO V^T
    t += gemm_timing(gpu, GemmShape{a.seq_q, dqk, a.seq_kv, bh}, p).time_s;  // dQ = dS K
    t += gemm_timing(gpu, GemmShape{a.seq_kv, dqk, a.seq_q, bh}, p).time_s;  // dK = dS^T Q
    t += gemm_timing(gpu, GemmShape{a.seq_kv, dv, a.seq_q, bh}, p).time_s;   // dV = P^T dO
  }
  const double per_score = backward ? kUnfusedBackwardBytesPerScore : kUnfusedForwardBytesPerScore;
  return t + memory_bound_time_s(gpu, per_score * bh * a.seq_q * a.seq_kv);
}

}  // namespace

double attention_shape_factor(const AttentionPassParams& p, double n, bool causal) {
  const double c = p.overhead_blocks;
  return causal ? p.causal_factor * n / (n + 1 + 2 * c) : n / (n + c);
}

double fused_attention_efficiency(const GpuSpec& gpu, const AttentionShape& a, bool backward) {
  if (a.kernel == AttentionKernel::kUnfused) return 0;
  if (a.kernel == AttentionKernel::kFlash1 || a.kernel == AttentionKernel::kFlashTriton) {
    AttentionShape v2 = a;
    v2.kernel = AttentionKernel::kFlash2;
    return fused_attention_efficiency(gpu, v2, backward) /
           (a.kernel == AttentionKernel::kFlash1 ? kFlash1TimeOverFlash2 : kFlashTritonTimeOverFlash2);
  }
  const AttentionKernelParams* kp = fused_params(gpu, a.kernel);
  if (!kp) return 0;
  const AttentionPassParams& p = backward ? kp->backward : kp->forward;
  const double block = gpu.kernel.attention_block > 0 ? gpu.kernel.attention_block : 128;
  const double n = std::max(1.0, a.seq_kv / block);
  double eff = share_at(p, a.head_dim) * attention_shape_factor(p, n, a.causal);
  // FlashAttention parallelises over batch, heads and query blocks (key/value blocks in the
  // backward pass): a grid smaller than the SM count leaves SMs idle.
  const double sms = gpu.kernel.sm_count;
  if (sms > 0) {
    const double rows = backward ? a.seq_kv : a.seq_q;
    const double ctas = std::max(1.0, a.batch * a.heads * std::ceil(rows / block));
    if (ctas < sms) eff *= ctas / sms;
  }
  return eff;
}

double attention_time_s(const GpuSpec& gpu, const AttentionShape& a, Pass pass, double flop) {
  const bool backward = is_backward(pass);
  const Precision p = attention_dtype(gpu, Precision::kBf16);
  if (flop <= 0) flop = default_flop(a, backward);
  if (a.kernel == AttentionKernel::kUnfused)
    return unfused_time_s(gpu, a, backward, p);
  const double executed = flop * padded_value_work(gpu, a);
  const double eff = fused_attention_efficiency(gpu, a, backward);
  if (eff > 0) return executed / (gpu.peak_flops(p) * eff);
  // No fused-kernel parameters for this GPU: the fused kernel at the GEMM sustained rate (a
  // bound: FlashAttention sustains less than a large GEMM on every generation measured).
  return gemm_time_from_flop_s(gpu, executed, p);
}

}  // namespace trainsim
