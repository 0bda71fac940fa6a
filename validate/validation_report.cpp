#include "validate/validation_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace trainsim::validate {
using nlohmann::json;

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string pct(double v) { return std::isfinite(v) ? fmt("%+.1f%%", 100 * v) : "n/a"; }
std::string ms(double s) { return fmt("%.3f", 1e3 * s); }

std::string esc(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '<') o += "&lt;";
    else if (ch == '>') o += "&gt;";
    else if (ch == '&') o += "&amp;";
    else if (ch == '"') o += "&quot;";
    else o += ch;
  }
  return o;
}

// A run the tool refused to judge (too noisy, machine changed, oversubscribed) holds no row to
// its limit: its measured figures, if any, are not evidence either way.
bool judged_run(Verdict v) { return v == Verdict::kPass || v == Verdict::kFail; }

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json row_json(const Row& r, bool run_judged) {
  return {{"name", r.name},
          {"predicted", r.predicted},
          {"measured_median", r.measured.median},
          {"measured_ci95", {r.measured.lo, r.measured.hi}},
          {"ci_exact", r.measured.exact},
          {"n", r.measured.n},
          {"error", num_or_null(r.error())},
          {"error_ci95", {num_or_null(r.error_lo()), num_or_null(r.error_hi())}},
          {"share_of_step", r.share},
          {"modelled", r.modelled},
          {"judged", r.judged},
          {"limit", r.judged ? json(r.limit) : json(nullptr)},
          {"within", run_judged ? json(r.within()) : json(nullptr)}};
}

// The colour key of a measured event and of a predicted op (one legend for both).
std::string measured_key(const MeasuredEvent& e) {
  if (e.phase == "DP" || e.group == "dp") return "dp";
  if (e.group == "pp") return "pp";
  if (e.group == "tp") return "tp";
  if (e.phase == "OPT") return "optimizer";
  return op_class(e.op);
}

const char* colour(const std::string& key) {
  static const std::pair<const char*, const char*> kColours[] = {
      {"gemm", "#4e79a7"},      {"attention", "#f28e2b"}, {"layernorm", "#76b7b2"}, {"gelu", "#e15759"},
      {"residual", "#59a14f"},  {"softmax_xent", "#edc948"}, {"embedding", "#b07aa1"}, {"copy", "#9c755f"},
      {"tp", "#ff9da7"},        {"pp", "#bab0ac"},        {"dp", "#17becf"},        {"optimizer", "#8c564b"}};
  for (const auto& [k, c] : kColours)
    if (key == k) return c;
  return "#cccccc";
}

// One slice of a drawn timeline.
struct Slice {
  int lane = 0;
  double t0 = 0, t1 = 0;
  std::string name, key;
};

