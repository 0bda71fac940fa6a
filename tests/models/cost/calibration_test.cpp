#include "models/cost/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "models/estimate/estimate.hpp"
#include "models/cost/flops.hpp"
#include "models/cost/compute/gemm_model.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

GpuSpec preset_gpu(const char* name) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json j = {{"schema_version", 1}, {"model", "gpt-1.7b"},
            {"cluster", {{"base", "dgx-h100-superpod"}, {"nodes", 1}, {"gpu", {{"base", name}}}}},
            {"plan", {{"dp", 8}, {"global_batch", 64}}}};
  return parse_scenario(resolve_scenario_json(j, o)).cluster.gpu;
}

TEST(Calibration, TheGemmShareFitRecoversTheShareTheRowsWereTimedAt) {
  // Rows timed by the kernel model itself at a share of 0.70 (the preset's is 0.803), over
  // shapes where tiles, waves, the HBM roofline and the fixed kernel time all matter: the fit
  // starts from another share and must land on 0.70 exactly.
  GpuSpec timed = preset_gpu("H100-SXM-80GB");
  ASSERT_GT(timed.kernel.gemm_share_16bit, 0.75);
  timed.kernel.gemm_share_16bit = 0.70;
  std::vector<GemmSample> rows;
  for (const GemmShape& g : {GemmShape{8192, 8192, 8192, 1}, GemmShape{4096, 1536, 1536, 1}, GemmShape{128, 4096, 4096, 1},
                             GemmShape{16384, 1024, 4096, 1}, GemmShape{64, 7168, 2048, 8}, GemmShape{2048, 50304, 2048, 1}})
    rows.push_back({g, Precision::kBf16, gemm_efficiency_from_shape(timed, g, Precision::kBf16)});
  // An fp8 row prices through another share: left out.
  rows.push_back({GemmShape{8192, 8192, 8192, 1}, Precision::kFp8, 0.3});
  const GemmShareFit fit = fit_gemm_share(preset_gpu("H100-SXM-80GB"), rows);
  EXPECT_EQ(fit.samples, 6);
  EXPECT_NEAR(fit.share, 0.70, 1e-6);
  EXPECT_LT(fit.max_relative_error, 1e-6);
  // The small-M row is bound by HBM, not by the share: its efficiency is far below 0.70.
  EXPECT_LT(rows[2].efficiency, 0.5);
}

Scenario base() {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json j = {{"schema_version", 1}, {"model", "gpt-1.7b"},
            {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 1}}},
            {"plan", {{"dp", 8}, {"global_batch", 64}, {"precision", "fp32"}}}};
  return parse_scenario(resolve_scenario_json(j, o));
}

json calibration() {
  return json::parse(R"({
    "format": "trainsim-calibration", "version": 1, "backend": "cpu", "wrong": 0,
    "peak_flop_per_s": {"f32": {"flop_per_s": 8e10}},
    "memory_bandwidth_bytes_per_s": 4.5e10,
    "gemm": [{"dtype": "f32", "m": 256, "n": 64, "k": 64, "efficiency": 0.5},
             {"dtype": "f32", "m": 256, "n": 256, "k": 256, "efficiency": 0.8},
             {"dtype": "f32", "m": 256, "n": 1024, "k": 1024, "efficiency": 0.94}],
    "collectives": [{"op": "all_reduce", "algorithm": "mpi", "fabric": "intra_node", "ranks": 4,
                     "alpha_s": 6e-6, "bus_bandwidth_bytes_per_s": 3e9}]})");
}

TEST(Calibration, MeasuredFiguresReplaceThePresets) {
  Scenario s = base();
  const auto applied = apply_calibration(calibration(), s);
  EXPECT_EQ(applied.size(), 5u);  // peak, bandwidth, GEMM share, in-node fabric, kernel-level parameters
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops_fp32, 8e10);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_bandwidth_bytes_per_s, 4.5e10);
  // The fp32 share is fitted to the three rows (efficiencies against the measured peak). The
  // preset's A100 tile grid leaves 108 SMs nearly idle on these small CPU shapes, so the best
  // share would exceed the measured peak: it stops there, and the applied line says so.
  std::string gemm_line;
  for (const std::string& a : applied)
    if (a.find("GEMM sustained share (fp32)") != std::string::npos) gemm_line = a;
  EXPECT_NE(gemm_line.find("capped at the peak"), std::string::npos) << gemm_line;
  EXPECT_DOUBLE_EQ(s.cluster.gpu.kernel.gemm_share_fp32, 1.0);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.bandwidth_bytes_per_s, 6e9);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.latency_s, 6e-6 / 6);
  // The estimate now runs at CPU speed: orders of magnitude slower than the A100 preset.
  EXPECT_GT(estimate(s).step_time_s, 100 * estimate(base()).step_time_s);
}

