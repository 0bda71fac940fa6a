#include "validate/published_runs.hpp"

#include "models/workload/layer_program.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/estimate/estimate.hpp"
#include "models/scenario/json_reader.hpp"
#include "models/cost/memory.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim::validate {
using nlohmann::json;
using namespace record;

std::string default_published_runs_path() {
  std::vector<std::string> candidates;
  if (const char* dir = std::getenv("TRAINSIM_DATA"); dir && *dir) candidates.push_back(std::string(dir) + "/published_runs.json");
  const std::string source_dir = TRAINSIM_SOURCE_DATA_DIR;
  if (!source_dir.empty()) candidates.push_back(source_dir + "/published_runs.json");
  candidates.push_back("data/published_runs.json");
  std::string searched;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
    searched += (searched.empty() ? "" : ", ") + c;
  }
  throw ScenarioError("--published", "no published-runs file found (searched " + searched + "); give --published FILE");
}

json read_published_file(const std::string& path) {
  // Records are transcriptions of others' tables: a repeated key keeps its last value, as the
  // JSON readers these files are also read with do, rather than refusing the whole file.
  json data = read_json_file(path, "published runs", DuplicateKeys::kKeepLast);
  if (data.is_object() && data.contains("runs")) data = data["runs"];
  if (!data.is_array()) throw ScenarioError(path, "expected a JSON list of published runs");
  return data;
}

void fill_training_metrics(const json& rec, const Result& result, RunComparison& out) {
  out.metrics.clear();
  const json measured = rec.value("measured", json::object());
  // A record states its throughput as its source does: a step time (s or ms), tokens a second
  // (all GPUs, or one), or sequences a second.
  std::optional<double> step_s = positive(first_field(
      measured, {"derived_iteration_time_s", "iteration_time_s", "step_time_s", "time_per_iteration_s",
                 "elapsed_time_per_iteration_s"}));
  if (!step_s)
    if (auto ms = positive(first_field(measured, {"iteration_time_ms", "step_time_ms", "time_per_iteration_ms",
                                                  "elapsed_time_per_iteration_ms"})))
      step_s = *ms / 1000;
  const double gpus = result.gpus;
  const double tokens_step = result.tokens_per_step;
  const double seq = out.scenario.is_object() && out.scenario.contains("model")
                         ? out.scenario["model"].value("seq_len", 0.0)
                         : 0.0;
  std::optional<double> tokens_per_s =
      positive(first_field(measured, {"throughput_tokens_per_s", "tokens_per_s", "tokens_per_second"}));
  if (!tokens_per_s)
    if (auto g = positive(first_field(measured, {"tokens_per_s_per_gpu", "tokens_per_gpu_per_s"})); g && gpus > 0)
      tokens_per_s = *g * gpus;
  if (!tokens_per_s)
    if (auto q = positive(first_field(measured, {"throughput_seq_per_s", "samples_per_s", "samples_per_second",
                                                 "sequences_per_s"}));
        q && seq > 0)
      tokens_per_s = *q * seq;
  if (!tokens_per_s)
    if (auto q = positive(first_field(measured, {"samples_per_s_per_gpu", "samples_per_gpu_per_s"}));
        q && seq > 0 && gpus > 0)
      tokens_per_s = *q * seq * gpus;
  if (!tokens_per_s && !step_s) {
    // Other spellings of the same three rates, by the words in the key.
    for (const auto& [key, value] : measured.items()) {
      const std::string k = lower(key);
      const auto v = positive(number_in(value));
      if (!v) continue;
      const bool rate = k.find("per_s") != std::string::npos || k.find("/s") != std::string::npos;
      const bool per_gpu = k.find("gpu") != std::string::npos;
      if (rate && k.find("token") != std::string::npos) tokens_per_s = *v * (per_gpu ? gpus : 1);
      else if (rate && seq > 0 && (k.find("sample") != std::string::npos || k.find("seq") != std::string::npos) &&
               k.find("seq_len") == std::string::npos)
        tokens_per_s = *v * seq * (per_gpu ? gpus : 1);
      else if (k.find("iter") != std::string::npos && k.find("time") != std::string::npos)
        step_s = k.find("ms") != std::string::npos ? *v / 1000 : *v;
      if (tokens_per_s || step_s) break;
    }
  }
  if (!tokens_per_s && step_s) tokens_per_s = tokens_step / *step_s;
  if (!step_s && tokens_per_s) step_s = tokens_step / *tokens_per_s;
  if (tokens_per_s) out.metrics.push_back({"tokens_per_s", result.tokens_per_s, *tokens_per_s});
  if (step_s) out.metrics.push_back({"step_time_s", result.step_time_s, *step_s});
  if (auto tf = positive(first_field(measured, {"tflops_per_gpu", "hardware_tflops_per_gpu"}))) {
    // Megatron reports hardware FLOPs (recompute included) per GPU.
    out.metrics.push_back({"tflops_per_gpu", result.hardware_tflops_per_gpu, *tf});
  }
  // MFU in percent, or as a fraction where the field says "mfu" and the value is at most 1.
  std::optional<double> mfu = positive(field(measured, "mfu_pct"));
  if (mfu) *mfu /= 100;
  else if (auto f = positive(field(measured, "mfu"))) mfu = *f <= 1 ? *f : *f / 100;
  if (mfu) out.metrics.push_back({"mfu", result.mfu, *mfu});
  else if (auto tf = positive(first_field(measured, {"model_tflop_per_gpu_s", "model_tflops_per_gpu"})))
    out.metrics.push_back({"model_tflops_per_gpu", result.model_tflops_per_gpu, *tf});
}