// The predicted step as slices: a lane per stage, each pass of the played pipeline expanded into
// its program's ops (compute, then the inline collectives after each), scaled to the pass's
// played duration; the DP reduction and the optimizer after the pipeline.
std::vector<Slice> predicted_slices(const CpuPrediction& p, std::vector<std::string>* lanes) {
  std::vector<Slice> out;
  const Workload& w = p.estimate.workload;
  const Timeline& tl = p.estimate.timeline;
  for (int d = 0; d < w.pp; ++d) lanes->push_back("stage " + std::to_string(d));
  for (const TimelineOp& op : tl.ops) {
    const ChunkProgram& ch = w.programs[op.stage].chunks[std::min<std::size_t>(op.op.chunk, w.programs[op.stage].chunks.size() - 1)];
    const PassProgram& prog =
        ch.program(op.op.kind == PipeOpKind::kForward ? PassKind::kForward
                   : op.op.kind == PipeOpKind::kBackwardWeight ? PassKind::kBackwardWeight
                   : w.split_backward ? PassKind::kBackwardInput : PassKind::kBackward);
    std::vector<Slice> ops;
    double t = 0;
    auto add = [&](const std::string& name, const std::string& key, double dur) {
      ops.push_back({op.stage, t, t + dur, name, key});
      t += dur;
    };
    for (const OpBlock& b : prog.blocks)
      for (int rep = 0; rep < b.repeat; ++rep) {
        for (const CommOp& c : b.comm)
          if (c.after < 0 && c.stream == CommStream::kInline) add(std::string(to_string(c.op)) + " " + to_string(c.group), "tp", c.time_s);
        for (std::size_t i = 0; i < b.compute.size(); ++i) {
          const ComputeOp& cop = b.compute[i];
          std::string key = cop.kind == ComputeKind::kGemm ? "gemm" : cop.kind == ComputeKind::kAttention ? "attention" : "";
          if (key.empty()) {
            switch (cop.role) {
              case OpRole::kNorm: key = "layernorm"; break;
              case OpRole::kActivation: key = "gelu"; break;
              case OpRole::kResidual: key = "residual"; break;
              case OpRole::kSoftmaxXent:
              case OpRole::kFusedSoftmaxXent: key = "softmax_xent"; break;
              case OpRole::kEmbedding: key = "embedding"; break;
              default: key = "copy";
            }
          }
          add(std::string(to_string(cop.role)) + " " + to_string(cop.pass), key, b.compute_s[i]);
          for (const CommOp& c : b.comm)
            if (c.after == static_cast<int>(i) && c.stream == CommStream::kInline)
              add(std::string(to_string(c.op)) + " " + to_string(c.group),
                  c.purpose == CommPurpose::kTp ? "tp" : c.purpose == CommPurpose::kDp ? "dp" : "pp", c.time_s);
        }
      }
    const double scale = t > 0 ? (op.end_s - op.start_s) / t : 1;
    for (Slice& s : ops) {
      s.t0 = op.start_s + s.t0 * scale;
      s.t1 = op.start_s + s.t1 * scale;
      s.name += " mb" + std::to_string(op.op.micro_batch);
      out.push_back(s);
    }
  }
  const TimeBreakdown& bd = p.estimate.result.breakdown;
  const double end_pipe = tl.makespan_s;
  for (int d = 0; d < w.pp; ++d) {
    const double dp = w.stages[d].dp_reduce_s;
    if (dp > 0) out.push_back({d, end_pipe, end_pipe + dp, "dp reduction", "dp"});
    out.push_back({d, end_pipe + dp, end_pipe + dp + bd.optimizer_s, "optimizer", "optimizer"});
  }
  return out;
}

std::vector<Slice> measured_slices(const MeasuredRun& run, int step, std::vector<std::string>* lanes) {
  std::vector<Slice> out;
  for (const RankStep& r : run.steps[step]) {
    lanes->push_back("rank " + std::to_string(r.rank) + " (tp " + std::to_string(r.tp_rank) + ", pp " +
                     std::to_string(r.pp_rank) + ", dp " + std::to_string(r.dp_rank) + ")");
    for (const MeasuredEvent& e : r.events)
      out.push_back({r.rank, e.t0_s, e.t1_s,
                     e.op + (e.group.empty() ? "" : " " + e.group) +
                         (e.micro_batch >= 0 ? " mb" + std::to_string(e.micro_batch) : ""),
                     measured_key(e)});
  }
  return out;
}

}  // namespace

int representative_step(const MeasuredRun& run, const Comparison& c) {
  const std::vector<int>& used = c.selection.used;
  if (used.empty()) return static_cast<int>(run.steps.size()) - 1;
  const double m = c.rows.front().measured.median;
  int best = used.front();
  for (int s : used)
    if (std::fabs(step_time_s(run, s) - m) < std::fabs(step_time_s(run, best) - m)) best = s;
  return best;
}