TEST(Calibration, AShareThePeaksSetButNoRowFitsIsStillListed) {
  // The file measures both peaks but times fp32 GEMMs only: the fp32 share is fitted to the rows
  // and listed with its fit; the 16-bit share becomes 1 (the measured peak is the best rate) and
  // must be listed too, among the kernel-level parameters.
  GpuSpec g = preset_gpu("H100-SXM-80GB");
  ASSERT_LT(g.kernel.gemm_share_16bit, 1.0);
  GpuSpec timed = g;
  timed.peak_flops_fp32 = 6e13;
  timed.kernel.gemm_share_fp32 = 0.6;
  json rows = json::array();
  for (const GemmShape& shape : {GemmShape{8192, 8192, 8192, 1}, GemmShape{4096, 4096, 4096, 1}})
    rows.push_back({{"dtype", "f32"}, {"m", shape.m}, {"n", shape.n}, {"k", shape.k},
                    {"efficiency", gemm_efficiency_from_shape(timed, shape, Precision::kFp32)}});
  const json cal = {{"format", "trainsim-calibration"},
                    {"version", 1},
                    {"peak_flop_per_s", {{"bf16", {{"flop_per_s", 9e14}}}, {"f32", {{"flop_per_s", 6e13}}}}},
                    {"gemm", rows}};
  std::vector<GemmFamilyFit> fits;
  const auto applied = calibrate_gpu(cal, g, &fits);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].family, Precision::kFp32);
  EXPECT_NEAR(fits[0].fit.share, 0.6, 1e-6);
  EXPECT_NEAR(g.kernel.gemm_share_fp32, 0.6, 1e-6);
  EXPECT_DOUBLE_EQ(g.kernel.gemm_share_16bit, 1.0);
  std::string kernel_line;
  for (const std::string& a : applied)
    if (a.rfind("kernel-level parameters:", 0) == 0) kernel_line = a;
  EXPECT_NE(kernel_line.find("GEMM sustained share (16-bit)"), std::string::npos) << kernel_line;
  EXPECT_EQ(kernel_line.find("(fp32)"), std::string::npos) << kernel_line;
}

