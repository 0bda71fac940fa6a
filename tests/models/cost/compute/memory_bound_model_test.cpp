// Memory-bound kernels and per-kernel overheads against their records: the streaming cast
// kernels on H100 (torchao blockwise fp8) and B200 (mxfp8), the one-element kernel's GPU time,
// and the host launch time; the optimizer's bytes per parameter by precision.
#include "models/cost/compute/memory_bound_model.hpp"

#include <map>

#include <gtest/gtest.h>

#include "models/cost/compute/compute_op.hpp"
#include "models/cost/compute/launch_model.hpp"
#include "tests/models/cost/compute/kernel_records.hpp"

namespace trainsim {
namespace {

using test::ErrorFamily;
using test::gpu_preset;

ComputeOp streaming_op(double bytes) {
  ComputeOp op;
  op.kind = ComputeKind::kMemoryBound;
  op.role = OpRole::kCast;
  op.bytes = bytes;
  op.kernels = 1;
  return op;
}

TEST(MemoryBoundModel, StreamingKernelsRunAtTheAchievedBandwidth) {
  // Each record gives its logical IO bytes as effective bandwidth x time; the model predicts
  // the time from the bytes.
  ErrorFamily h100("memory-bound casts H100");
  ErrorFamily b200("memory-bound casts B200");
  const GpuSpec h = gpu_preset("H100-SXM-80GB");
  const GpuSpec b = gpu_preset("B200-SXM-180GB");
  for (const auto& r : test::kernel_records()) {
    const std::string id = r["id"];
    const bool is_h100 = id.rfind("mem_h100_blockfp8_", 0) == 0;
    const bool is_b200 = id.rfind("mem_b200_mx_cast_", 0) == 0;
    if (!is_h100 && !is_b200) continue;
    const double time_s = r["measured"]["time_us"].get<double>() * 1e-6;
    const double bytes = time_s * r["measured"]["effective_bytes_per_s"].get<double>();
    const double predicted = compute_op_time_s(is_h100 ? h : b, streaming_op(bytes));
    (is_h100 ? h100 : b200).add(id, predicted * 1e6, time_s * 1e6);
  }
  h100.check(0.05, 0.06);
  b200.check(0.08, 0.12);
}

// The streaming and norm kernels measured on H200 (PyTorch, 512 MiB of bf16, rows of 8192):
// streaming ones at the preset's share, norms at that times norm_bandwidth_ratio.
TEST(MemoryBoundModel, H200KernelsRunAtTheirShareNormsAtTheirRatio) {
  const GpuSpec h200 = gpu_preset("H200-SXM-141GB");
  ErrorFamily streaming("memory-bound streaming H200 (PyTorch)");
  ErrorFamily norms("memory-bound norms H200 (PyTorch)");
  for (const char* op : {"copy", "add", "gelu_tanh", "silu_mul", "cast_fp32_to_bf16", "amax", "cast_bf16_to_fp8", "dropout",
                         "layer_norm", "rms_norm"}) {
    const auto& r = test::record(std::string("mem_h200_torch_") + op);
    const double time_s = r["measured"]["time_us"].get<double>() * 1e-6;
    const double bytes = r["config"]["bytes_counted"];
    const bool norm = std::string(op).find("norm") != std::string::npos;
    ComputeOp o = streaming_op(bytes);
    if (norm) o.role = OpRole::kNorm;
    (norm ? norms : streaming).add(r["id"], compute_op_time_s(h200, o) * 1e6, time_s * 1e6);
  }
  streaming.check(0.12, 0.25);
  norms.check(0.08, 0.10);
}

// A MoE layer's permutes on H200 (moe_h200_torch_*): the gather into expert order streams, the
// weighted scatter-add back to token order (index_add_, atomics) runs at the preset's
// scatter_add_bandwidth_ratio of a stream. The op graph counts both as 2 x 2 bytes per element
// of the T top_k x h copies (layer_program.cpp), the records their own minimum traffic: the
// model's bytes are recomputed from each record's shape.
TEST(MemoryBoundModel, MoeGathersStreamAndScatterAddsRunAtTheirRatio) {
  const GpuSpec h200 = gpu_preset("H200-SXM-141GB");
  ErrorFamily gathers("MoE permute gather H200"), scatters("MoE unpermute scatter-add H200");
  for (const auto* r : test::records_with_prefix("moe_h200_torch_")) {
    const std::string id = (*r)["id"];
    const auto& c = (*r)["config"];
    const double bytes = 2 * 2.0 * c["tokens"].get<double>() * c["topk"].get<double>() * c["hidden"].get<double>();
    const double measured = (*r)["measured"]["time_us"].get<double>() * 1e-6;
    if (id.find("permute_gather") != std::string::npos) gathers.add(id, memory_bound_time_s(h200, bytes), measured);
    if (id.find("scatter_add") != std::string::npos) {
      ComputeOp op = streaming_op(bytes);
      op.role = OpRole::kScatterAdd;
      scatters.add(id, compute_op_time_s(h200, op), measured);
    }
  }
  ASSERT_EQ(gathers.size(), 3u);
  ASSERT_EQ(scatters.size(), 3u);
  gathers.check(0.08, 0.10);
  scatters.check(0.04, 0.06);
}

// The QKV relayout on H200 (relayout_h200_torch_*, from the training steps' profiler traces):
// PyTorch's copy_ of the permuted QKV view and the cat of the Q, K, V gradients, each reading and
// writing the T x qkv_n elements once, as the op graph counts them. One ratio prices both: the
// copies run 8-18% faster than it, the cats 6-14% slower, a copy and its cat together within 5%.
TEST(MemoryBoundModel, QkvRelayoutsRunAtTheirRatio) {
  const GpuSpec h200 = gpu_preset("H200-SXM-141GB");
  ErrorFamily each("QKV relayout copy/cat H200"), pairs("QKV relayout copy + cat H200");
  std::map<std::string, std::pair<double, double>> per_trace;  // model, measured
  for (const auto* r : test::records_with_prefix("relayout_h200_torch_")) {
    const std::string id = (*r)["id"];
    ComputeOp op = streaming_op((*r)["config"]["bytes_counted"].get<double>());
    op.role = OpRole::kRelayout;
    const double model = compute_op_time_s(h200, op), measured = (*r)["measured"]["time_us"].get<double>() * 1e-6;
    each.add(id, model, measured);
    auto& p = per_trace[id.substr(id.find('_', std::string("relayout_h200_torch_").size()))];
    p.first += model, p.second += measured;
  }
  ASSERT_EQ(each.size(), 8u);
  for (const auto& [trace, p] : per_trace) pairs.add(trace, p.first, p.second);
  ASSERT_EQ(pairs.size(), 4u);
  each.check(0.12, 0.19);
  pairs.check(0.04, 0.05);
}

TEST(MemoryBoundModel, ATinyKernelCostsItsFixedGpuTime) {
  const GpuSpec h = gpu_preset("H100-SXM-80GB");
  const double record_s = test::record("mem_h100_kernel_launch_overhead")["measured"]["latency_us"].get<double>() * 1e-6;
  EXPECT_NEAR(compute_op_time_s(h, streaming_op(8)), record_s, 0.01 * record_s);
}

TEST(MemoryBoundModel, HostIssueTimeIsPerKernel) {
  const GpuSpec h = gpu_preset("H100-SXM-80GB");
  ComputeOp op = streaming_op(1e6);
  op.kernels = 3;
  const double low_s = test::record("host_eager_pytorch_launch")["measured"]["latency_us_min"].get<double>() * 1e-6;
  EXPECT_DOUBLE_EQ(host_issue_time_s(h, op), 3 * low_s);
  // A 1 MB kernel is shorter than the host needs to issue it: small models are host-bound.
  EXPECT_LT(compute_op_time_s(h, streaming_op(1e6)), host_issue_time_s(h, streaming_op(1e6)));
}

TEST(MemoryBoundModel, OptimizerBytesFollowThePrecisionInventory) {
  // ZeRO paper section 3: 16-bit training keeps fp32 master weights, m and v (12 bytes) and
  // the 16-bit weights and gradients.
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(Precision::kBf16, true), 16 + 14);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(Precision::kBf16, false), 14 + 14);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(Precision::kFp8, true), optimizer_bytes_per_param(Precision::kBf16, true));
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(Precision::kFp32), 28);
  EXPECT_GT(optimizer_bytes_per_param(Precision::kFp16), optimizer_bytes_per_param(Precision::kBf16));
  // The optimizer op at the achieved bandwidth: 1e9 bf16 params on H100.
  const GpuSpec h = gpu_preset("H100-SXM-80GB");
  ComputeOp adam;
  adam.kind = ComputeKind::kOptimizer;
  adam.role = OpRole::kOptimizer;
  adam.elements = 1e9;
  adam.bytes = 1e9 * optimizer_bytes_per_param(Precision::kBf16);
  EXPECT_NEAR(compute_op_time_s(h, adam), 30e9 / (3350e9 * 0.83), 1e-4);
  // DeepSeek-V3's bf16 moments: m and v read and written at 2 bytes each.
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(Precision::kBf16, true, 2), 30 - 8);
}

// PyTorch's fused AdamW over 2^28 fp32 parameters on one H200 (mem_h200_torch_adamw_fused):
// 28 bytes a parameter at the preset's optimizer ratio of the streaming rate.
TEST(MemoryBoundModel, TheFusedAdamWRunsAtItsMeasuredRate) {
  const GpuSpec h200 = gpu_preset("H200-SXM-141GB");
  const auto& r = test::record("mem_h200_torch_adamw_fused");
  const double params = r["config"]["params"].get<double>();
  ComputeOp adam;
  adam.kind = ComputeKind::kOptimizer;
  adam.role = OpRole::kOptimizer;
  adam.elements = params;
  adam.bytes = params * optimizer_bytes_per_param(Precision::kFp32);
  const double measured_s = r["measured"]["time_us"].get<double>() * 1e-6;
  EXPECT_NEAR(compute_op_time_s(h200, adam), measured_s, 0.02 * measured_s);
  // Below the streaming rate a plain copy reaches.
  EXPECT_GT(compute_op_time_s(h200, adam), 1.1 * memory_bound_time_s(h200, adam.bytes));
}

}  // namespace
}  // namespace trainsim