void summarize(PublishedReport& rep) {
  std::map<std::string, std::pair<double, int>> acc;
  for (const auto& run : rep.runs)
    for (const auto& m : run.metrics) {
      auto& [sum, n] = acc[m.metric];
      sum += std::fabs(m.error());
      ++n;
    }
  rep.mape.clear();
  rep.counts.clear();
  for (const auto& [metric, sn] : acc) {
    rep.mape.emplace_back(metric, sn.first / sn.second);
    rep.counts.emplace_back(metric, sn.second);
  }
}

namespace {

// The collective an nccl-tests report names ("all_reduce", "all_gather_perf", "alltoall", ...).
std::optional<CollectiveOp> collective_in(const std::string& text) {
  std::string t;
  for (char c : lower(text))
    if (std::isalpha(static_cast<unsigned char>(c))) t += c;
  // The longest name first: "reduce" is inside "allreduce" and "reducescatter".
  std::vector<std::string> names = collective_op_names();
  std::sort(names.begin(), names.end(), [](const auto& x, const auto& y) { return x.size() > y.size(); });
  for (const std::string& name : names)
    if (t.find(name) != std::string::npos) return collective_op_from_string(name, "measured.collective");
  return std::nullopt;
}

// The largest message size a text states ("1GB", "8B-4GB", "up to 256MB", "-e 8G"), in bytes;
// K, M, G with or without B count in powers of two, as nccl-tests' -b/-e sizes and rows do.
std::optional<double> largest_size_in(const std::string& text) {
  static const std::regex kSize(R"(([0-9]+(\.[0-9]+)?)\s*([KMGT])(i?B)?([^A-Za-z]|$))");
  std::optional<double> best;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kSize); it != std::sregex_iterator(); ++it) {
    const double v = decimal((*it)[1].str());
    if (!std::isfinite(v)) continue;  // past double's range
    const int shift = std::string("KMGT").find((*it)[3].str()[0]) * 10 + 10;
    const double bytes = v * std::ldexp(1.0, shift);
    if (!best || bytes > *best) best = bytes;
  }
  return best;
}

