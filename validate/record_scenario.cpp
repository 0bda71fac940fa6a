#include "validate/record_scenario.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "models/core/scenario_error.hpp"

namespace trainsim::validate {
using nlohmann::json;

namespace record {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

double decimal(const std::string& digits) { return std::strtod(digits.c_str(), nullptr); }

std::optional<double> number_in(const json& v) {
  if (v.is_number()) {
    const double d = v.get<double>();
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
  }
  if (!v.is_string()) return std::nullopt;
  static const std::regex kNumber(R"(([0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?))");
  static const std::regex kThousands(R"(([0-9]),([0-9]{3})(?![0-9]))");
  std::smatch match;
  // "16,384" is sixteen thousand, not 16: thousands separators go before the number is read.
  std::string s = v.get<std::string>();
  for (std::string prev; prev != s;) prev = s, s = std::regex_replace(s, kThousands, "$1$2");
  if (std::regex_search(s, match, kNumber)) {
    // A minus sign not joined to a word ("~-480", not "GPT-3") makes the figure negative, for the
    // checks to refuse rather than read as 480.
    const auto at = static_cast<std::size_t>(match.position(1));
    const bool minus = at > 0 && s[at - 1] == '-' && (at == 1 || !std::isalnum(static_cast<unsigned char>(s[at - 2])));
    const double d = (minus ? -1 : 1) * decimal(match[1].str());
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> field(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return std::nullopt;
  return number_in(obj[key]);
}

std::optional<double> first_field(const json& obj, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (auto v = field(obj, k)) return v;
  return std::nullopt;
}

std::optional<double> positive(std::optional<double> v) { return v && *v > 0 ? v : std::nullopt; }

std::string text_field(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return "";
  const json& v = obj[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

namespace {
[[noreturn]] void out_of_range(double v, const char* most) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", v);
  throw ScenarioError("record", std::string("number out of range: ") + text + " (at most " + most + ")");
}
}  // namespace

int64_t whole(double v) {
  if (!std::isfinite(v) || std::fabs(v) > 1e15) out_of_range(v, "1e15");
  return static_cast<int64_t>(std::llround(v));
}

int small(double v) {
  if (!std::isfinite(v) || std::fabs(v) > 1e9) out_of_range(v, "1e9");
  return static_cast<int>(std::lround(v));
}

std::string gpu_preset(const std::string& description) {
  const std::string d = lower(description);
  if (d.find("b200") != std::string::npos) return "B200-SXM-180GB";  // GB200's GPU is a B200
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
// "1600 Gbps node-node" or "3.2 Tbps per node" -> 8 NICs sharing the node's total.
void network_from_text(const std::string& text, json& network, std::vector<std::string>& notes) {
  static const std::regex kCount(R"((^|[^0-9A-Za-z-])([0-9]+)\s*x\s)");
  static const std::regex kRate(R"(([0-9]+)\s*G[b](ps|/s|\s))");
  static const std::regex kTotal(R"(([0-9]+)\s*Gbps\s*node)");
  static const std::regex kTotalTera(R"(([0-9]+(\.[0-9]+)?)\s*Tb(ps|/s|it))");
  std::smatch m;
  auto total = [&](double gbps, const std::string& said) {
    network["nics_per_node"] = 8;
    network["nic_bandwidth"] = std::to_string(small(gbps / 8)) + "Gbps";
    notes.push_back("node bandwidth " + said + " taken as 8 NICs");
  };
  if (std::regex_search(text, m, kTotal)) return total(decimal(m[1].str()), m[1].str() + " Gb/s");
  if (std::regex_search(text, m, kTotalTera)) return total(decimal(m[1].str()) * 1000, m[1].str() + " Tb/s");
  std::optional<double> count;
  std::optional<double> rate_gbps;
  if (std::regex_search(text, m, kCount)) count = decimal(m[2].str());
  if (std::regex_search(text, m, kRate)) rate_gbps = decimal(m[1].str());
  else if (text.find("XDR") != std::string::npos) rate_gbps = 800;
  else if (text.find("NDR") != std::string::npos) rate_gbps = 400;
  else if (text.find("HDR") != std::string::npos) rate_gbps = 200;
  else if (text.find("EDR") != std::string::npos) rate_gbps = 100;
  if (count && *count > 0 && *count <= 64) network["nics_per_node"] = static_cast<int>(*count);
  if (rate_gbps && *rate_gbps > 0 && *rate_gbps <= 1e6) network["nic_bandwidth"] = std::to_string(small(*rate_gbps)) + "Gbps";
}

bool attention_stated(const json& rec) {
  const json& model = rec.value("model", json::object());
  if (!model.is_object()) return false;
  const std::string attn = lower(text_field(model, "attn") + " " + text_field(rec, "notes"));
  if (!text_field(model, "attn_impl").empty()) return true;
  for (const char* word : {"flash", "sdpa", "unfused", "fused softmax", "xformers", "cudnn"})
    if (attn.find(word) != std::string::npos) return true;
  return false;
}

int gpu_count(const json& hw, std::vector<std::string>& notes) {
  auto gpus = first_field(hw, {"num_gpus", "gpus"});
  if (!gpus)
    if (auto nodes = field(hw, "num_nodes"); nodes && *nodes > 0) {
      gpus = *nodes * field(hw, "gpus_per_node").value_or(8);
      notes.push_back("num_gpus from num_nodes x gpus_per_node");
    }
  if (!gpus || *gpus <= 0) throw ScenarioError("hardware.num_gpus", "missing or not a positive number");
  return small(*gpus);
}

json cluster_from_record(const json& hw, const std::string& gpu, int num_gpus, std::vector<std::string>& notes) {
  int gpn = small(field(hw, "gpus_per_node").value_or(8));
  if (gpn <= 0) throw ScenarioError("hardware.gpus_per_node", "expected a positive number");
  if (num_gpus < gpn) gpn = num_gpus;
  json cluster;
  cluster["base"] = gpu.rfind("A100", 0) == 0 || gpu.rfind("V100", 0) == 0 ? "dgx-a100-superpod"
                    : gpu.rfind("H800", 0) == 0                            ? "h800-cluster"
                                                                           : "dgx-h100-superpod";
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
  } else if (gpu.rfind("B200", 0) == 0) {
    // DGX B200: NVLink 5, 1.8 TB/s per GPU; eight 400 Gb/s NICs as the DGX H100.
    cluster["intra_node"] = {{"bandwidth", "1800GBps"}};
  }
  json network = cluster.value("network", json::object());
  network_from_text(text_field(hw, "inter_node"), network, notes);
  if (!network.empty()) cluster["network"] = network;
  return cluster;
}

}  // namespace record

namespace {
using namespace record;

bool has(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

// The record's text about one subject: the named fields of an object, joined, lower case.
std::string texts(const json& obj, std::initializer_list<const char*> keys) {
  std::string s;
  for (const char* k : keys) s += " " + text_field(obj, k);
  return lower(s);
}

json model_from_record(const json& model, const json& tr, std::vector<std::string>& notes) {
  auto need = [&](const char* key) {
    auto v = field(model, key);
    if (!v || *v <= 0) throw ScenarioError(std::string("model.") + key, "missing or not a positive number");
    return *v;
  };
  json m;
  m["name"] = text_field(model, "name");
  m["layers"] = whole(need("layers"));
  const int64_t hidden = whole(need("hidden"));
  m["hidden"] = hidden;
  m["heads"] = whole(need("heads"));
  if (auto kv = first_field(model, {"kv_heads", "num_kv_heads", "n_kv_heads", "num_key_value_heads",
                                    "num_query_groups", "kv_groups"}))
    m["kv_heads"] = whole(*kv);
  if (auto hd = field(model, "head_dim")) m["head_dim"] = whole(*hd);
  m["ffn_hidden"] = whole(first_field(model, {"ffn_hidden", "ffn_hidden_size", "intermediate_size"})
                              .value_or(4.0 * hidden));
  m["seq_len"] = whole(first_field(model, {"seq_len", "seq_length", "sequence_length"})
                           .value_or(first_field(tr, {"seq_len", "seq_length", "sequence_length"}).value_or(0)));
  if (m["seq_len"].get<int64_t>() <= 0) throw ScenarioError("model.seq_len", "missing");
  m["vocab"] = whole(first_field(model, {"vocab", "vocab_size"}).value_or(51200));
  if (!model.contains("vocab") && !model.contains("vocab_size")) notes.push_back("vocab not given: 51200 assumed");
  // A gated MLP (SwiGLU, GeGLU: three weight matrices) where the architecture says so.
  const std::string arch = texts(model, {"arch", "ffn_act", "activation", "mlp"});
  static const std::regex kGated(R"((swiglu|geglu|silu|(^|[^a-z])glu([^a-z]|$)|gated))");
  static const std::regex kPlain(R"((gelu|relu|(^|[^a-z])mlp 4h))");
  const double ffn = static_cast<double>(m["ffn_hidden"].get<int64_t>());
  if (std::regex_search(arch, kGated)) {
    m["ffn_act"] = "swiglu";
  } else if (!std::regex_search(arch, kPlain) && (ffn < 3.9 * hidden || ffn > 4.1 * hidden)) {
    // Ungated MLPs are 4h wide (GPT-2/3, OPT, BLOOM, MPT, NeoX); gated ones are sized to their
    // three matrices' budget (LLaMA's 8/3 h rounded up, 2.7-3.5 h; Gemma's 8 h).
    m["ffn_act"] = "swiglu";
    notes.push_back("no MLP activation stated and ffn_hidden is not 4 x hidden: a gated (SwiGLU) MLP assumed");
  }
  for (const char* flag : {"linear_bias", "tied_embeddings"})
    if (model.contains(flag)) {
      if (!model[flag].is_boolean()) throw ScenarioError(std::string("model.") + flag, "expected true or false");
      m[flag] = model[flag];
    }
  // Mixture of experts: the count and the routing, in a "moe" object or beside the other fields.
  const json& moe = model.contains("moe") && model["moe"].is_object() ? model["moe"] : model;
  if (auto experts = first_field(moe, {"experts", "num_experts", "moe_experts", "n_routed_experts",
                                       "num_local_experts"});
      experts && *experts > 1) {
    json e;
    e["experts"] = whole(*experts);
    if (auto k = first_field(moe, {"top_k", "moe_top_k", "num_experts_per_tok", "experts_per_token",
                                   "router_topk"}))
      e["top_k"] = whole(*k);
    else {
      e["top_k"] = 2;
      notes.push_back("moe top_k not given: 2 assumed");
    }
    if (auto f = first_field(moe, {"expert_ffn_hidden", "moe_ffn_hidden", "moe_ffn_hidden_size",
                                   "moe_intermediate_size"}))
      e["expert_ffn_hidden"] = whole(*f);
    if (auto s = first_field(moe, {"shared_experts", "n_shared_experts", "num_shared_experts"}))
      e["shared_experts"] = whole(*s);
    if (auto d = first_field(moe, {"dense_layers", "first_k_dense_replace"})) e["dense_layers"] = whole(*d);
    m["moe"] = e;
  }
  return m;
}

// The pipeline schedule a record names. The zero-bubble paper's automatic schedules ZB-1p and
// ZB-2p (Qi et al. 2024) run at ZB-H1's and ZB-H2's activation memory and are played as those
// handcrafted schedules.
void schedule_from_record(const json& par, json& p, std::vector<std::string>& notes) {
  const std::string sched = lower(text_field(par, "pipeline_schedule") + " " + text_field(par, "schedule"));
  const auto vpp = first_field(par, {"vpp", "virtual_pipeline_stages", "virtual_stages",
                                     "virtual_pipeline_model_parallel_size"});
  static const std::regex kV(R"(v\s*=\s*([0-9]+))");
  static const std::regex kZb(R"(zb[-_ ]?(h)?([12])(p)?)");
  // "interleaved 1F1B (v=3)", "1F1B-I"; not "1F1B (non-interleaved)".
  static const std::regex kInterleaved(R"(interleav|1f1b-i([^a-z]|$))");
  static const std::regex kNotInterleaved(R"((non|not|no|without)[- ]interleav)");
  const bool interleaved = std::regex_search(sched, kInterleaved) && !std::regex_search(sched, kNotInterleaved);
  std::smatch m;
  if (std::regex_search(sched, m, kZb)) {
    p["schedule"] = m[2].str() == "1" ? "zb-h1" : "zb-h2";
    if (m[3].matched) notes.push_back("ZB-" + m[2].str() + "p played as ZB-H" + m[2].str() + " (the same activation memory)");
  } else if (has(sched, "dualpipe")) {
    p["schedule"] = "dualpipe";
  } else if (has(sched, "gpipe")) {
    p["schedule"] = "gpipe";
  } else if (interleaved || (vpp && *vpp > 1)) {
    int v = vpp ? small(*vpp) : 2;
    if (std::regex_search(sched, m, kV)) {
      const double stated = decimal(m[1].str());
      if (stated < 1 || stated > 1024)
        throw ScenarioError("parallel.pipeline_schedule", "interleaving depth v=" + m[1].str().substr(0, 24) +
                                                              ": expected 1 to 1024");
      v = static_cast<int>(stated);
    }
    p["schedule"] = "interleaved";
    p["vpp"] = v;
    if (!vpp && !std::regex_search(sched, m, kV)) notes.push_back("interleaving depth not given: 2 assumed");
  } else if (has(sched, "zb-v") || has(sched, "zbv") || has(sched, "v-shape")) {
    notes.push_back("the V-shaped zero-bubble schedule is not modelled: ZB-H1 assumed");
    p["schedule"] = "zb-h1";
  }
}

void precision_from_record(const json& par, const json& tr, json& p) {
  const std::string prec = lower(text_field(tr, "precision"));
  if (has(prec, "fp8")) p["precision"] = "fp8";
  else if (has(prec, "bf16") || has(prec, "bfloat16")) p["precision"] = "bf16";
  else if (has(prec, "fp16") || has(prec, "float16") || has(prec, "half")) p["precision"] = "fp16";
  else if (has(prec, "fp32") || has(prec, "float32") || has(prec, "tf32")) p["precision"] = "fp32";
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
}

void recompute_from_record(const json& tr, json& p, std::vector<std::string>& notes) {
  std::string rc = lower(text_field(tr, "recompute"));
  if (rc.empty()) rc = lower(text_field(tr, "activation_checkpointing"));
  if (rc.empty()) rc = lower(text_field(tr, "recompute_granularity"));
  if (tr.contains("recompute_early_stop")) {
    if (!tr["recompute_early_stop"].is_boolean())
      throw ScenarioError("training.recompute_early_stop", "expected true or false");
    p["recompute_early_stop"] = tr["recompute_early_stop"];
  }
  if (rc.empty()) return;
  static const std::regex kNone(R"(^\s*(none|no|off|false|disabled|0)([^a-z0-9]|$))");
  if (std::regex_search(rc, kNone)) p["recompute"] = "none";
  else if (has(rc, "selective")) p["recompute"] = "selective";
  else {
    p["recompute"] = "full";
    if (rc.rfind("full", 0) != 0 && rc != "true") notes.push_back("recompute \"" + rc.substr(0, 40) + "\" read as full");
  }
}

// The attention kernel the record names: fused (FlashAttention, SDPA, xformers, cuDNN) where it
// says so; "torch"/"eager" attention implementations, "unfused" or Megatron's fused softmax are
// the unfused path. A record that names none: unfused on GPUs before Hopper (the Megatron-era
// default; FlashAttention appeared in 2022), FlashAttention-2 on Hopper and later, which no
// large-model framework trains on without a fused kernel.
void attention_from_record(const json& rec, const json& model, const std::string& gpu, json& p,
                           std::vector<std::string>& notes) {
  const std::string attn = lower(text_field(model, "attn") + " " + text_field(rec, "notes"));
  const std::string impl = lower(text_field(model, "attn_impl"));
  const bool unfused_impl = !impl.empty() && (has(impl, "torch") || has(impl, "eager") || has(impl, "math")) &&
                            !has(impl, "sdpa") && !has(impl, "flash");
  const bool fused = !unfused_impl && (has(attn, "flash") || has(attn, "sdpa") || !impl.empty());
  const bool stated = attention_stated(rec);
  const bool hopper_or_later = gpu.rfind("H", 0) == 0 || gpu.rfind("B", 0) == 0;
  p["flash_attention"] = fused || (!stated && hopper_or_later);
  static const std::regex kFlash3(R"((flash[a-z_ -]*|fa)[-_ ]?v?3)");
  static const std::regex kFlash1(R"((flash[a-z_ -]*|fa)[-_ ]?v?1([^0-9.]|$))");
  const std::string both = impl + " " + lower(text_field(model, "attn"));
  if (has(impl, "triton")) p["attention_kernel"] = "triton";
  else if (has(impl, "v1") || std::regex_search(both, kFlash1)) p["attention_kernel"] = "flash1";
  else if (has(impl, "3") || std::regex_search(both, kFlash3)) p["attention_kernel"] = "flash3";
  if (!stated && hopper_or_later) notes.push_back("no attention kernel stated: FlashAttention-2 assumed on " + gpu);
  else if (!p["flash_attention"].get<bool>()) notes.push_back("no flash attention stated: unfused softmax assumed");
}

// The parallel degrees a record gives (tp, pp, cp, ep, dp, sp); returns dp. The degrees must
// multiply to the GPUs the record ran on; where the record's dp does not (counted with the
// expert-parallel ranks, or rounded), the GPU count decides.
int degrees_from_record(const json& par, int num_gpus, json& p, std::vector<std::string>& notes) {
  const int tp = small(first_field(par, {"tp", "tensor_parallel"}).value_or(1));
  const int pp = small(first_field(par, {"pp", "pipeline_parallel"}).value_or(1));
  const int cp = small(first_field(par, {"cp", "context_parallel"}).value_or(1));
  p["tp"] = tp;
  p["pp"] = pp;
  p["cp"] = cp;
  p["ep"] = small(first_field(par, {"ep", "expert_parallel"}).value_or(1));
  const int64_t model_parallel = std::max<int64_t>(1, int64_t{tp} * pp * cp);
  int dp = small(first_field(par, {"dp", "data_parallel"}).value_or(static_cast<double>(num_gpus / model_parallel)));
  if (tp > 0 && pp > 0 && cp > 0 && dp > 0 && model_parallel * dp != num_gpus && num_gpus % model_parallel == 0) {
    notes.push_back("dp " + std::to_string(dp) + " does not make " + std::to_string(num_gpus) +
                    " GPUs with tp x pp x cp: dp " + std::to_string(num_gpus / model_parallel) + " used");
    dp = static_cast<int>(num_gpus / model_parallel);
  }
  p["dp"] = dp;
  for (const char* sp : {"sp", "sequence_parallel"})
    if (par.contains(sp) && par[sp].is_boolean()) p["sp"] = par[sp];
  return dp;
}

// The ZeRO stage (or FSDP's sharding strategy as one) and ZeRO-3's prefetch buffer. HYBRID_SHARD
// (and _HYBRID_SHARD_ZERO2, its ZeRO-2 form) shards within a node and replicates across nodes
// (FSDP's default process groups for it) unless the record gives the shard group's size.
void sharding_from_record(const json& par, int dp, int gpus_per_node, json& p, std::vector<std::string>& notes) {
  if (auto z = field(par, "zero_stage")) p["zero_stage"] = small(*z);
  else if (const std::string s = lower(text_field(par, "fsdp_sharding")); !s.empty()) {
    if (has(s, "shard_grad_op") || has(s, "hybrid_shard_zero2")) p["zero_stage"] = 2;
    else if (has(s, "no_shard")) p["zero_stage"] = 0;
    else if (has(s, "full_shard") || has(s, "hybrid")) p["zero_stage"] = 3;
    if (has(s, "hybrid")) {
      const auto stated = first_field(par, {"dp_shard", "shard_group_size", "data_parallel_shard_degree"});
      int shard = std::min(dp, small(stated.value_or(gpus_per_node)));
      if (shard <= 0 || dp % shard != 0) {
        notes.push_back("FSDP hybrid sharding: a shard group of " + std::to_string(shard) + " does not divide dp " +
                        std::to_string(dp) + ": full sharding over all GPUs assumed");
        shard = dp;
      } else if (!stated) {
        notes.push_back("FSDP hybrid sharding: shard group of one node (" + std::to_string(shard) + " GPUs) assumed");
      }
      if (shard < dp) p["dp_shard"] = shard;
    }
  }
  // Megatron-Core's partial distributed optimizer: the optimizer states sharded within each of
  // N instances of dp / N ranks (--num-distributed-optimizer-instances).
  if (auto instances = field(par, "num_distributed_optimizer_instances"); instances && *instances > 1) {
    const int n = small(*instances);
    if (dp % n == 0) {
      if (!p.contains("zero_stage")) p["zero_stage"] = 1;
      p["dp_shard"] = dp / n;
    } else {
      notes.push_back("num_distributed_optimizer_instances " + std::to_string(n) + " does not divide dp " +
                      std::to_string(dp) + ": one instance assumed");
    }
  }
  // The framework's ZeRO-3 prefetch buffer, where the record gives it (DeepSpeed's config key).
  if (auto b = field(par, "stage3_prefetch_bucket_size")) {
    if (*b < 0 || *b > 1e15) throw ScenarioError("parallel.stage3_prefetch_bucket_size", "expected 0 to 1e15 parameters");
    p["zero3_prefetch_params"] = *b;
  }
  // ZeRO++ by DeepSpeed's config keys: the secondary partition (hpZ), int8 weight gathers (qwZ)
  // and int4 gradient all-to-alls (qgZ).
  if (auto hpz = field(par, "zero_hpz_partition_size"); hpz && *hpz > 1) p["zero_hpz_partition_size"] = small(*hpz);
  for (const char* key : {"zero_quantized_weights", "zero_quantized_gradients"}) {
    if (!par.contains(key)) continue;
    if (!par[key].is_boolean()) throw ScenarioError(std::string("parallel.") + key, "expected true or false");
    p[key] = par[key];
  }
}

// Framework switches by their argument names: DDP's "local" implementation, Megatron's overlap
// switches and its distributed optimizer (ZeRO-1), the MoE token dispatcher.
void framework_flags_from_record(const json& par, const json& tr, json& p, std::vector<std::string>& notes) {
  const std::string ddp = lower(text_field(par, "ddp_impl"));
  if (ddp == "local") {
    p["overlap"] = {{"dp", false}};
    notes.push_back("ddp_impl local: gradient all-reduce after the backward pass (no overlap)");
  }
  auto flag = [&](const char* key) -> std::optional<bool> {
    for (const json* o : {&par, &tr}) {
      if (!o->contains(key)) continue;
      if ((*o)[key].is_boolean()) return (*o)[key].get<bool>();
      const std::string t = lower(text_field(*o, key));
      if (t.rfind("true", 0) == 0 || t.rfind("yes", 0) == 0 || t.rfind("on", 0) == 0 || t == "1") return true;
      if (t.rfind("false", 0) == 0 || t.rfind("no", 0) == 0 || t.rfind("off", 0) == 0 || t == "0") return false;
    }
    return std::nullopt;
  };
  for (const auto& [key, part] : std::initializer_list<std::pair<const char*, const char*>>{
           {"tp_comm_overlap", "tp"}, {"overlap_grad_reduce", "dp"}, {"overlap_p2p_comm", "pp"}})
    if (auto on = flag(key)) p["overlap"][part] = *on;
  if (!p.contains("zero_stage"))
    for (const char* key : {"distributed_optimizer", "use_distributed_optimizer"})
      if (flag(key).value_or(false)) p["zero_stage"] = 1;
  const std::string dispatcher = lower(text_field(par, "moe_dispatcher") + text_field(par, "token_dispatcher"));
  if (dispatcher.find("deepep") != std::string::npos) p["moe_dispatcher"] = "deepep";
  // The loss by llm-foundry's key (loss_fn: fused_crossentropy or torch_crossentropy) or
  // Megatron-Core's switch (cross_entropy_loss_fusion); a record that names none: unfused.
  const std::string loss_fn = lower(text_field(par, "loss_fn") + text_field(tr, "loss_fn"));
  if (loss_fn.find("fused") != std::string::npos) p["fused_loss"] = true;
  if (auto on = flag("cross_entropy_loss_fusion")) p["fused_loss"] = *on;
}

// Batch: sequences a step, or tokens a step over the sequence length; the micro-batch as given,
// or from the gradient accumulation steps. A global batch that is not a whole number of
// micro-batches a replica (a figure rounded in the source) is played as the nearest that is.
void batch_from_record(const json& tr, double seq, int dp, json& p, std::vector<std::string>& notes) {
  std::optional<double> global_batch = first_field(tr, {"global_batch", "global_batch_size"});
  if (!global_batch) {
    if (auto tokens = first_field(tr, {"global_batch_tokens", "tokens_per_iter", "batch_tokens"})) {
      global_batch = std::max(1.0, std::round(*tokens / seq));
      notes.push_back("global batch from tokens a step over the sequence length");
    }
  }
  if (!global_batch || *global_batch <= 0) throw ScenarioError("training.global_batch", "missing or not a positive number");
  const auto accum = first_field(tr, {"grad_accum", "gradient_accumulation_steps"});
  double mb = 0;
  if (auto given = first_field(tr, {"micro_batch", "micro_batch_size", "mbs"})) mb = *given;
  else if (accum && *accum > 0 && dp > 0) {
    mb = std::max(1.0, std::round(*global_batch / (dp * *accum)));
    notes.push_back("micro_batch not given: global_batch / (dp x grad_accum) assumed");
  } else {
    mb = std::max(1.0, *global_batch / std::max(1, dp));
    notes.push_back("micro_batch not given: global_batch / dp assumed");
  }
  p["micro_batch"] = whole(mb);
  const double per_step = std::max<double>(1, whole(mb)) * std::max(1, dp);
  double gb = *global_batch;
  if (dp > 0 && mb >= 1 && std::fmod(gb, per_step) != 0) {
    const double rounded = std::max(1.0, std::round(gb / per_step)) * per_step;
    notes.push_back("global batch " + std::to_string(whole(gb)) + " is not a multiple of micro_batch x dp: " +
                    std::to_string(whole(rounded)) + " played");
    gb = rounded;
  }
  p["global_batch"] = whole(gb);
}

}  // namespace

json scenario_from_record(const json& rec, std::vector<std::string>& notes) {
  const json& model = rec.value("model", json::object());
  const json& hw = rec.value("hardware", json::object());
  const json& par = rec.value("parallel", json::object());
  const json& tr = rec.value("training", json::object());
  if (!model.is_object() || !hw.is_object() || !par.is_object() || !tr.is_object())
    throw ScenarioError("record", "model, hardware, parallel and training must be objects");
  json m = model_from_record(model, tr, notes);

  // Cluster: the GPU named in the record on the DGX node of its generation.
  const std::string gpu_text = text_field(hw, "gpu");
  const std::string gpu = gpu_preset(gpu_text);
  if (gpu.empty()) throw ScenarioError("hardware.gpu", "unknown GPU \"" + gpu_text + "\"");
  const int num_gpus = gpu_count(hw, notes);
  json cluster = cluster_from_record(hw, gpu, num_gpus, notes);

  // Plan.
  json p;
  const int dp = degrees_from_record(par, num_gpus, p, notes);
  sharding_from_record(par, dp, cluster["gpus_per_node"].get<int>(), p, notes);
  schedule_from_record(par, p, notes);
  framework_flags_from_record(par, tr, p, notes);
  batch_from_record(tr, static_cast<double>(m["seq_len"].get<int64_t>()), dp, p, notes);
  precision_from_record(par, tr, p);
  recompute_from_record(tr, p, notes);
  attention_from_record(rec, model, gpu, p, notes);

  json s;
  s["schema_version"] = 1;
  s["name"] = text_field(rec, "id");
  s["model"] = m;
  s["cluster"] = cluster;
  s["plan"] = p;
  return s;
}

}  // namespace trainsim::validate
