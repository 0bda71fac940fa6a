#include "validate/cpu_validation.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/cost/calibration.hpp"
#include "models/estimate/estimate.hpp"

#include "models/core/scenario_error.hpp"

namespace trainsim::validate {
namespace {

TEST(CpuValidation, TrainerPeakBytesMatchesTheTrainersOwnCount) {
  // `mpirun -np 2 trainsim train --pp 2 --layers 4 --hidden 128 --heads 4 --seq 64
  //  --micro-batch 2 --global-batch 8` logs peak_bytes 12223488 (max over its 2 ranks): the
  // backend counts every allocation, so the figure is exact, not timing.
  CpuJob j;
  EXPECT_DOUBLE_EQ(std::max(trainer_peak_bytes(j, 0), trainer_peak_bytes(j, 1)), 12223488.0);
}

TEST(CpuValidation, MeasurementTakesMediansAfterWarmUp) {
  std::string log = R"({"event":"config"})" "\n";
  const double times[] = {9.0, 1.0, 1.2, 1.1, 1.3, 1.0, 1.4, 1.1};
  for (int i = 0; i < 8; ++i)
    log += R"({"event":"step","step":)" + std::to_string(i) + R"(,"step_time_s":)" + std::to_string(times[i]) +
           R"(,"busy_time_s":0.8,"optimizer_time_s":0.1,"peak_bytes":1000,"comm_time_s":{"tp":0.1,"pp":0.2,"dp":0.05}})" "\n";
  const CpuMeasurement m = measure_from_train_log(log);
  EXPECT_EQ(m.steps_used, 6);  // the first 8/4 = 2 steps are warm-up
  EXPECT_NEAR(m.step_time_s, 1.15, 1e-9);
  EXPECT_NEAR(m.bubble_s, 0.35, 1e-9);
  EXPECT_NEAR(m.pp_comm_s, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(m.peak_memory_bytes, 1000);
  EXPECT_THROW(measure_from_train_log("{}\n"), ScenarioError);
}

TEST(CpuValidation, PredictionNeedsOpRatesAtTheJobsShape) {
  CpuJob j;
  nlohmann::json cal = {{"format", "trainsim-calibration"}, {"version", 1}, {"wrong", 0}};
  EXPECT_THROW(predict_cpu_job(j, cal), ScenarioError);
}

// A calibration measured on this machine by `trainsim validate --backend cpu --keep DIR` for the
// default job (2 ranks, pp 2, op_rates at its shapes).
nlohmann::json measured_calibration() {
  const auto path = std::filesystem::path(__FILE__).parent_path().parent_path() / "data" / "cpu" /
                    "calibration_2ranks_pp2.json";
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

TEST(CpuValidation, TheEstimateTierWithOpRatesAgreesWithTheJobsComposition) {
  // `run --calibration` (the estimate tier reading op_rates from the GPU spec) and validate's
  // own composition of the trainer's step (the trainer's exact op list, its 1F1B order and
  // ZeRO-1 collectives) are two routes to the same prediction: they agree within 3%.
  const CpuJob j;
  const nlohmann::json cal = measured_calibration();
  const CpuPrediction p = predict_cpu_job(j, cal);
  ASSERT_GT(p.step_time_s, 0);
  EXPECT_NEAR(p.estimate_step_time_s / p.step_time_s, 1.0, 0.03);
  // Without the op_rates section the same file leaves the GPU roofline in place, which on a CPU
  // misses the compute-bound elementwise ops and attention (the reason op_rates exist).
  nlohmann::json no_rates = cal;
  no_rates.erase("op_rates");
  Scenario sc = cpu_job_scenario(j, no_rates);
  apply_calibration(no_rates, sc);
  EXPECT_LT(estimate(sc).step_time_s, 0.6 * p.step_time_s);
}

TEST(CpuValidation, JobChecksAndArguments) {
  CpuJob j;
  EXPECT_EQ(check_cpu_job(j), "");
  j.tp = 3;
  EXPECT_NE(check_cpu_job(j).find("--tp 3"), std::string::npos);
  j.tp = 1;
  EXPECT_EQ(model_shape_arg(j), "layers=4,hidden=128,heads=4,seq=64,vocab=256,micro_batch=2,tp=1,pp=2,dp=1,zero=1");
  EXPECT_EQ(j.global_batch(), 8);
}

}  // namespace
}  // namespace trainsim::validate
