// `trainsim import-torch-trace TRACE.json` (also `trainsim calibrate --from-torch-trace TRACE.json`):
// a PyTorch profiler trace of one training step (models/torch_trace.hpp) -> GPU time per op
// class, the GEMM sustained share, attention efficiency and elementwise bandwidth fitted to it,
// per-op rates measured from the trace's own ops (the file's "op_rates", with --scenario), a
// calibration file that `trainsim run --calibration FILE` reads, and the estimate of the same
// step with the GPU presets, the fitted kernel parameters and the op rates next to the measured step.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/output_file.hpp"
#include "models/cost/calibration.hpp"
#include "models/core/piecewise.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/interop/torch_trace.hpp"

namespace trainsim::cli {
namespace {

struct ImportTraceOptions {
  std::string trace_path, scenario_path, gpu_name, out_path;
  int step = -1;
  bool json = false, from_calibrate = false;
  std::vector<std::string> sets, preset_dirs;
};

void declare(CLI::App& app, ImportTraceOptions& o) {
  app.description(
      "Reads a PyTorch profiler trace of one training step (torch.profiler.profile(activities=[CPU,\n"
      "CUDA], record_shapes=True, schedule=...) then prof.export_chrome_trace(...): the Kineto JSON),\n"
      "links every GPU kernel to the aten op that launched it (args \"External id\", else the launch's\n"
      "\"correlation\"), and sorts the step's GPU time into gemm (aten::mm/addmm/bmm/matmul/linear),\n"
      "attention (scaled_dot_product / flash / efficient attention), elementwise (norms, activations,\n"
      "dropout, adds, bias gradients, copies), communication (NCCL), optimizer and other (embeddings,\n"
      "loss, ...). Then fits, on the GPU's nominal peaks:\n"
      "  GEMM             the sustained share of the kernel model (tiles, waves, HBM roofline:\n"
      "                   docs/compute-model.md), least squares on relative error over the shapes\n"
      "  attention        FLOPs / time / peak, FlashAttention-2 counting (causal halved, bwd 2.5x)\n"
      "  elementwise      achieved bandwidth: minimum traffic (Input Dims x dtype size) / time\n"
      "Also: trainsim calibrate --from-torch-trace TRACE.json [the same options].");
  app.add_option("TRACE", o.trace_path, "the profiler trace (.json) of one step")->required();
  app.add_flag("--from-torch-trace", o.from_calibrate, "(as `trainsim calibrate --from-torch-trace` passes it)")->group("");
  app.add_option("--scenario", o.scenario_path,
                 "the scenario the trace ran (model, cluster, plan): its GPU's peaks, the token\n"
                 "count that tells GEMM weight dims, GEMM labels (qkv, mlp_up, ...), the shape of\n"
                 "the op_rates section, and the estimate of the step with the GPU presets, with the\n"
                 "fitted curve and with the op rates, per class and whole")
      ->type_name("FILE");
  app.add_option("--gpu", o.gpu_name,
                 "the GPU without a scenario (default: the trace's deviceProperties name matched to\n"
                 "the GPU presets)")
      ->type_name("PRESET");
  app.add_option("--step", o.step, "read ProfilerStep#N (default: the last step in the trace)")
      ->type_name("N")
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--out", o.out_path,
                 "write the calibration file (kernels/README.md format; `trainsim run --calibration\n"
                 "FILE` applies it). With --scenario it also has \"op_rates\": per-pass GEMM and\n"
                 "attention efficiencies, seconds per element of each memory-bound op and AdamW\n"
                 "seconds per parameter, each from the trace's own ops and counts")
      ->type_name("FILE");
  add_json_flag(app, o.json, "print the calibration JSON (with \"torch_trace\": the measurement and fits)");
  add_set_option(app, o.sets, "a field of --scenario");
  add_presets_option(app, o.preset_dirs);
}

GpuSpec gpu_preset(const std::string& name, const LoadOptions& load, const std::string& path) {
  const auto names = list_presets("gpus", load);
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    throw ScenarioError(path, "unknown GPU preset \"" + name + "\"; available: " + all);
  }
  const nlohmann::json cluster = {{"name", "trace"}, {"gpu", name}, {"nodes", 1}, {"gpus_per_node", 1}};
  return parse_cluster(resolve_cluster_json(cluster, load), path).gpu;
}

