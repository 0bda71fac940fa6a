#include "models/scenario/hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/scenario/json_reader.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/limits.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

// Reads fields of one config.json; every error is "<file>: <field>: <what>".
class HfFields {
 public:
  HfFields(const json& config, std::string file) : c_(config), file_(std::move(file)) {}

  bool has(const char* key) const { return c_.contains(key) && !c_[key].is_null(); }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ScenarioError(file_ + ": " + key, what);
  }
  // Every count is checked against the range the loader accepts for the field it becomes
  // (limits.hpp), so the error names the config's field, not the model's.
  int64_t integer(const char* key, int64_t min = 1, int64_t max = kMaxCount) const {
    if (!has(key)) fail(key, std::string("missing (required for model_type \"") + type_ + "\")");
    return to_integer(key, c_[key], min, max);
  }
  int64_t integer_or(const char* key, int64_t fallback, int64_t min = 1, int64_t max = kMaxCount) const {
    return has(key) ? to_integer(key, c_[key], min, max) : fallback;
  }
  // The first of several aliases that is present (GPT-2 n_embd vs hidden_size, ...).
  int64_t integer_any(std::initializer_list<const char*> keys, int64_t min = 1,
                      int64_t max = kMaxCount) const {
    for (const char* k : keys)
      if (has(k)) return to_integer(k, c_[k], min, max);
    std::string names;
    for (const char* k : keys) names += (names.empty() ? "" : " / ") + std::string(k);
    fail(*keys.begin(), "missing (also looked for " + names + ")");
  }
  // A probability (dropout rates), or `fallback` when the config does not name it.
  double probability_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = c_[key];
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
      fail(key, "expected a probability from 0 to 1, got " + describe_json_value(v));
    return v.get<double>();
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!c_[key].is_boolean()) fail(key, "expected true or false, got " + describe_json_value(c_[key]));
    return c_[key].get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!c_[key].is_string()) fail(key, "expected a string, got " + describe_json_value(c_[key]));
    return c_[key].get<std::string>();
  }
  void set_type(const std::string& t) { type_ = t; }

 private:
  int64_t to_integer(const std::string& key, const json& v, int64_t min, int64_t max) const {
    // HF writes integers; a float with an integral value (4096.0) is accepted.
    int64_t i = 0;
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) {
      fail(key, "must be at most " + std::to_string(max) + ", got " + describe_json_value(v));
    } else if (v.is_number_integer()) {
      i = v.get<int64_t>();
    } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
               v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 9e15) {
      i = static_cast<int64_t>(v.get<double>());
    } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
               v.get<double>() == std::floor(v.get<double>())) {
      fail(key, "must be at most " + std::to_string(max) + ", got " + describe_json_value(v));
    } else {
      fail(key, "expected an integer, got " + describe_json_value(v));
    }
    if (i < min) fail(key, "must be >= " + std::to_string(min) + ", got " + std::to_string(i));
    if (i > max) fail(key, "must be at most " + std::to_string(max) + ", got " + std::to_string(i));
    return i;
  }
  static constexpr int64_t kMaxCount = int64_t{1} << 40;
  const json& c_;
  std::string file_;
  std::string type_ = "?";
};

// transformers' ACT2FN names of gated (GLU) MLPs in the Llama family: act(gate(x)) * up(x).
bool gated_activation(const std::string& act) {
  return act == "silu" || act == "swish" || act == "swiglu";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
  return s;
}

}  // namespace

