// Kernel-level parameters from a calibration's microbenchmarks (fit_kernel_params): recovered
// from points generated with stated parameters, and reproducing the measurements of a real
// cpu-backend calibration file (tests/data/cpu, written by `trainsim calibrate --backend cpu`).
#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"
#include "models/cost/calibration.hpp"
#include "models/cost/compute/attention_model.hpp"
#include "models/cost/compute/memory_bound_model.hpp"
#include "models/estimate/estimate.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "tests/models/cost/compute/kernel_records.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

TEST(CalibrationKernelParams, RecoversStatedParametersFromGeneratedPoints) {
  // Copies: 3 us + bytes / 2 TB/s. Attention (causal, hd 128, 2 x 16 heads): share 0.40
  // forward, 0.30 backward, overhead 1.5 and 2.5 blocks, of a 800 TFLOP/s bf16 peak.
  // The device runs 16-bit no faster than fp32 (no 16-bit tensor cores), so the calibration's
  // fp32 attention kernel stands for the plan's.
  const double peak = 800e12, bw = 2e12, t0 = 3e-6;
  json cal = {{"peak_flop_per_s", {{"bf16", {{"flop_per_s", peak}}}, {"f32", {{"flop_per_s", peak}}}}},
              {"memory_bandwidth_bytes_per_s", bw}};
  json ops = json::array();
  for (double bytes : {4096.0, 64e6, 512e6, 2048e6})
    ops.push_back({{"op", "copy"}, {"shape", "n"}, {"bytes", bytes}, {"time_s", t0 + bytes / bw}});
  for (int s : {512, 1024, 2048, 4096}) {
    const double n = s / 128.0, flop = 2.0 * 2 * 16 * s * double(s) * 128;
    const std::string shape = "batch=2 seq=" + std::to_string(s) + " heads=16 head_dim=128";
    ops.push_back({{"op", "attention_fwd"}, {"shape", shape}, {"flop", flop},
                   {"time_s", flop / (peak * 0.40 * n / (n + 1 + 2 * 1.5))}});
    ops.push_back({{"op", "attention_bwd"}, {"shape", shape}, {"flop", 2.5 * flop},
                   {"time_s", 2.5 * flop / (peak * 0.30 * n / (n + 1 + 2 * 2.5))}});
  }
  cal["ops"] = ops;
  const GpuKernelParams k = fit_kernel_params(cal);
  EXPECT_NEAR(k.kernel_fixed_s, t0, 1e-9);
  EXPECT_DOUBLE_EQ(k.gemm_share_16bit, 1.0);
  EXPECT_DOUBLE_EQ(k.memory_bandwidth_share, 1.0);
  ASSERT_TRUE(k.flash2.present());
  EXPECT_NEAR(k.flash2.forward.share_by_head_dim.at(0).second, 0.40, 0.004);
  EXPECT_NEAR(k.flash2.forward.overhead_blocks, 1.5, 0.05);
  EXPECT_NEAR(k.flash2.backward.share_by_head_dim.at(0).second, 0.30, 0.003);
  EXPECT_NEAR(k.flash2.backward.overhead_blocks, 2.5, 0.05);
  EXPECT_EQ(k.flash3.forward.share_by_head_dim, k.flash2.forward.share_by_head_dim);
  // A GPU whose 16-bit tensor cores run 16x its fp32 rate: calibrate's fp32 attention kernel is
  // not the plan's FlashAttention, and the preset's tables stay.
  cal["peak_flop_per_s"]["f32"]["flop_per_s"] = peak / 16;
  const GpuKernelParams base = test::gpu_preset("H200-SXM-141GB").kernel;
  const GpuKernelParams gpu = fit_kernel_params(cal, base);
  EXPECT_EQ(gpu.flash2, base.flash2);
  EXPECT_EQ(gpu.flash3, base.flash3);
  EXPECT_NEAR(gpu.kernel_fixed_s, t0, 1e-9);  // the copies still set the fixed time
  // Without the 4 KiB copy the smallest takes 32 us at the fitted rate, ten times the 3 us
  // intercept: the sweep cannot show a fixed time, and the preset's stays.
  json large_only = cal;
  large_only["ops"].erase(large_only["ops"].begin());
  EXPECT_DOUBLE_EQ(fit_kernel_params(large_only, base).kernel_fixed_s, base.kernel_fixed_s);
}

