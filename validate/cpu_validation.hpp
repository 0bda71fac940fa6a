// `trainsim validate --backend cpu|cuda`: the `train` job (kernels/gpt_model.hpp,
// kernels/trainer.hpp) described as a Scenario on a "cluster" of this machine's ranks built from
// a calibration file, predicted by the estimate tier (estimate_step: the same op graph and cost
// models as `trainsim run`), and compared component by component with the trainer's own op
// timeline (measured_run.hpp). Process launching lives in cli/validate_command.cpp; everything
// here is a pure function of the job, the calibration files and the timelines.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/specs.hpp"
#include "models/estimate/estimate.hpp"
#include "validate/measured_run.hpp"

namespace trainsim::validate {

// The train job, as `trainsim train` takes it (byte-level vocab, fp32, AdamW).
struct CpuJob {
  int tp = 1, pp = 2, dp = 1;
  int layers = 4, hidden = 128, heads = 4, seq = 64, vocab = 256;
  int micro_batch = 2, micro_batches = 4;  // per data-parallel replica per step
  int steps = 60;
  int zero = 1;
  std::string schedule = "1f1b";     // "1f1b" or "gpipe" (the trainer's orders)
  std::string compression = "none";  // the trainer's --compression method (one stage)
  int ranks() const { return tp * pp * dp; }
  int global_batch() const { return micro_batch * micro_batches * dp; }
};

// "" when the job can run, else the offending option.
std::string check_cpu_job(const CpuJob& job);
// `calibrate --model-shape` value and `train` arguments of the job (backend "cpu" or "cuda").
std::string model_shape_arg(const CpuJob& job);
std::vector<std::string> train_args(const CpuJob& job, const std::string& backend);

// The job as a Scenario: one node, gpus_per_node = ranks, the "GPU" = one rank (its measured
// peak, memory bandwidth and per-op rates at the job's shapes), the in-node fabric = the measured
// all-reduce of the calibration (apply_calibration); fp32, the trainer's ZeRO stage, schedule and
// compression, blocking TP collectives, DP reduction after the last backward, weight-gradient
// GEMMs accumulating into the gradient buffer (gradient-accumulation fusion), no QKV relayout
// (the trainer's Q, K and V GEMMs write the attention's layout). `applied` gets
// apply_calibration's lines. ScenarioError when the calibration has no op_rates at the job's
// shapes.
Scenario cpu_job_scenario(const CpuJob& job, const nlohmann::json& calibration,
                          std::vector<std::string>* applied = nullptr);

struct CpuPrediction {
  EstimatedStep estimate;  // the estimate tier's answer: Result, Workload, played Timeline
  int critical_stage = 0;  // the stage whose breakdown the Result reports (largest F + B)
  double component_s[kComponents] = {0, 0, 0, 0, 0, 0};   // measured_run.hpp definitions
  std::map<std::string, double> compute_class_s;          // critical stage, per step, op_class
  // Per pipeline stage, per step: the time of the ops only the transformer layers run
  // (kLayerOpClasses), the same ops at the same shapes on every rank of a stage.
  std::vector<double> layer_ops_s;
  double model_state_bytes = 0;  // params + grads + optimizer states of the critical stage
  std::vector<std::string> calibration_applied;
};
CpuPrediction predict_cpu_job(const CpuJob& job, const nlohmann::json& calibration);

// One compared figure.
struct Row {
  std::string name;
  double predicted = 0;
  Stat measured;
  double share = 0;     // measured median / measured step median
  bool modelled = true; // false: the prediction holds no such time (other_host)
  bool judged = false;  // held to a limit
  double limit = 0;     // |error| limit when judged
  double error() const;     // predicted / measured median - 1
  double error_lo() const;  // over the measured 95% interval
  double error_hi() const;
  bool within() const { return !judged || std::fabs(error()) <= limit; }
};

enum class Verdict { kPass, kFail, kTooNoisy, kMachineChanged, kOversubscribed };
const char* to_string(Verdict v);

struct Limits {
  double step = 0.05;            // |step error|
  double component = 0.15;       // |error| of a component holding >= component_share of the step
  double component_share = 0.10;
  double max_ci_half_width = 0.02;   // the measured step's 95% interval, relative to its median
  double min_used_share = 0.5;       // of the steps after warm-up, undisturbed
  int min_used_steps = 10;
  double max_calibration_drift = 0.03;  // |step predicted from the calibration after / before - 1|
  double max_rank_speed_spread = 0.05;  // fastest / slowest rank on the layers' ops - 1
};

// The op classes only the transformer layers run (attention, GELU): every rank runs them at the
// same shapes, so their measured / predicted time compares the ranks' cores, whatever the model.
inline constexpr const char* kLayerOpClasses[] = {"attention", "gelu"};

struct Comparison {
  StepSelection selection;
  std::vector<Row> rows;                 // step first, then the components, then memory
  std::vector<Row> compute_classes;      // the compute component by op class (critical stage)
  double calibration_drift = 0;          // predicted step after / before - 1 (0 without "after")
  // Per rank, the median over the used steps of the layers' ops measured / predicted; and the
  // fastest rank against the slowest (max / min - 1; 0 with one rank or no layer ops).
  std::vector<double> rank_layer_speed;
  double rank_speed_spread = 0;
  bool oversubscribed = false;
  Verdict verdict = Verdict::kPass;
  std::vector<std::string> reasons;      // why not kPass
};

// `after` may be null (no second calibration). `oversubscribed`: more ranks than cores.
Comparison compare(const CpuJob& job, const CpuPrediction& before, const CpuPrediction* after,
                   const MeasuredRun& run, const Limits& limits, bool oversubscribed);

}  // namespace trainsim::validate
