#include "validate/cpu_validation.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/core/scenario_error.hpp"

namespace trainsim::validate {
namespace {

TEST(CpuValidation, PredictionNeedsOpRatesAtTheJobsShape) {
  CpuJob j;
  nlohmann::json cal = {{"format", "trainsim-calibration"}, {"version", 1}, {"wrong", 0}};
  EXPECT_THROW(predict_cpu_job(j, cal), ScenarioError);
}

// A calibration measured on a 2-core machine by `trainsim validate --backend cpu --keep DIR` for
// the default job (2 ranks, pp 2, op_rates at its shapes).
nlohmann::json measured_calibration() {
  const auto path = std::filesystem::path(__FILE__).parent_path().parent_path() / "data" / "cpu" /
                    "calibration_2ranks_pp2.json";
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

double op_time(const nlohmann::json& cal, const std::string& op) {
  for (const nlohmann::json& o : cal["op_rates"]["ops"])
    if (o["op"] == op) return o["time_s"].get<double>();
  ADD_FAILURE() << op;
  return 0;
}

TEST(CpuValidation, ThePredictionPricesTheTrainersOpsAtTheCalibratedRates) {
  // The last stage of the default job runs 2 layers x 4 micro-batches; each layer calls GELU
  // forward and backward once per micro-batch on tokens x 4h elements (gpt_model.cpp), the shape
  // the calibration timed; likewise the causal attention forward and backward.
  const CpuJob j;
  const nlohmann::json cal = measured_calibration();
  const CpuPrediction p = predict_cpu_job(j, cal);
  ASSERT_EQ(p.critical_stage, 1);  // the LM head and the loss make the last stage the busiest
  const double calls = 2.0 * 4;
  EXPECT_NEAR(p.compute_class_s.at("gelu"), calls * (op_time(cal, "gelu_fwd") + op_time(cal, "gelu_bwd")),
              1e-3 * p.compute_class_s.at("gelu"));
  EXPECT_NEAR(p.compute_class_s.at("attention"),
              calls * (op_time(cal, "attention_fwd") + op_time(cal, "attention_bwd")),
              1e-3 * p.compute_class_s.at("attention"));
  // The trainer's Q, K and V GEMMs write the attention's layout, and its weight-gradient GEMMs
  // accumulate in place: no copies in the prediction (the timeline's "copy" class holds only the
  // trainer's small uploads).
  EXPECT_EQ(p.compute_class_s.count("copy"), 0u);
  // The layer ops per stage, for comparing the ranks' cores: both stages run two layers.
  ASSERT_EQ(p.layer_ops_s.size(), 2u);
  EXPECT_NEAR(p.layer_ops_s[0], p.layer_ops_s[1], 1e-9 * p.layer_ops_s[1]);
  EXPECT_NEAR(p.layer_ops_s[1], p.compute_class_s.at("gelu") + p.compute_class_s.at("attention"),
              1e-9 * p.layer_ops_s[1]);
  // Model states of the last stage, fp32 AdamW (16 bytes per parameter, ZeRO-1 over dp = 1
  // shards nothing): 2 layers of 12 h^2 + 4 h (no linear biases, two layernorms), the final
  // layernorm 2 h and the untied LM head vocab x h (gpt_model.hpp).
  const double h = j.hidden;
  const double params = 2 * (12 * h * h + 4 * h) + 2 * h + j.vocab * h;
  EXPECT_NEAR(p.model_state_bytes, 16 * params, 1e-3 * 16 * params);
  // No TP or DP group: no such time.
  EXPECT_EQ(p.component_s[int(Component::kTp)], 0);
  EXPECT_EQ(p.component_s[int(Component::kDp)], 0);
  EXPECT_GT(p.component_s[int(Component::kPipeline)], 0);
  EXPECT_GT(p.estimate.result.step_time_s, p.component_s[int(Component::kCompute)]);
}

TEST(CpuValidation, ACompressedReductionPaysItsKernelsAtTheCalibratedRates) {
  // DP 2 with int8 and error feedback (the trainer's default): each step compresses the
  // gradient and the reduced half (1.5 v values) and decompresses 3.5 v (compressed_all_reduce in
  // kernels/compressed_collectives.cpp), v = the model's parameters on one replica.
  CpuJob j;
  j.pp = 1;
  j.dp = 2;
  j.compression = "int8";
  nlohmann::json cal = measured_calibration();
  cal["op_rates"]["shape"]["pp"] = 1;
  cal["op_rates"]["shape"]["dp"] = 2;
  auto dp_s = [&](double compress_s, double decompress_s) {
    cal["op_rates"]["compression_seconds_per_element"] = {
        {"int8", {{"compress", compress_s}, {"decompress_add", decompress_s}}}};
    return predict_cpu_job(j, cal).component_s[int(Component::kDp)];
  };
  const double h = j.hidden;
  const double v = j.layers * (12 * h * h + 4 * h) + 2 * h + 2.0 * j.vocab * h + j.seq * h;
  const double base = dp_s(4e-9, 2e-9);
  EXPECT_NEAR(dp_s(8e-9, 4e-9) - base, 1.5 * v * 4e-9 + 3.5 * v * 2e-9, 0.02 * (1.5 * v * 4e-9 + 3.5 * v * 2e-9));
}

TEST(CpuValidation, JobChecksAndArguments) {
  CpuJob j;
  EXPECT_EQ(check_cpu_job(j), "");
  j.tp = 3;
  EXPECT_NE(check_cpu_job(j).find("--tp 3"), std::string::npos);
  j.tp = 1;
  j.schedule = "zb";
  EXPECT_NE(check_cpu_job(j).find("--schedule zb"), std::string::npos);
  j.schedule = "gpipe";
  j.steps = 19;  // a warm-up of up to half the steps could leave fewer than 10 measured
  EXPECT_NE(check_cpu_job(j).find("--steps"), std::string::npos);
  j.steps = 60;
  // 1F1B keeps min(m, pp) micro-batches' activations alive on the first stage, GPipe all m.
  EXPECT_NE(model_shape_arg(j).find(",in_flight=4"), std::string::npos) << model_shape_arg(j);
  CpuJob f = j;
  f.schedule = "1f1b";
  EXPECT_EQ(model_shape_arg(f),
            "layers=4,hidden=128,heads=4,seq=64,vocab=256,micro_batch=2,micro_batches=4,tp=1,pp=2,dp=1,zero=1,in_flight=2");
  EXPECT_EQ(j.global_batch(), 8);
  const std::vector<std::string> a = train_args(j, "cpu");
  EXPECT_NE(std::find(a.begin(), a.end(), "gpipe"), a.end());
}

// A run of `n` steps, 2 ranks on stages 0 and 1, every step `step_s` long with `compute_s` of
// compute on each rank; `share` of the core.
MeasuredRun flat_run(int n, double step_s, double compute_s, double share = 1.0) {
  MeasuredRun run;
  run.ranks = 2;
  for (int s = 0; s < n; ++s) {
    std::vector<RankStep> ranks;
    for (int r = 0; r < 2; ++r) {
      RankStep rs;
      rs.step = s;
      rs.rank = r;
      rs.pp_rank = r;
      rs.wall_s = step_s * (1 + 0.001 * (s % 3));
      rs.cpu_s = share * rs.wall_s;
      rs.component_s[int(Component::kCompute)] = compute_s;
      rs.component_s[int(Component::kPipeline)] = rs.wall_s - compute_s;
      ranks.push_back(rs);
    }
    run.steps.push_back(ranks);
  }
  return run;
}

CpuPrediction prediction(double step_s, double compute_s) {
  CpuPrediction p;
  p.estimate.result.step_time_s = step_s;
  p.critical_stage = 1;
  p.component_s[int(Component::kCompute)] = compute_s;
  p.component_s[int(Component::kPipeline)] = step_s - compute_s;
  return p;
}

TEST(CpuValidation, VerdictJudgesTheMeasurementBeforeThePrediction) {
  const CpuJob j;
  const Limits lim;
  const MeasuredRun run = flat_run(40, 0.100, 0.080);
  // 3% fast on the step, compute within 15%: pass.
  Comparison c = compare(j, prediction(0.097, 0.075), nullptr, run, lim, false);
  EXPECT_EQ(c.verdict, Verdict::kPass) << (c.reasons.empty() ? "" : c.reasons[0]);
  EXPECT_NEAR(c.rows[0].error(), 0.097 / c.rows[0].measured.median - 1, 1e-12);
  // 8% fast: fail.
  c = compare(j, prediction(0.092, 0.075), nullptr, run, lim, false);
  EXPECT_EQ(c.verdict, Verdict::kFail);
  // The pipeline component holds 20% of the step: judged at 15%.
  c = compare(j, prediction(0.097, 0.085), nullptr, run, lim, false);
  EXPECT_EQ(c.verdict, Verdict::kFail);
  // A second calibration 10% away: the machine changed, whatever the error.
  CpuPrediction after = prediction(0.097 * 1.10, 0.075);
  c = compare(j, prediction(0.097, 0.075), &after, run, lim, false);
  EXPECT_EQ(c.verdict, Verdict::kMachineChanged);
  EXPECT_NEAR(c.calibration_drift, 0.10, 1e-9);
  // Every rank lost 5% of its core: too noisy, not a pass.
  c = compare(j, prediction(0.097, 0.075), nullptr, flat_run(40, 0.100, 0.080, 0.95), lim, false);
  EXPECT_EQ(c.verdict, Verdict::kTooNoisy);
  // More ranks than cores: not judged.
  c = compare(j, prediction(0.097, 0.075), nullptr, run, lim, true);
  EXPECT_EQ(c.verdict, Verdict::kOversubscribed);
}

TEST(CpuValidation, RanksWhoseCoresRanAtDifferentSpeedsAreNotJudged) {
  const CpuJob j;
  MeasuredRun run = flat_run(40, 0.100, 0.080);
  // Both stages run the same two layers: 20 ms of attention and GELU predicted on each.
  CpuPrediction p = prediction(0.097, 0.075);
  p.layer_ops_s = {0.020, 0.020};
  auto layer_ops = [&](double rank0_s, double rank1_s) {
    for (auto& step : run.steps) {
      step[0].compute_class_s = {{"attention", 0.75 * rank0_s}, {"gelu", 0.25 * rank0_s}, {"embedding", 0.004}};
      step[1].compute_class_s = {{"attention", 0.75 * rank1_s}, {"gelu", 0.25 * rank1_s}, {"softmax_xent", 0.01}};
    }
  };
  // Both ranks 4% over the prediction (the model's error, not the cores'): judged, a pass.
  layer_ops(0.0208, 0.0208);
  Comparison c = compare(j, p, nullptr, run, Limits{}, false);
  EXPECT_EQ(c.verdict, Verdict::kPass) << (c.reasons.empty() ? "" : c.reasons[0]);
  ASSERT_EQ(c.rank_layer_speed.size(), 2u);
  EXPECT_NEAR(c.rank_layer_speed[0], 1.04, 1e-9);
  EXPECT_NEAR(c.rank_speed_spread, 0.0, 1e-9);
  // Rank 0's core 10% slower than rank 1's on the same ops: refused, whatever the step error.
  layer_ops(0.0220, 0.0200);
  c = compare(j, p, nullptr, run, Limits{}, false);
  EXPECT_EQ(c.verdict, Verdict::kMachineChanged);
  EXPECT_NEAR(c.rank_speed_spread, 0.10, 1e-9);
  ASSERT_FALSE(c.reasons.empty());
  EXPECT_NE(c.reasons[0].find("longer on rank 0 than on rank 1"), std::string::npos) << c.reasons[0];
  // An uneven split of the layers is in the prediction: 3 layers on stage 0, 1 on stage 1.
  p.layer_ops_s = {0.030, 0.010};
  layer_ops(0.0300, 0.0100);
  c = compare(j, p, nullptr, run, Limits{}, false);
  EXPECT_EQ(c.verdict, Verdict::kPass) << (c.reasons.empty() ? "" : c.reasons[0]);
}

TEST(CpuValidation, AWideIntervalIsTooNoisy) {
  const CpuJob j;
  MeasuredRun run = flat_run(40, 0.100, 0.080);
  // Alternate 0.1 and 0.13 s steps after a stable start: the median's 95% interval spans both.
  for (int s = 8; s < 40; s += 2)
    for (RankStep& r : run.steps[s]) r.wall_s = r.cpu_s = 0.13;
  const Comparison c = compare(j, prediction(0.1, 0.08), nullptr, run, Limits{}, false);
  EXPECT_EQ(c.verdict, Verdict::kTooNoisy);
}

}  // namespace
}  // namespace trainsim::validate
