// The precision inventory: which GEMMs run in fp8, the casts an fp8 linear needs per pass,
// checked against TransformerEngine's own GEMM benchmark (autocast minus pre-quantised time is
// the quantisation the benchmark's te.Linear forward does) and its fp8-vs-bf16 GEMM speedup.
#include "models/cost/compute/precision.hpp"

#include <gtest/gtest.h>

#include "models/cost/compute/gemm_model.hpp"
#include "tests/models/cost/compute/kernel_records.hpp"

namespace trainsim {
namespace {

using test::ErrorFamily;
using test::gpu_preset;
using test::record;

ComputeOp linear_gemm(Pass pass, double m, double n, double k, Precision p) {
  ComputeOp op;
  op.kind = ComputeKind::kGemm;
  op.role = OpRole::kMlpUp;
  op.pass = pass;
  op.precision = p;
  op.gemm = {m, n, k, 1};
  op.flop = op.gemm.flop();
  return op;
}

TEST(Precision, Fp8RunsTheLinearLayersOnly) {
  for (OpRole r : {OpRole::kQkv, OpRole::kAttnOut, OpRole::kMlpUp, OpRole::kMlpDown, OpRole::kExpertUp, OpRole::kExpertDown})
    EXPECT_EQ(gemm_precision(r, Precision::kFp8), Precision::kFp8) << to_string(r);
  for (OpRole r : {OpRole::kLmHead, OpRole::kRouter})
    EXPECT_EQ(gemm_precision(r, Precision::kFp8), Precision::kBf16) << to_string(r);
  EXPECT_EQ(gemm_precision(OpRole::kQkv, Precision::kBf16), Precision::kBf16);
  EXPECT_EQ(non_gemm_precision(Precision::kFp8), Precision::kBf16);
  EXPECT_EQ(non_gemm_precision(Precision::kFp32), Precision::kFp32);
}

TEST(Precision, CastsPerPassOfAnFp8Linear) {
  const double T = 8192, K = 4096, N = 16384;
  // Forward: activation X [T, K] and weight W [K, N], cast + transpose each (4 bytes/element).
  const auto f = precision_extra_ops(linear_gemm(Pass::kForward, T, N, K, Precision::kFp8));
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].role, OpRole::kCast);
  EXPECT_DOUBLE_EQ(f[0].bytes + f[1].bytes, 4 * (T * K + K * N));
  // Current scaling adds an amax read of each tensor.
  const auto fc = precision_extra_ops(linear_gemm(Pass::kForward, T, N, K, Precision::kFp8), {Fp8Recipe::kCurrent, true});
  ASSERT_EQ(fc.size(), 4u);
  EXPECT_EQ(fc[0].role, OpRole::kAmax);
  // Cached fp8 weights: only the activation.
  EXPECT_EQ(precision_extra_ops(linear_gemm(Pass::kForward, T, N, K, Precision::kFp8), {Fp8Recipe::kDelayed, false}).size(), 1u);
  // Input gradient: dY [T, N] (m = T, k = N); weight gradient: nothing new.
  const auto b = precision_extra_ops(linear_gemm(Pass::kBackwardInput, T, K, N, Precision::kFp8));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_DOUBLE_EQ(b[0].elements, T * N);
  EXPECT_TRUE(precision_extra_ops(linear_gemm(Pass::kBackwardWeight, K, N, T, Precision::kFp8)).empty());
  // 16-bit: the same inventory has no casts.
  EXPECT_TRUE(precision_extra_ops(linear_gemm(Pass::kForward, T, N, K, Precision::kBf16)).empty());
  std::vector<ComputeOp> ops;
  append_precision_ops(ops, linear_gemm(Pass::kForward, T, N, K, Precision::kFp8));
  EXPECT_EQ(ops.size(), 2u);
}

// The 12 GEMM shapes (M x K x N) of TE's benchmark in model-config mode for hidden 4096,
// intermediate 16384, 31 x 512 tokens: Fprop, Dgrad and Wgrad of QKV, attention out, MLP up,
// MLP down. Each is timed as a te.Linear forward of that shape.
struct MKN {
  double m, k, n;
};
const MKN kTeLayer[] = {
    {15872, 4096, 12288}, {15872, 4096, 4096},  {15872, 4096, 16384}, {15872, 16384, 4096},  // Fprop
    {15872, 12288, 4096}, {15872, 4096, 4096},  {15872, 16384, 4096}, {15872, 4096, 16384},  // Dgrad
    {4096, 15872, 12288}, {4096, 15872, 4096},  {4096, 15872, 16384}, {16384, 15872, 4096},  // Wgrad
};