json comparison_json(const CpuJob& j, const CpuPrediction& p, const Comparison& c, const RunContext& ctx) {
  json out;
  out["backend"] = ctx.backend;
  out["job"] = {{"ranks", j.ranks()},        {"tp", j.tp},
                {"pp", j.pp},                {"dp", j.dp},
                {"layers", j.layers},        {"hidden", j.hidden},
                {"heads", j.heads},          {"seq", j.seq},
                {"vocab", j.vocab},          {"micro_batch", j.micro_batch},
                {"micro_batches", j.micro_batches}, {"steps", j.steps},
                {"zero", j.zero},            {"schedule", j.schedule},
                {"compression", j.compression}, {"precision", "fp32"}};
  out["machine"] = {{"cores", ctx.cores},
                    {"binding", ctx.binding},
                    {"rank_layer_speed", c.rank_layer_speed},
                    {"rank_speed_spread", c.rank_speed_spread}};
  out["calibration"] = {{"file", ctx.calibration_file.empty() ? "measured before the run" : ctx.calibration_file},
                        {"device", ctx.calibration.value("device", "")},
                        {"applied", p.calibration_applied},
                        {"drift_after_run", c.calibration_drift}};
  out["steps"] = {{"warmup", c.selection.warmup},
                  {"warmup_found", c.selection.warmup_found},
                  {"used", c.selection.used.size()},
                  {"disturbed", c.selection.disturbed}};
  out["critical_stage"] = p.critical_stage;
  out["metrics"] = json::array();
  for (const Row& r : c.rows) out["metrics"].push_back(row_json(r, judged_run(c.verdict)));
  out["compute_by_op_class"] = json::array();
  for (const Row& r : c.compute_classes) out["compute_by_op_class"].push_back(row_json(r, judged_run(c.verdict)));
  out["verdict"] = to_string(c.verdict);
  out["reasons"] = c.reasons;
  return out;
}

namespace {

std::string limit_mark(const Row& r, Verdict v) {
  if (!judged_run(v)) return " not judged";
  return r.within() ? " ok" : " FAIL";
}

}  // namespace

std::string comparison_text(const CpuJob& j, const CpuPrediction& p, const Comparison& c, const RunContext& ctx) {
  std::ostringstream o;
  char line[400];
  std::snprintf(line, sizeof line,
                "validate --backend %s: %d rank(s), tp %d x pp %d x dp %d (ZeRO-%d, %s, compression %s), GPT layers %d "
                "hidden %d heads %d seq %d vocab %d, micro-batch %d x %d per replica\n",
                ctx.backend.c_str(), j.ranks(), j.tp, j.pp, j.dp, j.zero, j.schedule.c_str(), j.compression.c_str(),
                j.layers, j.hidden, j.heads, j.seq, j.vocab, j.micro_batch, j.micro_batches);
  o << line;
  o << "machine: " << ctx.cores << " core(s), " << ctx.binding << "; calibration: "
    << (ctx.calibration_file.empty() ? "measured before the run" : ctx.calibration_file) << " ("
    << ctx.calibration.value("device", std::string("?")) << ")";
  if (!ctx.calibration_after.is_null()) o << ", again after it: predicted step " << pct(c.calibration_drift);
  if (c.rank_layer_speed.size() > 1) {
    o << "; layer ops measured / predicted per rank:";
    for (double v : c.rank_layer_speed) o << " " << fmt("%.3f", v);
    o << " (" << pct(c.rank_speed_spread) << " apart)";
  }
  o << "\n";
  std::snprintf(line, sizeof line,
                "steps: %d run, %d warm-up%s, %zu disturbed by other processes, %zu used; components on pipeline "
                "stage %d (the prediction's critical stage)\n",
                static_cast<int>(c.selection.warmup + c.selection.used.size() + c.selection.disturbed.size()),
                c.selection.warmup, c.selection.warmup_found ? "" : " (no stable run found)",
                c.selection.disturbed.size(), c.selection.used.size(), p.critical_stage);
  o << line;
  std::snprintf(line, sizeof line, "%-26s %12s %12s %23s %9s %18s %7s %s\n", "metric (ms; bytes)", "predicted",
                "measured", "95% interval", "error", "error 95% interval", "share", "limit");
  o << line;
  auto print = [&](const Row& r, bool bytes) {
    const double k = bytes ? 1.0 : 1e3;
    std::string lim = r.judged ? fmt("+-%.0f%%", 100 * r.limit) + limit_mark(r, c.verdict)
                               : (r.modelled ? "-" : "not modelled");
    std::snprintf(line, sizeof line, "%-26s %12.4g %12.4g [%10.4g, %10.4g] %9s [%7s, %7s] %6.1f%% %s\n", r.name.c_str(),
                  k * r.predicted, k * r.measured.median, k * r.measured.lo, k * r.measured.hi, pct(r.error()).c_str(),
                  pct(r.error_lo()).c_str(), pct(r.error_hi()).c_str(), 100 * r.share, lim.c_str());
    o << line;
  };
  for (const Row& r : c.rows) print(r, r.name == "model_state_bytes");
  o << "compute by op class (critical stage, per step):\n";
  for (const Row& r : c.compute_classes) print(r, false);
  o << "verdict: " << to_string(c.verdict) << "\n";
  for (const std::string& r : c.reasons) o << "  - " << r << "\n";
  return o.str();
}

