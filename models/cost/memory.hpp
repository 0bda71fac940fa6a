// Memory per GPU (REFERENCE.md "Memory").
// - Model states, mixed-precision Adam: 2 (16-bit params) + 2 (grads) + 12 (fp32 master, m, v)
//   bytes/param (ZeRO paper section 3); ZeRO-1/2/3 shard optimizer / +grads / +params over DP.
// - Activations per layer per micro-batch (Korthikanti et al. 2022, section 4), generalised
//   term by term to GQA, SwiGLU and f != 4h; flash attention removes the 5as^2b term.
#pragma once

#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

// Bytes per parameter of each model state under a precision (fp32: 4 + 4 + 8 Adam m, v).
struct StateBytes {
  double params = 2;
  double grads = 2;
  double optimizer = 12;
};
StateBytes state_bytes_per_param(Precision precision);
// The precision the model states are kept in: fp32's under autocast (fp32 weights and gradients,
// no separate master copy: 4 + 4 + 8), else the plan's.
Precision state_precision(const ParallelPlan& plan);
// A plan's bytes per parameter: its states' precision, with the gradient buffer in
// plan.grad_reduce (bf16 with fp32 gradients: 2 + 4 + 12 = 18 bytes, Megatron's
// docs/source/distrib_optimizer.md table; 6 + 12/d with the distributed optimizer) and Adam's
// moments in plan.adam_moments (bf16: 4 + 2 + 2 bytes of optimizer state).
StateBytes state_bytes(const ParallelPlan& plan);
// plan.grad_reduce, or where the plan leaves it to the precision: fp16's loss-scaled 16-bit
// gradients, else fp32 (bf16 and fp8 training, autocast's fp32 weights).
Precision grad_reduce_precision(const ParallelPlan& plan);
// Bytes of one element of Adam's m and v (plan.adam_moments): 4, or 2 in bf16.
double adam_moment_bytes(const ParallelPlan& plan);

// Model-state bytes per GPU for `params` parameters held by this GPU's TP/PP shard, sharded
// over `zero_degree` data-parallel ranks (ZeRO paper Figure 1: 16P, 4P + 12P/d, 2P + 14P/d,
// 16P/d at 16 bytes/param).
MemoryBreakdown model_state_bytes(double params, int zero_stage, int zero_degree,
                                  Precision precision);
MemoryBreakdown model_state_bytes(double params, int zero_stage, int zero_degree, const StateBytes& bytes);

struct ActivationOptions {
  int tp = 1;
  int cp = 1;
  bool sp = false;
  Recompute recompute = Recompute::kNone;
  RecomputeModules recompute_modules;  // applied under kSelective (plan.recompute_modules)
  bool flash_attention = true;
  double micro_batch = 1;
  bool vocab_parallel = true;  // logits split over TP (plan.vocab_parallel)
  bool fused_loss = false;     // the loss keeps the 16-bit logits, not an fp32 copy (plan.fused_loss)
  // The linears' inputs kept for the backward in fp8 (plan.fp8_activation_cache under fp8).
  bool fp8_cache = false;
};

// Bytes an element of a linear's input takes when kept in fp8 for the backward: one byte and an
// fp32 scale per 1 x 128 tile (DeepSeek-V3 report, arXiv:2412.19437 sec. 3.3.1-3.3.2).
constexpr double kFp8CachedBytes = 1.0 + 4.0 / 128;
// The attention output projection's input, kept in DeepSeek-V3's E5M6 (12 bits) for accuracy.
constexpr double kE5m6CachedBytes = 1.5;

// Activation bytes of one transformer layer for one micro-batch (16-bit activations,
// 1-byte dropout masks). Korthikanti: sbh(34 + 5as/h) without parallelism.
double layer_activation_bytes(const ModelSpec& model, bool moe_layer, const ActivationOptions& o);

// Korthikanti's closed forms, for tests and for readers (bytes).
double korthikanti_activation_bytes(double s, double b, double h, double a, int t, bool sp,
                                    Recompute recompute);

// Embedding output on the first stage; output layer and loss on the last stage, 4sbh(1 + V/h)
// (Megatron theoretical_memory_usage.py; logits kept in fp32 for the loss), 4sbh + 2sbV under
// a fused loss (the 16-bit logits, their gradient written in their place).
double first_stage_extra_activation_bytes(const ModelSpec& model, const ActivationOptions& o);
double last_stage_extra_activation_bytes(const ModelSpec& model, const ActivationOptions& o);

// Micro-batches whose activations a pipeline stage holds at its peak: the schedule's
// (PipelineSchedule::in_flight_micro_batches, models/schedules/).

// DeepSpeed's own model-state estimators (zero/stage_1_and_2.py, zero/stage3.py), reproduced
// for comparison: they count model states only (no activations, buffers or fragmentation).
// ZeRO-2 (2024+): 2P + 18P/N on the GPU, 2P with optimizer offload.
// ZeRO-3: 4 L + 18P/N; 4 L + 2P/N with optimizer offload; 4 L with params offloaded too
// (L = parameters of the largest layer).
double deepspeed_zero2_gpu_bytes(double params, int gpus, bool offload_optimizer);
double deepspeed_zero3_gpu_bytes(double params, double largest_layer_params, int gpus,
                                 bool offload_optimizer, bool offload_params);

// Framework reserve per GPU: CUDA context, cuBLAS workspace, NCCL channel buffers, allocator
// fragmentation. 1.5 GiB is what PyTorch jobs commonly leave unaccounted on 80 GB parts.
constexpr double kFrameworkReserveBytes = 1.5 * 1024 * 1024 * 1024;
// The share of HBM above which a plan's peak leaves the caching allocator too little room for
// fragmentation (blocks of many sizes freed and reused): where allocation retries become likely.
// A warning, not a price: how much they cost depends on the allocation pattern.
constexpr double kTightMemoryShare = 0.9;

}  // namespace trainsim