// An nccl-tests report: the bus bandwidth (or, where only it is given, the algorithm bandwidth)
// of one collective on the GPUs the report describes, at the largest message size it states
// (peak bandwidth is reached at the large end of a sweep), else 1 GiB.
void compare_collective_record(const json& measured, const json& hw, const LoadOptions& options,
                               RunComparison& out) {
  const std::string op_text = text_field(measured, "collective");
  const std::optional<CollectiveOp> op = collective_in(op_text);
  if (!op) {
    out.skipped_reason = "collective \"" + op_text.substr(0, 40) + "\" not modelled";
    return;
  }
  const std::optional<double> busbw = positive(first_field(
      measured, {"busbw_GBps", "peak_busbw_GBps", "busbw_GBps_avg", "busbw_GBps_peak", "bus_bandwidth_GBps"}));
  const std::optional<double> algbw =
      positive(first_field(measured, {"algbw_GBps", "peak_algbw_GBps", "algbw_GBps_avg", "algbw_GBps_peak"}));
  if (!busbw && !algbw) {
    out.skipped_reason = "no bus or algorithm bandwidth in the record";
    return;
  }
  const int n = gpu_count(hw, out.assumptions);
  if (n <= 1) {
    out.skipped_reason = "hardware.num_gpus: a collective needs at least 2 GPUs";
    return;
  }
  const std::string gpu_text = text_field(hw, "gpu");
  const std::string gpu = gpu_preset(gpu_text);
  if (gpu.empty()) throw ScenarioError("hardware.gpu", "unknown GPU \"" + gpu_text + "\"");
  json cluster = cluster_from_record(hw, gpu, n, out.assumptions);
  // A report may name its network beside the GPU ("8x A100, 4x HDR") rather than in inter_node.
  if (!hw.contains("inter_node")) {
    json network = cluster.value("network", json::object());
    network_from_text(gpu_text, network, out.assumptions);
    if (!network.empty()) cluster["network"] = network;
  }
  const ClusterSpec c = parse_cluster(resolve_cluster_json(cluster, options, "."));

  std::optional<double> bytes = positive(first_field(measured, {"bytes", "size_bytes", "message_bytes"}));
  // The size a figure was measured up to, where the record states it: its own field, or the
  // bandwidth's text ("~250 (up to 256MB messages)").
  for (const char* key : {"max_msg", "msg_range", "size", "message_size", "busbw_GBps", "algbw_GBps"}) {
    if (bytes) break;
    bytes = largest_size_in(text_field(measured, key));
  }
  if (!bytes) {
    bytes = 1024.0 * 1024 * 1024;
    out.assumptions.push_back("message size not given: 1 GiB assumed");
  }
  // An algorithm the report forced (NCCL_ALGO) is priced as it; "default" or none: the tuner's.
  const std::string algo_text = lower(text_field(measured, "algo"));
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  if (algo_text.find("default") == std::string::npos) {
    for (const auto& [word, a] : std::initializer_list<std::pair<const char*, CollectiveAlgo>>{
             {"nvls_tree", CollectiveAlgo::kNvlsTree}, {"nvls", CollectiveAlgo::kNvls},
             {"collnet", CollectiveAlgo::kCollnetDirect}, {"ring", CollectiveAlgo::kRing},
             {"tree", CollectiveAlgo::kTree}, {"pat", CollectiveAlgo::kPat}})
      if (algo_text.rfind(word, 0) == 0) {
        algo = a;
        break;
      }
  }
  std::vector<int> gpus(n);
  for (int i = 0; i < n; ++i) gpus[i] = i;
  const CollectiveCost cost = price_collective(*op, *bytes, gpus, c, algo);
  const double algbw_pred = *bytes / cost.time_s;
  if (busbw) out.metrics.push_back({"busbw_bytes_per_s", algbw_pred * bus_bandwidth_factor(*op, n), *busbw * 1e9});
  else out.metrics.push_back({"algbw_bytes_per_s", algbw_pred, *algbw * 1e9});
  char size[64];
  std::snprintf(size, sizeof size, "%.4g MiB", *bytes / (1024.0 * 1024));
  out.assumptions.push_back(std::string(size) + " " + to_string(*op) + ", algorithm " + to_string(cost.algo) +
                            (algo == CollectiveAlgo::kAuto ? " (the tuner's)" : " (the record's)"));
  out.predicted = true;
}

}  // namespace

