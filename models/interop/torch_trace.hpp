// PyTorch profiler traces (torch.profiler with record_shapes=True, export_chrome_trace: the Kineto
// Chrome-trace JSON) of one training step -> the GPU time of each op class, the shapes and FLOPs
// or bytes of the ops that launched each kernel, and the efficiency tables of the cost model
// (compute_cost.hpp) fitted to them. `trainsim calibrate --from-torch-trace` (cli/
// import_torch_trace_command.cpp) writes them as a calibration file (calibration.hpp).
//
// Trace format read (Kineto's ChromeTraceLogger): {"traceEvents": [...], "deviceProperties":
// [{"name", ...}], ...}, or a bare event array. Complete events ("ph": "X", "ts"/"dur" in
// microseconds) of "cat" cpu_op / user_annotation (host ops, nested by time on a thread),
// cuda_runtime (launches), kernel / gpu_memcpy / gpu_memset (device work). A kernel belongs to the
// host op whose args."External id" it carries; failing that, to the innermost op on the thread of
// the cuda_runtime call with the same args."correlation", which that op's time span contains.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cost/calibration.hpp"
#include "models/cost/compute/compute_op.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

enum class TorchOpClass { kGemm, kAttention, kElementwise, kCommunication, kOptimizer, kOther };
constexpr int kTorchOpClasses = 6;
const char* to_string(TorchOpClass c);

// One host op that launched GPU work in the step (or one unlinked kernel), with its kernels.
struct TorchTraceOp {
  int event = -1;     // index in traceEvents of the op that classifies it (-1: unlinked kernel)
  std::string name;   // "aten::addmm", ..., or the kernel name when unlinked
  std::string kernel; // its first kernel
  TorchOpClass cls = TorchOpClass::kOther;
  bool backward = false;  // under an autograd node ("...Backward0")
  int kernels = 0;
  double gpu_time_s = 0;  // sum of its kernels' durations
  std::string dtype;      // "bf16", "f16", "f32", "fp8", "" (from args."Input type")
  // GEMM: C[m x n] = A[m x k] B[k x n], `batch` times; flop = 2 m n k batch.
  double m = 0, n = 0, k = 0, batch = 1;
  // The two weight dimensions (the GEMM's dims other than the token count), 0 when no dim is the
  // token count (batched attention GEMMs).
  double weight_a = 0, weight_b = 0;
  std::string label;  // qkv, attn_out, mlp_up, mlp_down, logits (when a model is given), else ""
  std::string pass;   // forward, dgrad, wgrad
  double flop = 0;    // GEMM and attention (FlashAttention-2 counting, see torch_trace.cpp)
  bool causal = false;
  // Attention: the shape its FLOPs count (batch, heads, sequence lengths, head dim, causal), and
  // the FlashAttention generation its kernels are ("flash2", "flash3"; "" another kernel: the
  // memory-efficient or cuDNN attention, whose rates say nothing of FlashAttention's).
  AttentionShape attention;
  std::string attention_kernel;
  double bytes = 0;   // elementwise: minimum traffic from Input Dims x dtype size
  // Elementwise: a copy between layouts (a copy of a permuted view) or a cat, which the kernel
  // model prices at its relayout rate (memory_bound_model.hpp).
  bool relayout = false;
  // The op_rates seconds_per_element slot the op's time counts in ("layernorm_fwd", "gelu_bwd",
  // "residual_add", "softmax_xent", "embedding_fwd", "copy", "fill_zero", ...; "" none: see
  // torch_trace_op_rates), the aten op that named it (the innermost ancestor with a slot), and
  // the element count of that op's first input (product of its dims; embedding: indices x
  // hidden, its output). An op whose kernels several trace ops share counts its elements once.
  // Elementwise ops without a slot also carry their first input's elements.
  std::string slot, slot_op;
  double elements = 0;
};

struct TorchClassTime {
  double gpu_time_s = 0;
  int kernels = 0;
  int ops = 0;
  double flop = 0;
  double bytes = 0;
};

struct TorchTrace {
  std::string source;
  std::string device_name;  // deviceProperties[0].name, "" when absent
  std::string step_name;    // "ProfilerStep#7"; "" when the trace has no step annotation
  double step_time_s = 0;   // the step annotation, else the span of the GPU work
  double gpu_busy_s = 0;    // union of the step's device intervals (all streams)
  double tokens = 0;        // the GEMM token dimension used to find weight dims
  int kernels = 0;
  int unlinked_kernels = 0;
  std::vector<TorchTraceOp> ops;
  std::array<TorchClassTime, kTorchOpClasses> classes{};
  std::vector<std::string> warnings;
  const TorchClassTime& of(TorchOpClass c) const { return classes[static_cast<int>(c)]; }
};