// The FlashAttention kernel model the trace's attention calls set (fit.gpu), next to the preset's.
void print_attention_fit(const TorchTraceFit& fit, const GpuSpec& preset) {
  for (const char* kernel : {"flash2", "flash3"}) {
    int shapes = 0;
    double head_dim = 0;
    for (const auto& x : fit.attention_shapes)
      if (x.kernel == kernel) ++shapes, head_dim = x.shape.head_dim;
    if (shapes == 0) continue;
    const bool v3 = std::string(kernel) == "flash3";
    const AttentionKernelParams& now = v3 ? fit.gpu.kernel.flash3 : fit.gpu.kernel.flash2;
    const AttentionKernelParams& before = v3 ? preset.kernel.flash3 : preset.kernel.flash2;
    if (!now.present() || now == before) continue;
    std::printf("  %s kernel model, fitted to %d call shapes (head dim %.0f):\n",
                v3 ? "FlashAttention-3" : "FlashAttention-2", shapes, head_dim);
    for (int b = 0; b < 2; ++b) {
      const AttentionPassParams& p = b ? now.backward : now.forward;
      const AttentionPassParams& q = b ? before.backward : before.forward;
      const auto share = [&](const AttentionPassParams& x) {
        return x.present() ? piecewise_linear(x.share_by_head_dim, head_dim, [](double d) { return std::log2(d); })
                           : 0.0;
      };
      std::printf("    %-8s share %.3f (preset %.3f), overhead %.2f blocks (preset %.2f), causal factor %.3f\n",
                  b ? "backward" : "forward", share(p), share(q), p.overhead_blocks, q.overhead_blocks,
                  p.causal_factor);
    }
  }
}

double pct(double predicted, double measured) {
  return measured > 0 ? 100.0 * (predicted - measured) / measured : 0.0;
}

