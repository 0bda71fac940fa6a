#include "models/cost/compute/compute_op.hpp"

#include "models/cost/compute/attention_model.hpp"
#include "models/cost/compute/gemm_model.hpp"
#include "models/cost/compute/launch_model.hpp"
#include "models/cost/compute/memory_bound_model.hpp"

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
    case OpRole::kFusedSoftmaxXent: return "fused_softmax_xent";
    case OpRole::kEmbedding: return "embedding";
    case OpRole::kPermute: return "permute";
    case OpRole::kScatterAdd: return "scatter_add";
    case OpRole::kRelayout: return "relayout";
    case OpRole::kCast: return "cast";
    case OpRole::kAmax: return "amax";
    case OpRole::kGradAccum: return "grad_accum";
    case OpRole::kBiasGrad: return "bias_grad";
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
    case AttentionKernel::kFlash1: return "flash1";
    case AttentionKernel::kFlashTriton: return "triton";
  }
  return "?";
}

AttentionKernel fused_attention_kernel(std::string_view name) {
  for (AttentionKernel k : {AttentionKernel::kFlash3, AttentionKernel::kFlash1, AttentionKernel::kFlashTriton})
    if (name == to_string(k)) return k;
  return AttentionKernel::kFlash2;
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
    // The rate is per logit for the loss and its gradient together: charged to the forward op.
    // A fused loss (kFusedSoftmaxXent) is not what the calibration measured (PyTorch's unfused
    // loss): it is priced by its bytes.
    case OpRole::kSoftmaxXent: return bwd ? 0.0 : op.elements * r.softmax_xent_s_per_element;
    case OpRole::kEmbedding:
      return op.elements * (bwd ? r.embedding_bwd_s_per_element : r.embedding_fwd_s_per_element);
    case OpRole::kGradAccum: return op.elements * r.fill_zero_s_per_element;
    // Casts (the loss's logits, autocast's weights, fp8's) at the measured copy's rate per element.
    case OpRole::kCast: return op.elements * r.copy_s_per_element;
    default: return -1.0;
  }
}

}  // namespace

double compute_op_time_s(const GpuSpec& gpu, const ComputeOp& op) {
  if (gpu.op_rates.present()) {
    // Launch overhead is inside what the calibration measured.
    const double t = measured_time_s(gpu.op_rates, op);
    if (t >= 0) return t;
  }
  // Kernel physics per family (docs/compute-model.md), plus the fixed GPU time of each kernel.
  const double fixed_s = op.kernels * kernel_fixed_s(gpu);
  switch (op.kind) {
    case ComputeKind::kGemm:
      if (op.gemm.flop() <= 0) return gemm_time_from_flop_s(gpu, op.flop, op.precision) + fixed_s;
      return gemm_timing(gpu, op.gemm, op.precision).time_s + fixed_s;
    case ComputeKind::kAttention: return attention_time_s(gpu, op.attention, op.pass, op.flop) + fixed_s;
    case ComputeKind::kMemoryBound:
      // Reductions over the tokens: a norm's rows, a bias gradient's columns (the H200 autocast
      // step's bias-gradient reduce kernels: 29 GB in 10.5 ms, 2.8 TB/s, the norms' rate).
      if (op.role == OpRole::kNorm || op.role == OpRole::kBiasGrad) return norm_time_s(gpu, op.bytes) + fixed_s;
      if (op.role == OpRole::kScatterAdd) return scatter_add_time_s(gpu, op.bytes) + fixed_s;
      if (op.role == OpRole::kRelayout) return relayout_time_s(gpu, op.bytes) + fixed_s;
      return memory_bound_time_s(gpu, op.bytes) + fixed_s;
    case ComputeKind::kOptimizer: return optimizer_time_s(gpu, op.bytes) + fixed_s;
  }
  return 0;
}

}  // namespace trainsim