namespace {

RunComparison compare_record_as_read(const json& rec, const LoadOptions& options) {
  RunComparison out;
  out.id = rec.is_object() ? text_field(rec, "id") : "";
  if (!rec.is_object()) {
    out.skipped_reason = "record is not an object";
    return out;
  }
  const json measured = rec.value("measured", json::object());
  const json hw = rec.value("hardware", json::object());
  if (!measured.is_object()) {
    out.skipped_reason = "measured is not an object";
    return out;
  }
  try {
    // --- collective micro-benchmarks (nccl-tests) ---
    if (measured.contains("collective")) {
      out.kind = "collective";
      compare_collective_record(measured, hw, options, out);
      return out;
    }
    // --- model-state memory (ZeRO paper) ---
    if (auto gb = field(measured, "model_state_memory_gb_per_device")) {
      out.kind = "memory";
      const json model = rec.value("model", json::object());
      const json par = rec.value("parallel", json::object());
      auto params_b = positive(field(model, "params_b"));
      if (!params_b || *params_b > 1e6) {
        out.skipped_reason = "model.params_b: expected a positive count of billions of parameters, at most 1e6";
        return out;
      }
      const int stage = small(field(par, "zero_stage").value_or(0));
      const int dp = small(field(par, "dp").value_or(1));
      if (stage < 0 || stage > 3) throw ScenarioError("parallel.zero_stage", "expected 0, 1, 2 or 3");
      if (dp < 1) throw ScenarioError("parallel.dp", "expected a positive data-parallel degree");
      const MemoryBreakdown mb = model_state_bytes(*params_b * 1e9, stage, dp, Precision::kFp16);
      out.metrics.push_back({"model_state_bytes", mb.params_bytes + mb.grads_bytes + mb.optimizer_bytes, *gb * 1e9});
      out.predicted = true;
      return out;
    }
    // --- training runs ---
    out.kind = "training";
    json sc = scenario_from_record(rec, out.assumptions);
    out.scenario = sc;
    Scenario scenario = parse_scenario(resolve_scenario_json(sc, options));
    Result result = estimate(scenario);
    if (!result.feasible && result.step_time_s > 0) {
      // The run ran. Where the plan as the record states it does not fit, the choices it leaves
      // out are what made it fit: the first combination of unstated ones that fits, in the order
      // of the least departure from the record: the distributed optimizer (ZeRO-1; speed-neutral),
      // then selective and full recomputation with and without it, then a fused attention kernel
      // with each of those (before Hopper the record's era may predate FlashAttention).
      const json& stated = sc["plan"];
      const bool may_zero = !stated.contains("zero_stage") && scenario.plan.dp > 1 && scenario.plan.zero_stage == 0;
      const bool may_flash = !attention_stated(rec) && !scenario.plan.flash_attention;
      const bool may_recompute = !stated.contains("recompute") && scenario.plan.recompute != Recompute::kFull;
      struct Choice {
        bool zero, flash;
        Recompute recompute;
      };
      std::vector<Choice> choices;
      const Recompute given = scenario.plan.recompute;
      std::vector<Recompute> recomputes{given};
      if (may_recompute && given == Recompute::kNone) recomputes.push_back(Recompute::kSelective);
      if (may_recompute) recomputes.push_back(Recompute::kFull);
      for (bool flash : {false, true})
        for (Recompute rc : recomputes)
          for (bool zero : {false, true}) {
            if ((zero && !may_zero) || (flash && !may_flash)) continue;
            if (!zero && !flash && rc == given) continue;  // the record's own plan
            choices.push_back({zero, flash, rc});
          }
      for (const Choice& ch : choices) {
        Scenario relaxed = scenario;
        if (ch.zero) relaxed.plan.zero_stage = 1;
        if (ch.flash) relaxed.plan.flash_attention = true;
        relaxed.plan.recompute = ch.recompute;
        const Result r = estimate(relaxed);
        if (!r.feasible) continue;
        scenario = relaxed;
        result = r;
        const std::string fits = "not given, and the plan does not fit without it: ";
        if (ch.zero) out.assumptions.push_back(fits + "ZeRO-1 (the distributed optimizer) assumed");
        if (ch.flash) {
          std::erase(out.assumptions, std::string("no flash attention stated: unfused softmax assumed"));
          out.assumptions.push_back(fits + "FlashAttention-2 assumed");
        }
        if (ch.recompute != given) out.assumptions.push_back(fits + to_string(ch.recompute) + " recompute assumed");
        break;
      }
    }
    if (result.step_time_s <= 0) {
      out.skipped_reason = "plan not evaluable: " + result.reason;
      return out;
    }
    if (!result.feasible) out.assumptions.push_back("predicted infeasible: " + result.reason);
    out.scenario = to_json(scenario);
    fill_training_metrics(rec, result, out);
    if (out.metrics.empty()) {
      out.skipped_reason = "no throughput, step time or TFLOP/s in the record";
      return out;
    }
    out.predicted = true;
  } catch (const ScenarioError& e) {
    out.skipped_reason = std::string("cannot build a scenario: ") + e.what();
  }
  return out;
}

}  // namespace