json trace_json(const CpuJob& j, const CpuPrediction& p, const MeasuredRun& run, int step) {
  json ev = json::array();
  auto meta = [&](int pid, int tid, const char* what, const std::string& name) {
    json m = {{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", {{"name", name}}}};
    if (tid >= 0) m["tid"] = tid;
    ev.push_back(m);
  };
  meta(1, -1, "process_name", "measured (step " + std::to_string(step) + ")");
  meta(2, -1, "process_name", "predicted (estimate tier)");
  std::vector<std::string> mlanes, planes;
  const std::vector<Slice> ms = measured_slices(run, step, &mlanes);
  const std::vector<Slice> ps = predicted_slices(p, &planes);
  for (std::size_t i = 0; i < mlanes.size(); ++i) meta(1, static_cast<int>(i), "thread_name", mlanes[i]);
  for (std::size_t i = 0; i < planes.size(); ++i) meta(2, static_cast<int>(i), "thread_name", planes[i]);
  auto add = [&](int pid, const Slice& s) {
    ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", s.lane}, {"name", s.name}, {"cat", s.key},
                  {"ts", 1e6 * s.t0}, {"dur", std::max(0.0, 1e6 * (s.t1 - s.t0))}});
  };
  for (const Slice& s : ms) add(1, s);
  for (const Slice& s : ps) add(2, s);
  ev.push_back({{"ph", "i"}, {"pid", 2}, {"tid", 0}, {"s", "p"}, {"name", "predicted step end"},
                {"ts", 1e6 * p.estimate.result.step_time_s}});
  (void)j;
  return {{"traceEvents", ev}, {"displayTimeUnit", "ms"}};
}

