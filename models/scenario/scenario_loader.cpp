#include "models/scenario/scenario_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "models/cost/compute/kernel_params_json.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/scenario/hf_config.hpp"
#include "models/scenario/input_file.hpp"
#include "models/scenario/json_reader.hpp"
#include "models/scenario/limits.hpp"
#include "models/core/scenario_error.hpp"
#include "models/schedules/pipeline_schedule.hpp"

#ifndef TRAINSIM_SOURCE_SCENARIOS_DIR
#define TRAINSIM_SOURCE_SCENARIOS_DIR ""
#endif

namespace trainsim {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kMaxBaseDepth = 16;
constexpr int64_t kMaxGpus = limits::kMaxGpus;

bool valid_preset_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  return name.find("..") == std::string::npos;
}

// A part written as a JSON file's name ("model": "my-model.json", "gpu": "../gpus/x.json")
// rather than a preset name: the file, relative to the scenario file's folder, as
// `trainsim plan --model FILE` takes one. Only names ending in ".json": any other path is not
// read ("../../etc/passwd" stays an invalid preset name).
bool names_a_file(const std::string& name) {
  const std::string ext = ".json";
  return name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
}

struct PresetResolver {
  const LoadOptions& options;
  std::vector<std::string> dirs;
  std::string origin_dir;  // the scenario file's folder; relative file parts start there

  json load_file_part(const std::string& kind, const std::string& name, const std::string& path) {
    fs::path file = name;
    if (file.is_relative() && !origin_dir.empty()) file = fs::path(origin_dir) / file;
    try {
      return read_json_file(file.string(), kind.substr(0, kind.size() - 1));
    } catch (const ScenarioError& e) {
      // Name the field that refers to the file, then the file and what is wrong with it.
      throw ScenarioError(path, e.what());
    }
  }

  json load_preset(const std::string& kind, const std::string& name, const std::string& path) {
    if (!valid_preset_name(name))
      throw ScenarioError(path, "\"" + safe_excerpt(name) + "\" is not a valid preset name (letters, digits, -, _, .) or a file name ending in .json");
    for (const auto& dir : dirs) {
      fs::path file = fs::path(dir) / kind / (name + ".json");
      std::error_code ec;
      if (!fs::is_regular_file(file, ec)) {
        // A folder, a FIFO or a device under the preset's name is not "unknown": say what it is.
        if (fs::exists(file, ec))
          throw ScenarioError(path, file.string() + " is not a regular file (a " + kind.substr(0, kind.size() - 1) +
                                        " preset is a JSON file)");
        continue;
      }
      // Sweeps resolve thousands of scenarios naming the same presets: read each file once.
      static std::mutex cache_mutex;
      static std::map<std::string, json> cache;
      const std::string key = fs::absolute(file, ec).string();
      {
        std::lock_guard<std::mutex> lock(cache_mutex);
        auto it = cache.find(key);
        if (it != cache.end()) return it->second;
      }
      json loaded = read_json_file(file.string(), kind + " preset");
      std::lock_guard<std::mutex> lock(cache_mutex);
      cache.emplace(key, loaded);
      return loaded;
    }
    std::string names;
    for (const auto& n : list_presets(kind, options)) names += (names.empty() ? "" : ", ") + n;
    throw ScenarioError(path, "unknown " + kind.substr(0, kind.size() - 1) + " preset \"" + name +
                                  "\"; available: " + (names.empty() ? "(none found)" : names));
  }

  // Expands a part that is a preset name or an object with an optional "base".
  json expand(const json& part, const std::string& kind, const std::string& path,
              std::vector<std::string>& chain) {
    if (part.is_string()) {
      const std::string name = part.get<std::string>();
      if (std::find(chain.begin(), chain.end(), name) != chain.end())
        throw ScenarioError(path, "cyclic \"base\" reference: " + name + " refers back to itself");
      if (chain.size() >= kMaxBaseDepth)
        throw ScenarioError(path, "\"base\" references nest deeper than 16");
      chain.push_back(name);
      json loaded = names_a_file(name) ? load_file_part(kind, name, path) : load_preset(kind, name, path);
      json out = expand(loaded, kind, path + "(" + name + ")", chain);
      chain.pop_back();
      if (out.is_object() && !out.contains("name"))
        out["name"] = names_a_file(name) ? fs::path(name).stem().string() : name;
      return out;
    }
    if (!part.is_object())
      throw ScenarioError(path, "expected a preset name or an object, got " + json_type_name(part));
    if (!part.contains("base")) return part;
    const json& base = part["base"];
    if (!base.is_string())
      throw ScenarioError(path + ".base", "expected a preset name, got " + json_type_name(base));
    json merged = expand(base, kind, path + ".base", chain);
    json patch = part;
    patch.erase("base");
    merge_into(merged, patch);
    return merged;
  }

  // Nested objects merge key by key; anything else replaces.
  static void merge_into(json& target, const json& patch) {
    for (auto it = patch.begin(); it != patch.end(); ++it) {
      if (it.value().is_object() && target.contains(it.key()) && target[it.key()].is_object() &&
          !it.value().contains("base"))
        merge_into(target[it.key()], it.value());
      else
        target[it.key()] = it.value();
    }
  }
};

Precision parse_precision(const std::string& s) {
  if (s == "fp32") return Precision::kFp32;
  if (s == "fp16") return Precision::kFp16;
  if (s == "fp8") return Precision::kFp8;
  return Precision::kBf16;
}
Recompute parse_recompute(const std::string& s) {
  if (s == "selective") return Recompute::kSelective;
  if (s == "full") return Recompute::kFull;
  return Recompute::kNone;
}

const std::initializer_list<const char*> kDocKeys = {"description", "source", "notes"};

constexpr double kMinPeakFlops = 1e9;

std::string shown_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// A quantity that is 0 (absent) or at least `floor`: a smaller positive value is refused, naming
// what is expected (`expected`).
double zero_or_at_least(JsonReader& r, const char* key, units::Kind kind, double fallback, double floor, double max,
                        const char* expected) {
  const double value = r.quantity_or(key, kind, fallback, 0, max);
  if (value > 0 && value < floor) r.fail(key, std::string(expected) + ", got " + shown_number(value));
  return value;
}

// A link's latency: 0 (none) or at least a picosecond (light crosses 0.3 mm in it). Smaller
// positive values are below every clock the simulation resolves, and subnormal ones stop
// SimGrid's max-min solver.
double link_latency(JsonReader& n, double fallback) {
  return zero_or_at_least(n, "latency", units::Kind::kTime, fallback, 1e-12, 1,
                          "expected 0 or at least 1e-12 s (a picosecond)");
}

}  // namespace

