// Gradient compression: payload bytes against the formats' definitions, and the kernels of a
// compressed all-reduce against the algorithm's own count of them (compression.hpp).
#include "models/cost/compression.hpp"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

CompressionStage stage(const std::string& method, bool error_feedback = true) {
  CompressionStage s;
  s.method = method;
  s.error_feedback = error_feedback;
  return s;
}

TEST(Compression, QuantizedPayloadDoesNotDependOnTheSourcePrecision) {
  // int8: one byte a value plus an fp32 scale per 128-value block.
  const double int8_bytes = 1.0 + 4.0 / 128;
  EXPECT_DOUBLE_EQ(compression_effect(stage("int8"), 4096, 2).wire_ratio * 2, int8_bytes);
  EXPECT_DOUBLE_EQ(compression_effect(stage("int8"), 4096, 4).wire_ratio * 4, int8_bytes);
  EXPECT_DOUBLE_EQ(compression_effect(stage("int4"), 4096, 4).wire_ratio * 4, 0.5 + 4.0 / 128);
  // 2:4 of fp16: 56.25% (two 16-bit values and two 2-bit indices per four values).
  EXPECT_DOUBLE_EQ(compression_effect(stage("2:4"), 4096, 2).wire_ratio, 0.5625);
  // Top-k of bf16: a 16-bit value and a 32-bit index per kept value.
  CompressionStage topk = stage("topk");
  topk.topk_ratio = 0.01;
  EXPECT_DOUBLE_EQ(compression_effect(topk, 4096, 2).wire_ratio, 0.03);
  EXPECT_TRUE(compression_effect(topk, 4096, 2).needs_allgather);
}

TEST(Compression, KernelsOfACompressedAllReduceAtMeasuredRates) {
  GpuSpec gpu;
  gpu.hbm_bandwidth_bytes_per_s = 1e12;
  gpu.op_rates.peak_flop_per_s = 1e11;  // present
  gpu.op_rates.residual_add_s_per_element = 1e-9;
  gpu.op_rates.compression.push_back({"int8", {4e-9, 2e-9}});
  const double v = 1e6;
  const CompressionStage s = stage("int8");
  const CompressionEffect ce = compression_effect(s, 128, 4);
  // p = 2: compress the gradient and the reduced half (1.5 v), decompress the two received and
  // the two gathered chunks (2 v) and each compression's residual (1.5 v), two residual updates
  // per compressed value (3 v).
  EXPECT_NEAR(compression_kernel_time_s(s, ce, v, 2, 4, gpu), 1.5e6 * 4e-9 + 3.5e6 * 2e-9 + 3e6 * 1e-9, 1e-15);
  // Without error feedback only the compress and decompress passes remain.
  const CompressionStage plain = stage("int8", false);
  EXPECT_NEAR(compression_kernel_time_s(plain, ce, v, 2, 4, gpu), 1.5e6 * 4e-9 + 2e6 * 2e-9, 1e-15);
  // One rank reduces nothing.
  EXPECT_EQ(compression_kernel_time_s(s, ce, v, 1, 4, gpu), 0);
}

TEST(Compression, UncalibratedKernelsAreMemoryBound) {
  GpuSpec gpu;
  gpu.hbm_bandwidth_bytes_per_s = 2e12;
  const double v = 1e9, g = 2;
  const CompressionStage s = stage("int4", false);
  const CompressionEffect ce = compression_effect(s, 4096, g);
  const double payload = 0.5 + 4.0 / 128;
  // Many ranks: compress reads a value and writes its payload, once per value (1 + 1/p -> 1);
  // decompress-add reads the payload and reads and writes the accumulator, twice per value.
  const double expected = (v * (g + payload) + 2 * v * (payload + 2 * g)) / 2e12;
  EXPECT_NEAR(compression_kernel_time_s(s, ce, v, 1 << 20, g, gpu), expected, expected * 1e-5);
  // Twice the bandwidth, half the time.
  gpu.hbm_bandwidth_bytes_per_s = 4e12;
  EXPECT_NEAR(compression_kernel_time_s(s, ce, v, 1 << 20, g, gpu), expected / 2, expected * 1e-5);
}

}  // namespace
}  // namespace trainsim
