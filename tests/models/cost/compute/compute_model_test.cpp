// compute_op_time_s, the one entry point: measured per-op rates win where the calibration has
// them, the kernel model prices the rest, and each kernel adds the GPU's fixed time.
#include "models/cost/compute/compute_op.hpp"

#include <gtest/gtest.h>

#include "models/cost/compute/gemm_model.hpp"
#include "models/cost/compute/launch_model.hpp"
#include "tests/models/cost/compute/kernel_records.hpp"

namespace trainsim {
namespace {

ComputeOp gemm_op(double m, double n, double k) {
  ComputeOp op;
  op.kind = ComputeKind::kGemm;
  op.role = OpRole::kMlpUp;
  op.gemm = {m, n, k, 1};
  op.flop = op.gemm.flop();
  return op;
}

TEST(ComputeModel, MeasuredOpRatesReplaceTheModelOpByOp) {
  GpuSpec g = test::gpu_preset("A100-SXM4-80GB");
  g.op_rates.peak_flop_per_s = 1e12;
  g.op_rates.gemm_forward_efficiency = 0.5;
  g.op_rates.layernorm_fwd_s_per_element = 1e-9;
  const ComputeOp gemm = gemm_op(1024, 1024, 1024);
  EXPECT_DOUBLE_EQ(compute_op_time_s(g, gemm), gemm.flop / 0.5e12);
  ComputeOp norm;
  norm.role = OpRole::kNorm;
  norm.elements = 1e6;
  norm.bytes = 4e6;
  EXPECT_DOUBLE_EQ(compute_op_time_s(g, norm), 1e-3);
  // A cast at the measured copy rate per element.
  g.op_rates.copy_s_per_element = 2e-12;
  ComputeOp cast = norm;
  cast.role = OpRole::kCast;
  EXPECT_DOUBLE_EQ(compute_op_time_s(g, cast), 2e-6);
  // No measured rate for a relayout copy: the model prices it.
  ComputeOp relayout = norm;
  relayout.role = OpRole::kRelayout;
  GpuSpec model = g;
  model.op_rates = OpRates{};
  EXPECT_DOUBLE_EQ(compute_op_time_s(g, relayout), compute_op_time_s(model, relayout));
  // The loss: the measured (unfused PyTorch) rate per logit prices the unfused loss; a fused
  // loss kernel is not what was measured and is priced by its bytes.
  g.op_rates.softmax_xent_s_per_element = 7e-12;
  ComputeOp loss;
  loss.kind = ComputeKind::kMemoryBound;
  loss.role = OpRole::kSoftmaxXent;
  loss.elements = 1e8;
  loss.bytes = 4.8e9;
  loss.kernels = 3;
  EXPECT_DOUBLE_EQ(compute_op_time_s(g, loss), 7e-4);
  ComputeOp fused = loss;
  fused.role = OpRole::kFusedSoftmaxXent;
  fused.bytes = 4e8;
  fused.kernels = 1;
  EXPECT_DOUBLE_EQ(compute_op_time_s(g, fused), compute_op_time_s(model, fused));
  EXPECT_LT(compute_op_time_s(g, fused), compute_op_time_s(model, loss));
}

TEST(ComputeModel, EveryKernelAddsTheFixedGpuTime) {
  const GpuSpec g = test::gpu_preset("H100-SXM-80GB");
  ComputeOp op = gemm_op(4096, 4096, 4096);
  const double one = compute_op_time_s(g, op);
  op.kernels = 3;
  EXPECT_NEAR(compute_op_time_s(g, op) - one, 2 * kernel_fixed_s(g), 1e-15);
}

TEST(ComputeModel, AGemmWithoutAShapeRunsAtTheSustainedRate) {
  const GpuSpec g = test::gpu_preset("H100-SXM-80GB");
  ComputeOp op;
  op.kind = ComputeKind::kGemm;
  op.flop = 1e12;
  EXPECT_NEAR(compute_op_time_s(g, op), 1e12 / (989e12 * 0.803) + 2e-6, 1e-9);
}

TEST(ComputeModel, ACustomGpuWithoutKernelParametersStillGetsAModel) {
  GpuSpec g;
  g.peak_flops_bf16 = g.peak_flops_fp16 = 100e12;
  g.hbm_bandwidth_bytes_per_s = 1e12;
  const ComputeOp op = gemm_op(8192, 8192, 8192);
  EXPECT_NEAR(compute_op_time_s(g, op), op.flop / (100e12 * kDefaultGemmShare16bit) + kDefaultKernelFixedS, 1e-9);
  ComputeOp attn;
  attn.kind = ComputeKind::kAttention;
  attn.attention = {1, 16, 16, 2048, 2048, 128, true, AttentionKernel::kFlash2};
  attn.flop = attn.attention.forward_flop();
  EXPECT_GT(compute_op_time_s(g, attn), attn.flop / 100e12);
}

}  // namespace
}  // namespace trainsim