TEST(CalibrationKernelParams, TheH200sOwnCalibrationPredictsItsMeasuredStep) {
  // trainsim calibrate --backend cuda on the H200 (data/measured/h200-2026-12-04), applied to the
  // GPT-125M eager PyTorch step measured on the same GPU (training_runs.json: 105.4 ms, median
  // of the timed steps). Its attention points time trainsim's own fp32 kernel (0.4 TFLOP/s):
  // priced as FlashAttention-2 they made this step 5.7 s. Its copies (134 MB and up) cannot show
  // a kernel's fixed time: the preset's stays.
  std::ifstream in(test::repo_root() / "data" / "measured" / "h200-2026-12-04" / "calibration-H200.json");
  const json cal = json::parse(in);
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  Scenario s = load_scenario_file((test::repo_root() / "tests" / "data" / "torch" / "h200_gpt125m.json").string(), o);
  const double preset_s = estimate(s).step_time_s;
  apply_calibration(cal, s);
  const double calibrated_s = estimate(s).step_time_s;
  EXPECT_NEAR(calibrated_s, 0.1054, 0.10 * 0.1054);
  EXPECT_NEAR(calibrated_s, preset_s, 0.10 * preset_s);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.kernel.kernel_fixed_s, test::gpu_preset("H200-SXM-141GB").kernel.kernel_fixed_s);
}

TEST(CalibrationKernelParams, ReproduceARealCpuCalibration) {
  std::ifstream in(test::repo_root() / "tests" / "data" / "cpu" / "calibration_2ranks_pp2.json");
  const json cal = json::parse(in);
  GpuSpec g;  // the calibrated machine: measured peaks and copy bandwidth
  g.peak_flops_fp32 = cal["peak_flop_per_s"]["f32"]["flop_per_s"];
  g.peak_flops_bf16 = g.peak_flops_fp16 = cal["peak_flop_per_s"]["bf16"]["flop_per_s"];
  g.hbm_bandwidth_bytes_per_s = cal["memory_bandwidth_bytes_per_s"];
  g.kernel = fit_kernel_params(cal);
  // The largest copy defines the bandwidth: the model gives its time back.
  EXPECT_DOUBLE_EQ(achieved_bandwidth_bytes_per_s(g), g.hbm_bandwidth_bytes_per_s);
  // A cache-resident small copy is faster than the large one, so no positive intercept: the
  // fixed kernel time stays the default rather than a negative fit.
  EXPECT_DOUBLE_EQ(g.kernel.kernel_fixed_s, 0.0);
  // The attention points come back from the fitted parameters.
  ASSERT_TRUE(g.kernel.flash2.present());
  for (const auto& op : cal["ops"]) {
    const std::string name = op["op"];
    if (name != "attention_fwd" && name != "attention_bwd") continue;
    AttentionShape a{1, 4, 4, 128, 128, 64, true, AttentionKernel::kFlash2};
    const Pass pass = name == "attention_fwd" ? Pass::kForward : Pass::kBackwardInput;
    EXPECT_NEAR(attention_time_s(g, a, pass, op["flop"]), op["time_s"].get<double>(), 0.01 * op["time_s"].get<double>()) << name;
  }
}

TEST(CalibrationKernelParams, AKernelsBlockIsReadOnTopOfThePreset) {
  const GpuSpec h100 = test::gpu_preset("H100-SXM-80GB");
  const json cal = {{"kernels", {{"memory", {{"bandwidth_share", 0.9}}}, {"launch", {{"kernel", "1.5us"}}}}}};
  const GpuKernelParams k = fit_kernel_params(cal, h100.kernel);
  EXPECT_DOUBLE_EQ(k.memory_bandwidth_share, 0.9);
  EXPECT_DOUBLE_EQ(k.kernel_fixed_s, 1.5e-6);
  EXPECT_EQ(k.sm_count, 132);
  EXPECT_EQ(k.gemm_tiles, h100.kernel.gemm_tiles);
}

// A profiler trace's FlashAttention calls name their kernel ("kernel": "flash2"): on a GPU they
// are the kernel the plan runs, and they set its parameters. Here the calls are FlashAttention-2's
// own H100 forward table (head dim 64, causal, 512-16k tokens: attn_h100_fa2_fwd_hd64_causal_*).
json fa2_h100_forward_points(const std::vector<int>& lengths) {
  json ops = json::array();
  for (const json* r : test::records_with_prefix("attn_h100_fa2_fwd_hd64_causal_s")) {
    const json& c = (*r)["config"];
    const int s = c["seqlen"].get<int>();
    if (std::find(lengths.begin(), lengths.end(), s) == lengths.end()) continue;
    const double b = c["batch"].get<double>(), h = c["nheads"].get<double>();
    const double flop = 4 * b * h * s * double(s) * 64 / 2;  // FlashAttention's count, causal halved
    ops.push_back({{"op", "attention_fwd"}, {"kernel", "flash2"}, {"causal", true}, {"flop", flop},
                   {"shape", "batch=" + std::to_string(int(b)) + " seq=" + std::to_string(s) + " heads=" +
                                 std::to_string(int(h)) + " head_dim=64"},
                   {"time_s", flop / ((*r)["measured"]["tflops"].get<double>() * 1e12)}});
  }
  return ops;
}

