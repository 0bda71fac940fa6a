#include "models/scenario/hf_config.hpp"

#include <gtest/gtest.h>

#include "tests/models/interop/interop_test_data.hpp"
#include "models/cost/flops.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario load_with_model(const json& model) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json s = {{"schema_version", 1}, {"model", model}, {"cluster", "dgx-a100-superpod"},
            {"plan", {{"global_batch", 1}}}};
  return parse_scenario(resolve_scenario_json(s, o));
}

struct Case {
  const char* file;
  int layers;
  int64_t hidden;
  int heads, kv_heads;
  int64_t ffn_hidden;
  const char* act;
  int64_t vocab;
  bool tied;
  int experts, top_k, shared, dense;
  int64_t expert_ffn;
  double published_params;  // model card / paper total
  double tolerance;
};

// Published totals: Llama 2 paper / HF cards (6.74B, 8.03B, 70.6B), Mistral 7.24B, Mixtral
// 46.7B, Qwen2-7B 7.62B, Qwen1.5-MoE-A2.7B 14.3B, DeepSeek-V3 671B (without its
// multi-token-prediction module), GPT-2 124M, GPT-NeoX-20B 20.55B.
const Case kCases[] = {
    {"llama2-7b.json", 32, 4096, 32, 32, 11008, "swiglu", 32000, false, 0, 0, 0, 0, 0, 6.74e9, 0.02},
    {"llama3-8b.json", 32, 4096, 32, 8, 14336, "swiglu", 128256, false, 0, 0, 0, 0, 0, 8.03e9, 0.02},
    {"llama3-70b.json", 80, 8192, 64, 8, 28672, "swiglu", 128256, false, 0, 0, 0, 0, 0, 70.55e9, 0.02},
    {"mistral-7b.json", 32, 4096, 32, 8, 14336, "swiglu", 32000, false, 0, 0, 0, 0, 0, 7.24e9, 0.02},
    {"mixtral-8x7b.json", 32, 4096, 32, 8, 14336, "swiglu", 32000, false, 8, 2, 0, 0, 14336, 46.7e9, 0.02},
    {"qwen2-7b.json", 28, 3584, 28, 4, 18944, "swiglu", 152064, false, 0, 0, 0, 0, 0, 7.62e9, 0.02},
    {"qwen1.5-moe-a2.7b.json", 24, 2048, 16, 16, 5632, "swiglu", 151936, false, 60, 4, 4, 0, 1408, 14.3e9, 0.03},
    {"deepseek-v3.json", 61, 7168, 128, 128, 18432, "swiglu", 129280, false, 256, 8, 1, 3, 2048, 671e9, 0.005},
    {"gpt2.json", 12, 768, 12, 12, 3072, "gelu", 50257, true, 0, 0, 0, 0, 0, 124.4e6, 0.02},
    {"gpt-neox-20b.json", 44, 6144, 64, 64, 24576, "gelu", 50432, false, 0, 0, 0, 0, 0, 20.55e9, 0.02},
};

TEST(HfConfig, EveryFamilyParsesToItsPublishedArchitecture) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.file);
    const std::string path = test::data_path(std::string("hf/") + c.file);
    const json model = hf_config_to_model_json(read_json_file(path), path, 4096);
    const Scenario s = load_with_model(model);
    EXPECT_EQ(s.model.layers, c.layers);
    EXPECT_EQ(s.model.hidden, c.hidden);
    EXPECT_EQ(s.model.heads, c.heads);
    EXPECT_EQ(s.model.kv_heads, c.kv_heads);
    EXPECT_EQ(s.model.ffn_hidden, c.ffn_hidden);
    EXPECT_STREQ(to_string(s.model.ffn_act), c.act);
    EXPECT_EQ(s.model.vocab, c.vocab);
    EXPECT_EQ(s.model.tied_embeddings, c.tied);
    ASSERT_EQ(s.model.moe.has_value(), c.experts > 0);
    if (c.experts > 0) {
      EXPECT_EQ(s.model.moe->experts, c.experts);
      EXPECT_EQ(s.model.moe->top_k, c.top_k);
      EXPECT_EQ(s.model.moe->shared_experts, c.shared);
      EXPECT_EQ(s.model.moe->dense_layers, c.dense);
      EXPECT_EQ(s.model.moe->expert_ffn_hidden, c.expert_ffn);
    }
    const double params = count_params(s.model).total;
    EXPECT_NEAR(params / c.published_params, 1.0, c.tolerance) << params;
    // Dropout: GPT-2's config names 0.1 (attn/resid/embd_pdrop); the others name 0.0 or
    // nothing, and their config classes default to 0.0.
    EXPECT_DOUBLE_EQ(s.model.dropout, std::string(c.file) == "gpt2.json" ? 0.1 : 0.0);
    // Biases: GPT-2's layers always have them, GPT-NeoX's attention_bias defaults to true;
    // the LLaMA family's attention_bias and mlp_bias are false or absent.
    const std::string file = c.file;
    EXPECT_EQ(s.model.linear_bias, file == "gpt2.json" || file == "gpt-neox-20b.json");
  }
}

