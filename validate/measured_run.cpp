#include "validate/measured_run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/core/scenario_error.hpp"
#include "models/scenario/input_file.hpp"

namespace trainsim::validate {
using nlohmann::json;

const char* to_string(Component c) {
  switch (c) {
    case Component::kCompute: return "compute";
    case Component::kTp: return "tp_comm";
    case Component::kPipeline: return "pipeline_p2p_and_bubble";
    case Component::kDp: return "dp_comm";
    case Component::kOptimizer: return "optimizer";
    case Component::kOther: return "other_host";
  }
  return "?";
}

std::string op_class(const std::string& op) {
  auto starts = [&](const char* p) { return op.rfind(p, 0) == 0; };
  if (starts("gemm")) return "gemm";
  if (starts("attention")) return "attention";
  if (starts("layernorm")) return "layernorm";
  if (starts("gelu") || starts("swiglu")) return "gelu";
  if (op == "axpy") return "residual";
  if (op == "softmax_xent") return "softmax_xent";
  if (starts("embedding")) return "embedding";
  return "copy";
}

namespace {

Component component_of(const MeasuredEvent& e) {
  if (e.phase == "DP") return Component::kDp;
  if (e.group == "pp") return Component::kPipeline;
  if (e.group == "tp") return Component::kTp;
  if (e.group == "dp") return Component::kDp;
  if (e.phase == "OPT") return Component::kOptimizer;
  return Component::kCompute;
}

}  // namespace

std::vector<RankStep> parse_timeline(const std::string& text, const std::string& what) {
  std::vector<RankStep> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const json e = parse_json_or_discarded(line);
    if (e.is_discarded() || !e.is_object())
      throw ScenarioError(what, "line " + std::to_string(n) + " is not a JSON object");
    if (e.value("event", std::string()) != "step") continue;
    RankStep r;
    try {
      r.step = e.at("step").get<int>();
      r.rank = e.at("rank").get<int>();
      r.tp_rank = e.at("tp_rank").get<int>();
      r.pp_rank = e.at("pp_rank").get<int>();
      r.dp_rank = e.at("dp_rank").get<int>();
      r.core = e.value("core", -1);
      r.wall_s = e.at("wall_s").get<double>();
      r.cpu_s = e.at("cpu_s").get<double>();
      r.involuntary_switches = e.value("involuntary_switches", 0L);
      r.persistent_bytes = e.at("persistent_bytes").get<double>();
      r.peak_bytes = e.at("peak_bytes").get<double>();
      r.optimizer_step = e.value("optimizer_step", true);
      double inside = 0;
      for (const json& a : e.at("events")) {
        MeasuredEvent m;
        m.op = a.at(0).get<std::string>();
        m.group = a.at(1).get<std::string>();
        m.phase = a.at(2).get<std::string>();
        m.micro_batch = a.at(3).get<int>();
        m.t0_s = a.at(4).get<double>();
        m.t1_s = a.at(5).get<double>();
        m.count = a.at(6).get<double>();
        const double d = m.duration_s();
        inside += d;
        r.component_s[static_cast<int>(component_of(m))] += d;
        if (component_of(m) == Component::kCompute) r.compute_class_s[op_class(m.op)] += d;
        r.events.push_back(std::move(m));
      }
      r.component_s[static_cast<int>(Component::kOther)] = std::max(0.0, r.wall_s - inside);
    } catch (const json::exception& ex) {
      throw ScenarioError(what, "line " + std::to_string(n) + ": " + ex.what());
    }
    out.push_back(std::move(r));
  }
  return out;
}

