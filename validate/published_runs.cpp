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

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Published figures come as numbers or strings like "~480" or "50368 (MPT default)": take the
// first number in the text.
std::optional<double> number_in(const json& v) {
  if (v.is_number()) {
    const double d = v.get<double>();
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
  }
  if (!v.is_string()) return std::nullopt;
  static const std::regex kNumber(R"(([0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?))");
  std::smatch match;
  const std::string s = v.get<std::string>();
  if (std::regex_search(s, match, kNumber)) return std::stod(match[1].str());
  return std::nullopt;
}

std::optional<double> field(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return std::nullopt;
  return number_in(obj[key]);
}
std::string text_field(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return "";
  const json& v = obj[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Published figures are doubles; the scenario wants integers. Out-of-range values (a record
// saying 1e15 GPUs) are bad input, not undefined behaviour.
int64_t whole(double v) {
  if (!std::isfinite(v) || std::fabs(v) > 1e15)
    throw ScenarioError("record", "number out of range: " + std::to_string(v));
  return static_cast<int64_t>(v);
}
int small(double v) {
  if (!std::isfinite(v) || std::fabs(v) > 1e9)
    throw ScenarioError("record", "number out of range: " + std::to_string(v));
  return static_cast<int>(v);
}

std::string gpu_preset(const std::string& description) {
  const std::string d = lower(description);
  if (d.find("h200") != std::string::npos) return "H200-SXM-141GB";
  if (d.find("h800") != std::string::npos) return "H800-SXM-80GB";
  if (d.find("h100") != std::string::npos) return "H100-SXM-80GB";
  if (d.find("a100") != std::string::npos)
    return d.find("40gb") != std::string::npos || d.find("40 gb") != std::string::npos
               ? "A100-SXM4-40GB"
               : "A100-SXM4-80GB";
  if (d.find("v100") != std::string::npos) return "V100-SXM2-32GB";
  return "";
}

// "8x ... 200Gb/s HDR" -> 8 NICs of 200 Gb/s; "4x HDR IB" -> 4 x 200 Gb/s;
// "1600 Gbps node-node" -> 8 x 200 Gb/s.
void network_from_text(const std::string& text, json& network, std::vector<std::string>& notes) {
  static const std::regex kCount(R"((^|[^0-9A-Za-z-])([0-9]+)\s*x\s)");
  static const std::regex kRate(R"(([0-9]+)\s*G[b](ps|/s|\s))");
  static const std::regex kTotal(R"(([0-9]+)\s*Gbps\s*node)");
  std::smatch m;
  std::optional<int> count;
  std::optional<double> rate_gbps;
  if (std::regex_search(text, m, kTotal)) {
    const int total = std::stoi(m[1].str());
    network["nics_per_node"] = 8;
    network["nic_bandwidth"] = std::to_string(total / 8) + "Gbps";
    notes.push_back("node bandwidth " + m[1].str() + " Gb/s taken as 8 NICs");
    return;
  }
  if (std::regex_search(text, m, kCount)) count = std::stoi(m[2].str());
  if (std::regex_search(text, m, kRate)) rate_gbps = std::stod(m[1].str());
  else if (text.find("NDR") != std::string::npos) rate_gbps = 400;
  else if (text.find("HDR") != std::string::npos) rate_gbps = 200;
  else if (text.find("EDR") != std::string::npos) rate_gbps = 100;
  if (count && *count > 0 && *count <= 64) network["nics_per_node"] = *count;
  if (rate_gbps && *rate_gbps > 0) network["nic_bandwidth"] = std::to_string(small(*rate_gbps)) + "Gbps";
}

}  // namespace

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

json scenario_from_record(const json& rec, std::vector<std::string>& notes) {
  const json& model = rec.value("model", json::object());
  const json& hw = rec.value("hardware", json::object());
  const json& par = rec.value("parallel", json::object());
  const json& tr = rec.value("training", json::object());
  if (!model.is_object() || !hw.is_object() || !par.is_object() || !tr.is_object())
    throw ScenarioError("record", "model, hardware, parallel and training must be objects");
  auto need = [&](const json& obj, const char* part, const char* key) {
    auto v = field(obj, key);
    if (!v || *v <= 0) throw ScenarioError(std::string(part) + "." + key, "missing or not a positive number");
    return *v;
  };
  json m;
  m["name"] = text_field(model, "name");
  m["layers"] = whole(need(model, "model", "layers"));
  const int64_t hidden = whole(need(model, "model", "hidden"));
  m["hidden"] = hidden;
  m["heads"] = whole(need(model, "model", "heads"));
  if (auto kv = field(model, "kv_heads")) m["kv_heads"] = whole(*kv);
  m["ffn_hidden"] = whole(field(model, "ffn_hidden").value_or(4.0 * hidden));
  m["seq_len"] = whole(
      field(model, "seq_len").value_or(field(tr, "seq_len").value_or(0)));
  if (m["seq_len"].get<int64_t>() <= 0) throw ScenarioError("model.seq_len", "missing");
  m["vocab"] = whole(field(model, "vocab").value_or(51200));
  if (!model.contains("vocab")) notes.push_back("vocab not given: 51200 assumed");
  const std::string arch = lower(text_field(model, "arch") + " " + text_field(model, "ffn_act"));
  if (arch.find("swiglu") != std::string::npos) m["ffn_act"] = "swiglu";
  if (model.contains("linear_bias")) {
    if (!model["linear_bias"].is_boolean()) throw ScenarioError("model.linear_bias", "expected true or false");
    m["linear_bias"] = model["linear_bias"];
  }

  // Cluster: the GPU named in the record on the DGX node of its generation.
  const std::string gpu_text = text_field(hw, "gpu");
  const std::string gpu = gpu_preset(gpu_text);
  if (gpu.empty()) throw ScenarioError("hardware.gpu", "unknown GPU \"" + gpu_text + "\"");
  const int num_gpus = small(need(hw, "hardware", "num_gpus"));
  int gpn = small(field(hw, "gpus_per_node").value_or(8));
  if (gpn <= 0) throw ScenarioError("hardware.gpus_per_node", "expected a positive number");
  if (num_gpus < gpn) gpn = num_gpus;
  json cluster;
  cluster["base"] = gpu.rfind("H", 0) == 0 ? (gpu.rfind("H800", 0) == 0 ? "h800-cluster" : "dgx-h100-superpod")
                                           : "dgx-a100-superpod";
  json g;
  g["base"] = gpu;
  if (auto peak = field(hw, "peak_tflops_bf16_fp16"))
    g["peak_flops"] = {{"bf16", *peak * 1e12}, {"fp16", *peak * 1e12}};
  cluster["gpu"] = g;
  cluster["gpus_per_node"] = gpn;
  cluster["nodes"] = (num_gpus + gpn - 1) / gpn;
  if (gpu.rfind("V100", 0) == 0) {
    // DGX-1/DGX-2 V100: NVLink2, 300 GB/s per GPU.
    cluster["intra_node"] = {{"bandwidth", "300GBps"}};
    cluster["network"] = {{"nic_bandwidth", "100Gbps"}, {"nics_per_node", 8}};
  }
  json network = cluster.value("network", json::object());
  network_from_text(text_field(hw, "inter_node"), network, notes);
  if (!network.empty()) cluster["network"] = network;

  // Plan.
  json p;
  const int tp = small(field(par, "tp").value_or(1));
  const int pp = small(field(par, "pp").value_or(1));
  const int cp = small(field(par, "cp").value_or(1));
  p["tp"] = tp;
  p["pp"] = pp;
  p["cp"] = cp;
  p["ep"] = small(field(par, "ep").value_or(1));
  p["dp"] = small(field(par, "dp").value_or(num_gpus / std::max<int64_t>(1, int64_t{tp} * pp * cp)));
  if (par.contains("sp") && par["sp"].is_boolean()) p["sp"] = par["sp"];
  if (auto z = field(par, "zero_stage")) p["zero_stage"] = small(*z);
  // The framework's ZeRO-3 prefetch buffer, where the record gives it (DeepSpeed's config key).
  if (auto b = field(par, "stage3_prefetch_bucket_size")) {
    if (*b < 0 || *b > 1e15) throw ScenarioError("parallel.stage3_prefetch_bucket_size", "expected 0 to 1e15 parameters");
    p["zero3_prefetch_params"] = *b;
  }
  const std::string sched = lower(text_field(par, "pipeline_schedule"));
  if (sched.find("interleaved") != std::string::npos) {
    static const std::regex kV(R"(v\s*=\s*([0-9]+))");
    std::smatch mv;
    int v = 2;
    if (std::regex_search(sched, mv, kV)) v = std::stoi(mv[1].str());
    p["schedule"] = "interleaved";
    p["vpp"] = v;
  }
  const std::string ddp = lower(text_field(par, "ddp_impl"));
  if (ddp == "local") {
    p["overlap"] = {{"dp", false}};
    notes.push_back("ddp_impl local: gradient all-reduce after the backward pass (no overlap)");
  }
  const double global_batch = need(tr, "training", "global_batch");
  p["global_batch"] = whole(global_batch);
  const int dp = p["dp"].get<int>();
  if (auto mb = field(tr, "micro_batch")) p["micro_batch"] = whole(*mb);
  else {
    p["micro_batch"] = whole(std::max(1.0, global_batch / dp));
    notes.push_back("micro_batch not given: global_batch / dp assumed");
  }
  const std::string prec = lower(text_field(tr, "precision"));
  if (prec.find("fp8") != std::string::npos) p["precision"] = "fp8";
  else if (prec.find("bf16") != std::string::npos) p["precision"] = "bf16";
  else if (prec.find("fp16") != std::string::npos) p["precision"] = "fp16";
  else if (prec.find("fp32") != std::string::npos) p["precision"] = "fp32";
  // FSDP's mixed-precision policy by name (Composer's fsdp_config.mixed_precision): PURE reduces
  // the gradients in the training precision itself; DEFAULT and FULL reduce them in fp32, the
  // plan's default for bf16.
  const std::string mp = lower(text_field(par, "mixed_precision_mode"));
  if (mp == "pure" && p.contains("precision") && p["precision"] != "fp32" && p["precision"] != "fp8")
    p["grad_reduce_precision"] = p["precision"];
  else if (mp == "full") p["grad_reduce_precision"] = "fp32";
  if (tr.contains("autocast")) {
    if (!tr["autocast"].is_boolean()) throw ScenarioError("training.autocast", "expected true or false");
    p["autocast"] = tr["autocast"];
  }
  const std::string rc = lower(text_field(tr, "recompute"));
  if (tr.contains("recompute_early_stop")) {
    if (!tr["recompute_early_stop"].is_boolean())
      throw ScenarioError("training.recompute_early_stop", "expected true or false");
    p["recompute_early_stop"] = tr["recompute_early_stop"];
  }
  if (rc.rfind("full", 0) == 0) p["recompute"] = "full";
  else if (rc.rfind("selective", 0) == 0) p["recompute"] = "selective";
  else if (rc == "none" || rc == "false") p["recompute"] = "none";
  else if (!rc.empty()) p["recompute"] = "full";
  // Attention kernel: fused (flash) only where the record says so.
  const std::string attn = lower(text_field(model, "attn") + " " + text_field(rec, "notes"));
  const std::string impl = lower(text_field(model, "attn_impl"));
  p["flash_attention"] = attn.find("flash") != std::string::npos || !impl.empty();
  // The attention kernel the run's configuration names.
  if (impl.find("triton") != std::string::npos)
    p["attention_kernel"] = "triton";
  else if (impl.find("v1") != std::string::npos)
    p["attention_kernel"] = "flash1";
  else if (impl.find("3") != std::string::npos)
    p["attention_kernel"] = "flash3";
  if (!p["flash_attention"].get<bool>()) notes.push_back("no flash attention stated: unfused softmax assumed");

  json s;
  s["schema_version"] = 1;
  s["name"] = text_field(rec, "id");
  s["model"] = m;
  s["cluster"] = cluster;
  s["plan"] = p;
  return s;
}

void fill_training_metrics(const json& rec, const Result& result, RunComparison& out) {
  out.metrics.clear();
  const json measured = rec.value("measured", json::object());
  const double tokens_step = result.tokens_per_step;
  std::optional<double> step_s = field(measured, "derived_iteration_time_s");
  if (!step_s) {
    if (auto ms = field(measured, "iteration_time_ms")) step_s = *ms / 1000;
  }
  std::optional<double> tokens_per_s = field(measured, "throughput_tokens_per_s");
  if (tokens_per_s && *tokens_per_s <= 0) tokens_per_s.reset();
  if (!tokens_per_s && step_s) tokens_per_s = tokens_step / *step_s;
  if (!step_s && tokens_per_s) step_s = tokens_step / *tokens_per_s;
  if (tokens_per_s) out.metrics.push_back({"tokens_per_s", result.tokens_per_s, *tokens_per_s});
  if (step_s) out.metrics.push_back({"step_time_s", result.step_time_s, *step_s});
  if (auto tf = field(measured, "tflops_per_gpu")) {
    // Megatron reports hardware FLOPs (recompute included) per GPU.
    out.metrics.push_back({"tflops_per_gpu", result.hardware_tflops_per_gpu, *tf});
  }
  if (auto mfu = field(measured, "mfu_pct")) out.metrics.push_back({"mfu", result.mfu, *mfu / 100});
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

RunComparison compare_record(const json& rec, const LoadOptions& options) {
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
      const std::string op = lower(text_field(measured, "collective"));
      if (op.find("all_reduce") == std::string::npos && op.find("allreduce") == std::string::npos) {
        out.skipped_reason = "only all-reduce records are compared";
        return out;
      }
      std::optional<double> busbw = field(measured, "busbw_GBps");
      if (!busbw) busbw = field(measured, "peak_busbw_GBps");
      if (!busbw) busbw = field(measured, "busbw_GBps_avg");
      if (!busbw) {
        out.skipped_reason = "no bus bandwidth in the record";
        return out;
      }
      const std::string gpu_text = text_field(hw, "gpu");
      const int n = small(field(hw, "num_gpus").value_or(8));
      if (n <= 1) {
        out.skipped_reason = "hardware.num_gpus: a collective needs at least 2 GPUs";
        return out;
      }
      json cluster = {{"base", gpu_preset(gpu_text).rfind("H", 0) == 0 ? "dgx-h100-superpod"
                                                                        : "dgx-a100-superpod"}};
      const int gpn = std::min(n, 8);
      cluster["gpus_per_node"] = gpn;
      cluster["nodes"] = (n + gpn - 1) / gpn;
      json network = json::object();
      network_from_text(gpu_text + " " + text_field(hw, "inter_node"), network, out.assumptions);
      if (!network.empty()) cluster["network"] = network;
      json sc = {{"schema_version", 1}, {"model", "gpt-1.7b"}, {"cluster", cluster},
                 {"plan", {{"global_batch", 1}, {"dp", n}}}};
      const Scenario scenario = parse_scenario(resolve_scenario_json(sc, options));
      GroupShape g{n, scenario.cluster.nodes, gpn};
      const double bytes = 1024.0 * 1024 * 1024;
      const CollectiveCost cost = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, bytes, g,
                                                  fabric_terms(scenario.cluster));
      const double busbw_pred = bytes / cost.time_s * bus_bandwidth_factor(CollectiveOp::kAllReduce, n);
      out.metrics.push_back({"busbw_bytes_per_s", busbw_pred, *busbw * 1e9});
      out.assumptions.push_back("1 GiB all-reduce, algorithm auto (" + std::string(to_string(cost.algo)) + ")");
      out.predicted = true;
      return out;
    }
    // --- model-state memory (ZeRO paper) ---
    if (auto gb = field(measured, "model_state_memory_gb_per_device")) {
      out.kind = "memory";
      const json model = rec.value("model", json::object());
      const json par = rec.value("parallel", json::object());
      auto params_b = field(model, "params_b");
      if (!params_b) {
        out.skipped_reason = "model.params_b missing";
        return out;
      }
      const int stage = small(field(par, "zero_stage").value_or(0));
      const int dp = small(field(par, "dp").value_or(1));
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
    const bool recompute_given = sc["plan"].contains("recompute");
    Result result = estimate(scenario);
    if (!result.feasible && !recompute_given && result.step_time_s > 0) {
      // The record does not say how activations were handled; a practitioner would have
      // recomputed. Try selective, then full.
      for (Recompute rc : {Recompute::kSelective, Recompute::kFull}) {
        scenario.plan.recompute = rc;
        result = estimate(scenario);
        if (result.feasible) {
          out.assumptions.push_back(std::string("recompute not given and none does not fit: ") +
                                    to_string(rc) + " assumed");
          out.scenario["plan"]["recompute"] = to_string(rc);
          break;
        }
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