namespace {

// A horizontal timeline: one lane per rank / stage, slices coloured by op class.
std::string svg_timeline(const std::string& title, const std::vector<std::string>& lanes, const std::vector<Slice>& sl,
                         double span_s) {
  const int W = 1000, left = 170, lane_h = 22, top = 24;
  const int H = top + lane_h * static_cast<int>(lanes.size()) + 24;
  const double x = (W - left - 10) / std::max(span_s, 1e-12);
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='11'>";
  o << "<text x='4' y='14' font-weight='bold'>" << esc(title) << "</text>";
  for (std::size_t i = 0; i < lanes.size(); ++i)
    o << "<text x='4' y='" << top + lane_h * i + 15 << "'>" << esc(lanes[i]) << "</text>";
  for (const Slice& s : sl) {
    const double w = std::max(0.3, (s.t1 - s.t0) * x);
    o << "<rect x='" << fmt("%.2f", left + s.t0 * x) << "' y='" << top + lane_h * s.lane + 3 << "' width='" << fmt("%.2f", w)
      << "' height='" << lane_h - 6 << "' fill='" << colour(s.key) << "'><title>" << esc(s.name) << ": "
      << fmt("%.1f us", 1e6 * (s.t1 - s.t0)) << "</title></rect>";
  }
  const int axis_y = top + lane_h * static_cast<int>(lanes.size()) + 14;
  for (int k = 0; k <= 5; ++k) {
    const double t = span_s * k / 5;
    o << "<text x='" << fmt("%.1f", left + t * x) << "' y='" << axis_y << "' text-anchor='middle'>" << ms(t) << " ms</text>";
  }
  o << "</svg>";
  return o.str();
}

std::string svg_legend() {
  std::ostringstream o;
  const char* keys[] = {"gemm", "attention", "layernorm", "gelu", "residual", "softmax_xent", "embedding", "copy",
                        "tp", "pp", "dp", "optimizer"};
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='1000' height='22' font-family='sans-serif' font-size='11'>";
  int xpos = 4;
  for (const char* k : keys) {
    o << "<rect x='" << xpos << "' y='5' width='12' height='12' fill='" << colour(k) << "'/><text x='" << xpos + 16
      << "' y='15'>" << k << "</text>";
    xpos += 16 + 8 * static_cast<int>(std::string(k).size()) + 14;
  }
  o << "</svg>";
  return o.str();
}

// Error of each compared time with its 95% interval, the limit shaded.
std::string svg_errors(const std::vector<Row>& rows) {
  std::vector<const Row*> shown;
  for (const Row& r : rows)
    if (r.modelled && r.measured.median > 0 && r.name != "model_state_bytes") shown.push_back(&r);
  const int W = 1000, left = 230, row_h = 26, top = 30;
  const int H = top + row_h * static_cast<int>(shown.size()) + 30;
  const double span = 0.5;  // +-50%, clamped
  const double cx = left + (W - left - 20) / 2.0, x = (W - left - 20) / (2 * span);
  auto X = [&](double e) { return cx + std::clamp(e, -span, span) * x; };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='11'>";
  o << "<text x='4' y='14' font-weight='bold'>error (predicted / measured - 1), dot = median, bar = 95% interval, "
       "shaded = the limit of a judged figure</text>";
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const Row& r = *shown[i];
    const int y = top + row_h * static_cast<int>(i);
    if (r.judged)
      o << "<rect x='" << X(-r.limit) << "' y='" << y << "' width='" << X(r.limit) - X(-r.limit) << "' height='" << row_h - 4
        << "' fill='#e8f4e8'/>";
    o << "<text x='4' y='" << y + 15 << "'>" << esc(r.name) << fmt(" (%.1f%% of step)", 100 * r.share) << "</text>";
    const double lo = r.error_lo(), hi = r.error_hi(), e = r.error();
    if (std::isfinite(lo) && std::isfinite(hi))
      o << "<line x1='" << X(lo) << "' x2='" << X(hi) << "' y1='" << y + 11 << "' y2='" << y + 11
        << "' stroke='#333' stroke-width='2'/>";
    if (std::isfinite(e))
      o << "<circle cx='" << X(e) << "' cy='" << y + 11 << "' r='4' fill='" << (r.within() ? "#2a7" : "#d33")
        << "'><title>" << pct(e) << " [" << pct(lo) << ", " << pct(hi) << "]</title></circle>";
  }
  const int ay = top + row_h * static_cast<int>(shown.size()) + 12;
  o << "<line x1='" << cx << "' x2='" << cx << "' y1='" << top - 4 << "' y2='" << ay - 10 << "' stroke='#999'/>";
  for (double t : {-0.5, -0.25, -0.15, -0.05, 0.0, 0.05, 0.15, 0.25, 0.5})
    o << "<text x='" << X(t) << "' y='" << ay + 6 << "' text-anchor='middle'>" << fmt("%+.0f%%", 100 * t) << "</text>";
  o << "</svg>";
  return o.str();
}

