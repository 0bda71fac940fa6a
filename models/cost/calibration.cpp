#include "models/cost/calibration.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "models/core/piecewise.hpp"
#include "models/core/scenario_error.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/compression.hpp"
#include "models/cost/compute/attention_model.hpp"
#include "models/cost/compute/gemm_model.hpp"
#include "models/cost/compute/kernel_params_json.hpp"
#include "models/scenario/json_reader.hpp"

namespace trainsim {
using nlohmann::json;

bool precision_of_dtype(const std::string& dtype, Precision& precision) {
  if (dtype == "f32" || dtype == "fp32") precision = Precision::kFp32;
  else if (dtype == "f16" || dtype == "fp16") precision = Precision::kFp16;
  else if (dtype == "bf16") precision = Precision::kBf16;
  else if (dtype == "fp8" || dtype == "e4m3") precision = Precision::kFp8;
  else return false;
  return true;
}

double& gemm_share_of(GpuKernelParams& params, Precision precision) {
  switch (precision) {
    case Precision::kFp8: return params.gemm_share_fp8;
    case Precision::kFp32: return params.gemm_share_fp32;
    default: return params.gemm_share_16bit;
  }
}

Precision gemm_share_family(const GpuSpec& gpu, Precision precision) {
  const Precision p = gemm_dtype_on(gpu, precision);
  return p == Precision::kFp16 ? Precision::kBf16 : p;
}

GemmShareFit fit_gemm_share(const GpuSpec& gpu, const std::vector<GemmSample>& samples) {
  GemmShareFit fit;
  std::vector<GemmSample> used;
  GpuSpec g = gpu;
  for (const GemmSample& x : samples) {
    if (!(x.efficiency > 0) || x.shape.flop() <= 0) continue;
    if (used.empty() || gemm_share_family(g, x.precision) == gemm_share_family(g, used.front().precision))
      used.push_back(x);
  }
  fit.samples = static_cast<int>(used.size());
  if (used.empty()) return fit;
  double& share = gemm_share_of(g.kernel, gemm_share_family(g, used.front().precision));
  auto weight = [](const GemmSample& x) { return x.weight > 0 ? x.weight : x.shape.flop(); };
  // Minimise sum(w_j (r x_j / e_j - 1)^2) over the scale r: r = sum(w x/e) / sum(w x^2/e^2),
  // x_j the model's efficiency at the current share; the share takes r until r stays 1.
  share = 1;
  for (int it = 0; it < 50; ++it) {
    double num = 0, den = 0;
    for (const GemmSample& x : used) {
      const double m = gemm_efficiency_from_shape(g, x.shape, x.precision) / x.efficiency;
      num += weight(x) * m;
      den += weight(x) * m * m;
    }
    const double r = den > 0 ? num / den : 0;
    if (!(r > 0) || !std::isfinite(r)) return fit;
    // No GEMM runs above the peak its efficiency is measured against.
    if (share * r >= 1) {
      fit.capped = share * r > 1;
      share = 1;
      break;
    }
    share *= r;
    if (std::fabs(r - 1) < 1e-9) break;
  }
  double sum = 0, weights = 0;
  for (const GemmSample& x : used) {
    const double rel = std::fabs(gemm_efficiency_from_shape(g, x.shape, x.precision) / x.efficiency - 1);
    sum += weight(x) * rel;
    weights += weight(x);
    fit.max_relative_error = std::max(fit.max_relative_error, rel);
  }
  fit.share = share;
  fit.mean_relative_error = weights > 0 ? sum / weights : 0;
  return fit;
}

namespace {

// A calibration file is read leniently (writers add keys of their own) but every value the cost
// models use is checked for type and physical range, and messages never quote the file.
const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

double in_range(const json* v, const std::string& path, double lo_exclusive, double hi) {
  char range[96];
  std::snprintf(range, sizeof range, "a number above %g and at most %g", lo_exclusive, hi);
  if (!v) throw ScenarioError(path, std::string("missing: expected ") + range);
  if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() <= lo_exclusive ||
      v->get<double>() > hi)
    throw ScenarioError(path, std::string("expected ") + range + ", got " + describe_json_value(*v));
  return v->get<double>();
}

std::string string_of(const json& obj, const char* key, const std::string& path) {
  const json* v = member(obj, key);
  if (!v) return "";
  if (!v->is_string()) throw ScenarioError(path + "." + key, "expected a string, got " + describe_json_value(*v));
  return v->get<std::string>();
}

// An optional measured figure: 0 when absent, else a finite number (the fits skip non-positive
// ones), so that a mistyped value is reported by name instead of escaping as a JSON type error.
double optional_number(const json& obj, const char* key, const std::string& path) {
  const json* v = member(obj, key);
  if (!v) return 0;
  if (!v->is_number() || !std::isfinite(v->get<double>()))
    throw ScenarioError(path + "." + key, "expected a number, got " + describe_json_value(*v));
  return v->get<double>();
}

// Physical ceilings: no GPU reaches 1e19 FLOP/s or 1e16 B/s; a measured efficiency is at most a
// little above 1 (boost clocks over the nominal peak), never 2.
constexpr double kMaxFlopPerS = 1e19;
constexpr double kMaxBytesPerS = 1e16;
constexpr double kMaxEfficiency = 2.0;
constexpr double kMaxSecondsPerElement = 1.0;

std::string fmt(const char* f, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

}  // namespace

namespace {

// "batch=2 seq=512 heads=16 head_dim=128" (the calibration's attention shape string).
bool parse_attention_shape(const std::string& text, AttentionShape& a) {
  std::istringstream in(text);
  std::string part;
  int found = 0;
  while (in >> part) {
    const auto eq = part.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = part.substr(0, eq);
    const double v = std::atof(part.c_str() + eq + 1);
    if (!(v > 0 && v <= 1e9)) return false;  // a shape's sizes, not "inf" or 1e300
    if (key == "batch") a.batch = v, ++found;
    else if (key == "seq") a.seq_q = v, ++found;
    else if (key == "seq_kv") a.seq_kv = v;
    else if (key == "heads") a.heads = a.kv_heads = v, ++found;
    else if (key == "head_dim") a.head_dim = v, ++found;
  }
  if (!(a.seq_kv > 0)) a.seq_kv = a.seq_q;
  return found == 4;
}

using AttentionPoints = std::vector<std::pair<AttentionShape, double>>;  // (shape, FLOP/s over the peak)

// The points at the head dim most of them have (the fit has one share to find).
AttentionPoints at_one_head_dim(const AttentionPoints& points) {
  std::map<double, int> count;
  for (const auto& p : points) ++count[p.first.head_dim];
  double head_dim = 0;
  int most = 0;
  for (const auto& [d, n] : count)
    if (n > most) most = n, head_dim = d;
  AttentionPoints out;
  for (const auto& p : points)
    if (p.first.head_dim == head_dim) out.push_back(p);
  return out;
}

// One pass's parameters from its points, all at one head dim: for each overhead on a grid the
// share has a closed form (least squares in relative error); the best pair wins. Without a
// prior the causal factor is 1 (the share absorbs it). With `prior` (the preset's parameters of
// the kernel measured, from its kernel benchmarks) the causal factor stays, the overhead is
// fitted only where the points span two sequence lengths or more (at one length a per-CTA cost
// and the share cannot be told apart) and is the prior's otherwise, and the prior's shares at
// other head dims keep their ratio to the one measured.
bool fit_attention_pass(const AttentionPoints& all_points, bool backward, const GpuKernelParams& base,
                        const AttentionPassParams* prior, AttentionPassParams& out) {
  const AttentionPoints points = at_one_head_dim(all_points);
  if (points.empty()) return false;
  const double head_dim = points.front().first.head_dim;
  std::set<double> lengths;
  for (const auto& p : points) lengths.insert(p.first.seq_kv);
  const bool fit_overhead = !prior || lengths.size() >= 2;
  double best_err = HUGE_VAL;
  for (int i = 0; i <= (fit_overhead ? 400 : 0); ++i) {
    AttentionPassParams unit;
    unit.share_by_head_dim = {{head_dim, 1.0}};
    unit.overhead_blocks = fit_overhead ? 0.05 * i : prior->overhead_blocks;
    unit.causal_factor = prior ? prior->causal_factor : 1;
    GpuSpec g;
    g.kernel = base;
    g.kernel.flash2 = {unit, unit};
    double num = 0, den = 0;
    std::vector<double> x;
    for (const auto& [a, eff] : points) {
      AttentionShape v2 = a;
      v2.kernel = AttentionKernel::kFlash2;
      x.push_back(fused_attention_efficiency(g, v2, backward));
      num += x.back() / eff;
      den += x.back() * x.back() / (eff * eff);
    }
    const double share = den > 0 ? num / den : 0;
    double err = 0;
    for (std::size_t j = 0; j < points.size(); ++j) err += std::pow(share * x[j] / points[j].second - 1, 2);
    if (err < best_err) {
      best_err = err;
      out = unit;
      out.share_by_head_dim = {{head_dim, share}};
    }
  }
  const double share = out.share_by_head_dim.front().second;
  if (!(share > 0 && share <= 1)) return false;
  if (prior && prior->present()) {
    const double before = piecewise_linear(prior->share_by_head_dim, head_dim, [](double d) { return std::log2(d); });
    if (before > 0) {
      out.share_by_head_dim = prior->share_by_head_dim;
      for (auto& [d, s] : out.share_by_head_dim) s = d == head_dim ? share : std::min(1.0, s * share / before);
      if (std::none_of(out.share_by_head_dim.begin(), out.share_by_head_dim.end(),
                       [&](const auto& e) { return e.first == head_dim; })) {
        out.share_by_head_dim.emplace_back(head_dim, share);
        std::sort(out.share_by_head_dim.begin(), out.share_by_head_dim.end());
      }
    }
  }
  return true;
}

}  // namespace

GpuKernelParams fit_kernel_params(const json& cal, const GpuKernelParams& base) {
  if (cal.contains("kernels")) return parse_gpu_kernel_params(cal["kernels"], "calibration.kernels", base);
  GpuKernelParams k = base;
  double peak16 = 0, peak32 = 0;
  if (cal.contains("peak_flop_per_s") && cal["peak_flop_per_s"].is_object()) {
    const json& peaks = cal["peak_flop_per_s"];
    auto rate = [&](const char* key) {
      const json* entry = member(peaks, key);
      const json* v = entry ? member(*entry, "flop_per_s") : nullptr;
      return v && v->is_number() ? v->get<double>() : 0.0;
    };
    peak32 = rate("f32");
    if (peak32 > 0) k.gemm_share_fp32 = 1;
    peak16 = rate("bf16") > 0 ? rate("bf16") : rate("f16");
    if (peak16 > 0) k.gemm_share_16bit = 1;
  }
  if (member(cal, "memory_bandwidth_bytes_per_s")) k.memory_bandwidth_share = 1;
  // A share of the GPU's own bandwidth (a profiler trace's: what its memory-bound kernels reach,
  // priced by the kernel model; the trace measures no bandwidth of its own).
  if (const json* share = member(cal, "memory_bandwidth_share"))
    k.memory_bandwidth_share = in_range(share, "calibration.memory_bandwidth_share", kMinMemoryBandwidthShare, 1);
  if (!cal.contains("ops") || !cal["ops"].is_array()) return k;
  // Fixed kernel time: intercept of time = t0 + bytes / bandwidth over the copies.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, smallest = HUGE_VAL;
  AttentionPoints fwd, bwd;
  // Points of a named FlashAttention generation (a profiler trace's: the kernel the plan runs,
  // timed at the model's own shapes), per generation and pass.
  std::map<std::string, std::array<AttentionPoints, 2>> named;
  for (std::size_t i = 0; i < cal["ops"].size(); ++i) {
    const json& op = cal["ops"][i];
    if (!op.is_object()) continue;
    const std::string path = "calibration.ops[" + std::to_string(i) + "]";
    const std::string name = string_of(op, "op", path);
    const double t = optional_number(op, "time_s", path), bytes = optional_number(op, "bytes", path),
                 flop = optional_number(op, "flop", path);
    if (!(t > 0)) continue;
    if (name == "copy" && bytes > 0) {
      n += 1, sx += bytes, sy += t, sxx += bytes * bytes, sxy += bytes * t;
      smallest = std::min(smallest, bytes);
    } else if ((name == "attention_fwd" || name == "attention_bwd") && flop > 0 && peak16 > 0) {
      AttentionShape a;
      a.causal = true;  // calibrate times causal attention (FLOPs 2 b h s^2 d)
      if (const json* causal = member(op, "causal")) {
        if (!causal->is_boolean()) throw ScenarioError(path + ".causal", "expected true or false");
        a.causal = causal->get<bool>();
      }
      if (!parse_attention_shape(string_of(op, "shape", path), a)) continue;
      const bool backward = name == "attention_bwd";
      if (member(op, "kernel")) {
        const std::string kernel = string_of(op, "kernel", path);
        if (kernel != "flash2" && kernel != "flash3")
          throw ScenarioError(path + ".kernel", "expected \"flash2\" or \"flash3\" (the FlashAttention generation "
                                                "timed), got \"" + safe_excerpt(kernel) + "\"");
        named[kernel][backward].emplace_back(a, flop / t / peak16);
      } else {
        (backward ? bwd : fwd).emplace_back(a, flop / t / peak16);
      }
    }
  }
  const double det = n * sxx - sx * sx;
  if (n >= 2 && det > 0) {
    const double t0 = (sy * sxx - sx * sxy) / det, seconds_per_byte = (n * sxy - sx * sy) / det;
    // The intercept is a kernel's fixed time only where the sweep holds a copy short enough for
    // it to show (its bytes take no longer than t0 at the fitted rate). Extrapolated from large
    // copies alone it is their bandwidth ramp: the H200's calibration fits 10.5 us over copies
    // of 134 MB-2 GB, where one-element kernels back to back take 0.87 us
    // (mem_h200_kernel_launch_overhead).
    if (t0 > 0 && t0 < 1e-3 && smallest * seconds_per_byte <= t0) k.kernel_fixed_s = t0;
  }
  // calibrate times its own fp32 attention kernel. It stands for the plan's 16-bit fused
  // kernels only on a device without 16-bit tensor cores (16-bit no faster than fp32, as on a
  // CPU, where the trainer runs that very kernel); on a GPU FlashAttention is another kernel
  // altogether (trainsim's one thread a row reaches 0.4 TFLOP/s on an H200, FlashAttention-2
  // hundreds), and the preset's FlashAttention tables stay.
  AttentionKernelParams measured;
  const bool attention_is_the_plans = peak16 > 0 && peak32 > 0 && peak16 <= peak32;
  if (attention_is_the_plans && fit_attention_pass(fwd, false, base, nullptr, measured.forward) &&
      fit_attention_pass(bwd, true, base, nullptr, measured.backward))
    k.flash2 = k.flash3 = measured;
  // A named generation's points set that generation's parameters, on top of the preset's (its
  // causal factor, its overhead unless two sequence lengths or more were timed, its ratios
  // between head dims); a pass not timed keeps the preset's (or, with none, the other pass's).
  for (const auto& [kernel, passes] : named) {
    AttentionKernelParams& target = kernel == "flash3" ? k.flash3 : k.flash2;
    AttentionKernelParams fitted = target;
    bool any = false;
    for (int b = 0; b < 2; ++b) {
      AttentionPassParams& pass = b ? fitted.backward : fitted.forward;
      AttentionPassParams result;
      if (fit_attention_pass(passes[b], b == 1, base, pass.present() ? &pass : nullptr, result)) {
        pass = result;
        any = true;
      }
    }
    if (!any) continue;
    if (!fitted.forward.present()) fitted.forward = fitted.backward;
    if (!fitted.backward.present()) fitted.backward = fitted.forward;
    target = fitted;
  }
  return k;
}

std::vector<std::string> calibrate_gpu(const json& cal, GpuSpec& g, std::vector<GemmFamilyFit>* gemm_fits) {
  std::vector<std::string> applied;
  if (const json* peaks = member(cal, "peak_flop_per_s")) {
    if (!peaks->is_object()) throw ScenarioError("calibration.peak_flop_per_s", "expected an object");
    for (auto it = peaks->begin(); it != peaks->end(); ++it) {
      const std::string path = "calibration.peak_flop_per_s." + safe_excerpt(it.key());
      if (!it.value().is_object()) throw ScenarioError(path, "expected an object {flop_per_s}");
      const double rate = in_range(member(it.value(), "flop_per_s"), path + ".flop_per_s", 0, kMaxFlopPerS);
      if (it.key() == "f32") g.peak_flops_fp32 = rate;
      else if (it.key() == "bf16") g.peak_flops_bf16 = rate;
      else if (it.key() == "f16") g.peak_flops_fp16 = rate;
      else continue;
      applied.push_back("peak " + it.key() + fmt(" %.4g FLOP/s", rate));
    }
  }
  if (const json* bw = member(cal, "memory_bandwidth_bytes_per_s")) {
    g.hbm_bandwidth_bytes_per_s = in_range(bw, "calibration.memory_bandwidth_bytes_per_s", 0, kMaxBytesPerS);
    applied.push_back(fmt("memory bandwidth %.4g B/s", g.hbm_bandwidth_bytes_per_s));
  }
  // Rates measured inside a training loop (a profiler trace's) hold the loop's own losses: the
  // model must not take the training-loop share off them again.
  if (const json* loop = member(cal, "training_tensor_share")) {
    g.training_tensor_share = in_range(loop, "calibration.training_tensor_share", 0, 1);
    applied.push_back(fmt("training-loop tensor share %.3g (the file's rates were measured in the loop)",
                          g.training_tensor_share));
  }
  // The measured GEMM shapes, fitted below on top of the kernel-level parameters: each row's
  // efficiency is its FLOP/s over the peak of its dtype (the file's, else the preset's).
  std::vector<GemmSample> gemm_rows;
  if (const json* gemm_v = member(cal, "gemm")) {
    const json& gemm = *gemm_v;
    if (!gemm.is_array()) throw ScenarioError("calibration.gemm", "expected a list");
    for (std::size_t i = 0; i < gemm.size(); ++i) {
      const std::string path = "calibration.gemm[" + std::to_string(i) + "]";
      const json& e = gemm[i];
      if (!e.is_object()) throw ScenarioError(path, "expected an object");
      GemmSample x;
      x.shape.m = in_range(member(e, "m"), path + ".m", 0, 1e9);
      x.shape.n = in_range(member(e, "n"), path + ".n", 0, 1e9);
      x.shape.k = in_range(member(e, "k"), path + ".k", 0, 1e9);
      x.efficiency = in_range(member(e, "efficiency"), path + ".efficiency", 0, kMaxEfficiency);
      // A trace's row sums its shape's calls: it weighs in the fit as all of them.
      const json* calls = member(e, "calls");
      x.weight = x.shape.flop() * (calls ? in_range(calls, path + ".calls", 0, 1e9) : 1.0);
      // A dtype no plan computes in (int8, tf32) prices nothing.
      if (!precision_of_dtype(string_of(e, "dtype", path), x.precision)) continue;
      gemm_rows.push_back(x);
    }
  }
  {
    const GpuKernelParams before = g.kernel;
    g.kernel = fit_kernel_params(cal, g.kernel);
    // The GEMM rows set the sustained share of each dtype family they measure (16-bit, fp8,
    // fp32) under the GPU's tiles and scheduling: what a GEMM of any shape is then priced at.
    // A family's share the rows did not fit but the file's peaks set (to 1) is listed below.
    bool fitted[static_cast<int>(Precision::kFp8) + 1] = {};
    for (const Precision family : {Precision::kBf16, Precision::kFp8, Precision::kFp32}) {
      std::vector<GemmSample> rows;
      for (const GemmSample& x : gemm_rows)
        if (gemm_share_family(g, x.precision) == family) rows.push_back(x);
      if (rows.empty()) continue;
      const GemmShareFit fit = fit_gemm_share(g, rows);
      // A share below 1% says the rows are not GEMM timings of this GPU.
      if (!(fit.share >= 0.01) || !std::isfinite(fit.share))
        throw ScenarioError("calibration.gemm",
                            fmt("the GEMM sustained share fitted to the measured shapes is %.3g of the peak, "
                                "below the 0.01 a GPU's GEMMs reach: they are not timings of this GPU",
                                fit.share));
      gemm_share_of(g.kernel, family) = fit.share;
      fitted[static_cast<int>(family)] = true;
      if (gemm_fits) gemm_fits->push_back({family, fit});
      applied.push_back(std::string("GEMM sustained share (") +
                        (family == Precision::kBf16 ? "16-bit" : to_string(family)) + fmt(") %.3f", fit.share) +
                        " of the peak, the kernel model fitted to " + std::to_string(fit.samples) + " shapes" +
                        fmt(" (FLOP-weighted error %.1f%%,", 100 * fit.mean_relative_error) +
                        fmt(" worst %.1f%%)", 100 * fit.max_relative_error) +
                        (fit.capped ? ", capped at the peak: the kernel model would reach the measured rates "
                                      "only above it"
                                    : ""));
    }
    std::string what;
    auto note = [&](bool changed, const std::string& item) {
      if (changed) what += (what.empty() ? "" : ", ") + item;
    };
    note(!fitted[static_cast<int>(Precision::kBf16)] && g.kernel.gemm_share_16bit != before.gemm_share_16bit,
         "GEMM sustained share (16-bit)");
    note(!fitted[static_cast<int>(Precision::kFp32)] && g.kernel.gemm_share_fp32 != before.gemm_share_fp32,
         "GEMM sustained share (fp32)");
    note(g.kernel.memory_bandwidth_share != before.memory_bandwidth_share,
         fmt("achieved bandwidth (%.3f of the HBM bandwidth)", g.kernel.memory_bandwidth_share));
    note(g.kernel.kernel_fixed_s != before.kernel_fixed_s, fmt("kernel fixed time %.3g s", g.kernel.kernel_fixed_s));
    note(g.kernel.flash2.forward.share_by_head_dim != before.flash2.forward.share_by_head_dim, "attention efficiency");
    if (!what.empty()) applied.push_back("kernel-level parameters: " + what);
  }
  return applied;
}

void check_calibration_header(const json& cal) {
  if (!cal.is_object())
    throw ScenarioError("calibration", "expected a calibration object, got " + describe_json_value(cal));
  if (string_of(cal, "format", "calibration") != "trainsim-calibration")
    throw ScenarioError("calibration.format", "expected \"trainsim-calibration\" (a file written by trainsim calibrate)");
  if (!cal.contains("version") || cal["version"] != 1)
    throw ScenarioError("calibration.version", "this trainsim reads calibration version 1");
  // Present means given: readers take these with json::value, which a null would stop.
  if (cal.contains("device") && !cal["device"].is_string())
    throw ScenarioError("calibration.device", "expected the device's name, got " + describe_json_value(cal["device"]));
  if (cal.contains("ranks") && !(cal["ranks"].is_number_integer() && cal["ranks"].get<int64_t>() >= 1))
    throw ScenarioError("calibration.ranks", "expected a count of ranks (1 or more), got " + describe_json_value(cal["ranks"]));
}

std::vector<std::string> apply_calibration(const json& cal, Scenario& s) {
  check_calibration_header(cal);
  if (const json* wrong = member(cal, "wrong")) {
    if (!wrong->is_number())
      throw ScenarioError("calibration.wrong", "expected a count, got " + describe_json_value(*wrong));
    if (wrong->get<double>() != 0)
      throw ScenarioError("calibration.wrong", "the calibration run reported wrong results; refusing to use it");
  }
  std::vector<std::string> applied = calibrate_gpu(cal, s.cluster.gpu);
  GpuSpec& g = s.cluster.gpu;
  if (const json* colls_v = member(cal, "collectives")) {
    const json& colls = *colls_v;
    if (!colls.is_array()) throw ScenarioError("calibration.collectives", "expected a list");
    // Every op the communicator ran inside a node, as it ran it: the first curve per (op, group
    // size) is the communicator's own (calibrate writes those before its own ring and compressed
    // variants). The first all-reduce also sets the in-node fabric.
    std::string curves;
    bool fabric_set = false;
    s.cluster.measured_collectives.clear();
    for (std::size_t i = 0; i < colls.size(); ++i) {
      const json& c = colls[i];
      const std::string path = "calibration.collectives[" + std::to_string(i) + "]";
      if (!c.is_object()) throw ScenarioError(path, "expected an object");
      const json* ranks_v = member(c, "ranks");
      const int ranks = ranks_v ? static_cast<int>(json_to_integer(*ranks_v, path + ".ranks", 0, 1 << 24)) : 0;
      const std::string op = string_of(c, "op", path);
      if (!measured_collective_op(op) || ranks < 2) continue;
      if (string_of(c, "fabric", path) == "inter_node") continue;
      if (op == "all_reduce" && !fabric_set) {
        // A measured bus bandwidth is the one-direction rate a ring sustains, protocol included:
        // NVLink-style "both directions" figure = 2 x busbw, efficiency 1. Ring latency per step
        // = alpha / (2 (n - 1)).
        const double busbw = in_range(member(c, "bus_bandwidth_bytes_per_s"), path + ".bus_bandwidth_bytes_per_s",
                                      0, kMaxBytesPerS);
        const json* alpha_v = member(c, "alpha_s");
        if (alpha_v && (!alpha_v->is_number() || !(alpha_v->get<double>() >= 0 && alpha_v->get<double>() <= 1)))
          throw ScenarioError(path + ".alpha_s", "expected a latency between 0 and 1 s, got " + describe_json_value(*alpha_v));
        const double alpha = alpha_v ? alpha_v->get<double>() : 0.0;
        s.cluster.intra_node.bandwidth_bytes_per_s = 2 * busbw;
        s.cluster.intra_node.efficiency = 1.0;
        s.cluster.intra_node.latency_s = std::max(0.0, alpha) / (2.0 * (ranks - 1));
        applied.push_back(fmt("in-node all-reduce: busbw %.4g B/s, step latency %.3g s", busbw,
                              s.cluster.intra_node.latency_s));
        fabric_set = true;
      }
      bool seen = false;
      for (const MeasuredCollective& m : s.cluster.measured_collectives) seen = seen || (m.op == op && m.ranks == ranks);
      const json* samples = member(c, "samples");
      if (seen || !samples) continue;
      if (!samples->is_array()) throw ScenarioError(path + ".samples", "expected a list");
      MeasuredCollective m;
      m.op = op;
      m.ranks = ranks;
      for (std::size_t k = 0; k < samples->size(); ++k) {
        const std::string sp = path + ".samples[" + std::to_string(k) + "]";
        const json& row = (*samples)[k];
        if (!row.is_object()) throw ScenarioError(sp, "expected an object");
        const double bytes = in_range(member(row, "bytes"), sp + ".bytes", 0, 1e13);
        const double t = in_range(member(row, "time_s"), sp + ".time_s", 0, 1e3);
        if (!m.bytes_seconds.empty() && !(bytes > m.bytes_seconds.back().first))
          throw ScenarioError(sp + ".bytes", "expected sizes in ascending order (a size above the previous row's)");
        m.bytes_seconds.emplace_back(bytes, t);
      }
      if (m.bytes_seconds.empty()) continue;
      curves += (curves.empty() ? "" : ", ") + op;
      s.cluster.measured_collectives.push_back(std::move(m));
    }
    if (!curves.empty())
      applied.push_back("measured collectives price these ops inside a node, on groups of the sizes measured: " + curves);
  }
  OpRatesShape shape;
  const OpRates rates = read_op_rates(cal, &shape);
  if (rates.present()) {
    g.op_rates = rates;
    applied.push_back("per-op rates (op_rates, measured at hidden " + std::to_string(shape.hidden) +
                      ", seq " + std::to_string(shape.seq) + ", micro-batch " +
                      std::to_string(shape.micro_batch) + ", tp " + std::to_string(shape.tp) +
                      ") replace the compute roofline");
  }
  return applied;
}

OpRates read_op_rates(const json& cal, OpRatesShape* shape) {
  OpRates r;
  if (!cal.is_object() || !cal.contains("op_rates")) return r;
  const json& o = cal["op_rates"];
  const std::string p = "calibration.op_rates";
  if (!o.is_object()) throw ScenarioError(p, "expected an object");
  auto section = [&](const char* key) -> const json& {
    if (!o.contains(key) || !o[key].is_object()) throw ScenarioError(p + "." + key, "expected an object");
    return o[key];
  };
  auto num = [&](const json& parent, const char* key, const std::string& path, double hi = 1e30) {
    return in_range(member(parent, key), path + "." + key, 0, hi);
  };
  r.peak_flop_per_s = num(o, "peak_f32_flop_per_s", p, kMaxFlopPerS);
  const json& ge = section("gemm_efficiency");
  r.gemm_forward_efficiency = num(ge, "forward", p + ".gemm_efficiency", kMaxEfficiency);
  r.gemm_backward_input_efficiency = num(ge, "backward_input", p + ".gemm_efficiency", kMaxEfficiency);
  r.gemm_backward_weight_efficiency = num(ge, "backward_weight", p + ".gemm_efficiency", kMaxEfficiency);
  r.lm_head_gemm_efficiency = num(ge, "lm_head", p + ".gemm_efficiency", kMaxEfficiency);
  const json& ae = section("attention_efficiency");
  r.attention_forward_efficiency = num(ae, "forward", p + ".attention_efficiency", kMaxEfficiency);
  r.attention_backward_efficiency = num(ae, "backward", p + ".attention_efficiency", kMaxEfficiency);
  const json& se = section("seconds_per_element");
  const std::string sp = p + ".seconds_per_element";
  r.layernorm_fwd_s_per_element = num(se, "layernorm_fwd", sp, kMaxSecondsPerElement);
  r.layernorm_bwd_s_per_element = num(se, "layernorm_bwd", sp, kMaxSecondsPerElement);
  r.gelu_fwd_s_per_element = num(se, "gelu_fwd", sp, kMaxSecondsPerElement);
  r.gelu_bwd_s_per_element = num(se, "gelu_bwd", sp, kMaxSecondsPerElement);
  r.residual_add_s_per_element = num(se, "residual_add", sp, kMaxSecondsPerElement);
  r.softmax_xent_s_per_element = num(se, "softmax_xent", sp, kMaxSecondsPerElement);
  r.embedding_fwd_s_per_element = num(se, "embedding_fwd", sp, kMaxSecondsPerElement);
  r.embedding_bwd_s_per_element = num(se, "embedding_bwd", sp, kMaxSecondsPerElement);
  r.copy_s_per_element = num(se, "copy", sp, kMaxSecondsPerElement);
  r.fill_zero_s_per_element = num(se, "fill_zero", sp, kMaxSecondsPerElement);
  r.adamw_s_per_param = num(o, "adamw_seconds_per_param", p, kMaxSecondsPerElement);
  // Optional (older calibrations lack it): the call-to-call spread of the ops' times, from 0 (the
  // calibrator measured none: every repetition alike, as no spread modelled) to 1.
  if (const json* cv = member(o, "op_time_cv"))
    r.op_time_cv = cv->is_number() && cv->get<double>() == 0 ? 0.0 : num(o, "op_time_cv", p, 1.0);
  // Optional: calibrations written before the compression kernels were timed lack it, and the
  // model then prices those kernels at memory bandwidth.
  if (const json* cs = member(o, "compression_seconds_per_element")) {
    const std::string cp = p + ".compression_seconds_per_element";
    if (!cs->is_object()) throw ScenarioError(cp, "expected an object");
    const auto methods = compression_method_names();
    for (const auto& [method, rates] : cs->items()) {
      if (method == "none" || std::find(methods.begin(), methods.end(), method) == methods.end())
        throw ScenarioError(cp + "." + method, "unknown compression method: expected int8, int4, fp8, 2:4 or topk");
      if (!rates.is_object()) throw ScenarioError(cp + "." + method, "expected an object");
      r.compression.push_back({method, {num(rates, "compress", cp + "." + method, kMaxSecondsPerElement),
                                        num(rates, "decompress_add", cp + "." + method, kMaxSecondsPerElement)}});
    }
  }
  if (shape) {
    const json& sh = section("shape");
    auto geti = [&](const char* key, int64_t min = 1) {
      const json* v = member(sh, key);
      if (!v && min == 0) return 0;
      if (!v) throw ScenarioError(p + ".shape." + key, "missing: expected a positive integer");
      return static_cast<int>(json_to_integer(*v, p + ".shape." + key, min, int64_t{1} << 30));
    };
    *shape = {geti("layers"), geti("hidden"), geti("heads"), geti("seq"), geti("vocab"), geti("micro_batch"),
              geti("tp"), geti("pp"), geti("dp"), geti("zero", 0)};
  }
  return r;
}

}  // namespace trainsim