GpuSpec parse_gpu(const json& j, const std::string& path) {
  JsonReader r(j, path);
  GpuSpec g;
  g.name = r.string_or("name", "custom");
  const json* peaks = r.raw("peak_flops");
  if (!peaks) r.fail("peak_flops", "missing (required): an object of FLOP rates per dtype");
  JsonReader p(*peaks, r.child_path("peak_flops"));
  using units::Kind;
  // 0: the GPU has no such rate. A positive rate is at least 1 GFLOP/s (a single CPU core does
  // more): below it every op's time leaves the range the schedules and the flow engine resolve.
  auto rate = [&](const char* key, double fallback) {
    return zero_or_at_least(p, key, Kind::kFlops, fallback, kMinPeakFlops, 1e19,
                            "expected 0 (no such rate) or at least 1e9 FLOP/s (\"1 GFLOPS\")");
  };
  g.peak_flops_bf16 = rate("bf16", 0);
  g.peak_flops_fp16 = rate("fp16", g.peak_flops_bf16);
  if (g.peak_flops_bf16 == 0) g.peak_flops_bf16 = g.peak_flops_fp16;
  g.peak_flops_fp32 = rate("fp32", 0);
  g.peak_flops_fp8 = rate("fp8", 0);
  p.finish();
  if (g.peak_flops_fp16 <= 0 && g.peak_flops_fp32 <= 0)
    r.fail("peak_flops", "needs at least one positive rate (bf16, fp16 or fp32)");
  g.hbm_capacity_bytes = r.quantity("hbm_capacity", Kind::kBytes, 1, 1e16);
  g.hbm_bandwidth_bytes_per_s = r.quantity("hbm_bandwidth", Kind::kBandwidth, 1, 1e16);
  if (const json* eff = r.raw("efficiency")) {
    // The width curve and elementwise bytes that priced compute before the kernel model
    // (gpu.kernels, docs/compute-model.md): scenarios saved with them still load, checked and
    // not used.
    JsonReader e(*eff, r.child_path("efficiency"));
    e.number_or("gemm_max", 0, 0.01, 1.0);
    e.number_or("gemm_half_width", 0, 0, 1e6);
    e.number_or("elementwise_bytes_per_hidden", 0, 0, 1e4);
    e.finish(kDocKeys);
  }
  if (const json* k = r.raw("kernels")) g.kernel = parse_gpu_kernel_params(*k, r.child_path("kernels"));
  g.training_tensor_share = r.number_or("training_tensor_share", 0, 0.2, 1.0);
  g.speed_spread = r.number_or("speed_spread", -1, 0, 0.2);
  g.compute_capability = r.number_or("compute_capability", 0, 0, 99);
  r.finish(kDocKeys);
  return g;
}

namespace {

ModelSpec parse_model(const json& j, const std::string& path) {
  JsonReader r(j, path);
  ModelSpec m;
  m.name = r.string_or("name", "custom");
  m.layers = static_cast<int>(r.integer("layers", 1, limits::kMaxLayers));
  m.hidden = r.integer("hidden", 1, limits::kMaxHidden);
  m.heads = static_cast<int>(r.integer("heads", 1, limits::kMaxHeads));
  m.kv_heads = static_cast<int>(r.integer_or("kv_heads", m.heads, 1, m.heads));
  if (m.heads % m.kv_heads != 0)
    r.fail("kv_heads", "must divide heads (" + std::to_string(m.heads) + "), got " +
                           std::to_string(m.kv_heads));
  m.head_dim = static_cast<int>(r.integer_or("head_dim", 0, 1, limits::kMaxHeadDim));
  const std::string act = r.choice_or("ffn_act", {"gelu", "swiglu"}, "gelu");
  m.ffn_act = act == "swiglu" ? FfnActivation::kSwiglu : FfnActivation::kGelu;
  m.ffn_hidden = r.integer_or("ffn_hidden", 4 * m.hidden, 1, limits::kMaxFfnHidden);
  m.vocab = r.integer("vocab", 1, limits::kMaxVocab);
  m.seq_len = r.integer("seq_len", 1, limits::kMaxSeqLen);
  m.tied_embeddings = r.boolean_or("tied_embeddings", false);
  m.linear_bias = r.boolean_or("linear_bias", false);
  m.dropout = r.number_or("dropout", 0.1, 0.0, 1.0);
  if (const json* moe = r.raw("moe")) {
    JsonReader e(*moe, r.child_path("moe"));
    MoeSpec s;
    s.experts = static_cast<int>(e.integer("experts", 1, limits::kMaxExperts));
    s.top_k = static_cast<int>(e.integer("top_k", 1, s.experts));
    s.expert_ffn_hidden = e.integer_or("expert_ffn_hidden", m.ffn_hidden, 1, limits::kMaxFfnHidden);
    s.shared_experts = static_cast<int>(e.integer_or("shared_experts", 0, 0, limits::kMaxSharedExperts));
    s.dense_layers = static_cast<int>(e.integer_or("dense_layers", 0, 0, m.layers));
    s.groups = static_cast<int>(e.integer_or("groups", 0, 0, s.experts));
    s.groups_per_token = static_cast<int>(e.integer_or("groups_per_token", 0, 0, s.experts));
    if (s.groups > 0 && s.experts % s.groups != 0)
      throw ScenarioError(e.child_path("groups"), "must divide experts (" + std::to_string(s.experts) +
                                                      "): the groups are equal runs of experts");
    if (s.groups_per_token > 0 && s.groups == 0)
      throw ScenarioError(e.child_path("groups_per_token"), "needs moe.groups (the groups it picks from)");
    if (s.groups_per_token > s.groups && s.groups > 0)
      throw ScenarioError(e.child_path("groups_per_token"),
                          "expected at most moe.groups (" + std::to_string(s.groups) + "), got " +
                              std::to_string(s.groups_per_token));
    if (s.groups_per_token > 0 && static_cast<int64_t>(s.groups_per_token) * (s.experts / s.groups) < s.top_k)
      throw ScenarioError(e.child_path("groups_per_token"),
                          "too few: " + std::to_string(s.groups_per_token) + " groups of " +
                              std::to_string(s.experts / s.groups) + " experts cannot hold top_k " +
                              std::to_string(s.top_k) + " experts");
    e.finish(kDocKeys);
    m.moe = s;
  }
  if (const json* mla = r.raw("mla")) {
    JsonReader e(*mla, r.child_path("mla"));
    MlaSpec l;
    l.q_lora_rank = e.integer_or("q_lora_rank", 0, 0, limits::kMaxHidden);
    l.kv_lora_rank = e.integer("kv_lora_rank", 1, limits::kMaxHidden);
    l.qk_nope_head_dim = static_cast<int>(e.integer("qk_nope_head_dim", 1, limits::kMaxHeadDim));
    l.qk_rope_head_dim = static_cast<int>(e.integer("qk_rope_head_dim", 1, limits::kMaxHeadDim));
    l.v_head_dim = static_cast<int>(e.integer("v_head_dim", 1, limits::kMaxHeadDim));
    e.finish(kDocKeys);
    if (m.kv_heads != m.heads)
      r.fail("kv_heads", "multi-head latent attention (model.mla) gives every query head its own key "
                         "and value head: leave kv_heads out or set it to heads (" + std::to_string(m.heads) + ")");
    if (r.raw("head_dim"))
      r.fail("head_dim", "with model.mla the head widths are mla.qk_nope_head_dim + mla.qk_rope_head_dim "
                         "and mla.v_head_dim: leave head_dim out");
    m.mla = l;
  }
  // MLA's head widths are its own (mla.*_head_dim), whatever hidden / heads is.
  if (!m.mla && m.head_dim == 0 && m.hidden % m.heads != 0)
    r.fail("heads", "must divide hidden (" + std::to_string(m.hidden) + "), got " +
                        std::to_string(m.heads) + " (or set model.head_dim)");
  r.finish({"description", "source", "notes", "params"});
  return m;
}

}  // namespace