MeasuredRun read_timelines(const std::string& prefix, int ranks) {
  MeasuredRun run;
  run.ranks = ranks;
  for (int r = 0; r < ranks; ++r) {
    const std::string path = prefix + ".rank" + std::to_string(r) + ".jsonl";
    std::ifstream f(path);
    if (!f) throw ScenarioError(path, "cannot read the op timeline of rank " + std::to_string(r));
    std::stringstream ss;
    ss << f.rdbuf();
    std::vector<RankStep> steps = parse_timeline(ss.str(), path);
    if (r == 0) {
      run.steps.resize(steps.size());
    } else if (steps.size() != run.steps.size()) {
      throw ScenarioError(path, "has " + std::to_string(steps.size()) + " steps but rank 0 has " +
                                    std::to_string(run.steps.size()));
    }
    for (std::size_t s = 0; s < steps.size(); ++s) run.steps[s].push_back(std::move(steps[s]));
  }
  if (run.steps.empty()) throw ScenarioError(prefix + ".rank0.jsonl", "no step lines");
  return run;
}

namespace {

// P(Binomial(n, 1/2) <= k), summed in logs (n up to a few thousand).
double binomial_half_cdf(int n, int k) {
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return sum;
}

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Stat median_ci(std::vector<double> v) {
  Stat s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = median_of_sorted(v);
  const int n = s.n;
  // Largest j (1-based) with P(B < j) = P(B <= j - 1) <= 0.025.
  int j = 0;
  while (j + 1 <= n && binomial_half_cdf(n, j) <= 0.025) ++j;
  if (j < 1) {
    s.exact = false;
    s.lo = v.front();
    s.hi = v.back();
    return s;
  }
  s.lo = v[j - 1];
  s.hi = v[n - j];
  return s;
}

double step_time_s(const MeasuredRun& run, int s) {
  double t = 0;
  for (const RankStep& r : run.steps[s]) t = std::max(t, r.wall_s);
  return t;
}

StepSelection select_steps(const MeasuredRun& run) {
  StepSelection sel;
  const int n = static_cast<int>(run.steps.size());
  std::vector<double> second;
  for (int s = n / 2; s < n; ++s) second.push_back(step_time_s(run, s));
  std::sort(second.begin(), second.end());
  const double ref = second.empty() ? 0 : median_of_sorted(second);
  auto stable = [&](int s) { return std::fabs(step_time_s(run, s) - ref) <= kStableBand * ref; };
  sel.warmup = std::max(1, n / 2);
  sel.warmup_found = false;
  for (int w = 1; w + kStableRun <= n && w <= n / 2; ++w) {
    bool ok = true;
    for (int i = 0; i < kStableRun && ok; ++i) ok = stable(w + i);
    if (ok) {
      sel.warmup = w;
      sel.warmup_found = true;
      break;
    }
  }
  if (n == 1) sel.warmup = 0;
  for (int s = sel.warmup; s < n; ++s) {
    bool clean = true;
    for (const RankStep& r : run.steps[s]) clean = clean && r.cpu_share() >= kMinCpuShare;
    (clean ? sel.used : sel.disturbed).push_back(s);
  }
  return sel;
}

double stage_component_s(const MeasuredRun& run, int s, int stage, Component c) {
  bool pipelined = false;
  for (const RankStep& r : run.steps[s]) pipelined = pipelined || r.pp_rank > 0;
  // A rank done before the step's last rank idles until it ends (the next step starts from a
  // barrier): with a pipeline that is the schedule's drain, which the prediction's bubble holds;
  // without one it is skew between ranks, which no component models.
  const Component idle = pipelined ? Component::kPipeline : Component::kOther;
  const double step = step_time_s(run, s);
  double sum = 0;
  int k = 0;
  for (const RankStep& r : run.steps[s])
    if (r.pp_rank == stage) {
      sum += r.component_s[static_cast<int>(c)] + (c == idle ? step - r.wall_s : 0.0);
      ++k;
    }
  return k ? sum / k : 0;
}

double stage_compute_class_s(const MeasuredRun& run, int s, int stage, const std::string& cls) {
  double sum = 0;
  int k = 0;
  for (const RankStep& r : run.steps[s]) {
    if (r.pp_rank != stage) continue;
    ++k;
    auto it = r.compute_class_s.find(cls);
    if (it != r.compute_class_s.end()) sum += it->second;
  }
  return k ? sum / k : 0;
}

}  // namespace trainsim::validate