RunComparison compare_record(const json& rec, const LoadOptions& options) {
  RunComparison out = compare_record_as_read(rec, options);
  // A measured figure read as 0, negative or beyond double's range ("1e308 GB/s" times 1e9)
  // compares with nothing: the record is skipped with the figure named, not averaged as NaN.
  for (const MetricComparison& m : out.metrics) {
    if (std::isfinite(m.measured) && m.measured > 0 && std::isfinite(100 * (m.predicted - m.measured) / m.measured)) continue;
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", m.measured);
    out.skipped_reason = "measured " + m.metric + " is " + text + ": expected a positive finite figure";
    out.predicted = false;
    out.metrics.clear();
    break;
  }
  return out;
}

std::string source_family(const json& rec) {
  const std::string s = rec.is_object() ? text_field(rec, "source") : "";
  const std::size_t cut = s.find_first_of(" ,");
  return cut == std::string::npos ? s : s.substr(0, cut);
}

double tokens_mape_at_share(const PublishedReport& rep, const json& records,
                            const std::function<bool(const json&)>& use, double share, int* runs) {
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < rep.runs.size() && i < records.size(); ++i) {
    const RunComparison& run = rep.runs[i];
    if (!run.predicted || run.kind != "training" || !use(records[i])) continue;
    const auto m = std::find_if(run.metrics.begin(), run.metrics.end(),
                                [](const MetricComparison& c) { return c.metric == "tokens_per_s"; });
    if (m == run.metrics.end() || m->measured <= 0) continue;
    Scenario sc = parse_scenario(run.scenario);
    sc.cluster.gpu.training_tensor_share = share;
    const Result r = estimate(sc);
    if (r.tokens_per_s <= 0) continue;
    sum += std::abs(r.tokens_per_s - m->measured) / m->measured;
    ++n;
  }
  if (runs) *runs = n;
  return n > 0 ? sum / n : 0;
}

ShareFit fit_training_tensor_share(const PublishedReport& rep, const json& records,
                                   const std::function<bool(const json&)>& use) {
  // Golden-section search: the MAPE is unimodal in the share over the bracket for these runs
  // (every prediction's time falls as the share grows).
  double lo = 0.5, hi = 1.0;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  double fa = tokens_mape_at_share(rep, records, use, a), fb = tokens_mape_at_share(rep, records, use, b);
  for (int it = 0; it < 30 && hi - lo > 1e-4; ++it) {
    if (fa < fb) {
      hi = b, b = a, fb = fa;
      a = hi - g * (hi - lo);
      fa = tokens_mape_at_share(rep, records, use, a);
    } else {
      lo = a, a = b, fa = fb;
      b = lo + g * (hi - lo);
      fb = tokens_mape_at_share(rep, records, use, b);
    }
  }
  ShareFit f;
  f.share = (lo + hi) / 2;
  f.mape = tokens_mape_at_share(rep, records, use, f.share, &f.runs);
  return f;
}

