// Which ops run in which precision, and the extra kernels a precision needs
// (docs/compute-model.md "Precision"). TransformerEngine-style fp8 training runs the linear
// layers' forward and backward GEMMs in fp8 (QKV, attention output, MLP, expert GEMMs); the LM
// head, the router, attention and every memory-bound op stay in bf16, and the weights keep
// fp32 master copies. Each fp8 GEMM needs its operands quantised: a cast (+ transpose, because
// Hopper's fp8 tensor-core GEMM takes only the TN layout, so the weight-gradient GEMM needs the
// transposed activation and gradient) per operand, with amax reductions for the scaling
// factors. bf16/fp16/fp32 need no extra kernels.
#pragma once

#include <vector>

#include "models/core/specs.hpp"
#include "models/cost/compute/compute_op.hpp"

namespace trainsim {

enum class Fp8Recipe : uint8_t {
  kDelayed,  // per-tensor scale from the amax history: amax fused into the cast (TE default)
  kCurrent,  // per-tensor scale from this tensor's amax: one extra read pass per tensor
  kBlock,    // block scales (MXFP8 on Blackwell, 1x128 / 128x128 blocks on Hopper): scales
             // written with the cast, no amax pass
};
const char* to_string(Fp8Recipe recipe);

struct PrecisionOptions {
  Fp8Recipe recipe = Fp8Recipe::kDelayed;
  // Cast the weights this micro-batch (false when an fp8 weight copy is reused across the
  // micro-batches of a step, TE's is_first_microbatch caching).
  bool cast_weights = true;
};

// The precision a GEMM of `role` computes in when the plan trains in `plan`.
Precision gemm_precision(OpRole role, Precision plan);
// Attention and memory-bound ops: 16-bit whatever the plan (fp32 plans stay fp32).
Precision non_gemm_precision(Precision plan);

// The memory-bound ops one GEMM adds for its precision: empty unless gemm.precision is fp8.
// Forward: quantise the activation (cast + transpose) and the weight (if cast_weights);
// backward-input: quantise the output gradient (cast + transpose); backward-weight: nothing
// (it reads the transposed copies made earlier); recompute: the activation again.
std::vector<ComputeOp> precision_extra_ops(const ComputeOp& gemm, const PrecisionOptions& options = {});
// The same, appended to `ops`.
void append_precision_ops(std::vector<ComputeOp>& ops, const ComputeOp& gemm,
                          const PrecisionOptions& options = {});

}  // namespace trainsim