int run(ImportTraceOptions& o) {
  const std::string& trace_path = o.trace_path;
  const std::string& scenario_path = o.scenario_path;
  const std::string& gpu_name = o.gpu_name;
  const std::string& out_path = o.out_path;
  const int step = o.step;
  const bool as_json = o.json;
  LoadOptions load;
  load.overrides = parse_sets(o.sets);
  if (!load.overrides.empty() && scenario_path.empty())
    throw ScenarioError("--set", "needs --scenario FILE: the scenario to override");
  if (!out_path.empty()) {
    check_output_file(out_path, "--out");
    refuse_overwriting_inputs(out_path, "--out", {trace_path, o.scenario_path});
  }
  load.preset_dirs = o.preset_dirs;
  for (const auto& d : default_preset_dirs()) load.preset_dirs.push_back(d);

  Scenario scenario;
  const bool with_scenario = !scenario_path.empty();
  TorchTraceOptions options;
  options.step = step;
  if (with_scenario) {
    scenario = load_scenario_file(scenario_path, load);
    options.tokens = static_cast<double>(scenario.plan.micro_batch) * scenario.model.seq_len / scenario.plan.cp;
    options.model = &scenario.model;
    options.tp = scenario.plan.tp;
  }
  const TorchTrace trace = read_torch_trace(trace_path, options);

  // The GPU whose nominal peaks the efficiencies are shares of.
  std::vector<std::string> notes;
  GpuSpec gpu;
  const std::string matched =
      trace.device_name.empty() ? "" : match_gpu_preset(trace.device_name, list_presets("gpus", load));
  if (!gpu_name.empty()) {
    gpu = gpu_preset(gpu_name, load, "--gpu");
  } else if (with_scenario) {
    gpu = scenario.cluster.gpu;
  } else if (!matched.empty()) {
    gpu = gpu_preset(matched, load, "deviceProperties");
  } else {
    throw ScenarioError("--gpu", trace.device_name.empty()
                                     ? "the trace names no device (no deviceProperties): give --gpu PRESET or --scenario FILE"
                                     : "no GPU preset matches the trace's device \"" + trace.device_name +
                                           "\": give --gpu PRESET or --scenario FILE");
  }
  if (!matched.empty() && matched != gpu.name)
    notes.push_back("the trace ran on " + trace.device_name + " (preset " + matched + ") but the peaks are " +
                    gpu.name + "'s");
  const TorchTraceFit fit = fit_torch_trace(trace, gpu);
  nlohmann::json cal = torch_trace_calibration_json(trace, fit, gpu.name);
  cal["tool"] = std::string("trainsim import-torch-trace ") + TRAINSIM_VERSION;

  // The cost model on the scenario: with the GPU presets, with the fitted curve (the
  // calibration without op_rates), and with the per-op rates measured from the trace (the file
  // as written: what `trainsim run --calibration` applies).
  ModelStepClasses model_presets, model_cal, model_rates;
  std::vector<std::string> applied;
  double bytes_per_hidden = 0;
  TorchOpRates op_rates;
  if (with_scenario) {
    model_presets = model_step_classes(scenario);
    Scenario calibrated = scenario;
    apply_calibration(cal, calibrated);
    model_cal = model_step_classes(calibrated);
    op_rates = torch_trace_op_rates(trace, fit, scenario);
    cal["op_rates"] = torch_trace_op_rates_json(op_rates);
    read_op_rates(cal);  // the section must be one `trainsim run --calibration` accepts
    Scenario with_rates = scenario;
    applied = apply_calibration(cal, with_rates);
    model_rates = model_step_classes(with_rates);
    for (const auto& n : op_rates.notes) notes.push_back(n);
    const auto& p = scenario.plan;
    // Elementwise traffic the trace moved, per token, layer and pass, in units of hidden
    // (forward; backward counted as 2 passes).
    const double passes = 3.0 * scenario.model.layers / p.pp * (static_cast<double>(p.global_batch) / (p.micro_batch * p.dp));
    const double tokens = static_cast<double>(p.micro_batch) * scenario.model.seq_len / p.cp;
    bytes_per_hidden = trace.of(TorchOpClass::kElementwise).bytes /
                       (passes * tokens * static_cast<double>(scenario.model.hidden));
    nlohmann::json classes = nlohmann::json::object(), classes_rates = nlohmann::json::object();
    for (int i = 0; i < kTorchOpClasses; ++i) {
      classes[to_string(static_cast<TorchOpClass>(i))] = model_cal.class_s[i];
      classes_rates[to_string(static_cast<TorchOpClass>(i))] = model_rates.class_s[i];
    }
    // step_time_s: what this file gives `trainsim run --calibration` (op rates).
    cal["torch_trace"]["prediction"] = {
        {"scenario", scenario_path},
        {"fidelity", "estimate"},
        {"applied", applied},
        {"classes_s", classes_rates},
        {"classes_kernel_fit_s", classes},
        {"launch_kernel_fit_s", model_cal.launch_s},
        {"unmodelled_elementwise_s", op_rates.unmodelled_elementwise_s},
        {"step_time_s", model_rates.step_s},
        {"step_time_kernel_fit_s", model_cal.step_s},
        {"step_time_presets_s", model_presets.step_s},
        {"measured_step_time_s", trace.step_time_s},
        {"error_pct", pct(model_rates.step_s, trace.step_time_s)},
        {"error_kernel_fit_pct", pct(model_cal.step_s, trace.step_time_s)},
        {"error_presets_pct", pct(model_presets.step_s, trace.step_time_s)},
        {"model_gemm_flop", model_cal.gemm_flop},
        {"trace_gemm_flop", trace.of(TorchOpClass::kGemm).flop},
        {"elementwise_bytes_per_hidden_measured", bytes_per_hidden},
        {"feasible", model_rates.feasible}};
    if (!model_rates.feasible) notes.push_back("the scenario is not feasible: " + model_rates.reason);
  }
  for (const auto& n : notes) cal["torch_trace"]["warnings"].push_back(n);

  if (as_json) {
    std::cout << cal.dump(2) << "\n";
  } else {
    std::printf("%s: %s, %d kernels (%d unlinked) on %s; token dim %.0f\n", trace.source.c_str(),
                trace.step_name.empty() ? "no step annotation" : trace.step_name.c_str(), trace.kernels,
                trace.unlinked_kernels, trace.device_name.empty() ? "?" : trace.device_name.c_str(), trace.tokens);
    std::printf("peaks: %s nominal, %s %.4g TFLOP/s, HBM %.4g GB/s\n", gpu.name.c_str(), fit.dtype.c_str(),
                fit.peak_flop_per_s / 1e12, gpu.hbm_bandwidth_bytes_per_s / 1e9);
    std::printf("\nGEMM sustained share (%s): %.3f of peak, the kernel model fitted to %d shapes (FLOP-weighted error %.1f%%, "
                "worst %.1f%%%s)\n",
                fit.dtype.c_str(), fit.gemm.share, fit.gemm.samples, 100 * fit.gemm.mean_relative_error,
                100 * fit.gemm.max_relative_error,
                fit.gemms_unfitted ? (", " + std::to_string(fit.gemms_unfitted) + " GEMM ops without a token dim left out").c_str() : "");
    std::printf("  %-9s %-7s %7s %7s %7s %5s %10s %9s %6s %6s\n", "shape", "pass", "m", "n", "k", "calls",
                "time us", "TFLOP/s", "eff", "fit");
    for (const auto& s : fit.gemm_shapes) {
      const double e = s.fitted_efficiency;
      std::printf("  %-9s %-7s %7.0f %7.0f %7.0f %5d %10.1f %9.1f %6.3f %6.3f\n",
                  s.label.empty() ? "-" : s.label.c_str(), s.pass.c_str(), s.m, s.n, s.k, s.calls, s.time_s * 1e6,
                  s.flop / s.time_s / 1e12, s.efficiency, e);
    }
    std::printf("attention: %.3f of peak (forward %.3f, backward %.3f; FlashAttention-2 FLOPs)\n",
                fit.attention_efficiency, fit.attention_forward_efficiency, fit.attention_backward_efficiency);
    print_attention_fit(fit, gpu);
    std::printf("elementwise: %.1f GB/s achieved (%.0f%% of HBM); the kernel model's memory-bound share %.3f of HBM "
                "(norms and relayouts at their own rates)\n",
                fit.elementwise_bytes_per_s / 1e9, 100 * fit.elementwise_bytes_per_s / gpu.hbm_bandwidth_bytes_per_s,
                fit.memory_bandwidth_share);
    if (with_scenario)
      std::printf("  %.1f bytes per hidden per token per layer pass moved\n", bytes_per_hidden);

    if (with_scenario) {
      const OpRates& r = op_rates.rates;
      std::printf("\nop rates (counts and times from the trace's own ops; %s peak %.4g TFLOP/s):\n",
                  op_rates.peak_dtype.c_str(), r.peak_flop_per_s / 1e12);
      std::printf("  GEMM efficiency: forward %.3f, backward_input %.3f, backward_weight %.3f, lm_head %.3f\n",
                  r.gemm_forward_efficiency, r.gemm_backward_input_efficiency, r.gemm_backward_weight_efficiency,
                  r.lm_head_gemm_efficiency);
      std::printf("  attention efficiency: forward %.3f, backward %.3f\n", r.attention_forward_efficiency,
                  r.attention_backward_efficiency);
      std::printf("  %-14s %5s %12s %10s %12s  %s\n", "per element", "ops", "elements", "time ms", "ps/element",
                  "source");
      for (const auto& sl : op_rates.slots)
        std::printf("  %-14s %5d %12.4g %10.3f %12.3f  %s\n", sl.name.c_str(), sl.ops, sl.elements, sl.time_s * 1e3,
                    sl.seconds_per_element * 1e12,
                    sl.measured ? (sl.name == "adamw" ? "trace (per parameter on this GPU)" : "trace")
                                : "fallback: minimum traffic at the fitted bandwidth");
      std::string top;
      for (std::size_t i = 0; i < op_rates.unmodelled_by_op.size() && i < 4; ++i) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s %.3f", i ? ", " : "", op_rates.unmodelled_by_op[i].first.c_str(),
                      op_rates.unmodelled_by_op[i].second * 1e3);
        top += buf;
      }
      std::printf("  unmodelled elementwise: %.3f ms (%.1f%% of the step; ops the op rates have no slot for: %s)\n",
                  op_rates.unmodelled_elementwise_s * 1e3,
                  100 * op_rates.unmodelled_elementwise_s / trace.step_time_s, top.empty() ? "none" : top.c_str());
    }

    std::printf("\n  %-14s %7s %12s %10s %7s", "GPU time", "kernels", "measured ms", "fitted ms", "err %");
    if (with_scenario) std::printf(" %10s %7s %11s %7s", "kernel-fit ms", "err %", "op-rates ms", "err %");
    std::printf("\n");
    for (int i = 0; i < kTorchOpClasses; ++i) {
      const TorchClassTime& c = trace.classes[i];
      std::printf("  %-14s %7d %12.3f %10.3f %7.1f", to_string(static_cast<TorchOpClass>(i)), c.kernels,
                  c.gpu_time_s * 1e3, fit.predicted_s[i] * 1e3, pct(fit.predicted_s[i], c.gpu_time_s));
      if (with_scenario) {
        if (static_cast<TorchOpClass>(i) == TorchOpClass::kOther) std::printf(" %10s %7s", "-", "");
        else std::printf(" %10.3f %7.1f", model_cal.class_s[i] * 1e3, pct(model_cal.class_s[i], c.gpu_time_s));
        std::printf(" %11.3f %7.1f", model_rates.class_s[i] * 1e3, pct(model_rates.class_s[i], c.gpu_time_s));
      }
      std::printf("\n");
      if (with_scenario && static_cast<TorchOpClass>(i) == TorchOpClass::kElementwise)
        std::printf("  %-14s %7s %12.3f %10s %7s %10s %7s %11s  (no op rate: the model does not count it)\n",
                    " unmodelled", "", op_rates.unmodelled_elementwise_s * 1e3, "", "", "", "", "-");
    }
    const double idle = std::max(0.0, trace.step_time_s - trace.gpu_busy_s);
    std::printf("  %-14s %7s %12.3f %10s %7s", "GPU idle", "", idle * 1e3, "", "");
    if (with_scenario)
      std::printf(" %10.3f %7s %11.3f %7s  (model: kernel launch overhead)", model_cal.launch_s * 1e3, "",
                  model_rates.launch_s * 1e3, "");
    std::printf("\n");
    std::printf("  %-14s %7s %12.3f\n", "step", "", trace.step_time_s * 1e3);
    if (with_scenario) {
      std::printf("\nstep %s: measured %.3f ms\n", trace.step_name.empty() ? "(GPU span)" : trace.step_name.c_str(),
                  trace.step_time_s * 1e3);
      std::printf("  estimate with the GPU presets  %9.3f ms  %+6.1f%%\n", model_presets.step_s * 1e3,
                  pct(model_presets.step_s, trace.step_time_s));
      std::printf("  estimate with the kernel fit   %9.3f ms  %+6.1f%%  (GEMM share, attention, bandwidth)\n",
                  model_cal.step_s * 1e3, pct(model_cal.step_s, trace.step_time_s));
      std::printf("  estimate with op rates         %9.3f ms  %+6.1f%%  (op_rates: what --out's file gives "
                  "trainsim run --calibration)\n",
                  model_rates.step_s * 1e3, pct(model_rates.step_s, trace.step_time_s));
      std::printf("GEMM FLOPs: trace %.4g, model %.4g (%+.1f%%)\n", trace.of(TorchOpClass::kGemm).flop,
                  model_cal.gemm_flop, pct(model_cal.gemm_flop, trace.of(TorchOpClass::kGemm).flop));
      for (const auto& a : applied) std::printf("  applied: %s\n", a.c_str());
    }
    std::fflush(stdout);  // the report first, then its warnings, also when both go to one pipe
    for (const auto& w : trace.warnings) std::fprintf(stderr, "%s: %s\n", trace.source.c_str(), w.c_str());
    for (const auto& n : notes) std::fprintf(stderr, "%s: %s\n", trace.source.c_str(), n.c_str());
  }
  if (!out_path.empty()) {
    write_output_file(out_path, cal.dump(2) + "\n", "--out");
  }
  return kExitOk;
}

const CommandRegistrar kImportTorch("import-torch-trace",
                                    "fit efficiency tables to a PyTorch profiler trace of one step", declare, run);

}  // namespace
}  // namespace trainsim::cli
