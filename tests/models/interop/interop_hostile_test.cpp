// Hostile and partial inputs for every importer: each is a ScenarioError that names the field or
// the line (exit code 2 in the CLI), never a crash.
#include <gtest/gtest.h>

#include "tests/models/error_of.hpp"

#include "tests/models/interop/interop_test_data.hpp"
#include "models/scenario/hf_config.hpp"
#include "models/interop/megatron_args.hpp"
#include "models/interop/nccl_tests_log.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

using test::error_of;

TEST(InteropHostile, HfConfigErrorsNameTheField) {
  const json llama = {{"model_type", "llama"}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                      {"vocab_size", 32000}, {"max_position_embeddings", 4096}};
  EXPECT_EQ(error_of([&] { hf_config_to_model_json(llama, "config.json"); }),
            "config.json: num_hidden_layers: missing (required for model_type \"llama\")");
  json bad = llama;
  bad["num_hidden_layers"] = "32";
  EXPECT_NE(error_of([&] { hf_config_to_model_json(bad, "config.json"); })
                .find("config.json: num_hidden_layers: expected an integer"),
            std::string::npos);
  bad["num_hidden_layers"] = -1;
  EXPECT_NE(error_of([&] { hf_config_to_model_json(bad, "c.json"); }).find("c.json: num_hidden_layers: must be >= 1"),
            std::string::npos);
  bad["num_hidden_layers"] = 32;
  bad["num_key_value_heads"] = 5;
  EXPECT_NE(error_of([&] { hf_config_to_model_json(bad, "c.json"); }).find("c.json: num_key_value_heads"),
            std::string::npos);
  EXPECT_NE(error_of([&] { hf_config_to_model_json(json::array(), "c.json"); }).find("JSON object"),
            std::string::npos);
  json moe = llama;
  moe["num_hidden_layers"] = 2;
  moe["model_type"] = "deepseek_v3";
  moe["n_routed_experts"] = 4;
  moe["num_experts_per_tok"] = 8;
  moe["moe_intermediate_size"] = 128;
  EXPECT_NE(error_of([&] { hf_config_to_model_json(moe, "c.json"); }).find("c.json: num_experts_per_tok"),
            std::string::npos);
  json gpt2 = {{"model_type", "gpt2"}, {"n_layer", 2}, {"n_head", 2}, {"vocab_size", 10}, {"n_positions", 8}};
  EXPECT_NE(error_of([&] { hf_config_to_model_json(gpt2, "g.json"); }).find("g.json: n_embd: missing"),
            std::string::npos);
  json huge = llama;
  huge["num_hidden_layers"] = 1e300;
  EXPECT_NE(error_of([&] { hf_config_to_model_json(huge, "c.json"); }).find("num_hidden_layers"),
            std::string::npos);
}

TEST(InteropHostile, MegatronErrorsNameTheFlag) {
  MegatronImportOptions o;
  auto run = [&](const std::string& cmd) {
    return error_of([&] { import_megatron_args(split_command_line(cmd), o); });
  };
  const std::string model = " --num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 8 --vocab-size 100";
  EXPECT_NE(run("--hidden-size 64").find("--num-layers: missing"), std::string::npos);
  EXPECT_NE(run(model + " --tensor-model-parallel-size").find("--tensor-model-parallel-size: expects a value"),
            std::string::npos);
  EXPECT_NE(run(model + " --micro-batch-size $MBS").find("--micro-batch-size: expected an integer, got \"$MBS\" (a shell variable"),
            std::string::npos);
  EXPECT_NE(run(model + " --pipeline-model-parallel-size 0").find("--pipeline-model-parallel-size: must be >= 1"),
            std::string::npos);
  EXPECT_NE(run(model + " --num-layers-per-virtual-pipeline-stage 3").find("--num-layers-per-virtual-pipeline-stage"),
            std::string::npos);
  EXPECT_NE(run(model + " --recompute-granularity most").find("--recompute-granularity: expected full or selective"),
            std::string::npos);
  EXPECT_NE(run(model + " --bf16=1").find("--bf16: takes no value"), std::string::npos);
  EXPECT_NE(run(model + " --fp8-format e5m2").find("--fp8-format"), std::string::npos);
  EXPECT_NE(run(model + " --group-query-attention").find("--num-query-groups: missing"), std::string::npos);
  EXPECT_NE(run(model + " --lr 'unterminated").find("unterminated"), std::string::npos);
  EXPECT_NE(run(" --num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 8 --tokenizer-type SentencePieceTokenizer")
                .find("--vocab-size: missing"),
            std::string::npos);
  o.gpus = 6;
  EXPECT_NE(run(model + " --tensor-model-parallel-size 4").find("--gpus: 6 GPUs are not a multiple"),
            std::string::npos);
  EXPECT_NE(run(model + " --expert-model-parallel-size 2").find("--num-experts"), std::string::npos);
}

TEST(InteropHostile, NcclLogErrorsNameTheLine) {
  EXPECT_EQ(error_of([] { read_nccl_tests_log(test::data_path("nccl/bad_row.log")); }),
            test::data_path("nccl/bad_row.log") +
                ":5: out-of-place time: expected a non-negative number, got \"2x.10\"");
  EXPECT_NE(error_of([] { read_nccl_tests_log(test::data_path("nccl/truncated.log")); })
                .find("truncated.log:5: expected 13 columns as in the header, got 7"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_nccl_tests_log(test::data_path("nccl/no_table.log")); }).find("no result rows"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_nccl_tests_log(test::data_path("nccl/bad_report.json")); })
                .find("results[0].out_of_place.time: expected a number, got a string"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_nccl_tests_log(test::data_path("nccl/missing.log")); }).find("not found"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_nccl_tests_text("  8 2 float sum -1 1 1 1 0\n", "x.log"); })
                .find("x.log:1: a result row before the nccl-tests header"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_nccl_tests_json(json{{"results", 3}}, "r.json"); }).find("r.json: results: expected a list"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_nccl_tests_json(json{{"results", json::array({{{"size", -4}}})}}, "r.json");
            }).find("r.json: results[0].size"),
            std::string::npos);
  // A fit of degenerate data does not divide by zero.
  const AlphaBetaFit f = fit_alpha_beta({{8, 1e-5, 0, 0, 0, 0}});
  EXPECT_TRUE(std::isfinite(f.alpha_s));
}

}  // namespace
}  // namespace trainsim
