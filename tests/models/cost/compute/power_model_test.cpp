// The power limit on tensor-core work: the Hopper presets' curve against the duty measurement it
// comes from (clock_h200_gemm_bf16_duty), and the step's fixed point against its closed form.
#include "models/cost/compute/power_model.hpp"

#include <gtest/gtest.h>

#include "tests/models/cost/compute/kernel_records.hpp"

namespace trainsim {
namespace {

using test::gpu_preset;

// Each measured mix: the GEMM's rate over the fully busy one is the curve's share over its
// fully busy share, at that mix's busy share.
TEST(PowerModel, TheH200CurveIsItsDutyMeasurement) {
  const GpuKernelParams k = gpu_preset("H200-SXM-141GB").kernel;
  ASSERT_FALSE(k.power_tensor_share.empty());
  const auto& points = test::record("clock_h200_gemm_bf16_duty")["measured"]["points"];
  ASSERT_EQ(points.size(), 6u);
  double full_rate = 0;
  for (const auto& p : points)
    if (p["tensor_busy_share"].get<double>() == 1.0) full_rate = p["gemm_tflops"].get<double>();
  ASSERT_GT(full_rate, 0);
  const double full_share = power_tensor_share_at(k, 1.0);
  EXPECT_NEAR(full_share, 0.88, 1e-9);  // clock_h200_gemm_bf16_sustained: 664 of 755 TFLOP/s
  for (const auto& p : points) {
    const double busy = p["tensor_busy_share"].get<double>();
    const double measured = p["gemm_tflops"].get<double>() / full_rate;
    EXPECT_NEAR(power_tensor_share_at(k, busy) / full_share, measured, 0.01) << "busy share " << busy;
  }
  // The same board and die: H100 and H800 carry H200's curve.
  EXPECT_EQ(gpu_preset("H100-SXM-80GB").kernel.power_tensor_share, k.power_tensor_share);
  EXPECT_EQ(gpu_preset("H800-SXM-80GB").kernel.power_tensor_share, k.power_tensor_share);
}

TEST(PowerModel, InterpolatesBetweenPointsAndHoldsBeyondThem) {
  GpuKernelParams k;
  k.power_tensor_share = {{0.4, 1.0}, {1.0, 0.8}};
  EXPECT_DOUBLE_EQ(power_tensor_share_at(k, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(power_tensor_share_at(k, 0.7), 0.9);
  EXPECT_DOUBLE_EQ(power_tensor_share_at(k, 1.0), 0.8);
}

// With the curve s(b) = 1.2 - 0.4 b and the tensor ops taking t at the benchmark rate beside o of
// other work, the fixed point solves s = 1.2 - 0.4 (t / s) / (t / s + o): with t = o = 1,
// s = 1.2 - 0.4 / (1 + s), s^2 - 0.2 s - 0.8 = 0, s = 1 (busy share 1/2).
TEST(PowerModel, TheStepsShareIsTheCurvesFixedPoint) {
  GpuKernelParams k;
  k.power_tensor_share = {{0.0001, 1.19996}, {1.0, 0.8}};
  EXPECT_NEAR(power_limited_tensor_share(k, 1.0, 0.0, 1.0), 1.0, 1e-6);
  // All tensor work: the fully busy end; none: nothing to scale.
  EXPECT_NEAR(power_limited_tensor_share(k, 1.0, 0.0, 0.0), 0.8, 1e-12);
  EXPECT_NEAR(power_limited_tensor_share(k, 0.0, 0.0, 1.0), 0.8, 1e-12);
  // Attention follows the clock but is not busy: GEMMs and attention of equal time leave the
  // GEMMs half the step at any share, s = 1.2 - 0.4 / 2 = 1.
  EXPECT_NEAR(power_limited_tensor_share(k, 1.0, 1.0, 0.0), 1.0, 1e-12);
  // The same attention counted as busy would give the fully busy end.
  EXPECT_NEAR(power_limited_tensor_share(k, 2.0, 0.0, 0.0), 0.8, 1e-12);
}

// An explicit training_tensor_share (a scenario's, or the published-runs fit's) overrides the
// curve; a GPU without a curve keeps the constant.
TEST(PowerModel, AnExplicitTrainingShareOverridesTheCurve) {
  GpuSpec h200 = gpu_preset("H200-SXM-141GB");
  EXPECT_TRUE(follows_power_curve(h200));
  h200.training_tensor_share = 0.9;
  EXPECT_FALSE(follows_power_curve(h200));
  EXPECT_FALSE(follows_power_curve(gpu_preset("A100-SXM4-80GB")));
}

}  // namespace
}  // namespace trainsim