TEST(Calibration, BadFilesNameTheField) {
  Scenario s = base();
  auto error_of = [&](const json& file) {
    try {
      apply_calibration(file, s);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json bad = calibration();
  bad["format"] = "other";
  EXPECT_NE(error_of(bad).find("calibration.format"), std::string::npos) << error_of(bad);
  bad = calibration();
  bad["gemm"][1]["efficiency"] = -1;
  EXPECT_NE(error_of(bad).find("calibration.gemm[1].efficiency"), std::string::npos) << error_of(bad);
  bad = calibration();
  bad["training_tensor_share"] = 1.5;
  EXPECT_NE(error_of(bad).find("calibration.training_tensor_share"), std::string::npos) << error_of(bad);
  bad = calibration();
  bad["wrong"] = 3;
  EXPECT_NE(error_of(bad).find("calibration.wrong"), std::string::npos) << error_of(bad);
  // A kernel timing of the wrong type is named, not a JSON library error (which the CLI reports
  // as an internal error, exit 1).
  bad = calibration();
  bad["ops"] = json::parse(R"([{"op": "copy", "bytes": 1e6, "time_s": 1e-5},
                               {"op": "copy", "bytes": 2e6, "time_s": "fast"}])");
  EXPECT_NE(error_of(bad).find("calibration.ops[1].time_s"), std::string::npos) << error_of(bad);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

json with_op_rates() {
  json c = json::parse(R"({"format": "trainsim-calibration", "version": 1, "wrong": 0})");
  c["op_rates"] = json::parse(R"({
    "shape": {"layers": 4, "hidden": 128, "heads": 4, "seq": 64, "vocab": 256, "micro_batch": 2,
              "tp": 1, "pp": 2, "dp": 1, "zero": 1},
    "peak_f32_flop_per_s": 1e11,
    "gemm_efficiency": {"forward": 0.5, "backward_input": 0.4, "backward_weight": 0.8, "lm_head": 0.25},
    "attention_efficiency": {"forward": 0.25, "backward": 0.125},
    "seconds_per_element": {"layernorm_fwd": 2e-9, "layernorm_bwd": 3e-9, "gelu_fwd": 20e-9, "gelu_bwd": 30e-9,
                            "residual_add": 1e-9, "softmax_xent": 10e-9, "embedding_fwd": 1e-9,
                            "embedding_bwd": 2e-9, "copy": 0.1e-9, "fill_zero": 0.05e-9},
    "adamw_seconds_per_param": 5e-9})");
  return c;
}

RankLayerShape job_shape() {
  RankLayerShape s;
  s.micro_batch = 2;
  s.seq = 64;
  s.hidden = 128;
  s.heads = 4;
  s.vocab = 256;
  s.tp = 1;
  return s;
}

TEST(CalibrationOpRates, AbsentMeansNoRates) {
  EXPECT_FALSE(read_op_rates(calibration()).present());
}

TEST(CalibrationOpRates, ReadsTheSectionAndItsShape) {
  OpRatesShape shape;
  const OpRates r = read_op_rates(with_op_rates(), &shape);
  ASSERT_TRUE(r.present());
  EXPECT_DOUBLE_EQ(r.gemm_backward_weight_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(r.gelu_bwd_s_per_element, 30e-9);
  EXPECT_DOUBLE_EQ(r.adamw_s_per_param, 5e-9);
  EXPECT_EQ(shape.hidden, 128);
  EXPECT_EQ(shape.pp, 2);
  // A version-1 file with op_rates still applies as before (the section is additive).
  Scenario s = base();
  EXPECT_NO_THROW(apply_calibration(with_op_rates(), s));
}

TEST(CalibrationOpRates, TheOpsSpreadIsOptionalAndChecked) {
  EXPECT_EQ(read_op_rates(with_op_rates()).op_time_cv, 0.0);  // older files: no wait modelled
  json c = with_op_rates();
  c["op_rates"]["op_time_cv"] = 0.07;
  EXPECT_DOUBLE_EQ(read_op_rates(c).op_time_cv, 0.07);
  // What `trainsim calibrate` writes when it measured no spread at all reads back.
  c["op_rates"]["op_time_cv"] = 0.0;
  EXPECT_EQ(read_op_rates(c).op_time_cv, 0.0);
  c["op_rates"]["op_time_cv"] = 3;
  try {
    read_op_rates(c);
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("op_rates.op_time_cv"), std::string::npos) << e.what();
  }
}

TEST(CalibrationOpRates, CompressionKernelRatesAreOptionalAndChecked) {
  EXPECT_TRUE(read_op_rates(with_op_rates()).compression.empty());
  json c = with_op_rates();
  c["op_rates"]["compression_seconds_per_element"] =
      json::parse(R"({"int8": {"compress": 4e-9, "decompress_add": 2e-9}, "2:4": {"compress": 1e-9, "decompress_add": 3e-9}})");
  const OpRates r = read_op_rates(c);
  ASSERT_NE(r.compression_rates("int8"), nullptr);
  EXPECT_DOUBLE_EQ(r.compression_rates("int8")->compress_s_per_element, 4e-9);
  EXPECT_DOUBLE_EQ(r.compression_rates("2:4")->decompress_add_s_per_element, 3e-9);
  EXPECT_EQ(r.compression_rates("int4"), nullptr);
  c["op_rates"]["compression_seconds_per_element"]["int9"] = json::parse(R"({"compress": 1e-9, "decompress_add": 1e-9})");
  try {
    read_op_rates(c);
    FAIL() << "expected ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration.op_rates.compression_seconds_per_element.int9"), std::string::npos);
  }
}

TEST(CalibrationOpRates, MalformedRatesNameTheField) {
  json bad = with_op_rates();
  bad["op_rates"]["seconds_per_element"]["gelu_fwd"] = -1;
  try {
    read_op_rates(bad);
    FAIL() << "expected ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration.op_rates.seconds_per_element.gelu_fwd"), std::string::npos);
  }
  bad = with_op_rates();
  bad["op_rates"].erase("gemm_efficiency");
  EXPECT_THROW(read_op_rates(bad), ScenarioError);
}

