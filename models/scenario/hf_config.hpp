// Hugging Face transformers config.json -> the scenario format's model object (README "Scenario
// format"). Families: Llama 1/2/3, Mistral, Mixtral, Qwen2, Qwen2-MoE, DeepSeek-V2/V3, GPT-2,
// GPT-NeoX (field names as in transformers' Llama/Mistral/Mixtral/Qwen2/Qwen2Moe/DeepseekV3/GPT2/
// GPTNeoX *Config classes). Every error names the file and the field:
// `config.json: num_hidden_layers: missing`.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace trainsim {

// `config` is the parsed config.json, `path` names it in errors. `seq_len` is the training
// sequence length, which a config.json does not hold (max_position_embeddings / n_positions is
// the longest context the model supports): 0 is a ScenarioError naming "<path>: seq_len".
// Returns a model object the loader accepts
// (layers, hidden, heads, kv_heads, ffn_hidden, ffn_act, vocab, seq_len, tied_embeddings,
// moe{...}, name, source, notes). Throws ScenarioError on a missing or mistyped field.
nlohmann::json hf_config_to_model_json(const nlohmann::json& config, const std::string& path,
                                       int64_t seq_len = 0);

}  // namespace trainsim