ClusterSpec parse_cluster(const json& j, const std::string& path) {
  JsonReader r(j, path);
  using units::Kind;
  ClusterSpec c;
  c.name = r.string_or("name", "custom");
  const json* gpu = r.raw("gpu");
  if (!gpu) r.fail("gpu", "missing (required): a GPU preset name or object");
  c.gpu = parse_gpu(*gpu, r.child_path("gpu"));
  c.nodes = static_cast<int>(r.integer("nodes", 1, kMaxGpus));
  c.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", 1, limits::kMaxGpusPerNode));
  if (int64_t{c.nodes} * c.gpus_per_node > kMaxGpus)
    r.fail("nodes", "nodes x gpus_per_node = " +
                        std::to_string(int64_t{c.nodes} * c.gpus_per_node) +
                        " GPUs; at most 16777216 are supported");
  if (const json* in = r.raw("intra_node")) {
    JsonReader n(*in, r.child_path("intra_node"));
    c.intra_node.bandwidth_bytes_per_s = n.quantity("bandwidth", Kind::kBandwidth, 1, 1e16);
    c.intra_node.latency_s = link_latency(n, 1e-6);
    c.intra_node.efficiency = n.number_or("efficiency", 0.8, 0.01, 1.0);
    c.intra_node.fabric = n.choice_or("fabric", {"nvswitch", "nvlink", "pcie"}, "nvswitch");
    if (n.raw("nvls")) c.intra_node.nvls = n.boolean_or("nvls", false) ? 1 : 0;
    n.finish(kDocKeys);
  } else if (c.gpus_per_node > 1) {
    r.fail("intra_node", "missing (required when gpus_per_node > 1): {bandwidth, latency}");
  }
  if (const json* net = r.raw("network")) {
    JsonReader n(*net, r.child_path("network"));
    c.network.topology = n.choice_or(
        "topology", {"fat-tree", "rail-optimized", "dragonfly", "torus", "single-switch"},
        "fat-tree");
    c.network.nic_bandwidth_bytes_per_s = n.quantity("nic_bandwidth", Kind::kBandwidth, 1, 1e16);
    c.network.nics_per_node = static_cast<int>(n.integer_or("nics_per_node", 1, 1, 1024));
    c.network.latency_s = link_latency(n, 5e-6);
    c.network.oversubscription = n.number_or("oversubscription", 1.0, 1.0, 1024.0);
    c.network.efficiency = n.number_or("efficiency", 0.85, 0.01, 1.0);
    c.network.collnet = n.boolean_or("collnet", false);
    c.network.routing = n.choice_or("routing", {"adaptive", "ecmp", "dmodk"}, "adaptive");
    c.network.switch_radix = static_cast<int>(n.integer_or("switch_radix", 0, 0, 4096));
    c.network.fat_tree_tiers = static_cast<int>(n.integer_or("fat_tree_tiers", 0, 0, 3));
    c.network.dragonfly_nodes_per_router =
        static_cast<int>(n.integer_or("dragonfly_nodes_per_router", 0, 0, 4096));
    if (const json* dims = n.raw("torus_dims")) {
      const std::string dpath = n.child_path("torus_dims");
      if (!dims->is_array() || dims->size() < 2 || dims->size() > 3)
        throw ScenarioError(dpath, "expected a list of 2 or 3 dimensions");
      int64_t product = 1;
      for (std::size_t i = 0; i < dims->size(); ++i) {
        const int64_t d = json_to_integer((*dims)[i], dpath + "[" + std::to_string(i) + "]", 1, 65536);
        product *= d;
        c.network.torus_dims.push_back(static_cast<int>(d));
      }
      if (product != c.nodes)
        throw ScenarioError(dpath, "the torus dimensions multiply to " + std::to_string(product) +
                                       ", expected cluster.nodes (" + std::to_string(c.nodes) + ")");
    }
    n.finish(kDocKeys);
  } else if (c.nodes > 1) {
    r.fail("network", "missing (required when nodes > 1): {topology, nic_bandwidth, ...}");
  }
  c.pcie_bandwidth_bytes_per_s = r.quantity_or("pcie_bandwidth", Kind::kBandwidth, 25e9, 1, 1e16);
  c.host_memory_bytes = r.quantity_or("host_memory", Kind::kBytes, 1024e9, 0, 1e18);
  r.finish(kDocKeys);
  return c;
}

json resolve_cluster_json(const json& cluster, const LoadOptions& options, const std::string& origin_dir) {
  json wrapper = {{"cluster", cluster}};
  return resolve_scenario_json(wrapper, options, origin_dir)["cluster"];
}

namespace {

// plan.recompute_modules: a non-empty list of distinct module names. They apply under
// plan.recompute "selective" and are kept, unused, under the other modes (an edit of the mode
// does not invalidate the plan).
RecomputeModules parse_recompute_modules(const json& list, const JsonReader& r) {
  const std::string path = r.child_path("recompute_modules");
  const std::vector<std::string>& names = recompute_module_names();
  std::string choices;
  for (const std::string& n : names) choices += (choices.empty() ? "" : ", ") + n;
  if (!list.is_array() || list.empty())
    throw ScenarioError(path, "expected a non-empty list of module names (" + choices + "), got " + json_type_name(list));
  RecomputeModules m;
  m.core_attn = false;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!list[i].is_string()) throw ScenarioError(at, "expected a module name (" + choices + "), got " + json_type_name(list[i]));
    const auto it = std::find(names.begin(), names.end(), list[i].get<std::string>());
    if (it == names.end())
      throw ScenarioError(at, "unknown module \"" + list[i].get<std::string>().substr(0, 40) + "\"; expected one of " + choices);
    bool& on = recompute_module(m, static_cast<std::size_t>(it - names.begin()));
    if (on) throw ScenarioError(at, "\"" + *it + "\" is listed twice");
    on = true;
  }
  return m;
}

