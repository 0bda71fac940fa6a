// Applying a calibration file (`trainsim calibrate`, kernels/README.md "Calibration file") to a
// scenario's hardware: measured peak rates, memory bandwidth, the kernel model's GEMM sustained
// share fitted to the measured shapes, and the in-node collective bandwidth and latency. The
// cost models then read them as they read the presets' defaults (`--calibration FILE` on run,
// sweep, plan, validate).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cost/compute/compute_op.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

// One measured GEMM: its shape, the dtype it ran in, and its achieved FLOP/s over the peak of that
// dtype the GPU spec carries.
struct GemmSample {
  GemmShape shape;
  Precision precision = Precision::kBf16;
  double efficiency = 0;
  double weight = 0;  // its weight in the fit; 0: the shape's FLOPs
};

struct GemmShareFit {
  double share = 0;  // the kernel model's sustained share (GpuKernelParams::gemm_share_*)
  // |model / measured - 1|: weighted as the fit weighs the samples, and the worst sample's.
  double mean_relative_error = 0, max_relative_error = 0;
  int samples = 0;
  bool capped = false;  // the best share exceeded 1: it is 1 (no GEMM beats its reference peak)
};

// The sustained share of the kernel model (docs/compute-model.md "GEMM": tiles, waves or
// stream-K, the HBM roofline and the fixed kernel time stay the GPU's) that best reproduces the
// samples, least squares on relative error weighted by each sample's FLOPs: the share is the
// rate of the compute-bound GEMMs that take a training step's time, and a sweep's smallest
// shapes, whose time is launch and fixed cost, must not set it. Samples whose dtype prices
// through another share than the first sample's (16-bit, fp8, fp32) are left out. The memory
// roofline and the fixed time do not scale with the share, so the closed-form scale is iterated
// to its fixed point; it stops at 1, the peak the efficiencies are measured against.
GemmShareFit fit_gemm_share(const GpuSpec& gpu, const std::vector<GemmSample>& samples);

// The precision a calibration's or a trace's dtype name stands for ("bf16", "f16"/"fp16",
// "f32"/"fp32", "fp8"/"e4m3"); false for a dtype no plan computes in (int8, tf32).
bool precision_of_dtype(const std::string& dtype, Precision& precision);

// The dtype whose sustained share prices a GEMM of `precision` on this GPU (bf16 for both 16-bit
// types; fp8 on a GPU without fp8 tensor cores runs in bf16).
Precision gemm_share_family(const GpuSpec& gpu, Precision precision);

// The share field of the kernel parameters a GEMM of `precision` is priced with.
double& gemm_share_of(GpuKernelParams& params, Precision precision);

// The kernel-level parameters (docs/compute-model.md) a calibration's microbenchmarks measure,
// on top of `base` (the preset's: SM count, tiles and whatever was not measured):
//   GEMM sustained share 1 for each dtype whose peak was measured (the measured peak is the
//     best sustained GEMM rate, and it replaces the datasheet peak); apply_calibration then
//     fits the share to the file's "gemm" rows (fit_gemm_share);
//   memory bandwidth share 1 (the measured copy bandwidth replaces hbm_bandwidth), or the file's
//     memory_bandwidth_share (a trace's: the GPU's bandwidth stays), and the fixed kernel time =
//     the intercept of the memory-bound ops' time against their bytes;
//   attention: share at the measured head dim and overhead_blocks fitted to the attention
//     points (causal, so causal_factor 1), forward and backward, for both fused kernels, only
//     where 16-bit runs no faster than fp32 (a CPU, whose trainer runs calibrate's fp32 kernel;
//     on a GPU the plan's FlashAttention is another kernel); left out when a share would
//     exceed 1 (emulated 16-bit arithmetic, where op_rates price attention instead). Points
//     that name their kernel ("kernel": "flash2" | "flash3", a trace's FlashAttention calls)
//     are that kernel on any device and set its parameters on top of the preset's: the share
//     at their head dim (the preset's other head dims scaled alike), overhead_blocks where they
//     span two sequence lengths or more, the preset's causal factor.
// A file that carries a "kernels" block (written by hand or by a later calibrate) is read as it
// is, on top of `base`. apply_calibration calls this, so every --calibration run gets them.
GpuKernelParams fit_kernel_params(const nlohmann::json& calibration, const GpuKernelParams& base = {});

// The least memory-bound bandwidth share a calibration file may give (memory_bandwidth_share):
// below it the times are not a GPU's kernels.
constexpr double kMinMemoryBandwidthShare = 0.01;

// One dtype family's GEMM sustained share as a calibration's rows fitted it.
struct GemmFamilyFit {
  Precision family = Precision::kBf16;  // gemm_share_family's: bf16 (both 16-bit types), fp8, fp32
  GemmShareFit fit;
};

// What a calibration file makes of a GPU: its measured peaks, memory bandwidth and
// training-loop share, the kernel-level parameters (fit_kernel_params) and, on top of them, the
// sustained share of each dtype family its "gemm" rows measure (fit_gemm_share). The one route
// from a file to a calibrated GPU: apply_calibration takes it for the scenario's GPU, and
// import-torch-trace for the file it writes, so what it prints is what --calibration will use.
// Returns one line per value changed; `gemm_fits` gets each family's fit. The file's format,
// version and per-op rates are apply_calibration's to check and apply.
std::vector<std::string> calibrate_gpu(const nlohmann::json& calibration, GpuSpec& gpu,
                                       std::vector<GemmFamilyFit>* gemm_fits = nullptr);

// Checks what every reader of a calibration reads first: an object, "format"
// "trainsim-calibration", "version" 1, and where present a string "device" and a count "ranks"
// (ScenarioError naming "calibration.<field>").
void check_calibration_header(const nlohmann::json& calibration);

// Reads and checks a calibration file (ScenarioError naming "calibration.<field>" on bad input)
// and overrides the scenario's GPU (calibrate_gpu, then the per-op rates) and in-node fabric
// with what it measured. Returns one line per value changed, for the result's "calibration"
// record.
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