struct TorchTraceOptions {
  int step = -1;        // ProfilerStep#N to read; -1 = the last one in the trace
  double tokens = 0;    // tokens per micro-batch on one GPU; 0 = infer from aten::linear inputs
  const ModelSpec* model = nullptr;  // optional: label GEMMs qkv/attn_out/... by their weight shape
  int tp = 1;
};

// ScenarioError naming the event ("TRACE: traceEvents[12].dur: ...") on bad input.
TorchTrace parse_torch_trace(const nlohmann::json& trace, const std::string& source,
                             const TorchTraceOptions& options = {});
// Reads a file (a .gz is refused with a hint; JSON syntax errors name line and column).
TorchTrace read_torch_trace(const std::string& path, const TorchTraceOptions& options = {});

// The GPU preset whose name best matches a CUDA device name ("NVIDIA A100-SXM4-80GB" ->
// "A100-SXM4-80GB", "NVIDIA H100 80GB HBM3" -> "H100-SXM-80GB"); "" when none shares its model.
std::string match_gpu_preset(const std::string& device_name, const std::vector<std::string>& presets);

// One GEMM shape of the trace: calls of the same (dtype, m, n, k, pass), time summed.
struct TorchGemmShape {
  std::string dtype, label, pass;
  double m = 0, n = 0, k = 0;  // m: token dim; n, k: the weight dims
  int calls = 0;
  double time_s = 0, flop = 0;
  double efficiency = 0;  // flop / time / peak[dtype]
  double fitted_efficiency = 0;  // the kernel model's at the fitted share
};

// One attention shape of the trace: calls of the same (kernel, pass, shape, causal), summed.
struct TorchAttentionShape {
  std::string kernel;  // "flash2", "flash3"
  bool backward = false;
  AttentionShape shape;
  int calls = 0;
  double time_s = 0, flop = 0;
};

struct TorchTraceFit {
  std::string dtype;             // of the GEMMs fitted
  // That dtype as the model computes in it (bf16 for a name no plan computes in: int8, tf32).
  Precision precision = Precision::kBf16;
  double peak_flop_per_s = 0;    // the GPU's nominal peak for dtype
  std::vector<TorchGemmShape> gemm_shapes;
  GemmShareFit gemm;             // the kernel model's sustained share of dtype's family (calibrate_gpu)
  // The GPU as the fit's calibration file makes it (calibrate_gpu): what --calibration with that
  // file prices the trace's GEMMs with.
  GpuSpec gpu;
  int gemms_unfitted = 0;        // GEMM ops with no token dim (no weight width), left out
  double attention_forward_efficiency = 0;   // FA2 FLOPs / time / peak
  double attention_backward_efficiency = 0;
  double attention_efficiency = 0;           // both
  // The FlashAttention calls by shape: the calibration file's attention points, from which
  // calibrate_gpu fits the kernel model's share (and, over two sequence lengths or more, its
  // per-CTA overhead) for the generation the trace ran; fit.gpu holds the result.
  std::vector<TorchAttentionShape> attention_shapes;
  double elementwise_bytes_per_s = 0;        // achieved, sum(bytes) / sum(time)
  // The kernel model's memory-bound bandwidth share: the share of the GPU's HBM bandwidth the
  // trace's streaming elementwise kernels reach (norms, reductions over the tokens and relayouts
  // left out: the model prices them at their own ratios to it), each kernel's fixed time off; at
  // most 1. What the calibration file says instead of a bandwidth (the trace measures none).
  double memory_bandwidth_share = 0;
  // Per class, the trace's own ops timed with the fitted tables: GEMMs by the kernel model at the
  // fitted share, FlashAttention by the kernel model fitted to it (other attention kernels at
  // the pass's fitted efficiency), elementwise by the kernel model at the fitted memory-bound
  // share; other classes as measured.
  std::array<double, kTorchOpClasses> predicted_s{};
};

// Fits the tables on `gpu`'s nominal peaks. ScenarioError when the trace has no GEMM with
// shapes (record_shapes=False) or the GPU has no peak for the GEMMs' dtype.
TorchTraceFit fit_torch_trace(const TorchTrace& trace, const GpuSpec& gpu);

