// Applying a calibration file (`trainsim calibrate`, kernels/README.md "Calibration file") to a
// scenario's hardware: measured peak rates, memory bandwidth, the GEMM efficiency curve fitted to
// the measured shapes, and the in-node collective bandwidth and latency. The cost models then
// read them as they read the presets' defaults (`--calibration FILE` on run, sweep, plan,
// validate).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cost/compute_cost.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

struct GemmEfficiencyFit {
  double eff_max = 0;
  double half_width = 0;
  double max_relative_error = 0;
  int samples = 0;
};

// Least-squares fit of eff(w) = eff_max * w / (w + half_width) to (width, efficiency) samples:
// for each half_width on a grid, eff_max has a closed form; the best pair wins.
GemmEfficiencyFit fit_gemm_efficiency(const std::vector<std::pair<double, double>>& width_efficiency);

// The kernel-level parameters (docs/compute-model.md) a calibration's microbenchmarks measure,
// on top of `base` (the preset's: SM count, tiles and whatever was not measured):
//   GEMM sustained share 1 for each dtype whose peak was measured (the measured peak is the
//     best sustained GEMM rate, and it replaces the datasheet peak);
//   memory bandwidth share 1 (the measured copy bandwidth replaces hbm_bandwidth) and the fixed
//     kernel time = the intercept of the memory-bound ops' time against their bytes;
//   attention: share at the measured head dim and overhead_blocks fitted to the attention
//     points (causal, so causal_factor 1), forward and backward, for both fused kernels (what
//     the backend runs is what the plan gets); left out when a share would exceed 1 (emulated
//     16-bit arithmetic on a CPU, where op_rates price attention instead).
// A file that carries a "kernels" block (written by hand or by a later calibrate) is read as it
// is, on top of `base`. apply_calibration calls this, so every --calibration run gets them.
GpuKernelParams fit_kernel_params(const nlohmann::json& calibration, const GpuKernelParams& base = {});

// Reads and checks a calibration file (ScenarioError naming "calibration.<field>" on bad input)
// and overrides the scenario's GPU and in-node fabric with what it measured. Returns one line
// per value changed, for the result's "calibration" record.
std::vector<std::string> apply_calibration(const nlohmann::json& calibration, Scenario& scenario);

// The shape an "op_rates" section was measured at (calibrate --model-shape).
struct OpRatesShape {
  int layers = 0, hidden = 0, heads = 0, seq = 0, vocab = 0, micro_batch = 0, tp = 0, pp = 0, dp = 0, zero = 0;
};

// The optional "op_rates" section (per-op rates at one training job's shapes, kernels/README.md):
// OpRates with present() false when the file has none; ScenarioError naming
// "calibration.op_rates.<field>" when it is malformed. apply_calibration puts them in the GPU
// spec, where the estimate's per-op cost functions (compute_cost.hpp) read them.
OpRates read_op_rates(const nlohmann::json& calibration, OpRatesShape* shape = nullptr);

}  // namespace trainsim
