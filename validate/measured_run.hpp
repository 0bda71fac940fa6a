// What a `trainsim train --timeline PREFIX` run measured (kernels/op_timeline.hpp: every rank's
// ops and collectives of every step, with their start and end, and the rank's thread CPU time),
// reduced to statistics that say how sure they are: which steps are warm-up, which were
// disturbed by another process, and the median of the step and of each component with its 95%
// interval. Pure functions of the timeline files.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace trainsim::validate {

struct MeasuredEvent {
  std::string op, group, phase;  // kernels/op_timeline.hpp names
  int micro_batch = -1;
  double t0_s = 0, t1_s = 0;
  double count = 0;
  double duration_s() const { return t1_s - t0_s; }
};

// The step components, defined once for both sides of the comparison (docs/validation.md):
//   compute    backend ops of the forward and backward passes
//   tp         tensor-parallel collectives
//   pipeline   pipeline send/recv/wait: transfers plus the schedule's idle (bubble), and
//              the time a stage done early waits for the step's last rank (the drain)
//   dp         the data-parallel gradient reduction (and, ZeRO-1, the parameter all-gather,
//              and the compression ops of a compressed reduction)
//   optimizer  gradient zeroing and scaling, AdamW, the ZeRO-1 shard copy
//   other      the rest of the step's wall time (host work between ops: batch sampling,
//              allocation; without a pipeline, the wait for the step's last rank), which the
//              prediction does not model
enum class Component { kCompute, kTp, kPipeline, kDp, kOptimizer, kOther };
constexpr int kComponents = 6;
const char* to_string(Component c);

struct RankStep {
  int step = 0, rank = 0, tp_rank = 0, pp_rank = 0, dp_rank = 0, core = -1;
  double wall_s = 0, cpu_s = 0;
  long involuntary_switches = 0;
  double persistent_bytes = 0, peak_bytes = 0;
  bool optimizer_step = true;
  std::vector<MeasuredEvent> events;
  double component_s[kComponents] = {0, 0, 0, 0, 0, 0};
  std::map<std::string, double> compute_class_s;  // op class (op_class) -> seconds
  double cpu_share() const { return wall_s > 0 ? cpu_s / wall_s : 1.0; }
};

// The op class a backend op counts under, shared with the prediction's op classes
// (cpu_validation.cpp): "gemm", "attention", "layernorm", "gelu", "residual", "softmax_xent",
// "embedding", and "copy" for the trainer's copies, uploads and fills that the op graph does
// not hold.
std::string op_class(const std::string& backend_op);

struct MeasuredRun {
  int ranks = 0;
  std::string backend;
  // steps[s][r]: step s of rank r.
  std::vector<std::vector<RankStep>> steps;
};

// Reads PREFIX.rank<R>.jsonl for R < ranks (ScenarioError naming the file on a missing or
// malformed one, or on ranks that disagree on the step count).
MeasuredRun read_timelines(const std::string& prefix, int ranks);
// One rank's file, as text (tests).
std::vector<RankStep> parse_timeline(const std::string& text, const std::string& what);

// Median with its 95% confidence interval: distribution-free, from order statistics (the
// interval [x(j), x(n-j+1)] with j the largest rank such that P(Binomial(n, 1/2) < j) <= 2.5%;
// Conover, Practical Nonparametric Statistics, 3rd ed., sec. 3.2). With n < 6 no such j exists
// and the interval is [min, max] (exact = false).
struct Stat {
  double median = 0, lo = 0, hi = 0;
  int n = 0;
  bool exact = true;
  double half_width_rel() const { return median != 0 ? 0.5 * (hi - lo) / median : 0; }
};
Stat median_ci(std::vector<double> values);

// Which steps are measured (docs/validation.md "Which steps count"):
//   warm-up: the leading steps before the first run of kStableRun consecutive steps whose step
//     time lies within kStableBand of the median of the run's second half (step 0 always; at
//     most half the steps);
//   disturbed: steps where some rank's thread had its core for less than kMinCpuShare of the
//     step's wall time (another process ran on it: with one rank per core MPI polls while it
//     waits, so an undisturbed rank's CPU time equals its wall time);
//   used: the rest.
constexpr int kStableRun = 3;
constexpr double kStableBand = 0.03;
constexpr double kMinCpuShare = 0.97;
struct StepSelection {
  int warmup = 0;
  bool warmup_found = true;  // false: no stable run in the first half (warmup = half)
  std::vector<int> used, disturbed;
};
StepSelection select_steps(const MeasuredRun& run);

// Step time of step s: the last rank's end (max over ranks of the aligned step's wall time).
double step_time_s(const MeasuredRun& run, int s);

// A component of step s on pipeline stage `stage`: the mean over that stage's ranks (they do
// the same work; the mean is the best estimate of one rank's time).
double stage_component_s(const MeasuredRun& run, int s, int stage, Component c);
double stage_compute_class_s(const MeasuredRun& run, int s, int stage, const std::string& cls);

}  // namespace trainsim::validate