// Step time of every step: warm-up grey, disturbed red, used blue; the median and its 95% band.
std::string svg_steps(const MeasuredRun& run, const Comparison& c) {
  const int W = 1000, H = 220, left = 60, top = 24, bottom = 30;
  const int n = static_cast<int>(run.steps.size());
  double hi = 0;
  for (int s = 0; s < n; ++s) hi = std::max(hi, step_time_s(run, s));
  hi *= 1.05;
  const double xs = (W - left - 10) / std::max(1.0, n - 1.0), ys = (H - top - bottom) / std::max(hi, 1e-12);
  auto Y = [&](double t) { return H - bottom - t * ys; };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='11'>";
  o << "<text x='4' y='14' font-weight='bold'>step time per step (grey: warm-up, red: disturbed, blue: used; band: "
       "median and its 95% interval)</text>";
  const Stat& st = c.rows.front().measured;
  o << "<rect x='" << left << "' y='" << Y(st.hi) << "' width='" << W - left - 10 << "' height='" << std::max(1.0, Y(st.lo) - Y(st.hi))
    << "' fill='#dde8f5'/>";
  o << "<line x1='" << left << "' x2='" << W - 10 << "' y1='" << Y(st.median) << "' y2='" << Y(st.median) << "' stroke='#4e79a7'/>";
  for (int s = 0; s < n; ++s) {
    const bool disturbed = std::find(c.selection.disturbed.begin(), c.selection.disturbed.end(), s) != c.selection.disturbed.end();
    const char* col = s < c.selection.warmup ? "#999" : disturbed ? "#d33" : "#4e79a7";
    o << "<circle cx='" << left + s * xs << "' cy='" << Y(step_time_s(run, s)) << "' r='3' fill='" << col << "'><title>step "
      << s << ": " << ms(step_time_s(run, s)) << " ms</title></circle>";
  }
  for (int k = 0; k <= 4; ++k)
    o << "<text x='4' y='" << Y(hi * k / 4) + 4 << "'>" << ms(hi * k / 4) << " ms</text>";
  o << "</svg>";
  return o.str();
}

}  // namespace

