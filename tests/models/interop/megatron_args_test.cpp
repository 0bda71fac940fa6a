#include "models/interop/megatron_args.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/models/interop/interop_test_data.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

std::string read_text(const std::string& rel) {
  std::ifstream in(test::data_path(rel));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Scenario load(const json& scenario) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  return parse_scenario(resolve_scenario_json(scenario, o));
}

bool mentions(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x.find(s) != std::string::npos) return true;
  return false;
}

TEST(MegatronArgs, SplitsLikeAShell) {
  const auto t = split_command_line("a 'b c' \"d \\\"e\\\"\" f\\ g \\\n h # comment\n i");
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[1], "b c");
  EXPECT_EQ(t[2], "d \"e\"");
  EXPECT_EQ(t[3], "f g");
  EXPECT_EQ(t[4], "h");
  EXPECT_EQ(t[5], "i");
}

TEST(MegatronArgs, Gpt3_175bExample) {
  MegatronImportOptions o;
  const MegatronImport imp = import_megatron_args(split_command_line(read_text("megatron/gpt3_175b.sh")), o);
  const Scenario s = load(imp.scenario);
  EXPECT_EQ(s.model.layers, 96);
  EXPECT_EQ(s.model.hidden, 12288);
  EXPECT_EQ(s.model.heads, 96);
  EXPECT_EQ(s.model.ffn_hidden, 4 * 12288);
  EXPECT_EQ(s.model.vocab, 51200);  // 50257 padded to a multiple of 128 x TP 8
  EXPECT_EQ(s.model.seq_len, 2048);
  EXPECT_TRUE(s.model.tied_embeddings);
  EXPECT_EQ(s.plan.tp, 8);
  EXPECT_EQ(s.plan.pp, 16);
  EXPECT_EQ(s.plan.dp, 1);  // torchrun: 16 nodes x 8 = 128 GPUs = TP x PP
  EXPECT_EQ(s.cluster.total_gpus(), 128);
  EXPECT_EQ(s.plan.global_batch, 1536);
  EXPECT_EQ(s.plan.precision, Precision::kFp16);
  EXPECT_EQ(s.plan.recompute, Recompute::kNone);
  EXPECT_FALSE(s.plan.overlap.dp);
  EXPECT_TRUE(imp.unknown.empty()) << imp.unknown.front();
  EXPECT_TRUE(mentions(imp.ignored, "--lr"));
  EXPECT_TRUE(mentions(imp.ignored, "--rampup-batch-size"));
}

TEST(MegatronArgs, Llama2_70bWithInterleavingGqaAndUnknownFlags) {
  MegatronImportOptions o;
  const MegatronImport imp = import_megatron_args(split_command_line(read_text("megatron/llama2_70b.sh")), o);
  const Scenario s = load(imp.scenario);
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_EQ(s.model.ffn_hidden, 28672);
  EXPECT_EQ(s.model.ffn_act, FfnActivation::kSwiglu);
  EXPECT_FALSE(s.model.tied_embeddings);
  EXPECT_EQ(s.model.vocab, 32768);
  EXPECT_EQ(s.plan.vpp, 4);  // 80 layers / PP 4 / 5 per virtual stage
  EXPECT_EQ(s.plan.schedule, "interleaved");
  EXPECT_TRUE(s.plan.sp);
  EXPECT_EQ(s.plan.zero_stage, 1);
  EXPECT_EQ(s.plan.recompute, Recompute::kFull);
  EXPECT_EQ(s.plan.precision, Precision::kBf16);
  EXPECT_TRUE(s.plan.overlap.dp);
  EXPECT_EQ(s.plan.dp, 2);  // 64 GPUs / (8 x 4)
  EXPECT_EQ(s.plan.global_batch, 1024);
  ASSERT_EQ(imp.unknown.size(), 2u);
  EXPECT_EQ(imp.unknown[0], "--some-future-flag 3");
  EXPECT_EQ(imp.unknown[1], "--another-unknown-switch");
  const std::string notes = imp.scenario["notes"].dump();
  EXPECT_NE(notes.find("--some-future-flag"), std::string::npos);
}

TEST(MegatronArgs, MoeFp8AndExplicitWorldSize) {
  MegatronImportOptions o;
  o.gpus = 64;
  const MegatronImport imp = import_megatron_args(split_command_line(read_text("megatron/mixtral_fp8.sh")), o);
  const Scenario s = load(imp.scenario);
  ASSERT_TRUE(s.model.moe.has_value());
  EXPECT_EQ(s.model.moe->experts, 8);
  EXPECT_EQ(s.model.moe->top_k, 2);
  EXPECT_EQ(s.model.moe->expert_ffn_hidden, 14336);
  EXPECT_EQ(s.plan.ep, 8);
  EXPECT_EQ(s.plan.dp, 16);
  EXPECT_EQ(s.plan.precision, Precision::kFp8);
  EXPECT_EQ(s.plan.recompute, Recompute::kSelective);
  EXPECT_TRUE(s.plan.overlap.tp);
  EXPECT_EQ(s.cluster.total_gpus(), 64);
}