double quantisation_s(const GpuSpec& gpu, Fp8Recipe recipe) {
  double t = 0;
  for (const MKN& s : kTeLayer)
    for (const ComputeOp& op : precision_extra_ops(linear_gemm(Pass::kForward, s.m, s.n, s.k, Precision::kFp8), {recipe, true}))
      t += compute_op_time_s(gpu, op);
  return t;
}

double layer_gemm_s(const GpuSpec& gpu, Precision p) {
  double t = 0;
  for (const MKN& s : kTeLayer) t += compute_op_time_s(gpu, linear_gemm(Pass::kForward, s.m, s.n, s.k, p));
  return t;
}

// B300 from its own records: HBM 8 TB/s at 84% (mem_b300_pct_achievable_bw), B200's SMs and
// tiles, the B300 MAMF shares.
GpuSpec b300() {
  GpuSpec g = gpu_preset("B200-SXM-180GB");
  const auto& mem = record("mem_b300_pct_achievable_bw")["measured"];
  g.hbm_bandwidth_bytes_per_s = mem["peak_bw_bytes_per_s"];
  g.kernel.memory_bandwidth_share = mem["pct_achievable_mem_bw"];
  g.kernel.gemm_share_16bit = record("gemm_mamf_bf16_b300_sxm")["measured"]["efficiency_pct"].get<double>() / 100;
  g.kernel.gemm_share_fp8 = record("fp8_mamf_e4m3_b300_sxm")["measured"]["efficiency_pct"].get<double>() / 100;
  return g;
}

TEST(Precision, QuantisationTimeMatchesTransformerEngineBenchmark) {
  ErrorFamily f("fp8 quantisation (TE autocast - prequantised)");
  // H200 NVL has the H200's 4.8 TB/s HBM3e; its lower power limit matters for GEMMs, not here.
  const GpuSpec h200 = gpu_preset("H200-SXM-141GB");
  const auto& nvl_a = record("fp8_h200nvl_te_per_layer_autocast")["measured"];
  const auto& nvl_p = record("fp8_h200nvl_te_per_layer_prequantized")["measured"];
  f.add("fp8_h200nvl_te_per_layer current scaling", quantisation_s(h200, Fp8Recipe::kCurrent) * 1e3,
        nvl_a["fp8_current_scaling_ms"].get<double>() - nvl_p["fp8_current_scaling_ms"].get<double>());
  const GpuSpec b = b300();
  const auto& ba = record("fp8_b300_te_per_layer_autocast")["measured"];
  const auto& bp = record("fp8_b300_te_per_layer_prequantized")["measured"];
  f.add("fp8_b300_te_per_layer current scaling", quantisation_s(b, Fp8Recipe::kCurrent) * 1e3,
        ba["fp8_current_scaling_ms"].get<double>() - bp["fp8_current_scaling_ms"].get<double>());
  f.add("fp8_b300_te_per_layer mxfp8 (block)", quantisation_s(b, Fp8Recipe::kBlock) * 1e3,
        ba["mxfp8_ms"].get<double>() - bp["mxfp8_ms"].get<double>());
  f.check(0.12, 0.20);
}

TEST(Precision, Fp8GemmSpeedupMatchesTransformerEngineBenchmark) {
  // Pre-quantised (kernel only) per-layer GEMM time, bf16 over fp8 current scaling.
  ErrorFamily f("fp8/bf16 GEMM speedup (TE per layer)");
  const auto& nvl = record("fp8_h200nvl_te_per_layer_prequantized")["measured"];
  const GpuSpec h200 = gpu_preset("H200-SXM-141GB");
  f.add("fp8_h200nvl_te_per_layer_prequantized", layer_gemm_s(h200, Precision::kBf16) / layer_gemm_s(h200, Precision::kFp8),
        nvl["bf16_ms"].get<double>() / nvl["fp8_current_scaling_ms"].get<double>());
  const auto& bp = record("fp8_b300_te_per_layer_prequantized")["measured"];
  const GpuSpec b = b300();
  f.add("fp8_b300_te_per_layer_prequantized", layer_gemm_s(b, Precision::kBf16) / layer_gemm_s(b, Precision::kFp8),
        bp["bf16_ms"].get<double>() / bp["fp8_current_scaling_ms"].get<double>());
  f.check(0.06, 0.10);
}

}  // namespace
}  // namespace trainsim