TEST(CalibrationOpRates, LayerTimesAreTheClosedFormSumOfOps) {
  const OpRates r = read_op_rates(with_op_rates());
  const RankLayerShape s = job_shape();
  const double T = 128, h = 128, fl = 512;
  const double gemm_flop = 2 * T * h * (4 * h + 2 * fl);  // 50,331,648
  const double attn_flop = 2 * 2 * 4 * 64.0 * 64 * 32;    // 2 b a s^2 d = 2,097,152
  const LayerComputeTimes t = layer_times_from_op_rates(r, s);
  const double fwd = gemm_flop / (1e11 * 0.5) + attn_flop / (1e11 * 0.25) + 2 * T * h * (2e-9 + 1e-9) + T * fl * 20e-9;
  EXPECT_NEAR(t.forward_s, fwd, 1e-15);
  EXPECT_NEAR(t.forward_s, 2.49954304e-3, 1e-12);
  const double bwd_w = gemm_flop / (1e11 * 0.8);
  EXPECT_NEAR(t.backward_weight_s, bwd_w, 1e-15);
  EXPECT_NEAR(t.backward_s,
              gemm_flop / (1e11 * 0.4) + bwd_w + 2.5 * attn_flop / (1e11 * 0.125) + 2 * T * h * (3e-9 + 1e-9) +
                  T * fl * 30e-9,
              1e-15);
  EXPECT_NEAR(t.attention_forward_s, attn_flop / (1e11 * 0.25), 1e-15);
  // Tensor parallelism halves the per-rank GEMMs, attention heads and GELU, not the LayerNorms.
  RankLayerShape s2 = s;
  s2.tp = 2;
  const LayerComputeTimes t2 = layer_times_from_op_rates(r, s2);
  EXPECT_NEAR(t2.forward_s, (fwd - 2 * T * h * 3e-9) / 2 + 2 * T * h * 3e-9, 1e-12);
  // Pipeline ends and the optimizer.
  EXPECT_NEAR(embedding_time_from_op_rates(r, s, false), T * h * 1e-9, 1e-18);
  EXPECT_NEAR(embedding_time_from_op_rates(r, s, true), T * h * 2e-9, 1e-18);
  EXPECT_NEAR(lm_head_time_from_op_rates(r, s),
              T * h * 5e-9 + 6 * T * h * 256 / (1e11 * 0.25) + T * 256 * 10e-9, 1e-15);
  EXPECT_NEAR(optimizer_time_from_op_rates(r, 1e6, 2e6), 1e6 * 5e-9 + 2e6 * 0.05e-9, 1e-15);
  // Without rates the functions give nothing (callers keep the roofline).
  EXPECT_EQ(layer_times_from_op_rates(OpRates{}, s).forward_s, 0);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// base() on op rates with every efficiency 1 at a 1e12 peak and every per-element /
// per-parameter rate 0, without the ops op rates have no slot for (bias gradients, relayout
// copies: they keep the roofline).
Scenario unit_op_rates_scenario() {
  Scenario s = base();
  s.model.linear_bias = false;
  s.plan.attention_relayout = false;
  OpRates& r = s.cluster.gpu.op_rates;
  r.peak_flop_per_s = 1e12;
  r.gemm_forward_efficiency = r.gemm_backward_input_efficiency = r.gemm_backward_weight_efficiency = 1;
  r.lm_head_gemm_efficiency = r.attention_forward_efficiency = r.attention_backward_efficiency = 1;
  return s;
}

TEST(CalibrationOpRates, TheEstimateTierUsesThemOpByOp) {
  // The step's compute is then FLOPs / peak in the calibration's conventions, a closed form to
  // check the wiring against: GEMMs 3 x forward (forward, input grad, weight grad); causal
  // attention half the forward score FLOPs, 1 + 2.5 x that; the LM head 3 GEMMs of 2 T h V.
  const Scenario s = unit_op_rates_scenario();
  const OpRates& r = s.cluster.gpu.op_rates;
  const Result res = estimate(s);
  ASSERT_TRUE(res.feasible) << res.reason;
  const ModelSpec& m = s.model;
  const double T = static_cast<double>(s.plan.micro_batch) * m.seq_len;
  const LayerFlops lf = layer_forward_flops_per_token(m, false);
  const double per_mb = m.layers * T * (3 * lf.gemm + 3.5 * lf.attention / 2) / r.peak_flop_per_s +
                        3 * 2 * T * m.hidden * m.vocab / r.peak_flop_per_s;
  EXPECT_NEAR(res.breakdown.compute_s / (res.micro_batches * per_mb), 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(res.breakdown.optimizer_s, 0);

  // Read from a file, through apply_calibration.
  Scenario f = base();
  json cal = calibration();
  cal["op_rates"] = {{"peak_f32_flop_per_s", 1e12},
                     {"gemm_efficiency", {{"forward", 1}, {"backward_input", 1}, {"backward_weight", 1}, {"lm_head", 1}}},
                     {"attention_efficiency", {{"forward", 1}, {"backward", 1}}},
                     {"seconds_per_element", json::object()},
                     {"adamw_seconds_per_param", 1e-12},
                     {"shape", {{"layers", 24}, {"hidden", 2304}, {"heads", 24}, {"seq", 2048}, {"vocab", 51200},
                                {"micro_batch", 1}, {"tp", 1}, {"pp", 1}, {"dp", 8}, {"zero", 0}}}};
  for (const char* k : {"layernorm_fwd", "layernorm_bwd", "gelu_fwd", "gelu_bwd", "residual_add", "softmax_xent",
                        "embedding_fwd", "embedding_bwd", "copy", "fill_zero"})
    cal["op_rates"]["seconds_per_element"][k] = 1e-12;
  const auto applied = apply_calibration(cal, f);
  ASSERT_TRUE(f.cluster.gpu.op_rates.present());
  bool noted = false;
  for (const auto& a : applied) noted = noted || a.find("per-op rates") != std::string::npos;
  EXPECT_TRUE(noted);
}

// Unfused cross-entropy on 16-bit logits casts them to fp32 and the gradient back, one copy each
// way (PyTorch runs log_softmax and nll_loss in float32; Megatron's vocab-parallel loss casts
// too): with op rates each cast runs at the measured copy rate per logit, beside the loss slot's
// fp32 kernels. Raising the copy rate alone adds 2 x T x V x rate a micro-batch.
TEST(CalibrationOpRates, TheLossCastsRunAtTheCopyRate) {
  Scenario s = unit_op_rates_scenario();
  s.plan.precision = Precision::kBf16;
  const Result without = estimate(s);
  s.cluster.gpu.op_rates.copy_s_per_element = 1e-12;
  const Result with = estimate(s);
  ASSERT_TRUE(without.feasible && with.feasible) << with.reason;
  const double T = static_cast<double>(s.plan.micro_batch) * s.model.seq_len;
  const double casts = 2 * T * s.model.vocab * 1e-12;
  EXPECT_NEAR((with.breakdown.compute_s - without.breakdown.compute_s) / with.micro_batches, casts, 1e-9 * casts);
  // fp32 logits need no cast.
  s.plan.precision = Precision::kFp32;
  const Result fp32 = estimate(s);
  s.cluster.gpu.op_rates.copy_s_per_element = 0;
  EXPECT_DOUBLE_EQ(estimate(s).breakdown.compute_s, fp32.breakdown.compute_s);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// What a communicator measured prices its own collectives: at a measured size exactly the
// measured time, between two sizes the power law through them, on groups of the measured size
// inside a node only.
TEST(CalibrationCollectives, MeasuredCurvesPriceTheOpsTheyMeasured) {
  Scenario s = base();
  json cal = calibration();
  cal["collectives"][0]["samples"] = json::parse(R"([{"bytes": 8, "time_s": 1e-6}, {"bytes": 32768, "time_s": 1e-5},
                                                      {"bytes": 524288, "time_s": 8e-5}])");
  cal["collectives"].push_back(json::parse(R"({"op": "all_reduce", "algorithm": "ring", "fabric": "intra_node",
      "ranks": 4, "samples": [{"bytes": 8, "time_s": 1.0}]})"));
  cal["collectives"].push_back(json::parse(R"({"op": "all_gather", "algorithm": "mpi", "fabric": "intra_node",
      "ranks": 4, "samples": [{"bytes": 1024, "time_s": 2e-6}, {"bytes": 4096, "time_s": 5e-6}]})"));
  apply_calibration(cal, s);
  ASSERT_EQ(s.cluster.measured_collectives.size(), 2u);  // the communicator's own all-reduce, not the ring
  const FabricTerms f = fabric_terms(s.cluster);
  const GroupShape in_node{4, 1, 4, 0};
  const CollectiveCost at = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 32768, in_node, f);
  EXPECT_TRUE(at.measured);
  EXPECT_DOUBLE_EQ(at.time_s, 1e-5);
  EXPECT_DOUBLE_EQ(at.latency_s, 1e-6);  // the smallest message's time is the per-call floor
  // 131072 B is half-way between 32 KiB and 512 KiB in log2: the geometric mean of their times.
  EXPECT_NEAR(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 131072, in_node, f).time_s,
              std::sqrt(1e-5 * 8e-5), 1e-12);
  // Beyond the last size, the last segment's seconds per byte.
  EXPECT_NEAR(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 1048576, in_node, f).time_s,
              8e-5 + (8e-5 - 1e-5) / (524288 - 32768) * 524288, 1e-12);
  EXPECT_DOUBLE_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 1, in_node, f).time_s, 1e-6);
  EXPECT_DOUBLE_EQ(collective_cost(CollectiveOp::kAllGather, CollectiveAlgo::kAuto, 4096, in_node, f).time_s, 5e-6);
  // Not measured: another group size, a group across nodes, another op.
  EXPECT_FALSE(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 32768, GroupShape{2, 1, 2, 0}, f).measured);
  EXPECT_FALSE(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 32768, GroupShape{4, 2, 2, 0}, f).measured);
  EXPECT_FALSE(collective_cost(CollectiveOp::kReduceScatter, CollectiveAlgo::kAuto, 32768, in_node, f).measured);
}