ParallelPlan parse_plan(const json& j, const std::string& path) {
  JsonReader r(j, path);
  ParallelPlan p;
  const int64_t kMaxDegree = kMaxGpus;
  p.tp = static_cast<int>(r.integer_or("tp", 1, 1, kMaxDegree));
  p.pp = static_cast<int>(r.integer_or("pp", 1, 1, kMaxDegree));
  p.cp = static_cast<int>(r.integer_or("cp", 1, 1, kMaxDegree));
  p.ep = static_cast<int>(r.integer_or("ep", 1, 1, kMaxDegree));
  p.expert_tp = static_cast<int>(r.integer_or("expert_tp", p.tp, 1, kMaxDegree));
  p.dp_from_gpus = !r.has("dp");
  p.dp = static_cast<int>(r.integer_or("dp", 0, 1, kMaxDegree));
  {
    // Each degree fits; their product must too (a plan of more GPUs than any cluster holds).
    int64_t product = 1;
    for (int64_t d : {int64_t{p.tp}, int64_t{p.pp}, int64_t{p.cp}, int64_t{p.dp_from_gpus ? 1 : p.dp}})
      product = product < 0 ? -1 : limits::checked_product(product, d, kMaxGpus);
    if (product < 0)
      r.fail(p.dp_from_gpus ? "tp" : "dp",
             "plan.tp x plan.pp x plan.cp" + std::string(p.dp_from_gpus ? "" : " x plan.dp") +
                 " exceeds " + std::to_string(kMaxGpus) + " GPUs, the most a cluster may have");
  }
  p.sp = r.boolean_or("sp", false);
  p.vpp = static_cast<int>(r.integer_or("vpp", 1, 1, limits::kMaxVirtualStages));
  p.schedule = r.choice_or("schedule", pipeline_schedule_names(), default_pipeline_schedule().name());
  p.micro_batch = r.integer_or("micro_batch", 1, 1, limits::kMaxMicroBatch);
  p.global_batch = r.integer("global_batch", 1, limits::kMaxGlobalBatch);
  p.zero_stage = static_cast<int>(r.integer_or("zero_stage", 0, 0, 3));
  p.recompute = parse_recompute(r.choice_or("recompute", {"none", "selective", "full"}, "none"));
  if (const json* mods = r.raw("recompute_modules")) p.recompute_modules = parse_recompute_modules(*mods, r);
  p.recompute_early_stop = r.boolean_or("recompute_early_stop", false);
  if (p.recompute_early_stop && p.recompute != Recompute::kFull)
    r.fail("recompute_early_stop", "stops a full recomputation early: needs plan.recompute \"full\", got \"" +
                                       std::string(to_string(p.recompute)) + "\"");
  if (const json* off = r.raw("offload")) {
    JsonReader o(*off, r.child_path("offload"));
    p.offload.optimizer = o.boolean_or("optimizer", false);
    p.offload.params = o.boolean_or("params", false);
    p.offload.activations = o.boolean_or("activations", false);
    o.finish();
  }
  p.precision = parse_precision(r.choice_or("precision", {"fp32", "fp16", "bf16", "fp8"}, "bf16"));
  if (const json* stages = r.raw("precision_stages")) {
    const std::string spath = r.child_path("precision_stages");
    if (!stages->is_array() || stages->empty())
      throw ScenarioError(spath, "expected a non-empty list of stages {from_step, precision}, got " +
                                     json_type_name(*stages));
    if (stages->size() > 64) throw ScenarioError(spath, "at most 64 precision stages");
    int64_t last_step = -1;
    for (std::size_t i = 0; i < stages->size(); ++i) {
      JsonReader s((*stages)[i], spath + "[" + std::to_string(i) + "]");
      PrecisionStage st;
      st.from_step = s.integer("from_step", 0, int64_t{1} << 50);
      if (st.from_step <= last_step)
        s.fail("from_step", "stages must be listed in increasing from_step order");
      last_step = st.from_step;
      st.precision = parse_precision(s.choice("precision", {"fp32", "fp16", "bf16", "fp8"}));
      s.finish(kDocKeys);
      p.precision_stages.push_back(st);
    }
  }
  if (const json* comp = r.raw("compression")) {
    const std::string cpath = r.child_path("compression");
    if (!comp->is_array())
      throw ScenarioError(cpath, "expected a list of stages {from_step, method}, got " +
                                     json_type_name(*comp));
    if (comp->size() > 64) throw ScenarioError(cpath, "at most 64 compression stages");
    int64_t last_step = -1;
    for (std::size_t i = 0; i < comp->size(); ++i) {
      JsonReader s((*comp)[i], cpath + "[" + std::to_string(i) + "]");
      CompressionStage st;
      st.from_step = s.integer_or("from_step", 0, 0, int64_t{1} << 50);
      if (st.from_step <= last_step)
        s.fail("from_step", "stages must be listed in increasing from_step order");
      last_step = st.from_step;
      st.method = s.choice("method", {"none", "int8", "int4", "fp8", "2:4", "topk", "powersgd"});
      st.topk_ratio = s.number_or("ratio", 0.01, 1e-6, 1.0);
      st.powersgd_rank = static_cast<int>(s.integer_or("rank", 4, 1, 4096));
      st.error_feedback = s.boolean_or("error_feedback", true);
      st.sync_interval = static_cast<int>(s.integer_or("sync_interval", 1, 1, 1 << 20));
      s.finish(kDocKeys);
      p.compression.push_back(st);
    }
  }
  p.sync_interval = static_cast<int>(r.integer_or("sync_interval", 1, 1, 1 << 20));
  if (const json* ov = r.raw("overlap")) {
    JsonReader o(*ov, r.child_path("overlap"));
    p.overlap.dp = o.boolean_or("dp", true);
    p.overlap.tp = o.boolean_or("tp", false);
    p.overlap.pp = o.boolean_or("pp", true);
    o.finish();
  }
  p.collective_algorithm = to_string(
      collective_algo_from_string(r.string_or("collective_algorithm", "auto"),
                                  r.child_path("collective_algorithm")));
  p.collective_protocol = to_string(
      collective_protocol_from_string(r.string_or("collective_protocol", "auto"),
                                      r.child_path("collective_protocol")));
  p.placement = r.choice_or("placement", {"tp-cp-dp-pp", "tp-cp-ep-dp-pp", "tp-dp-pp", "tp-pp-dp",
                                          "dp-tp-pp", "pp-tp-dp"},
                            "tp-cp-dp-pp");
  if (const json* lps = r.raw("layers_per_stage")) {
    const std::string lpath = r.child_path("layers_per_stage");
    if (!lps->is_array() || lps->empty() || lps->size() > 65536)
      throw ScenarioError(lpath, "expected a list of 1 to 65536 layer counts, one per stage (pp x vpp of them)");
    for (std::size_t i = 0; i < lps->size(); ++i)
      p.layers_per_stage.push_back(static_cast<int>(
          json_to_integer((*lps)[i], lpath + "[" + std::to_string(i) + "]", 0, 100000)));
  }
  p.flash_attention = r.boolean_or("flash_attention", true);
  p.grad_accumulation_fusion = r.boolean_or("grad_accumulation_fusion", false);
  p.autocast = r.boolean_or("autocast", false);
  if (p.autocast && p.precision != Precision::kBf16 && p.precision != Precision::kFp16)
    r.fail("autocast", "casts fp32 weights to 16 bits: needs plan.precision bf16 or fp16, got " +
                           std::string(to_string(p.precision)));
  p.vocab_parallel = r.boolean_or("vocab_parallel", true);
  if (const std::string g = r.choice_or("grad_reduce_precision", {"auto", "fp32", "bf16", "fp16"}, "auto"); g != "auto")
    p.grad_reduce = parse_precision(g);
  p.adam_moments = parse_precision(r.choice_or("adam_moments_precision", {"fp32", "bf16"}, "fp32"));
  p.attention_relayout = r.boolean_or("attention_relayout", true);
  p.fused_loss = r.boolean_or("fused_loss", false);
  p.zero3_prefetch_params = r.number_or("zero3_prefetch_params", 0, 0, 1e15);
  p.zero3_per_parameter = r.choice_or("zero3_collectives", {"module", "parameter"}, "module") == "parameter";
  p.dp_shard = static_cast<int>(r.integer_or("dp_shard", 0, 0, kMaxGpus));
  p.zero_hpz_partition_size = static_cast<int>(r.integer_or("zero_hpz_partition_size", 0, 0, kMaxGpus));
  p.zero_quantized_weights = r.boolean_or("zero_quantized_weights", false);
  p.zero_quantized_gradients = r.boolean_or("zero_quantized_gradients", false);
  p.attention_kernel = r.choice_or("attention_kernel", {"flash2", "flash3", "flash1", "triton"}, "flash2");
  p.fp8_activation_cache = r.boolean_or("fp8_activation_cache", false);
  p.moe_dispatcher = r.choice_or("moe_dispatcher", {"alltoall", "deepep"}, "alltoall") == "deepep"
                         ? MoeDispatcher::kDeepEp
                         : MoeDispatcher::kAllToAll;
  r.finish(kDocKeys);
  return p;
}