// Megatron-Core's --recompute-modules takes several tokens (argparse nargs='*'): the modules
// trainsim models pass through; moe (the whole MoE layer) is noted and left out.
TEST(MegatronArgs, RecomputeModulesTakeSeveralValues) {
  MegatronImportOptions o;
  o.gpus = 64;
  std::string cmd = read_text("megatron/mixtral_fp8.sh");
  cmd += " --recompute-granularity selective --recompute-modules core_attn moe_act layernorm moe --seed 7";
  const MegatronImport imp = import_megatron_args(split_command_line(cmd), o);
  const Scenario s = load(imp.scenario);
  EXPECT_EQ(s.plan.recompute, Recompute::kSelective);
  EXPECT_TRUE(s.plan.recompute_modules.core_attn);
  EXPECT_TRUE(s.plan.recompute_modules.moe_act);
  EXPECT_TRUE(s.plan.recompute_modules.layernorm);
  EXPECT_FALSE(s.plan.recompute_modules.mlp);
  EXPECT_TRUE(mentions(imp.assumptions, "--recompute-modules moe: recomputing the whole MoE layer is not modelled"));
  EXPECT_TRUE(mentions(imp.ignored, "--seed")) << "the flag after the list is parsed as a flag";
  try {
    import_megatron_args(split_command_line(read_text("megatron/mixtral_fp8.sh") + " --recompute-modules attn"), o);
    ADD_FAILURE() << "an unknown module was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("--recompute-modules: unknown module \"attn\""), std::string::npos) << e.what();
  }
}

TEST(MegatronArgs, TheDeepEpDispatcherAndGroupLimitedRoutingAreRead) {
  MegatronImportOptions o;
  o.gpus = 64;
  const std::string base = read_text("megatron/mixtral_fp8.sh");
  const MegatronImport imp = import_megatron_args(
      split_command_line(base + " --moe-token-dispatcher-type flex --moe-enable-deepep --moe-router-num-groups 4"
                                " --moe-router-group-topk 2"),
      o);
  const Scenario s = load(imp.scenario);
  EXPECT_EQ(s.plan.moe_dispatcher, MoeDispatcher::kDeepEp);
  ASSERT_TRUE(s.model.moe);
  EXPECT_EQ(s.model.moe->groups, 4);
  EXPECT_EQ(s.model.moe->groups_per_token, 2);
  // The newer backend flag names DeepEP too; flex without it, and allgather, send every copy.
  const auto newer = import_megatron_args(
      split_command_line(base + " --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep"), o);
  EXPECT_EQ(load(newer.scenario).plan.moe_dispatcher, MoeDispatcher::kDeepEp);
  const auto gather = import_megatron_args(split_command_line(base + " --moe-token-dispatcher-type allgather"), o);
  EXPECT_EQ(load(gather.scenario).plan.moe_dispatcher, MoeDispatcher::kAllToAll);
  EXPECT_TRUE(mentions(gather.assumptions, "allgather costed as alltoall"));
  try {
    import_megatron_args(split_command_line(base + " --moe-token-dispatcher-type nccl"), o);
    ADD_FAILURE() << "an unknown dispatcher was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("--moe-token-dispatcher-type: unknown dispatcher"), std::string::npos) << e.what();
  }
}

TEST(MegatronArgs, SwigluDefaultWidthAndSmallWorlds) {
  MegatronImportOptions o;
  o.gpus = 4;
  const auto imp = import_megatron_args(
      split_command_line("--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --swiglu "
                         "--seq-length 512 --vocab-size 1000 --tensor-model-parallel-size=2"),
      o);
  const Scenario s = load(imp.scenario);
  EXPECT_EQ(s.model.ffn_hidden, 2688);  // int(4 * 1024 * 2 / 3 / 64) * 64
  EXPECT_EQ(s.model.vocab, 1024);       // 1000 padded to 128 x 2
  EXPECT_EQ(s.cluster.gpus_per_node, 4);
  EXPECT_EQ(s.plan.dp, 2);
  EXPECT_EQ(s.plan.precision, Precision::kFp32);
}

// The world size is not a Megatron flag: without a launcher line or --gpus the importer asks for
// it instead of guessing TP x PP x CP GPUs.
TEST(MegatronArgs, WithoutAWorldSizeAsksForOne) {
  const std::string cmd =
      "--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --seq-length 512 --vocab-size 1000 "
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2";
  MegatronImportOptions o;
  try {
    import_megatron_args(split_command_line(cmd), o);
    ADD_FAILURE() << "imported without a world size";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "--gpus");
    EXPECT_NE(std::string(e.what()).find("no world size"), std::string::npos) << e.what();
  }
  o.gpus = 16;
  EXPECT_EQ(load(import_megatron_args(split_command_line(cmd), o).scenario).plan.dp, 4);
  const MegatronImport launched = import_megatron_args(
      split_command_line("torchrun --nnodes 2 --nproc_per_node 4 pretrain_gpt.py " + cmd), MegatronImportOptions{});
  EXPECT_EQ(load(launched.scenario).plan.dp, 2);
}


// Megatron-Core's --decoder-first/last-pipeline-num-layers: the rest split evenly between them
// (it asserts they divide, and so does the importer, naming the flag).
TEST(MegatronArgs, UnevenFirstAndLastStages) {
  const std::string cmd =
      "--num-layers 30 --hidden-size 1024 --num-attention-heads 8 --seq-length 512 --vocab-size 1024 "
      "--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 6";
  MegatronImportOptions o;
  o.gpus = 4;
  EXPECT_EQ(load(import_megatron_args(split_command_line(cmd), o).scenario).plan.layers_per_stage,
            (std::vector<int>{6, 8, 8, 8}));
  EXPECT_EQ(load(import_megatron_args(split_command_line(cmd + " --decoder-last-pipeline-num-layers 4"), o).scenario)
                .plan.layers_per_stage,
            (std::vector<int>{6, 10, 10, 4}));
  try {
    import_megatron_args(split_command_line(cmd + " --decoder-last-pipeline-num-layers 5"), o);
    ADD_FAILURE() << "19 layers split over 2 stages";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "--decoder-first-pipeline-num-layers");
    EXPECT_NE(std::string(e.what()).find("do not split evenly over the other 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