// A config.json's max_position_embeddings is the longest context, not the training sequence
// length: the caller gives that, and without it the error names the field and the config's value.
TEST(HfConfig, TheTrainingSequenceLengthIsGivenNotTakenFromTheContextLength) {
  const std::string path = test::data_path("hf/llama3-8b.json");
  EXPECT_EQ(hf_config_to_model_json(read_json_file(path), path, 2048)["seq_len"], 2048);
  try {
    hf_config_to_model_json(read_json_file(path), path);
    ADD_FAILURE() << "no error without a sequence length";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), path + ": seq_len");
    EXPECT_NE(std::string(e.what()).find("its 8192 is the longest context"), std::string::npos) << e.what();
  }
  const std::string gpt2 = test::data_path("hf/gpt2.json");
  EXPECT_THROW(hf_config_to_model_json(read_json_file(gpt2), gpt2), ScenarioError);
  const json longer = hf_config_to_model_json(read_json_file(gpt2), gpt2, 2048);
  EXPECT_NE(longer["notes"].get<std::string>().find("exceeds the config's context length 1024"), std::string::npos);
}

// Qwen3-4B's config.json fields: 32 heads of head_dim 128 on a 2560-wide hidden state. The
// attention keeps its 4096-wide projections; the model card states 4.0B parameters, 3.6B of
// them outside the (tied) embedding.
TEST(HfConfig, AHeadDimApartFromTheHiddenSizeKeepsItsWidth) {
  const json config = {{"model_type", "qwen3"}, {"num_hidden_layers", 36}, {"hidden_size", 2560},
                       {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"head_dim", 128},
                       {"intermediate_size", 9728}, {"vocab_size", 151936}, {"tie_word_embeddings", true},
                       {"hidden_act", "silu"}, {"max_position_embeddings", 40960}};
  const json model = hf_config_to_model_json(config, "qwen3-4b/config.json", 4096);
  EXPECT_EQ(model["head_dim"], 128);
  const Scenario s = load_with_model(model);
  const ParamCount p = count_params(s.model);
  EXPECT_NEAR(p.total / 1e9, 4.02, 0.01);
  EXPECT_NEAR((p.total - 151936.0 * 2560) / 1e9, 3.63, 0.01);
}

TEST(HfConfig, NameAndApproximationsAreRecorded) {
  const std::string path = test::data_path("hf/deepseek-v3.json");
  const json m = hf_config_to_model_json(read_json_file(path), path, 4096);
  EXPECT_EQ(m["name"], "deepseek_v3");  // no _name_or_path in that config
  EXPECT_NE(m["notes"].get<std::string>().find("multi-token-prediction"), std::string::npos);
  // Multi-head latent attention is read, not approximated (the config's own fields).
  EXPECT_EQ(m["mla"]["q_lora_rank"], 1536);
  EXPECT_EQ(m["mla"]["kv_lora_rank"], 512);
  EXPECT_EQ(m["mla"]["qk_nope_head_dim"], 128);
  EXPECT_EQ(m["mla"]["qk_rope_head_dim"], 64);
  EXPECT_EQ(m["mla"]["v_head_dim"], 128);
  // Node-limited routing: 8 expert groups, a token's experts from 4 of them.
  EXPECT_EQ(m["moe"]["groups"], 8);
  EXPECT_EQ(m["moe"]["groups_per_token"], 4);
  EXPECT_EQ(m["notes"].get<std::string>().find("latent attention"), std::string::npos);
  const std::string llama = test::data_path("hf/llama2-7b.json");
  EXPECT_EQ(hf_config_to_model_json(read_json_file(llama), llama, 4096)["name"], "Llama-2-7b-hf");
  // A path that ends in a slash names its last folder; one that is only slashes, the model type.
  json config = read_json_file(llama);
  config["_name_or_path"] = "/checkpoints/run7/";
  EXPECT_EQ(hf_config_to_model_json(config, llama, 4096)["name"], "run7");
  config["_name_or_path"] = "/";
  EXPECT_EQ(hf_config_to_model_json(config, llama, 4096)["name"], "llama");
}

}  // namespace
}  // namespace trainsim