StragglerSpec parse_stragglers(const json& j, const std::string& path) {
  JsonReader r(j, path);
  StragglerSpec s;
  s.speed_factor = r.number_or("speed_factor", 1.0, 1e-3, 1.0);
  s.forced_stage = static_cast<int>(r.integer_or("stage", -1, -1, 100000));
  s.thermal = r.has("temperature_mean_c") || r.has("temperature_stddev_c") ||
              r.has("throttle_threshold_c");
  if (s.thermal) {
    if (r.has("fraction"))
      r.fail("fraction", "give either fraction or the thermal form "
                         "(temperature_mean_c, temperature_stddev_c, throttle_threshold_c), not both");
    s.temperature_mean_c = r.number("temperature_mean_c", -50, 200);
    s.temperature_stddev_c = r.number("temperature_stddev_c", 0, 100);
    s.throttle_threshold_c = r.number("throttle_threshold_c", -50, 200);
    // P(T > threshold) for T ~ Normal(mean, stddev): the share of GPUs above the threshold.
    if (s.temperature_stddev_c > 0)
      s.fraction = 0.5 * std::erfc((s.throttle_threshold_c - s.temperature_mean_c) /
                                   (s.temperature_stddev_c * std::sqrt(2.0)));
    else
      s.fraction = s.temperature_mean_c > s.throttle_threshold_c ? 1.0 : 0.0;
  } else {
    s.fraction = r.number_or("fraction", 0, 0, 1);
  }
  r.finish(kDocKeys);
  return s;
}

CheckpointSpec parse_checkpoint(const json& j, const std::string& path) {
  JsonReader r(j, path);
  CheckpointSpec c;
  c.interval_s = r.quantity_or("interval", units::Kind::kTime, 0, 0, 1e9);
  c.size_bytes = r.quantity_or("size", units::Kind::kBytes, 0, 0, 1e18);
  // Absent: the per-node default (goodput.hpp). Given: at least 1 MB/s, below which a
  // checkpoint of any model outlasts every MTBF the faults accept.
  c.write_bandwidth_bytes_per_s =
      r.has("write_bandwidth") ? r.quantity("write_bandwidth", units::Kind::kBandwidth, 1e6, 1e16) : 0;
  c.async = r.boolean_or("async", false);
  c.restart_s = r.quantity_or("restart", units::Kind::kTime, 300, 0, 1e8);
  c.rewarm_s = r.quantity_or("rewarm", units::Kind::kTime, 60, 0, 1e8);
  r.finish(kDocKeys);
  return c;
}

FaultSpec parse_faults(const json& j, const std::string& path) {
  JsonReader r(j, path);
  FaultSpec f;
  f.enabled = true;
  // A component's MTBF: 0 (it never fails), else from a minute (no part fails more often and
  // still counts as working) to 1e15 s.
  auto mtbf = [&](const char* key) {
    const double v = r.quantity_or(key, units::Kind::kTime, 0, 0, 1e15);
    if (v > 0 && v < 60)
      r.fail(key, "expected 0 (never fails) or a mean time between failures of at least 60 s");
    return v;
  };
  f.gpu_mtbf_s = mtbf("gpu_mtbf");
  f.node_mtbf_s = mtbf("node_mtbf");
  f.link_mtbf_s = mtbf("link_mtbf");
  f.switch_mtbf_s = mtbf("switch_mtbf");
  if (const json* st = r.raw("stragglers")) f.stragglers = parse_stragglers(*st, r.child_path("stragglers"));
  if (const json* ld = r.raw("link_degradation")) {
    JsonReader d(*ld, r.child_path("link_degradation"));
    f.link_degradation.fraction = d.number_or("fraction", 0, 0, 1);
    f.link_degradation.bandwidth_factor = d.number_or("bandwidth_factor", 1.0, 1e-3, 1.0);
    d.finish(kDocKeys);
  }
  if (const json* fl = r.raw("failed_links")) {
    const std::string fpath = r.child_path("failed_links");
    if (!fl->is_array()) throw ScenarioError(fpath, "expected an array of link names, got " + json_type_name(*fl));
    for (std::size_t i = 0; i < fl->size(); ++i) {
      const json& v = (*fl)[i];
      if (!v.is_string() || v.get<std::string>().empty())
        throw ScenarioError(fpath + "[" + std::to_string(i) + "]",
                            "expected a link name such as \"leaf0_spine1\", got " + json_type_name(v));
      f.failed_links.push_back(v.get<std::string>());
    }
  }
  f.failed_switch_links = static_cast<int>(r.integer_or("failed_switch_links", 0, 0, 1000000));
  if (const json* cp = r.raw("checkpoint")) f.checkpoint = parse_checkpoint(*cp, r.child_path("checkpoint"));
  f.horizon_s = r.quantity_or("horizon", units::Kind::kTime, 30 * 86400.0, 60, 1e10);
  f.spare_nodes = static_cast<int>(r.integer_or("spare_nodes", -1, -1, 1000000));
  f.repair_s = r.quantity_or("repair", units::Kind::kTime, 86400, 0, 1e10);
  f.trials = static_cast<int>(r.integer_or("trials", 200, 1, 100000));
  f.seed = static_cast<uint64_t>(r.integer_or("seed", 1, 0, int64_t{1} << 62));
  f.rebalance = r.boolean_or("rebalance", false);
  r.finish(kDocKeys);
  return f;
}

