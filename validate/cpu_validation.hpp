// `trainsim validate --backend cpu` (issue 6): predict the `train` job (kernels/gpt_model.hpp,
// kernels/trainer.hpp) on a cluster spec of this machine's ranks from a calibration file, and
// compare with the trainer's own log. Process launching lives in cli/validate_command.cpp;
// everything here is a pure function of the job, the calibration and the log.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim::validate {

// The train job, as `trainsim train` takes it (vocab 256 byte-level, fp32, AdamW, 1F1B).
struct CpuJob {
  int tp = 1, pp = 2, dp = 1;
  int layers = 4, hidden = 128, heads = 4, seq = 64, vocab = 256;
  int micro_batch = 2, micro_batches = 4;  // per data-parallel replica per step
  int steps = 8;
  int zero = 1;
  int ranks() const { return tp * pp * dp; }
  int global_batch() const { return micro_batch * micro_batches * dp; }
};

// "" when the job can run, else the offending option.
std::string check_cpu_job(const CpuJob& job);
// `calibrate --model-shape` value and `train` arguments of the job.
std::string model_shape_arg(const CpuJob& job);
std::vector<std::string> train_args(const CpuJob& job);

// The job as a Scenario: one node, gpus_per_node = ranks, the "GPU" = one rank's CPU share with the
// calibrated peak and memory bandwidth, in-node fabric = the measured MPI all-reduce; fp32, ZeRO-1,
// no DP/TP overlap (the trainer reduces after the last backward and its TP all-reduces block).
Scenario cpu_job_scenario(const CpuJob& job, const nlohmann::json& calibration);

struct CpuPrediction {
  double step_time_s = 0;
  double compute_s = 0;      // busiest stage, m micro-batches, forward + backward
  double tp_comm_s = 0;      // busiest stage's TP all-reduces per step
  double pp_comm_s = 0;      // least busy stage's pipeline send/recv/wait per step
  double dp_comm_s = 0;      // gradient reduce-scatter + parameter all-gather (ZeRO-1)
  double bubble_s = 0;       // step - busiest stage's busy time (schedule idle + transfers)
  double optimizer_s = 0;
  double peak_memory_bytes = 0;  // the trainer's buffers (trainer_peak_bytes)
  double estimate_step_time_s = 0;  // the estimate tier with the calibration applied (op rates too)
  double estimate_peak_memory_bytes = 0;
  std::vector<std::string> calibration_applied;
  std::vector<std::string> notes;
};

// Needs the calibration's "op_rates" at the job's shapes (ScenarioError otherwise).
CpuPrediction predict_cpu_job(const CpuJob& job, const nlohmann::json& calibration);

// The trainer's peak allocation on pipeline stage `stage` (the backend's peak_bytes): parameters,
// gradients, AdamW moments, and the activations and temporaries it allocates, played in its 1F1B
// order (trainer.cpp, gpt_model.cpp).
double trainer_peak_bytes(const CpuJob& job, int stage);

struct CpuMeasurement {
  int steps_used = 0;
  double step_time_s = 0, tp_comm_s = 0, pp_comm_s = 0, dp_comm_s = 0, bubble_s = 0, optimizer_s = 0;
  double peak_memory_bytes = 0;
  double step_time_spread = 0;  // (max - min) / median over the steps used
};

// Medians over the steps after warm-up (the first max(1, steps/4)) of a `train` JSON-lines log.
CpuMeasurement measure_from_train_log(const std::string& jsonl);

struct CpuMetricRow {
  std::string metric;
  double predicted = 0, measured = 0;
  double error = 0;  // (predicted - measured) / measured
};
std::vector<CpuMetricRow> compare_cpu(const CpuPrediction& p, const CpuMeasurement& m);

}  // namespace trainsim::validate
