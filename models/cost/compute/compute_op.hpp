// A compute op of the workload: what one kernel (or one fused group of kernels) does, described
// by its shape so that the compute model can price it from kernel physics rather than from a
// per-layer constant. The workload's op graph (models/workload/) emits these; both tiers price
// them with compute_op_time_s, once, and nowhere else (CONVENTIONS.md #16).
#pragma once

#include <cstdint>
#include <string_view>

#include "models/core/specs.hpp"

namespace trainsim {

enum class ComputeKind : uint8_t { kGemm, kAttention, kMemoryBound, kOptimizer };

// What the op is in the model: measured per-op rates (calibration op_rates), per-class
// attribution (torch traces, breakdowns) and the precision inventory key on it.
enum class OpRole : uint8_t {
  // GEMMs
  kQkv,         // fused Q, K, V projection
  kAttnOut,     // attention output projection
  kMlpUp,       // fc1 (GELU) or the fused gate+up (SwiGLU)
  kMlpDown,     // fc2
  kRouter,      // MoE gate
  kExpertUp,    // grouped expert GEMMs (gate+up)
  kExpertDown,  // grouped expert GEMMs (down)
  kLmHead,      // output layer (logits)
  // attention core (scores, softmax, context)
  kAttention,
  // memory-bound
  kNorm,         // LayerNorm / RMSNorm
  kActivation,   // GELU / SwiGLU
  kResidual,     // residual add
  kDropout,
  kRotary,
  kSoftmaxXent,  // loss and its gradient
  kFusedSoftmaxXent,  // the same in one fused kernel a pass (plan.fused_loss)
  kEmbedding,    // token (+position) embedding gather / scatter-add
  kPermute,      // MoE token permute / unpermute: a gather into the other order
  kScatterAdd,   // MoE combine (or a permute's gradient): a weighted scatter-add into token order
  kRelayout,     // Q, K, V copied into the attention kernel's layout; their gradients concatenated back
  kCast,         // precision casts and transposes (fp8)
  kAmax,         // fp8 scaling-factor reductions
  kGradAccum,    // gradient accumulation / zeroing
  kBiasGrad,     // a linear's bias gradient: its output gradient summed over the tokens
  kOptimizer,    // optimizer step (AdamW)
  kOther,
};
const char* to_string(OpRole role);

// Which pass of the training step the op belongs to. B and W are the input- and weight-
// gradient halves of the backward pass (zero-bubble schedules run them apart).
enum class Pass : uint8_t { kForward, kBackwardInput, kBackwardWeight, kRecompute };
const char* to_string(Pass pass);

// C[m x n] = A[m x k] * B[k x n]; `groups` independent GEMMs of this shape in one grouped or
// batched launch (MoE experts). For a linear layer Y[T, N] = X[T, K] W[K, N]:
//   forward m=T n=N k=K;  input gradient m=T n=K k=N;  weight gradient m=K n=N k=T.
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double groups = 1;
  double flop() const { return 2 * m * n * k * groups; }
};

// kFlash1: the CUDA FlashAttention v1. kFlashTriton: the Triton FlashAttention
// (flash_attn_triton.py, from the Triton tutorial's fused attention), a kernel between v1 and v2.
enum class AttentionKernel : uint8_t { kFlash2, kFlash3, kUnfused, kFlash1, kFlashTriton };
const char* to_string(AttentionKernel kernel);
// The fused kernel a name (plan.attention_kernel, a profiled op's kernel) stands for, to_string's
// inverse over the fused kernels; FlashAttention-2 for any other name.
AttentionKernel fused_attention_kernel(std::string_view name);

// One rank's attention for one micro-batch: batch sequences of seq_q queries against seq_kv
// keys, `heads` query heads (kv_heads key/value heads) of head_dim.
struct AttentionShape {
  double batch = 0, heads = 0, kv_heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
  bool causal = true;
  AttentionKernel kernel = AttentionKernel::kFlash2;
  // Width of the value and context heads where it differs from the query/key width (MLA:
  // 128 against 192); 0: head_dim.
  double head_dim_v = 0;
  double value_dim() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
  // FlashAttention's convention (its benchmark tables): forward 4 b s_q s_kv h d (2 b s_q s_kv h
  // (d_qk + d_v): scores and context), halved when causal; the backward pass is 2.5x the forward.
  double forward_flop() const {
    return 2 * batch * seq_q * seq_kv * heads * (head_dim + value_dim()) * (causal ? 0.5 : 1.0);
  }
};

struct ComputeOp {
  ComputeKind kind = ComputeKind::kMemoryBound;
  OpRole role = OpRole::kOther;
  Pass pass = Pass::kForward;
  Precision precision = Precision::kBf16;  // the dtype the kernel computes in
  GemmShape gemm;                          // kGemm
  AttentionShape attention;                // kAttention
  double flop = 0;      // FLOPs performed (GEMM: gemm.flop(); attention: by the FA convention)
  double bytes = 0;     // HBM bytes moved (memory-bound and optimizer ops)
  double elements = 0;  // elements processed (what per-element measured rates multiply)
  // Kernel launches the op takes: each adds the GPU's fixed per-kernel time to
  // compute_op_time_s and the host's issue time to host_issue_time_s (launch_model.hpp).
  // Unfused attention: kUnfusedAttentionForwardKernels / kUnfusedAttentionBackwardKernels.
  int kernels = 1;
};

// The one pricing function for compute: seconds on one GPU of `gpu`, from the GPU's compute
// model or, where the GPU carries measured per-op rates, from those. The compute model
// (docs/compute-model.md) prices by kind: GEMMs from their shape and precision (gemm_model.hpp),
// attention from its shape and kernel (attention_model.hpp), memory-bound and optimizer ops
// from their bytes (memory_bound_model.hpp); each kernel adds a fixed GPU time. Which precision
// an op runs in and the casts fp8 needs are the workload's to set (precision.hpp).
double compute_op_time_s(const GpuSpec& gpu, const ComputeOp& op);

}  // namespace trainsim