// The cost model's split of one step of `scenario` into the trace's classes (the estimate
// tier's per-layer formulas, estimate.cpp, for the first pipeline device, times its
// micro-batches), and the whole step.
// With per-op rates in the scenario's GPU (gpu.op_rates, a calibration's "op_rates") the split
// follows estimate.cpp's measured_layer_times instead: GEMMs per pass at their efficiencies (the
// LM head's at lm_head), attention, norms + residual adds + activations + the final LayerNorm
// as elementwise, embedding and softmax cross-entropy as other; no launch overhead.
struct ModelStepClasses {
  std::array<double, kTorchOpClasses> class_s{};  // communication: DP reduction, all of it
  double launch_s = 0;       // kernel launch overhead (kKernelOverheadS per kernel)
  double compute_s = 0;      // what the workload's stage computes (gemm + attention + elementwise + launch,
                             // + other with op rates)
  bool op_rates = false;     // the split is the op-rates one
  double gemm_flop = 0;      // GEMM FLOPs the model counts for that device
  double step_s = 0;         // estimate tier
  bool feasible = true;
  std::string reason;
};
ModelStepClasses model_step_classes(const Scenario& scenario);

// The "op_rates" section (calibration.cpp read_op_rates) measured from the trace, for the
// scenario the trace ran (its shape). Per-op counts come from the trace itself, not from the
// cost model's counts, so that the model's prediction with them stays a check:
//   GEMM efficiency per pass = sum(flop) / sum(time) / peak over the fit's shapes of the fitted
//     dtype (forward, dgrad -> backward_input, wgrad -> backward_weight); logits shapes -> lm_head
//   attention = the fit's forward / backward efficiencies (causal FA2 FLOPs)
//   seconds per element = sum(GPU time) / sum(first-input elements) of the ops in each slot
//     (softmax_xent: all loss ops' time, forward and backward, per logit of the forward
//     log-softmax; embedding: per output element, indices x hidden)
//   AdamW = optimizer-class GPU time / the scenario's parameters on this GPU
//     (count_params / (tp pp), / dp with ZeRO >= 1)
// A slot the trace has no op for falls back to its minimum traffic at the fitted elementwise
// bandwidth (e.g. layernorm forward: read x, write y, at the trace's dtype size), with a note:
// read_op_rates requires every rate > 0.
struct TorchOpRateSlot {
  std::string name;      // the seconds_per_element key, or "adamw" (per parameter)
  int ops = 0;           // trace ops timed for it
  double time_s = 0;     // their GPU time
  double elements = 0;   // the elements (parameters) the rate divides by
  double seconds_per_element = 0;
  bool measured = false;  // false: the fallback
};
struct TorchGemmPass {
  std::string name;  // forward, backward_input, backward_weight, lm_head
  int shapes = 0;
  double flop = 0, time_s = 0, efficiency = 0;
  bool measured = false;
};
struct TorchOpRates {
  OpRates rates;
  OpRatesShape shape;
  std::string peak_dtype;              // the GEMMs' dtype, whose peak rates.peak_flop_per_s is
  std::vector<TorchGemmPass> gemm;     // forward, backward_input, backward_weight, lm_head
  std::vector<TorchOpRateSlot> slots;  // read_op_rates' seconds_per_element order, then adamw
  double optimizer_params = 0;         // parameters AdamW updates on this GPU (the scenario's)
  // Elementwise-class time the op rates have no slot for (dropout, bias-gradient sums, cat,
  // SwiGLU's mul, ops on fewer than 1024 elements, AccumulateGrad adds): the cost model does
  // not count it. By op name, largest first.
  double unmodelled_elementwise_s = 0;
  std::vector<std::pair<std::string, double>> unmodelled_by_op;
  std::vector<std::string> notes;  // fallbacks and approximations
  const TorchOpRateSlot* slot(const std::string& name) const;
};
TorchOpRates torch_trace_op_rates(const TorchTrace& trace, const TorchTraceFit& fit, const Scenario& scenario);
// The section in read_op_rates' layout, plus "measured" (per slot: ops, time_s, elements,
// source) and "notes".
nlohmann::json torch_trace_op_rates_json(const TorchOpRates& rates);

// The calibration file (calibration.hpp, kernels/README.md format version 1): peak_flop_per_s,
// gemm (one row per shape), memory_bandwidth_share, ops (the FlashAttention calls by shape as
// named attention points; the attention and elementwise classes' totals), plus "torch_trace":
// what was measured and the fits.
nlohmann::json torch_trace_calibration_json(const TorchTrace& trace, const TorchTraceFit& fit,
                                            const std::string& gpu_name);

}  // namespace trainsim