TEST(CalibrationKernelParams, ANamedFlashAttentionsCallsSetItsParametersOnAGpu) {
  const GpuSpec h100 = test::gpu_preset("H100-SXM-80GB");
  const double peak = h100.peak_flops_bf16;
  json cal = {{"peak_flop_per_s", {{"bf16", {{"flop_per_s", peak}}}}}};
  cal["ops"] = fa2_h100_forward_points({512, 1024, 2048, 4096, 8192, 16384});
  ASSERT_EQ(cal["ops"].size(), 6u);
  // A GPU with no FlashAttention-2 tables: the six lengths set the share and the per-CTA
  // overhead, and the model then reproduces the table (within 1% at every length).
  GpuKernelParams bare = h100.kernel;
  bare.flash2 = {};
  GpuSpec g = h100;
  g.kernel = fit_kernel_params(cal, bare);
  ASSERT_TRUE(g.kernel.flash2.present());
  EXPECT_GT(g.kernel.flash2.forward.overhead_blocks, 0.0);
  for (const json& op : cal["ops"]) {
    AttentionShape a;
    const std::string shape = op["shape"];
    a.batch = std::stod(shape.substr(shape.find("batch=") + 6));
    a.seq_q = a.seq_kv = std::stod(shape.substr(shape.find("seq=") + 4));
    a.heads = a.kv_heads = std::stod(shape.substr(shape.find("heads=") + 6));
    a.head_dim = 64;
    const double predicted = attention_time_s(g, a, Pass::kForward, op["flop"].get<double>());
    EXPECT_NEAR(predicted, op["time_s"].get<double>(), 0.02 * op["time_s"].get<double>()) << shape;
  }
  // The backward pass was not timed: it takes the forward's parameters (no preset to keep).
  EXPECT_EQ(g.kernel.flash2.backward, g.kernel.flash2.forward);

  // One length on top of the preset's tables: a per-CTA cost and the share cannot be told apart
  // there, so the preset's overhead and causal factor stay and the share moves to the timed
  // rate; the shares of other head dims keep their ratio to it, the backward pass its tables.
  json one = {{"peak_flop_per_s", cal["peak_flop_per_s"]}, {"ops", fa2_h100_forward_points({2048})}};
  GpuSpec p = h100;
  p.kernel = fit_kernel_params(one, h100.kernel);
  const AttentionPassParams& before = h100.kernel.flash2.forward;
  const AttentionPassParams& after = p.kernel.flash2.forward;
  EXPECT_DOUBLE_EQ(after.overhead_blocks, before.overhead_blocks);
  EXPECT_DOUBLE_EQ(after.causal_factor, before.causal_factor);
  EXPECT_EQ(p.kernel.flash2.backward, h100.kernel.flash2.backward);
  EXPECT_EQ(p.kernel.flash3, h100.kernel.flash3);
  const json& timed = one["ops"][0];
  AttentionShape a;
  a.batch = 8, a.heads = a.kv_heads = 32, a.seq_q = a.seq_kv = 2048, a.head_dim = 64;
  EXPECT_NEAR(attention_time_s(p, a, Pass::kForward, timed["flop"].get<double>()), timed["time_s"].get<double>(),
              1e-3 * timed["time_s"].get<double>());
  ASSERT_EQ(after.share_by_head_dim.size(), before.share_by_head_dim.size());
  const double ratio = after.share_by_head_dim[0].second / before.share_by_head_dim[0].second;
  for (std::size_t i = 0; i < before.share_by_head_dim.size(); ++i)
    EXPECT_NEAR(after.share_by_head_dim[i].second, std::min(1.0, before.share_by_head_dim[i].second * ratio), 1e-9);

  // A kernel that is not a FlashAttention generation, or a causal flag that is not a boolean,
  // names the field.
  json bad = one;
  bad["ops"][0]["kernel"] = "flash9";
  try {
    fit_kernel_params(bad, h100.kernel);
    ADD_FAILURE() << "an unknown kernel was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "calibration.ops[0].kernel");
  }
  bad = one;
  bad["ops"][0]["causal"] = "yes";
  EXPECT_THROW(fit_kernel_params(bad, h100.kernel), ScenarioError);
}

}  // namespace
}  // namespace trainsim