std::string report_html(const CpuJob& j, const CpuPrediction& p, const Comparison& c, const MeasuredRun& run,
                        const RunContext& ctx) {
  const int step = representative_step(run, c);
  std::vector<std::string> mlanes, planes;
  const std::vector<Slice> ms_ = measured_slices(run, step, &mlanes);
  const std::vector<Slice> ps = predicted_slices(p, &planes);
  double span = std::max(step_time_s(run, step), p.estimate.result.step_time_s);
  for (const Slice& s : ps) span = std::max(span, s.t1);
  std::ostringstream o;
  o << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>trainsim validate: predicted vs measured</title>"
       "<style>body{font-family:sans-serif;margin:20px;max-width:1040px}table{border-collapse:collapse;font-size:12px}"
       "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
       ".fail{color:#c00;font-weight:bold}.ok{color:#080}</style></head><body>";
  o << "<h1>Predicted vs measured step</h1>";
  o << "<p>" << esc(comparison_text(j, p, c, ctx).substr(0, comparison_text(j, p, c, ctx).find('\n'))) << "</p>";
  o << "<p><b>Verdict: <span class='" << (c.verdict == Verdict::kPass ? "ok" : "fail") << "'>" << to_string(c.verdict)
    << "</span></b></p><ul>";
  for (const std::string& r : c.reasons) o << "<li>" << esc(r) << "</li>";
  o << "</ul>";
  o << "<p>Machine: " << ctx.cores << " core(s), " << esc(ctx.binding) << ". Steps: warm-up " << c.selection.warmup
    << (c.selection.warmup_found ? "" : " (no stable run found)") << ", disturbed " << c.selection.disturbed.size()
    << ", used " << c.selection.used.size() << ". Components are those of pipeline stage " << p.critical_stage
    << " (the prediction's critical stage), the mean over its ranks, the median over the used steps.</p>";
  o << "<h2>Error per component</h2>" << svg_errors(c.rows);
  o << "<table><tr><th>metric</th><th>predicted</th><th>measured median</th><th>95% interval</th><th>error</th>"
       "<th>error 95% interval</th><th>share of step</th><th>limit</th></tr>";
  auto tr = [&](const Row& r) {
    const bool bytes = r.name == "model_state_bytes";
    const double k = bytes ? 1 : 1e3;
    const char* unit = bytes ? " B" : " ms";
    o << "<tr><td>" << esc(r.name) << "</td><td>" << fmt("%.4g", k * r.predicted) << unit << "</td><td>"
      << fmt("%.4g", k * r.measured.median) << unit << "</td><td>[" << fmt("%.4g", k * r.measured.lo) << ", "
      << fmt("%.4g", k * r.measured.hi) << "]</td><td>" << pct(r.error()) << "</td><td>[" << pct(r.error_lo()) << ", "
      << pct(r.error_hi()) << "]</td><td>" << fmt("%.1f%%", 100 * r.share) << "</td><td class='"
      << (judged_run(c.verdict) && !r.within() ? "fail" : "ok") << "'>"
      << (r.judged ? fmt("&plusmn;%.0f%%", 100 * r.limit) + limit_mark(r, c.verdict) : (r.modelled ? "-" : "not modelled"))
      << "</td></tr>";
  };
  for (const Row& r : c.rows) tr(r);
  o << "</table><h3>Compute by op class (critical stage, per step)</h3><table><tr><th>op class</th><th>predicted</th>"
       "<th>measured median</th><th>95% interval</th><th>error</th><th>error 95% interval</th><th>share of step</th>"
       "<th>limit</th></tr>";
  for (const Row& r : c.compute_classes) tr(r);
  o << "</table>";
  o << "<h2>Timelines (measured step " << step << ", closest to the median; predicted step)</h2>" << svg_legend()
    << svg_timeline("measured", mlanes, ms_, span) << svg_timeline("predicted (estimate tier)", planes, ps, span);
  o << "<h2>Step times</h2>" << svg_steps(run, c);
  o << "<h2>Calibration used</h2><p>"
    << esc(ctx.calibration_file.empty() ? "measured just before the run" : ctx.calibration_file) << ", device "
    << esc(ctx.calibration.value("device", std::string("?"))) << ", " << ctx.calibration.value("ranks", 0)
    << " rank(s)";
  if (!ctx.calibration_after.is_null())
    o << "; measured again after the run: the prediction from it differs by " << pct(c.calibration_drift);
  o << ".</p><ul>";
  for (const std::string& a : p.calibration_applied) o << "<li>" << esc(a) << "</li>";
  o << "</ul>";
  if (ctx.calibration.contains("op_rates") && ctx.calibration["op_rates"].contains("ops")) {
    o << "<table><tr><th>op (at the job's shapes)</th><th>time per call</th><th>count</th></tr>";
    for (const json& op : ctx.calibration["op_rates"]["ops"])
      o << "<tr><td>" << esc(op.value("op", std::string())) << "</td><td>" << fmt("%.2f us", 1e6 * op.value("time_s", 0.0))
        << "</td><td>" << fmt("%.4g", op.contains("flop") ? op.value("flop", 0.0) : op.value("elements", 0.0))
        << (op.contains("flop") ? " FLOP" : " elements") << "</td></tr>";
    o << "</table>";
  }
  if (ctx.calibration.contains("collectives")) {
    o << "<table><tr><th>collective</th><th>algorithm</th><th>ranks</th><th>alpha</th><th>1/beta</th></tr>";
    for (const json& cl : ctx.calibration["collectives"]) {
      const double beta = cl.value("beta_s_per_byte", 0.0);
      o << "<tr><td>" << esc(cl.value("op", std::string())) << "</td><td>" << esc(cl.value("algorithm", std::string()))
        << "</td><td>" << cl.value("ranks", 0) << "</td><td>" << fmt("%.2f us", 1e6 * cl.value("alpha_s", 0.0))
        << "</td><td>" << (beta > 0 ? fmt("%.3g GB/s", 1e-9 / beta) : std::string("-")) << "</td></tr>";
    }
    o << "</table>";
  }
  o << "<p>Definitions and rules: docs/validation.md of trainsim.</p></body></html>\n";
  return o.str();
}

}  // namespace trainsim::validate
