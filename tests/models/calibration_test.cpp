#include "models/calibration.hpp"

#include <gtest/gtest.h>

#include "models/estimate.hpp"
#include "models/scenario_error.hpp"
#include "models/scenario_loader.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

TEST(Calibration, FitRecoversAKnownEfficiencyCurve) {
  // Samples of eff(w) = 0.8 w / (w + 256).
  std::vector<std::pair<double, double>> samples;
  for (double w : {64.0, 128.0, 256.0, 512.0, 1024.0, 4096.0}) samples.emplace_back(w, 0.8 * w / (w + 256));
  const GemmEfficiencyFit fit = fit_gemm_efficiency(samples);
  EXPECT_NEAR(fit.eff_max, 0.8, 0.02);
  EXPECT_NEAR(fit.half_width, 256, 40);
  EXPECT_LT(fit.max_relative_error, 0.03);
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
  EXPECT_EQ(applied.size(), 4u);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops_fp32, 8e10);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_bandwidth_bytes_per_s, 4.5e10);
  EXPECT_GT(s.cluster.gpu.gemm_efficiency_max, 0.85);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.bandwidth_bytes_per_s, 6e9);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.latency_s, 6e-6 / 6);
  // The estimate now runs at CPU speed: orders of magnitude slower than the A100 preset.
  EXPECT_GT(estimate(s).step_time_s, 100 * estimate(base()).step_time_s);
}

TEST(Calibration, BadFilesNameTheField) {
  Scenario s = base();
  json bad = calibration();
  bad["format"] = "other";
  EXPECT_THROW(apply_calibration(bad, s), ScenarioError);
  bad = calibration();
  bad["gemm"][1]["efficiency"] = -1;
  try {
    apply_calibration(bad, s);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration.gemm[1].efficiency"), std::string::npos) << e.what();
  }
  bad = calibration();
  bad["wrong"] = 3;
  EXPECT_THROW(apply_calibration(bad, s), ScenarioError);
}

}  // namespace
}  // namespace trainsim