TrainingSpec parse_training(const json& j, const std::string& path) {
  JsonReader r(j, path);
  TrainingSpec t;
  t.steps = r.integer_or("steps", 1, 1, int64_t{1} << 50);
  // A count of tokens: whole (1e12 is one), up to 9e15 (a double holds every integer below it).
  t.tokens = static_cast<double>(r.integer_or("tokens", 0, 0, int64_t{9'000'000'000'000'000}));
  if (const json* faults = r.raw("faults")) t.faults = parse_faults(*faults, r.child_path("faults"));
  r.finish(kDocKeys);
  return t;
}

}  // namespace

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}
const char* to_string(MoeDispatcher d) { return d == MoeDispatcher::kDeepEp ? "deepep" : "alltoall"; }
const char* to_string(FfnActivation a) { return a == FfnActivation::kSwiglu ? "swiglu" : "gelu"; }

double GpuSpec::peak_flops(Precision p) const {
  switch (p) {
    case Precision::kFp32: return peak_flops_fp32;
    case Precision::kFp16: return peak_flops_fp16;
    case Precision::kBf16: return peak_flops_bf16;
    case Precision::kFp8: return peak_flops_fp8;
  }
  return 0;
}

std::vector<std::string> default_preset_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TRAINSIM_SCENARIOS")) {
    std::string s(env);
    std::size_t start = 0;
    while (start <= s.size()) {
      const std::size_t colon = s.find(':', start);
      const std::string part = s.substr(start, colon == std::string::npos ? std::string::npos
                                                                          : colon - start);
      if (!part.empty()) dirs.push_back(part);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  const std::string source_dir = TRAINSIM_SOURCE_SCENARIOS_DIR;
  if (!source_dir.empty()) dirs.push_back(source_dir);
  dirs.push_back("scenarios");
  return dirs;
}

json read_json_file(const std::string& file_path, const std::string& what, DuplicateKeys duplicates) {
  return parse_json_text(read_input_file(file_path, what), file_path + " (" + what + ")", duplicates);
}

void apply_override(json& raw, const std::string& dotted_path, const std::string& value) {
  if (dotted_path.empty()) throw ScenarioError("--set", "empty path in --set");
  // A path nests as deep as it has components: the same cap as a file's nesting.
  if (std::count(dotted_path.begin(), dotted_path.end(), '.') >= kMaxJsonDepth)
    throw ScenarioError("--set " + safe_excerpt(dotted_path), "a path of more than " +
                                                                  std::to_string(kMaxJsonDepth) + " components");
  json parsed;
  try {
    parsed = parse_json_text(value, "--set " + safe_excerpt(dotted_path, 120));
  } catch (const JsonSyntaxError& e) {
    // Not JSON: the value is a string ("plan.schedule=interleaved"); but a number too large for
    // a double, or nesting beyond the cap, is an error, not a word.
    if (e.number_overflow() || e.reason().find("nests deeper") != std::string::npos) throw;
    parsed = value;
  }
  json* node = &raw;
  std::size_t start = 0;
  std::string walked;
  while (true) {
    const std::size_t dot = dotted_path.find('.', start);
    const std::string key = dotted_path.substr(start, dot == std::string::npos ? std::string::npos
                                                                                : dot - start);
    if (key.empty()) throw ScenarioError("--set " + safe_excerpt(dotted_path), "empty component in path");
    walked += (walked.empty() ? "" : ".") + key;
    if (!node->is_object())
      throw ScenarioError("--set " + safe_excerpt(dotted_path), safe_excerpt(walked) + " is not inside an object");
    if (dot == std::string::npos) {
      (*node)[key] = parsed;
      return;
    }
    json& child = (*node)[key];
    if (child.is_string()) child = json{{"base", child.get<std::string>()}};  // preset name
    else if (child.is_null()) child = json::object();
    node = &child;
    start = dot + 1;
  }
}

json resolve_scenario_json(json raw, const LoadOptions& options, const std::string& origin_dir) {
  if (!raw.is_object())
    throw ScenarioError("", "a scenario must be a JSON object, got " + json_type_name(raw));
  // A GPU that only "--set cluster.gpu.<field>" brings in refines the cluster preset's GPU (a
  // preset names it: "gpu": "A100-SXM4-80GB"); a GPU object the file writes is the whole GPU.
  const bool gpu_in_file = raw.contains("cluster") && raw["cluster"].is_object() && raw["cluster"].contains("gpu");
  for (const auto& [path, value] : options.overrides) apply_override(raw, path, value);
  const bool refine_gpu = !gpu_in_file && raw.contains("cluster") && raw["cluster"].is_object() &&
                          raw["cluster"].contains("gpu") && raw["cluster"]["gpu"].is_object() &&
                          !raw["cluster"]["gpu"].contains("base");
  PresetResolver resolver{options, {}, origin_dir};
  if (!origin_dir.empty()) {
    resolver.dirs.push_back(origin_dir);
    resolver.dirs.push_back((fs::path(origin_dir) / "..").string());
  }
  for (const auto& d : options.preset_dirs) resolver.dirs.push_back(d);

  // "model": {"hf_config": "path/config.json", ...overrides}: a Hugging Face config.json
  // (models/hf_config.hpp), its path relative to the scenario file's folder.
  if (raw.contains("model") && raw["model"].is_object() && raw["model"].contains("hf_config")) {
    json& m = raw["model"];
    if (!m["hf_config"].is_string())
      throw ScenarioError("model.hf_config", "expected the path of a config.json, got " + json_type_name(m["hf_config"]));
    fs::path p = m["hf_config"].get<std::string>();
    if (p.is_relative() && !origin_dir.empty()) p = fs::path(origin_dir) / p;
    const int64_t seq = m.contains("seq_len") && m["seq_len"].is_number_integer() ? m["seq_len"].get<int64_t>() : 0;
    json converted = hf_config_to_model_json(read_json_file(p.string(), "model.hf_config"),
                                             "model.hf_config (" + p.string() + ")", seq);
    for (auto it = m.begin(); it != m.end(); ++it)
      if (it.key() != "hf_config") converted[it.key()] = it.value();
    m = converted;
  }
  std::vector<std::string> chain;
  if (raw.contains("model")) raw["model"] = resolver.expand(raw["model"], "models", "model", chain);
  if (raw.contains("cluster")) {
    json gpu_patch;
    if (refine_gpu) {
      gpu_patch = raw["cluster"]["gpu"];
      raw["cluster"].erase("gpu");
    }
    json cluster = resolver.expand(raw["cluster"], "clusters", "cluster", chain);
    if (refine_gpu && cluster.is_object() && cluster.contains("gpu")) {
      if (cluster["gpu"].is_string()) {
        gpu_patch["base"] = cluster["gpu"];
      } else if (cluster["gpu"].is_object()) {
        json merged = cluster["gpu"];
        PresetResolver::merge_into(merged, gpu_patch);
        gpu_patch = merged;
      }
    }
    if (refine_gpu && cluster.is_object()) cluster["gpu"] = gpu_patch;
    if (cluster.is_object() && cluster.contains("gpu"))
      cluster["gpu"] = resolver.expand(cluster["gpu"], "gpus", "cluster.gpu", chain);
    raw["cluster"] = cluster;
  }
  return raw;
}

Scenario parse_scenario(const json& resolved) {
  JsonReader r(resolved, "");
  Scenario s;
  const int64_t version = r.integer("schema_version", 1, 1000);
  if (version != 1) r.fail("schema_version", "this trainsim reads schema_version 1, got " +
                                                 std::to_string(version));
  s.schema_version = 1;
  s.name = r.string_or("name", "unnamed");
  s.description = r.string_or("description", "");
  const json* model = r.raw("model");
  if (!model) r.fail("model", "missing (required): a model preset name or object");
  s.model = parse_model(*model, "model");
  const json* cluster = r.raw("cluster");
  if (!cluster) r.fail("cluster", "missing (required): a cluster preset name or object");
  s.cluster = parse_cluster(*cluster, "cluster");
  const json* plan = r.raw("plan");
  if (!plan) r.fail("plan", "missing (required): the parallelism plan object");
  s.plan = parse_plan(*plan, "plan");
  // A module the model does not have cannot be recomputed.
  if (s.plan.recompute == Recompute::kSelective && s.plan.recompute_modules.mla_up_proj && !s.model.mla)
    throw ScenarioError("plan.recompute_modules", "\"mla_up_proj\" needs multi-head latent attention (model.mla)");
  if (s.plan.recompute == Recompute::kSelective && s.plan.recompute_modules.moe_act && !s.model.moe)
    throw ScenarioError("plan.recompute_modules", "\"moe_act\" needs a mixture-of-experts model (model.moe)");
  if (const json* training = r.raw("training")) s.training = parse_training(*training, "training");
  r.finish({"source", "notes"});
  finish_plan(s);
  return s;
}

void finish_plan(Scenario& s) {
  if (s.plan.dp_from_gpus) {
    // parse_plan bounded tp x pp x cp by kMaxGpus: no overflow.
    const int64_t inner = int64_t{s.plan.tp} * s.plan.pp * s.plan.cp;
    s.plan.dp = static_cast<int>(std::max<int64_t>(1, s.cluster.total_gpus() / inner));
  }
  // Micro-batches per step: global_batch / (micro_batch x dp) (both <= 2^40 x 2^24: no overflow).
  const int64_t per_micro_batch = s.plan.micro_batch * int64_t{s.plan.dp};
  const int64_t micro_batches = s.plan.global_batch / per_micro_batch;
  if (micro_batches > limits::kMaxMicroBatchesPerStep)
    throw ScenarioError("plan.global_batch",
                        std::to_string(s.plan.global_batch) + " sequences over plan.micro_batch x plan.dp = " +
                            std::to_string(per_micro_batch) + " make " + std::to_string(micro_batches) +
                            " micro-batches per step; at most " +
                            std::to_string(limits::kMaxMicroBatchesPerStep) + " are supported");
}

Scenario load_scenario_file(const std::string& file_path, const LoadOptions& options,
                            json* resolved_out) {
  // "-": standard input; its presets and files are looked up from the working folder.
  const bool from_stdin = file_path == "-";
  json raw = from_stdin ? parse_json_text(read_standard_input("scenario"), "- (standard input) (scenario)")
                        : read_json_file(file_path, "scenario");
  const std::string dir = from_stdin ? "." : fs::path(file_path).parent_path().string();
  json resolved = resolve_scenario_json(std::move(raw), options, dir.empty() ? "." : dir);
  Scenario s = parse_scenario(resolved);
  if (resolved_out) *resolved_out = std::move(resolved);
  return s;
}

std::vector<std::string> list_presets(const std::string& kind, const LoadOptions& options) {
  std::set<std::string> names;
  std::vector<std::string> dirs = options.preset_dirs;
  if (dirs.empty()) dirs = default_preset_dirs();
  for (const auto& dir : dirs) {
    std::error_code ec;
    fs::path folder = fs::path(dir) / kind;
    if (!fs::is_directory(folder, ec)) continue;
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.path().extension() == ".json") names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

json to_json(const Scenario& s) {
  const auto& m = s.model;
  const auto& c = s.cluster;
  const auto& p = s.plan;
  json model = {{"name", m.name},         {"layers", m.layers},     {"hidden", m.hidden},
                {"heads", m.heads},       {"kv_heads", m.kv_heads}, {"ffn_hidden", m.ffn_hidden},
                {"ffn_act", to_string(m.ffn_act)}, {"vocab", m.vocab}, {"seq_len", m.seq_len},
                {"tied_embeddings", m.tied_embeddings}, {"linear_bias", m.linear_bias}, {"dropout", m.dropout}};
  if (m.moe)
    model["moe"] = {{"experts", m.moe->experts},
                    {"top_k", m.moe->top_k},
                    {"expert_ffn_hidden", m.moe->expert_ffn_hidden},
                    {"shared_experts", m.moe->shared_experts},
                    {"dense_layers", m.moe->dense_layers}};
  if (m.moe && m.moe->groups > 0) {
    model["moe"]["groups"] = m.moe->groups;
    if (m.moe->groups_per_token > 0) model["moe"]["groups_per_token"] = m.moe->groups_per_token;
  }
  if (m.head_dim > 0) model["head_dim"] = m.head_dim;
  if (m.mla)
    model["mla"] = {{"q_lora_rank", m.mla->q_lora_rank},
                    {"kv_lora_rank", m.mla->kv_lora_rank},
                    {"qk_nope_head_dim", m.mla->qk_nope_head_dim},
                    {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                    {"v_head_dim", m.mla->v_head_dim}};
  json gpu = {{"name", c.gpu.name},
              {"peak_flops", {{"fp32", c.gpu.peak_flops_fp32}, {"fp16", c.gpu.peak_flops_fp16},
                              {"bf16", c.gpu.peak_flops_bf16}, {"fp8", c.gpu.peak_flops_fp8}}},
              {"hbm_capacity", c.gpu.hbm_capacity_bytes},
              {"hbm_bandwidth", c.gpu.hbm_bandwidth_bytes_per_s}};
  if (c.gpu.kernel.present()) gpu["kernels"] = to_json(c.gpu.kernel);
  if (c.gpu.training_tensor_share > 0) gpu["training_tensor_share"] = c.gpu.training_tensor_share;
  if (c.gpu.speed_spread >= 0) gpu["speed_spread"] = c.gpu.speed_spread;
  if (c.gpu.compute_capability > 0) gpu["compute_capability"] = c.gpu.compute_capability;
  json cluster = {{"name", c.name},
                  {"gpu", gpu},
                  {"nodes", c.nodes},
                  {"gpus_per_node", c.gpus_per_node},
                  {"intra_node", {{"bandwidth", c.intra_node.bandwidth_bytes_per_s},
                                  {"latency", c.intra_node.latency_s},
                                  {"efficiency", c.intra_node.efficiency},
                                  {"fabric", c.intra_node.fabric}}},
                  {"pcie_bandwidth", c.pcie_bandwidth_bytes_per_s},
                  {"host_memory", c.host_memory_bytes}};
  if (c.intra_node.nvls >= 0) cluster["intra_node"]["nvls"] = c.intra_node.nvls == 1;
  if (c.network.nic_bandwidth_bytes_per_s > 0)
    cluster["network"] = {{"topology", c.network.topology},
                          {"nic_bandwidth", c.network.nic_bandwidth_bytes_per_s},
                          {"nics_per_node", c.network.nics_per_node},
                          {"latency", c.network.latency_s},
                          {"oversubscription", c.network.oversubscription},
                          {"efficiency", c.network.efficiency},
                          {"collnet", c.network.collnet},
                          {"routing", c.network.routing}};
  if (c.network.switch_radix) cluster["network"]["switch_radix"] = c.network.switch_radix;
  if (c.network.fat_tree_tiers) cluster["network"]["fat_tree_tiers"] = c.network.fat_tree_tiers;
  if (!c.network.torus_dims.empty()) cluster["network"]["torus_dims"] = c.network.torus_dims;
  if (c.network.dragonfly_nodes_per_router)
    cluster["network"]["dragonfly_nodes_per_router"] = c.network.dragonfly_nodes_per_router;
  json compression = json::array();
  for (const auto& st : p.compression)
    compression.push_back({{"from_step", st.from_step}, {"method", st.method},
                           {"ratio", st.topk_ratio}, {"rank", st.powersgd_rank},
                           {"error_feedback", st.error_feedback},
                           {"sync_interval", st.sync_interval}});
  json plan = {{"tp", p.tp},
               {"pp", p.pp},
               {"dp", p.dp},
               {"cp", p.cp},
               {"ep", p.ep},
               {"expert_tp", p.expert_tp},
               {"sp", p.sp},
               {"vpp", p.vpp},
               {"schedule", p.schedule},
               {"micro_batch", p.micro_batch},
               {"global_batch", p.global_batch},
               {"zero_stage", p.zero_stage},
               {"recompute", to_string(p.recompute)},
               {"recompute_early_stop", p.recompute_early_stop},
               {"offload", {{"optimizer", p.offload.optimizer}, {"params", p.offload.params},
                            {"activations", p.offload.activations}}},
               {"precision", to_string(p.precision)},
               {"compression", compression},
               {"sync_interval", p.sync_interval},
               {"overlap", {{"dp", p.overlap.dp}, {"tp", p.overlap.tp}, {"pp", p.overlap.pp}}},
               {"collective_algorithm", p.collective_algorithm},
               {"collective_protocol", p.collective_protocol},
               {"placement", p.placement},
               {"flash_attention", p.flash_attention},
               {"attention_kernel", p.attention_kernel},
               {"grad_accumulation_fusion", p.grad_accumulation_fusion},
               {"autocast", p.autocast},
               {"grad_reduce_precision", p.grad_reduce ? to_string(*p.grad_reduce) : "auto"},
               {"adam_moments_precision", to_string(p.adam_moments)},
               {"vocab_parallel", p.vocab_parallel},
               {"attention_relayout", p.attention_relayout},
               {"fused_loss", p.fused_loss},
               {"zero3_prefetch_params", p.zero3_prefetch_params}};
  if (p.zero3_per_parameter) plan["zero3_collectives"] = "parameter";
  if (p.dp_shard > 0) plan["dp_shard"] = p.dp_shard;
  if (p.zero_hpz_partition_size > 1) plan["zero_hpz_partition_size"] = p.zero_hpz_partition_size;
  if (p.zero_quantized_weights) plan["zero_quantized_weights"] = true;
  if (p.zero_quantized_gradients) plan["zero_quantized_gradients"] = true;
  if (!p.layers_per_stage.empty()) plan["layers_per_stage"] = p.layers_per_stage;
  if (p.fp8_activation_cache) plan["fp8_activation_cache"] = true;
  if (p.moe_dispatcher != MoeDispatcher::kAllToAll) plan["moe_dispatcher"] = to_string(p.moe_dispatcher);
  if (!(p.recompute_modules == RecomputeModules{}))
    plan["recompute_modules"] = to_strings(p.recompute_modules);
  if (!p.precision_stages.empty()) {
    json stages = json::array();
    for (const auto& st : p.precision_stages)
      stages.push_back({{"from_step", st.from_step}, {"precision", to_string(st.precision)}});
    plan["precision_stages"] = stages;
  }
  json out = {{"schema_version", s.schema_version},
              {"name", s.name},
              {"model", model},
              {"cluster", cluster},
              {"plan", plan},
              {"training", {{"steps", s.training.steps}, {"tokens", s.training.tokens}}}};
  if (s.training.faults.enabled) {
    const FaultSpec& f = s.training.faults;
    json st = {{"speed_factor", f.stragglers.speed_factor}};
    if (f.stragglers.thermal) {
      st["temperature_mean_c"] = f.stragglers.temperature_mean_c;
      st["temperature_stddev_c"] = f.stragglers.temperature_stddev_c;
      st["throttle_threshold_c"] = f.stragglers.throttle_threshold_c;
    } else {
      st["fraction"] = f.stragglers.fraction;
    }
    if (f.stragglers.forced_stage >= 0) st["stage"] = f.stragglers.forced_stage;
    const CheckpointSpec& c = f.checkpoint;
    out["training"]["faults"] = {
        {"gpu_mtbf", f.gpu_mtbf_s},
        {"node_mtbf", f.node_mtbf_s},
        {"link_mtbf", f.link_mtbf_s},
        {"switch_mtbf", f.switch_mtbf_s},
        {"stragglers", st},
        {"link_degradation", {{"fraction", f.link_degradation.fraction},
                              {"bandwidth_factor", f.link_degradation.bandwidth_factor}}},
        {"failed_links", f.failed_links},
        {"failed_switch_links", f.failed_switch_links},
        {"checkpoint", {{"interval", c.interval_s}, {"size", c.size_bytes}, {"async", c.async},
                        {"restart", c.restart_s}, {"rewarm", c.rewarm_s}}},
        {"horizon", f.horizon_s},
        {"spare_nodes", f.spare_nodes},
        {"repair", f.repair_s},
        {"trials", f.trials},
        {"seed", f.seed},
        {"rebalance", f.rebalance}};
  }
  // Absent, the write bandwidth is the per-node default (goodput.hpp); 0 is not a bandwidth.
  if (s.training.faults.enabled && s.training.faults.checkpoint.write_bandwidth_bytes_per_s > 0)
    out["training"]["faults"]["checkpoint"]["write_bandwidth"] = s.training.faults.checkpoint.write_bandwidth_bytes_per_s;
  if (!s.description.empty()) out["description"] = s.description;
  return out;
}

}  // namespace trainsim
