#include "models/scenario/scenario_loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "models/core/scenario_error.hpp"
#include "models/cost/memory.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

LoadOptions options() {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();  // TRAINSIM_SCENARIOS points at scenarios/ under ctest
  return o;
}

json minimal() {
  return json::parse(R"({
    "schema_version": 1, "name": "t",
    "model": "gpt-1.7b",
    "cluster": {"base": "dgx-a100-superpod", "nodes": 4},
    "plan": {"tp": 1, "pp": 1, "dp": 32, "micro_batch": 16, "global_batch": 512}
  })");
}

Scenario load(const json& j, const LoadOptions& o = options()) {
  return parse_scenario(resolve_scenario_json(j, o));
}

std::string error_of(const json& j, const LoadOptions& o = options()) {
  try {
    load(j, o);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(ScenarioLoader, ExpandsPresetsIntoSiUnits) {
  const Scenario s = load(minimal());
  EXPECT_EQ(s.model.layers, 24);
  EXPECT_EQ(s.model.hidden, 2304);
  EXPECT_EQ(s.model.kv_heads, 24);  // defaults to heads
  EXPECT_EQ(s.cluster.nodes, 4);
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
  EXPECT_EQ(s.cluster.gpu.name, "A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops_bf16, 312e12);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_capacity_bytes, 81920.0 * 1024 * 1024);  // nvidia-smi: 81920MiB
  EXPECT_DOUBLE_EQ(s.cluster.network.nic_bandwidth_bytes_per_s, 25e9);  // 200 Gb/s
  EXPECT_EQ(s.cluster.network.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.bandwidth_bytes_per_s, 600e9);
}

TEST(ScenarioLoader, AGpuFileWithTheRetiredEfficiencyBlockStillLoadsAndPredictsTheSame) {
  // Files saved before the kernel model carry a width curve under gpu.efficiency: still checked,
  // no longer used.
  json j = minimal();
  j["cluster"]["gpu"] = {{"base", "A100-SXM4-80GB"}, {"efficiency", {{"gemm_max", 0.5}, {"gemm_half_width", 384}, {"elementwise_bytes_per_hidden", 68}}}};
  const Scenario with = load(j);
  const Scenario without = load(minimal());
  EXPECT_EQ(with.cluster.gpu.kernel.gemm_share_16bit, without.cluster.gpu.kernel.gemm_share_16bit);
  EXPECT_EQ(to_json(with).dump(), to_json(without).dump());
  j["cluster"]["gpu"]["efficiency"]["gemm_max"] = 5;
  EXPECT_NE(error_of(j).find("gpu.efficiency.gemm_max"), std::string::npos) << error_of(j);
}

TEST(ScenarioLoader, NestedOverridesMergeKeyByKey) {
  json j = minimal();
  j["cluster"]["network"] = {{"nic_bandwidth", "400Gbps"}};
  const Scenario s = load(j);
  EXPECT_DOUBLE_EQ(s.cluster.network.nic_bandwidth_bytes_per_s, 50e9);
  EXPECT_EQ(s.cluster.network.nics_per_node, 8);  // untouched
  EXPECT_EQ(s.cluster.network.topology, "rail-optimized");
}

TEST(ScenarioLoader, SetOverridesReachThroughPresetNames) {
  LoadOptions o = options();
  o.overrides = {{"plan.tp", "2"}, {"model.layers", "12"}, {"cluster.gpu", "\"H100-SXM-80GB\""},
                 {"plan.schedule", "gpipe"}};
  const Scenario s = load(minimal(), o);
  EXPECT_EQ(s.plan.tp, 2);
  EXPECT_EQ(s.model.layers, 12);
  EXPECT_EQ(s.model.hidden, 2304);  // the rest of the preset stays
  EXPECT_EQ(s.cluster.gpu.name, "H100-SXM-80GB");
  EXPECT_EQ(s.plan.schedule, "gpipe");
}

TEST(ScenarioLoader, SettingOneFieldOfTheClustersGpuPresetKeepsTheOthers) {
  // The cluster preset names its GPU ("gpu": "A100-SXM4-80GB"); setting one of the GPU's
  // fields refines that preset instead of replacing it with a GPU of one field.
  LoadOptions o = options();
  o.overrides = {{"cluster.gpu.hbm_capacity", "40GiB"}};
  const Scenario s = load(minimal(), o);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_capacity_bytes, 40.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops_bf16, 312e12);  // from the A100 preset
  EXPECT_EQ(s.cluster.gpu.name, "A100-SXM4-80GB");
  o.overrides = {{"cluster.gpu.base", "H100-SXM-80GB"}, {"cluster.gpu.hbm_capacity", "40GiB"}};
  const Scenario h = load(minimal(), o);
  EXPECT_DOUBLE_EQ(h.cluster.gpu.peak_flops_bf16, 989e12);
  EXPECT_DOUBLE_EQ(h.cluster.gpu.hbm_capacity_bytes, 40.0 * 1024 * 1024 * 1024);
  // A GPU object written in the file is the whole GPU: one without peak rates is an error, not
  // an A100 in disguise.
  json j = minimal();
  j["cluster"]["gpu"] = {{"hbm_bandwidth", "1TBps"}};
  EXPECT_NE(error_of(j).find("cluster.gpu.peak_flops: missing"), std::string::npos) << error_of(j);
}

TEST(ScenarioLoader, DpIsDerivedWhenOmitted) {
  json j = minimal();
  j["plan"].erase("dp");
  j["plan"]["tp"] = 2;
  EXPECT_EQ(load(j).plan.dp, 16);
}

// The gradient buffer's element follows the training precision unless the plan names it:
// Megatron reduces bf16 models' gradients in fp32, fp16 ones (loss-scaled) in fp16, autocast's
// fp32 weights have fp32 gradients.
TEST(ScenarioLoader, GradientsAreReducedInTheFrameworksDefaultPrecision) {
  auto grad_reduce = [](const char* precision, bool autocast, const char* named) {
    json j = minimal();
    j["plan"]["precision"] = precision;
    if (autocast) j["plan"]["autocast"] = true;
    if (named) j["plan"]["grad_reduce_precision"] = named;
    return grad_reduce_precision(load(j).plan);
  };
  EXPECT_EQ(grad_reduce("bf16", false, nullptr), Precision::kFp32);
  EXPECT_EQ(grad_reduce("fp8", false, nullptr), Precision::kFp32);
  EXPECT_EQ(grad_reduce("fp16", false, nullptr), Precision::kFp16);
  EXPECT_EQ(grad_reduce("fp16", true, nullptr), Precision::kFp32);
  EXPECT_EQ(grad_reduce("bf16", false, "bf16"), Precision::kBf16);
}

struct BadCase {
  const char* name;
  std::function<void(json&)> edit;
  const char* path_and_message;  // substring expected in the error
};

TEST(ScenarioLoader, BadInputNamesThePathAndWhatWasExpected) {
  const BadCase cases[] = {
      {"missing plan", [](json& j) { j.erase("plan"); }, "plan: missing"},
      {"missing layers", [](json& j) { j["model"] = {{"base", "gpt-1.7b"}}; j["model"]["layers"] = nullptr; }, "model.layers"},
      {"unknown key", [](json& j) { j["plan"]["tensor_parallel"] = 2; }, "plan.tensor_parallel: unknown key"},
      {"negative degree", [](json& j) { j["plan"]["tp"] = -2; }, "plan.tp: expected an integer between 1 and 16777216, got -2"},
      {"fractional degree", [](json& j) { j["plan"]["pp"] = 2.5; }, "plan.pp: expected an integer"},
      {"string degree", [](json& j) { j["plan"]["dp"] = "32"; }, "plan.dp: expected an integer"},
      {"bits for memory", [](json& j) { j["cluster"]["gpu"] = {{"base", "A100-SXM4-80GB"}, {"hbm_capacity", "80Gb"}}; }, "cluster.gpu.hbm_capacity: \"80Gb\" is not a size in bytes: that is bits"},
      {"unknown unit", [](json& j) { j["cluster"]["network"] = {{"latency", "5 parsecs"}}; }, "cluster.network.latency"},
      {"missing preset", [](json& j) { j["model"] = "gpt-9000"; }, "model: unknown model preset \"gpt-9000\""},
      {"bad schedule", [](json& j) { j["plan"]["schedule"] = "2f2b"; }, "plan.schedule: unknown value \"2f2b\""},
      {"zero stage 4", [](json& j) { j["plan"]["zero_stage"] = 4; }, "plan.zero_stage"},
      {"schema version", [](json& j) { j["schema_version"] = 2; }, "schema_version"},
      {"no schema version", [](json& j) { j.erase("schema_version"); }, "schema_version: missing"},
      {"zero gpus per node", [](json& j) { j["cluster"]["gpus_per_node"] = 0; }, "cluster.gpus_per_node"},
      {"a billion gpus", [](json& j) { j["cluster"]["nodes"] = 1000000000; }, "cluster.nodes"},
      {"kv heads not dividing", [](json& j) { j["model"] = {{"base", "gpt-1.7b"}, {"kv_heads", 5}}; }, "model.kv_heads: must divide heads"},
      {"compression order", [](json& j) { j["plan"]["compression"] = json::array({{{"from_step", 10}, {"method", "int8"}}, {{"from_step", 5}, {"method", "int4"}}}); }, "plan.compression[1].from_step"},
      {"unknown compression", [](json& j) { j["plan"]["compression"] = json::array({{{"method", "zip"}}}); }, "plan.compression[0].method"},
      {"model is a number", [](json& j) { j["model"] = 7; }, "model: expected a preset name or an object"},
      {"preset path traversal", [](json& j) { j["model"] = "../../etc/passwd"; }, "not a valid preset name"},
      {"unknown recompute module", [](json& j) { j["plan"]["recompute"] = "selective"; j["plan"]["recompute_modules"] = {"core_attn", "attn"}; }, "plan.recompute_modules[1]: unknown module \"attn\"; expected one of core_attn, layernorm, mla_up_proj, moe_act, mlp"},
      {"recompute module twice", [](json& j) { j["plan"]["recompute"] = "selective"; j["plan"]["recompute_modules"] = {"mlp", "mlp"}; }, "plan.recompute_modules[1]: \"mlp\" is listed twice"},
      {"recompute modules not a list", [](json& j) { j["plan"]["recompute_modules"] = "mlp"; }, "plan.recompute_modules: expected a non-empty list of module names"},
      {"expert groups that do not divide the experts", [](json& j) { j["model"] = {{"base", "mixtral-8x7b"}, {"moe", {{"experts", 8}, {"top_k", 2}, {"groups", 3}}}}; }, "model.moe.groups: must divide experts (8)"},
      {"groups a token picks without groups", [](json& j) { j["model"] = {{"base", "mixtral-8x7b"}, {"moe", {{"experts", 8}, {"top_k", 2}, {"groups_per_token", 2}}}}; }, "model.moe.groups_per_token: needs moe.groups"},
      {"too few groups for top_k", [](json& j) { j["model"] = {{"base", "mixtral-8x7b"}, {"moe", {{"experts", 8}, {"top_k", 2}, {"groups", 8}, {"groups_per_token", 1}}}}; }, "model.moe.groups_per_token: too few: 1 groups of 1 experts cannot hold top_k 2 experts"},
      {"unknown dispatcher", [](json& j) { j["plan"]["moe_dispatcher"] = "nccl"; }, "plan.moe_dispatcher"},
      {"gradients in fp8", [](json& j) { j["plan"]["grad_reduce_precision"] = "fp8"; }, "plan.grad_reduce_precision: unknown value \"fp8\""},
      {"up-projections without mla", [](json& j) { j["plan"]["recompute"] = "selective"; j["plan"]["recompute_modules"] = {"mla_up_proj"}; }, "plan.recompute_modules: \"mla_up_proj\" needs multi-head latent attention (model.mla)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    json j = minimal();
    c.edit(j);
    const std::string err = error_of(j);
    EXPECT_NE(err.find(c.path_and_message), std::string::npos) << "got: " << err;
  }
}

// Counts are 64-bit with their products checked, and every quantity has a physical range: what
// used to wrap (global batch 2^37 gave "0 micro-batches", 2^36 + 32 gave -2147483647) or pass
// (a GPU failing every second) is refused at the field.
TEST(ScenarioLoader, CountsAndQuantitiesStayInTheirRanges) {
  const BadCase cases[] = {
      {"micro-batches wrap at 32 bits", [](json& j) { j["plan"]["micro_batch"] = 1; j["plan"]["global_batch"] = int64_t{1} << 37; },
       "plan.global_batch: 137438953472 sequences over plan.micro_batch x plan.dp = 32 make 4294967296 micro-batches"},
      {"micro-batches just past int", [](json& j) { j["plan"]["micro_batch"] = 1; j["plan"]["global_batch"] = (int64_t{1} << 36) + 32; },
       "micro-batches per step; at most 1073741824"},
      {"degrees overflow", [](json& j) { j["plan"]["tp"] = 1 << 16; j["plan"]["pp"] = 1 << 16; j["plan"]["cp"] = 1 << 16; },
       "plan.dp: plan.tp x plan.pp x plan.cp x plan.dp exceeds 16777216 GPUs"},
      {"degrees overflow, dp derived", [](json& j) { j["plan"].erase("dp"); j["plan"]["tp"] = 1 << 13; j["plan"]["pp"] = 1 << 13; },
       "plan.tp: plan.tp x plan.pp x plan.cp exceeds"},
      {"hidden past 2^22", [](json& j) { j["model"] = {{"base", "gpt-1.7b"}, {"hidden", int64_t{4294967360}}}; }, "model.hidden: expected an integer between 1 and 4194304"},
      {"gpu mtbf of a second", [](json& j) { j["training"] = {{"faults", {{"gpu_mtbf", "1s"}}}}; }, "training.faults.gpu_mtbf: expected 0 (never fails) or a mean time between failures of at least 60 s"},
      {"horizon of 1e300 s", [](json& j) { j["training"] = {{"faults", {{"horizon", "1e300s"}}}}; }, "training.faults.horizon"},
      {"unsigned beyond int64", [](json& j) { j["plan"]["global_batch"] = uint64_t{18446744073709551615u}; }, "plan.global_batch: expected an integer"},
      {"long unknown choice is cut", [](json& j) { j["plan"]["schedule"] = std::string(5000, 'x'); }, "unknown value \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    json j = minimal();
    c.edit(j);
    const std::string err = error_of(j);
    EXPECT_NE(err.find(c.path_and_message), std::string::npos) << "got: " << err;
    EXPECT_LT(err.size(), 400u);
  }
  // The largest counts inside the ranges still load.
  json j = minimal();
  j["plan"]["micro_batch"] = 1;
  j["plan"]["global_batch"] = int64_t{32} << 30;  // 2^30 micro-batches of 32
  EXPECT_EQ(load(j).plan.global_batch, int64_t{32} << 30);
}

// MLA's head widths are its own fields, not hidden / heads: DeepSeek-V2-Lite's latent widths
// with 15 heads (not a divisor of its 2048-wide hidden state) load, and the same model without
// mla is refused.
TEST(ScenarioLoader, LatentAttentionHeadsNeedNotDivideTheHiddenSize) {
  json j = minimal();
  j["model"] = {{"base", "gpt-1.7b"}, {"hidden", 2048}, {"heads", 15}};
  EXPECT_NE(error_of(j).find("model.heads: must divide hidden"), std::string::npos);
  j["model"]["mla"] = {{"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}};
  const Scenario s = load(j);
  ASSERT_TRUE(s.model.mla.has_value());
  EXPECT_EQ(s.model.heads, 15);
  EXPECT_EQ(s.model.mla->v_head_dim, 128);
}

TEST(ScenarioLoader, CyclicBaseReferencesAreRejected) {
  // A preset that names itself as its base, through an inline object.
  json j = minimal();
  j["model"] = {{"base", "gpt-1.7b"}};
  EXPECT_NO_THROW(load(j));
  LoadOptions o = options();
  const std::string dir = ::testing::TempDir() + "/cyclic";
  std::filesystem::create_directories(dir + "/models");
  std::ofstream(dir + "/models/a.json") << R"({"base": "b"})";
  std::ofstream(dir + "/models/b.json") << R"({"base": "a"})";
  o.preset_dirs.insert(o.preset_dirs.begin(), dir);
  j["model"] = "a";
  EXPECT_NE(error_of(j, o).find("cyclic"), std::string::npos) << error_of(j, o);
}

TEST(ScenarioLoader, APartWrittenAsAFileNameIsReadFromTheScenariosFolder) {
  // "model": "custom.json" names a file beside the scenario (as `plan --model FILE` does), not a
  // preset called "custom.json"; its own "base" still names a preset.
  const std::string dir = ::testing::TempDir() + "/file_parts";
  std::filesystem::create_directories(dir + "/parts");
  std::ofstream(dir + "/custom.json") << R"({"base": "gpt-1.7b", "layers": 12, "name": "custom"})";
  std::ofstream(dir + "/parts/gpu.json") << R"({"base": "H100-SXM-80GB", "hbm_capacity": 64e9})";
  json j = minimal();
  j["model"] = "custom.json";
  j["cluster"]["gpu"] = "parts/gpu.json";
  const Scenario s = parse_scenario(resolve_scenario_json(j, options(), dir));
  EXPECT_EQ(s.model.layers, 12);
  EXPECT_EQ(s.model.hidden, 2304);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_capacity_bytes, 64e9);
  EXPECT_EQ(s.cluster.gpu.name, "H100-SXM-80GB");
  std::ofstream(dir + "/plain.json") << R"({"layers": 4, "hidden": 256, "heads": 4, "vocab": 1000, "seq_len": 128})";
  j["model"] = "plain.json";
  EXPECT_EQ(parse_scenario(resolve_scenario_json(j, options(), dir)).model.name, "plain");

  // A missing file, a folder and malformed JSON name the field, then the file.
  auto error_at = [&](const json& part) {
    json k = minimal();
    k["model"] = part;
    try {
      parse_scenario(resolve_scenario_json(k, options(), dir));
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_at("missing.json").rfind("model: " + dir + "/missing.json: cannot open the model file: not found", 0), 0u)
      << error_at("missing.json");
  std::filesystem::create_directories(dir + "/folder.json");
  EXPECT_EQ(error_at("folder.json").rfind("model: ", 0), 0u) << error_at("folder.json");
  EXPECT_NE(error_at("folder.json").find("is a folder, expected a regular file"), std::string::npos) << error_at("folder.json");
  std::ofstream(dir + "/broken.json") << "{\"layers\": 2,";
  EXPECT_NE(error_at("broken.json").find("malformed JSON at line 1"), std::string::npos) << error_at("broken.json");
  // A name without ".json" is a preset name: no other path is read.
  EXPECT_NE(error_at("custom").find("unknown model preset \"custom\""), std::string::npos) << error_at("custom");
}

TEST(ScenarioLoader, MalformedJsonReportsLineAndColumn) {
  const std::string file = ::testing::TempDir() + "/malformed.json";
  std::ofstream(file) << "{\n  \"schema_version\": 1,\n  \"name\": \"x\",,\n}";
  try {
    read_json_file(file);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
}

TEST(ScenarioLoader, ResolvedJsonRoundTrips) {
  const Scenario s = load(minimal());
  const Scenario again = parse_scenario(to_json(s));
  EXPECT_EQ(to_json(again).dump(), to_json(s).dump());
}

TEST(ScenarioLoader, EveryShippedPresetAndScenarioLoads) {
  const LoadOptions o = options();
  int count = 0;
  for (const char* kind : {"models", "clusters", "gpus"}) {
    for (const auto& name : list_presets(kind, o)) {
      SCOPED_TRACE(std::string(kind) + "/" + name);
      json j = minimal();
      if (std::string(kind) == "models") j["model"] = name;
      if (std::string(kind) == "clusters") j["cluster"] = name;
      if (std::string(kind) == "gpus") j["cluster"] = {{"base", "dgx-a100-superpod"}, {"gpu", name}};
      EXPECT_NO_THROW(load(j));
      ++count;
    }
  }
  EXPECT_GE(count, 6 + 3 + 18);
}

}  // namespace
}  // namespace trainsim