std::vector<SourceFold> cross_validate_sources(const PublishedReport& rep, const json& records) {
  std::vector<std::string> sources;
  for (std::size_t i = 0; i < rep.runs.size() && i < records.size(); ++i)
    if (rep.runs[i].predicted && rep.runs[i].kind == "training") {
      const std::string s = source_family(records[i]);
      if (std::find(sources.begin(), sources.end(), s) == sources.end()) sources.push_back(s);
    }
  std::vector<SourceFold> folds;
  for (const std::string& s : sources) {
    SourceFold f;
    f.source = s;
    const ShareFit others = fit_training_tensor_share(rep, records, [&](const json& r) { return source_family(r) != s; });
    f.fitted_share = others.share;
    f.mape = tokens_mape_at_share(rep, records, [&](const json& r) { return source_family(r) == s; }, others.share, &f.runs);
    folds.push_back(f);
  }
  return folds;
}

std::string cross_validation_to_text(const std::vector<SourceFold>& folds, const ShareFit& all) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "leave one source out (training_tensor_share fitted on the other sources):\n");
  o << line;
  std::snprintf(line, sizeof line, "  %-28s %6s %14s %16s\n", "held-out source", "runs", "fitted share", "tokens/s MAPE");
  o << line;
  double sum = 0;
  int n = 0;
  for (const SourceFold& f : folds) {
    std::snprintf(line, sizeof line, "  %-28s %6d %14.3f %15.1f%%\n", f.source.c_str(), f.runs, f.fitted_share, 100 * f.mape);
    o << line;
    sum += f.mape * f.runs;
    n += f.runs;
  }
  std::snprintf(line, sizeof line, "  %-28s %6d %14s %15.1f%%\n", "all folds", n, "", n ? 100 * sum / n : 0.0);
  o << line;
  std::snprintf(line, sizeof line, "fitted on every source: share %.3f, tokens/s MAPE %.1f%% over %d runs (shipped default %.3f)\n",
                all.share, 100 * all.mape, all.runs, kDefaultTrainingTensorShare);
  o << line;
  return o.str();
}

PublishedReport compare_published(const json& records, const LoadOptions& options) {
  PublishedReport rep;
  for (const auto& rec : records) rep.runs.push_back(compare_record(rec, options));
  summarize(rep);
  return rep;
}

std::string report_to_text(const PublishedReport& rep) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%-62s %-16s %14s %14s %8s\n", "run", "metric", "predicted", "measured", "error");
  o << line;
  int skipped = 0;
  for (const auto& r : rep.runs) {
    if (!r.predicted) {
      ++skipped;
      std::snprintf(line, sizeof line, "%-62s skipped: %s\n", r.id.substr(0, 62).c_str(), r.skipped_reason.c_str());
      o << line;
      continue;
    }
    for (const auto& m : r.metrics) {
      std::snprintf(line, sizeof line, "%-62s %-16s %14.4g %14.4g %+7.1f%%\n", r.id.substr(0, 62).c_str(),
                    m.metric.c_str(), m.predicted, m.measured, 100 * m.error());
      o << line;
    }
  }
  o << "\nmean absolute percentage error per metric:\n";
  for (std::size_t i = 0; i < rep.mape.size(); ++i) {
    std::snprintf(line, sizeof line, "  %-20s %6.1f%%  over %d runs\n", rep.mape[i].first.c_str(),
                  100 * rep.mape[i].second, rep.counts[i].second);
    o << line;
  }
  std::snprintf(line, sizeof line, "  (%d records skipped)\n", skipped);
  o << line;
  return o.str();
}

json report_to_json(const PublishedReport& rep) {
  json runs = json::array();
  for (const auto& r : rep.runs) {
    json metrics = json::array();
    for (const auto& m : r.metrics)
      metrics.push_back({{"metric", m.metric}, {"predicted", m.predicted}, {"measured", m.measured},
                         {"error", m.error()}});
    runs.push_back({{"id", r.id}, {"kind", r.kind}, {"predicted", r.predicted},
                    {"skipped_reason", r.skipped_reason}, {"assumptions", r.assumptions},
                    {"metrics", metrics}});
  }
  json mape = json::object();
  for (std::size_t i = 0; i < rep.mape.size(); ++i)
    mape[rep.mape[i].first] = {{"mape", rep.mape[i].second}, {"runs", rep.counts[i].second}};
  return {{"runs", runs}, {"mape", mape}};
}

}  // namespace trainsim::validate