json hf_config_to_model_json(const json& config, const std::string& path, int64_t seq_len) {
  if (!config.is_object())
    throw ScenarioError(path, "a Hugging Face config.json is a JSON object, got " +
                                  json_type_name(config));
  HfFields f(config, path);
  std::string type = f.string_or("model_type", "");
  std::vector<std::string> notes;
  if (type.empty()) {
    // Old or hand-written configs: recognise the family by its field names.
    type = f.has("n_layer") && f.has("n_embd") ? "gpt2" : "llama";
    notes.push_back("no model_type; read as " + type);
  }
  // The families whose field names this reader knows; any other model_type may name its
  // fields alike and mean something else, so it is refused rather than read as Llama.
  static const char* kKnown[] = {"gpt2",    "llama",     "mistral",     "mixtral",
                                 "qwen2",   "qwen2_moe", "qwen3",       "qwen3_moe",
                                 "deepseek_v2", "deepseek_v3", "gpt_neox"};
  bool known = false;
  std::string known_list;
  for (const char* k : kKnown) {
    known = known || type == k;
    known_list += (known_list.empty() ? "" : ", ") + std::string(k);
  }
  if (!known)
    f.fail("model_type", "unknown model_type \"" + safe_excerpt(type) + "\"; this importer reads " +
                             known_list + " (for another family, write the model object by hand)");
  f.set_type(type);

  json m = json::object();
  int64_t max_context = 0;  // the longest context the model supports, when the config says
  // The last component of the repository id or path ("meta-llama/Llama-3.1-8B", "/ckpt/run7/"),
  // else the model type.
  std::string name = f.string_or("_name_or_path", "");
  while (!name.empty() && name.back() == '/') name.pop_back();
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  m["name"] = name.empty() ? type : name;
  m["source"] = "Hugging Face config.json (" + path + "), model_type " + type;

  if (type == "gpt2") {
    // transformers GPT2Config: n_layer, n_embd, n_head, n_inner (null = 4 n_embd), n_positions;
    // GELU MLP, tied input/output embeddings (PretrainedConfig default).
    m["layers"] = f.integer_any({"n_layer", "num_hidden_layers"}, 1, limits::kMaxLayers);
    m["hidden"] = f.integer_any({"n_embd", "hidden_size"}, 1, limits::kMaxHidden);
    m["heads"] = f.integer_any({"n_head", "num_attention_heads"}, 1, limits::kMaxHeads);
    m["kv_heads"] = m["heads"];
    m["ffn_hidden"] = f.integer_or("n_inner", 4 * m["hidden"].get<int64_t>(), 1, limits::kMaxFfnHidden);
    m["ffn_act"] = "gelu";
    m["vocab"] = f.integer("vocab_size", 1, limits::kMaxVocab);
    m["tied_embeddings"] = f.boolean_or("tie_word_embeddings", true);
    for (const char* k : {"n_positions", "n_ctx", "max_position_embeddings"})
      if (max_context == 0) max_context = f.integer_or(k, 0);
    notes.push_back("learned position embeddings (n_positions x n_embd) are not counted");
  } else {
    // Llama-style fields (LlamaConfig and the families that copy it).
    m["layers"] = f.integer("num_hidden_layers", 1, limits::kMaxLayers);
    m["hidden"] = f.integer("hidden_size", 1, limits::kMaxHidden);
    const int64_t heads = f.integer("num_attention_heads", 1, limits::kMaxHeads);
    m["heads"] = heads;
    m["kv_heads"] = f.integer_or("num_key_value_heads", heads, 1, limits::kMaxHeads);
    const int64_t kv = m["kv_heads"].get<int64_t>();
    if (kv > heads || heads % kv != 0)
      f.fail("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(heads) +
                                        "), got " + std::to_string(kv));
    const bool mla = f.has("kv_lora_rank");
    // Qwen3, Gemma: heads x head_dim may differ from hidden_size; the attention keeps its width.
    if (!mla && f.has("head_dim") && !config["head_dim"].is_null()) {
      const int64_t d = f.integer("head_dim", 1, limits::kMaxHeadDim);
      if (d * heads != m["hidden"].get<int64_t>()) m["head_dim"] = d;
    }
    if (!m.contains("head_dim") && m["hidden"].get<int64_t>() % heads != 0)
      f.fail("num_attention_heads", "must divide hidden_size (" +
                                        std::to_string(m["hidden"].get<int64_t>()) + ")");
    if (mla) {
      // DeepseekV2Config / DeepseekV3Config: multi-head latent attention; q_lora_rank null
      // (V2-Lite) projects queries straight from the hidden state.
      const bool q_latent = config.contains("q_lora_rank") && !config["q_lora_rank"].is_null();
      m["kv_heads"] = heads;
      m["mla"] = {{"q_lora_rank", q_latent ? f.integer("q_lora_rank", 1, limits::kMaxHidden) : 0},
                  {"kv_lora_rank", f.integer("kv_lora_rank", 1, limits::kMaxHidden)},
                  {"qk_nope_head_dim", f.integer("qk_nope_head_dim", 1, limits::kMaxHeadDim)},
                  {"qk_rope_head_dim", f.integer("qk_rope_head_dim", 1, limits::kMaxHeadDim)},
                  {"v_head_dim", f.integer("v_head_dim", 1, limits::kMaxHeadDim)}};
    }
    const std::string act = f.string_or("hidden_act", type == "gpt_neox" ? "gelu" : "silu");
    const bool gated = type != "gpt_neox" && gated_activation(act);
    m["ffn_act"] = gated ? "swiglu" : "gelu";
    if (!gated && act != "gelu" && act != "gelu_new" && act != "gelu_fast" &&
        act != "gelu_pytorch_tanh")
      notes.push_back("hidden_act \"" + safe_excerpt(act) + "\" costed as a non-gated GELU MLP");
    m["ffn_hidden"] = f.integer_or("intermediate_size", 4 * m["hidden"].get<int64_t>(), 1, limits::kMaxFfnHidden);
    m["vocab"] = f.integer("vocab_size", 1, limits::kMaxVocab);
    // LlamaConfig, MistralConfig, Qwen2Config, GPTNeoXConfig, DeepseekV3Config default false.
    m["tied_embeddings"] = f.boolean_or("tie_word_embeddings", false);
    max_context = f.integer_or("max_position_embeddings", 0);

    if (type == "mixtral" || (f.has("num_local_experts") && !f.has("n_routed_experts"))) {
      // MixtralConfig: every layer's MLP is num_local_experts SwiGLU experts of
      // intermediate_size, top num_experts_per_tok.
      const int64_t experts = f.integer("num_local_experts", 1, limits::kMaxExperts);
      m["moe"] = {{"experts", experts},
                  {"top_k", f.integer_or("num_experts_per_tok", 2, 1, limits::kMaxExperts)},
                  {"expert_ffn_hidden", m["ffn_hidden"]}};
    } else if (type == "deepseek_v2" || type == "deepseek_v3" || f.has("n_routed_experts")) {
      // DeepseekV3Config: n_routed_experts of moe_intermediate_size, n_shared_experts of the same
      // size, the first first_k_dense_replace layers dense with intermediate_size.
      const int64_t experts = f.integer("n_routed_experts", 1, limits::kMaxExperts);
      m["moe"] = {{"experts", experts},
                  {"top_k", f.integer("num_experts_per_tok", 1, limits::kMaxExperts)},
                  {"expert_ffn_hidden", f.integer("moe_intermediate_size", 1, limits::kMaxFfnHidden)},
                  {"shared_experts", f.integer_or("n_shared_experts", 0, 0, limits::kMaxSharedExperts)},
                  {"dense_layers", f.integer_or("first_k_dense_replace", 0, 0, limits::kMaxLayers)}};
      // Group-limited routing (DeepseekV3Config n_group, topk_group; V2's "group_limited_greedy").
      if (const int64_t groups = f.integer_or("n_group", 1, 1, limits::kMaxExperts); groups > 1) {
        m["moe"]["groups"] = groups;
        m["moe"]["groups_per_token"] = f.integer_or("topk_group", groups, 1, groups);
      }
      if (f.integer_or("moe_layer_freq", 1) != 1)
        notes.push_back("moe_layer_freq != 1: every layer after the dense ones is costed as MoE");
      if (f.integer_or("num_nextn_predict_layers", 0, 0) > 0)
        notes.push_back("multi-token-prediction layers (num_nextn_predict_layers) not modelled");
    } else if (type == "qwen2_moe" || type == "qwen3_moe" || f.has("num_experts")) {
      // Qwen2MoeConfig: num_experts of moe_intermediate_size, one shared expert of
      // shared_expert_intermediate_size (expressed as that many routed-expert widths).
      const int64_t experts = f.integer("num_experts", 1, limits::kMaxExperts);
      const int64_t width = f.integer("moe_intermediate_size", 1, limits::kMaxFfnHidden);
      json moe = {{"experts", experts},
                  {"top_k", f.integer("num_experts_per_tok", 1, limits::kMaxExperts)},
                  {"expert_ffn_hidden", width}};
      const int64_t shared = f.integer_or("shared_expert_intermediate_size", 0, 0, limits::kMaxFfnHidden);
      if (shared > 0) {
        const int64_t count = std::max<int64_t>(1, (shared + width / 2) / width);
        moe["shared_experts"] = count;
        if (count * width != shared)
          notes.push_back("shared_expert_intermediate_size " + std::to_string(shared) +
                          " rounded to " + std::to_string(count) + " experts of " +
                          std::to_string(width));
      }
      if (f.integer_or("decoder_sparse_step", 1) != 1)
        notes.push_back("decoder_sparse_step != 1: every layer is costed as MoE");
      if (config.contains("mlp_only_layers") && config["mlp_only_layers"].is_array() &&
          !config["mlp_only_layers"].empty())
        notes.push_back("mlp_only_layers ignored: every layer is costed as MoE");
      m["moe"] = moe;
    }
    if (type == "gpt_neox" && config.contains("rotary_pct"))
      notes.push_back("GPT-NeoX parallel residual and partial rotary embeddings do not change "
                      "the costs");
  }
  // Biases: GPT-2's Conv1D layers always have them; GPT-NeoX's attention_bias defaults to true;
  // the LLaMA family's attention_bias and mlp_bias default to false (Qwen2's QKV bias is not
  // counted: one of the four linears, and its gradient the smallest).
  const bool family_bias = type == "gpt2" || type == "gpt_neox";
  m["linear_bias"] = f.boolean_or("mlp_bias", false) || f.boolean_or("attention_bias", family_bias);
  // Dropout: the largest probability the config names. GPT2Config's attn/resid/embd_pdrop
  // default to 0.1; LlamaConfig's attention_dropout, GPT-NeoX's hidden_dropout and the families
  // that copy them default to 0.0.
  double dropout = -1;
  for (const char* k : {"attn_pdrop", "resid_pdrop", "embd_pdrop", "attention_dropout", "hidden_dropout"})
    dropout = std::max(dropout, f.probability_or(k, -1));
  m["dropout"] = dropout >= 0 ? dropout : (type == "gpt2" ? 0.1 : 0.0);
  if (m.contains("moe")) {
    const json& moe = m["moe"];
    if (moe["top_k"].get<int64_t>() > moe["experts"].get<int64_t>())
      f.fail("num_experts_per_tok", "exceeds the number of experts (" + moe["experts"].dump() + ")");
    if (moe.contains("dense_layers") && moe["dense_layers"].get<int64_t>() > m["layers"].get<int64_t>())
      f.fail("first_k_dense_replace", "exceeds num_hidden_layers (" + m["layers"].dump() + ")");
  }
  // A config.json holds the longest context the model supports (Llama 3.1: 131072), not the
  // sequence length it trains with (Llama 3 pre-trains at 8K tokens and extends the context to
  // 128K only at the end: "The Llama 3 Herd of Models", arXiv:2407.21783, section 3.4): an input.
  if (seq_len <= 0)
    throw ScenarioError(path + ": seq_len",
                        "the training sequence length is not in a config.json" +
                            (max_context > 0 ? " (its " + std::to_string(max_context) +
                                                   " is the longest context the model supports)"
                                             : std::string()) +
                            "; give it: trainsim import-model --seq-len N, or \"seq_len\" beside "
                            "\"hf_config\" in a scenario's model");
  if (seq_len > (int64_t{1} << 24))
    throw ScenarioError(path + ": seq_len", "sequence length out of range: " + std::to_string(seq_len));
  if (max_context > 0 && seq_len > max_context)
    notes.push_back("seq_len " + std::to_string(seq_len) + " exceeds the config's context length " +
                    std::to_string(max_context));
  m["seq_len"] = seq_len;
  if (!notes.empty()) m["notes"] = join(notes);
  return m;
}

}  // namespace trainsim
