#include "models/cost/compute/compute_op.hpp"

#include "models/cost/compute_cost.hpp"

namespace trainsim {

const char* to_string(OpRole role) {
  switch (role) {
    case OpRole::kQkv: return "qkv";
    case OpRole::kAttnOut: return "attn_out";
    case OpRole::kMlpUp: return "mlp_up";
    case OpRole::kMlpDown: return "mlp_down";
    case OpRole::kRouter: return "router";
    case OpRole::kExpertUp: return "expert_up";
    case OpRole::kExpertDown: return "expert_down";
    case OpRole::kLmHead: return "lm_head";
    case OpRole::kAttention: return "attention";
    case OpRole::kNorm: return "norm";
    case OpRole::kActivation: return "activation";
    case OpRole::kResidual: return "residual";
    case OpRole::kDropout: return "dropout";
    case OpRole::kRotary: return "rotary";
    case OpRole::kSoftmaxXent: return "softmax_xent";
    case OpRole::kEmbedding: return "embedding";
    case OpRole::kPermute: return "permute";
    case OpRole::kCast: return "cast";
    case OpRole::kAmax: return "amax";
    case OpRole::kGradAccum: return "grad_accum";
    case OpRole::kOptimizer: return "optimizer";
    case OpRole::kOther: return "other";
  }
  return "other";
}

const char* to_string(Pass pass) {
  switch (pass) {
    case Pass::kForward: return "F";
    case Pass::kBackwardInput: return "B";
    case Pass::kBackwardWeight: return "W";
    case Pass::kRecompute: return "R";
  }
  return "?";
}

const char* to_string(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kFlash2: return "flash2";
    case AttentionKernel::kFlash3: return "flash3";
    case AttentionKernel::kUnfused: return "unfused";
  }
  return "?";
}

namespace {

bool backward(Pass p) { return p == Pass::kBackwardInput || p == Pass::kBackwardWeight; }

// Measured per-op rates (calibration op_rates, kernels/README.md) for the ops the calibration
// measures; < 0 when the op has no measured rate.
double measured_time_s(const OpRates& r, const ComputeOp& op) {
  auto at = [&](double flop, double eff) { return eff > 0 ? flop / (r.peak_flop_per_s * eff) : -1.0; };
  const bool bwd = backward(op.pass);
  switch (op.kind) {
    case ComputeKind::kGemm: {
      if (op.role == OpRole::kLmHead) return at(op.flop, r.lm_head_gemm_efficiency);
      const double eff = op.pass == Pass::kBackwardInput    ? r.gemm_backward_input_efficiency
                         : op.pass == Pass::kBackwardWeight ? r.gemm_backward_weight_efficiency
                                                            : r.gemm_forward_efficiency;
      return at(op.flop, eff);
    }
    case ComputeKind::kAttention:
      return at(op.flop, bwd ? r.attention_backward_efficiency : r.attention_forward_efficiency);
    case ComputeKind::kOptimizer: return op.elements * r.adamw_s_per_param;
    case ComputeKind::kMemoryBound: break;
  }
  switch (op.role) {
    case OpRole::kNorm:
      return op.elements * (bwd ? r.layernorm_bwd_s_per_element : r.layernorm_fwd_s_per_element);
    case OpRole::kActivation:
      return op.elements * (bwd ? r.gelu_bwd_s_per_element : r.gelu_fwd_s_per_element);
    case OpRole::kResidual: return op.elements * r.residual_add_s_per_element;
    case OpRole::kSoftmaxXent: return op.elements * r.softmax_xent_s_per_element;
    case OpRole::kEmbedding:
      return op.elements * (bwd ? r.embedding_bwd_s_per_element : r.embedding_fwd_s_per_element);
    case OpRole::kGradAccum: return op.elements * r.fill_zero_s_per_element;
    default: return -1.0;
  }
}

// The roofline with the GPU preset's GEMM efficiency curve (compute_cost.hpp): the width is the
// harmonic mean of the GEMM's two weight dimensions, which sets its arithmetic intensity.
double gemm_width(const ComputeOp& op) {
  const GemmShape& g = op.gemm;
  const double a = op.pass == Pass::kBackwardWeight ? g.m : g.k;
  const double b = g.n;
  return a + b > 0 ? 2 * a * b / (a + b) : 0;
}

}  // namespace

double compute_op_time_s(const GpuSpec& gpu, const ComputeOp& op) {
  if (gpu.op_rates.present()) {
    // Launch overhead is inside what the calibration measured.
    const double t = measured_time_s(gpu.op_rates, op);
    if (t >= 0) return t;
  }
  const double launch_s = op.kernels * kKernelOverheadS;
  const double bw = gpu.hbm_bandwidth_bytes_per_s;
  switch (op.kind) {
    case ComputeKind::kGemm: {
      const double peak = gpu.peak_flops(op.precision);
      return op.flop / (peak * gemm_efficiency(gpu, gemm_width(op))) + launch_s;
    }
    case ComputeKind::kAttention: {
      // fp8 training keeps attention in 16-bit.
      const Precision p = op.precision == Precision::kFp8 ? Precision::kBf16 : op.precision;
      const AttentionShape& a = op.attention;
      double t = op.flop / (gpu.peak_flops(p) * gemm_efficiency(gpu, a.heads * a.head_dim));
      if (a.kernel == AttentionKernel::kUnfused) {
        // Unfused attention writes and re-reads the score matrix: Korthikanti's 5 bytes per score
        // (scores, softmax, dropout output, mask) moved twice, per pass.
        t += kUnfusedAttentionBytesPerScore * a.batch * a.heads * a.seq_q * a.seq_kv *
             (backward(op.pass) ? 2.0 : 1.0) / bw;
      }
      return t + launch_s;
    }
    case ComputeKind::kMemoryBound:
    case ComputeKind::kOptimizer: return op.bytes / bw + launch_s;
  }
  return 0;
}

}  // namespace trainsim