TEST(CalibrationCollectives, ShardedDataParallelPaysTheReduceScatterAndTheAllGatherItIssues) {
  // ZeRO-0 all-reduces the gradients; ZeRO-1/2 reduce-scatter them and all-gather the updated
  // parameters (ZeRO paper sec. 5). With measured curves proportional to the bytes (AR 1e-10,
  // RS 3e-10, AG 0.5e-10 s/B, as Open MPI's shared-memory reduce-scatter is slower than its
  // all-reduce), ZeRO-1's reduction costs (3 + 0.5) / 1 of ZeRO-0's at the same gradient bytes.
  json cal = calibration();
  auto samples = [](double s_per_byte) {
    return json::array({{{"bytes", 1e6}, {"time_s", 1e6 * s_per_byte}}, {{"bytes", 2e6}, {"time_s", 2e6 * s_per_byte}}});
  };
  cal["collectives"][0]["ranks"] = 8;
  cal["collectives"][0]["samples"] = samples(1e-10);
  for (const auto& [op, s_per_byte] : {std::pair<const char*, double>{"reduce_scatter", 3e-10}, {"all_gather", 0.5e-10}})
    cal["collectives"].push_back(
        {{"op", op}, {"algorithm", "mpi"}, {"fabric", "intra_node"}, {"ranks", 8}, {"samples", samples(s_per_byte)}});
  auto dp_reduce_s = [&](int zero_stage) {
    Scenario s = base();
    s.plan.zero_stage = zero_stage;
    apply_calibration(cal, s);
    Workload w;
    Result r;
    EXPECT_TRUE(build_workload(s, w, r)) << r.reason;
    EXPECT_EQ(w.dp_sharded, zero_stage >= 1);
    return w.stages.front().dp_reduce_s;
  };
  const double z0 = dp_reduce_s(0), z1 = dp_reduce_s(1), z2 = dp_reduce_s(2);
  ASSERT_GT(z0, 0);
  EXPECT_NEAR(z1 / z0, 3.5, 1e-6);
  EXPECT_NEAR(z2 / z0, 3.5, 1e-6);
}

TEST(CalibrationCollectives, SamplesOutOfOrderNameTheField) {
  Scenario s = base();
  json cal = calibration();
  cal["collectives"][0]["samples"] = json::parse(R"([{"bytes": 64, "time_s": 1e-6}, {"bytes": 8, "time_s": 1e-6}])");
  try {
    apply_calibration(cal, s);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration.collectives[0].samples[1].bytes"), std::string::npos) << e.what();
  }
  cal["collectives"][0]["samples"] = json::parse(R"([{"bytes": 64, "time_s": -1}])");
  EXPECT_THROW(apply_calibration(cal, s), ScenarioError);
}

}  // namespace
}  // namespace trainsim
