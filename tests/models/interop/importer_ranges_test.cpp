// Importers refuse what they used to accept as nonsense, naming the field of the file they read:
// an unknown Hugging Face model_type, counts beyond the loader's ranges, Megatron degrees whose
// product wraps, torch traces whose times no GPU can have, calibration values of the wrong type.
// And no message quotes a string of the file.
#include <gtest/gtest.h>

#include "tests/models/error_of.hpp"

#include <fstream>

#include "models/core/scenario_error.hpp"
#include "models/cost/calibration.hpp"
#include "models/interop/megatron_args.hpp"
#include "models/interop/nccl_tests_log.hpp"
#include "models/interop/torch_trace.hpp"
#include "models/scenario/hf_config.hpp"
#include "models/scenario/input_file.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "tests/models/interop/interop_test_data.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

using test::error_of;

const json kLlama = {{"model_type", "llama"},        {"num_hidden_layers", 32}, {"hidden_size", 4096},
                     {"num_attention_heads", 32},    {"vocab_size", 32000},     {"max_position_embeddings", 4096}};

TEST(ImporterRanges, HfUnknownModelTypeIsRefusedListingTheKnownOnes) {
  json c = kLlama;
  c["model_type"] = "phi3";
  const std::string e = error_of([&] { hf_config_to_model_json(c, "config.json", 2048); });
  EXPECT_NE(e.find("config.json: model_type: unknown model_type \"phi3\"; this importer reads gpt2, llama, mistral"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("deepseek_v3"), std::string::npos);
  EXPECT_NO_THROW(hf_config_to_model_json(kLlama, "config.json", 2048));
}

TEST(ImporterRanges, HfCountsOutsideTheLoaderRangesNameTheConfigField) {
  struct Case {
    const char* key;
    json value;
    const char* expected;
  };
  const Case cases[] = {
      {"hidden_size", 100000000, "config.json: hidden_size: must be at most 4194304, got 100000000"},
      {"num_hidden_layers", 1e12, "config.json: num_hidden_layers: must be at most 100000"},
      {"vocab_size", uint64_t{1} << 63, "config.json: vocab_size: must be at most 16777216"},
      {"num_attention_heads", 1 << 20, "config.json: num_attention_heads: must be at most 65536"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.key);
    json c = kLlama;
    c[k.key] = k.value;
    const std::string e = error_of([&] { hf_config_to_model_json(c, "config.json", 2048); });
    EXPECT_NE(e.find(k.expected), std::string::npos) << e;
  }
}

TEST(ImporterRanges, HfTypeErrorsDoNotQuoteTheFile) {
  json c = kLlama;
  c["num_hidden_layers"] = "SECRET-0123";
  const std::string e = error_of([&] { hf_config_to_model_json(c, "config.json", 2048); });
  EXPECT_NE(e.find("num_hidden_layers: expected an integer, got a string (11 characters)"), std::string::npos) << e;
  EXPECT_EQ(e.find("SECRET"), std::string::npos);
  c = kLlama;
  c["model_type"] = std::string(10000, 'A');
  EXPECT_LT(error_of([&] { hf_config_to_model_json(c, "config.json", 2048); }).size(), 400u);
}

TEST(ImporterRanges, MegatronDegreesThatOverflowNameTheFlag) {
  MegatronImportOptions o;
  auto run = [&](const std::string& cmd) {
    return error_of([&] { import_megatron_args(split_command_line(cmd), o); });
  };
  const std::string model = " --num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 8 --vocab-size 100";
  // 2^32 x 2^32 wrapped to 0 and the import became "1 GPU".
  EXPECT_NE(run(model + " --tensor-model-parallel-size 4294967296 --pipeline-model-parallel-size 4294967296")
                .find("--tensor-model-parallel-size: must be at most 16777216"),
            std::string::npos);
  EXPECT_NE(run(model + " --tensor-model-parallel-size 16777216 --pipeline-model-parallel-size 16777216 --padded-vocab-size 128")
                .find("--tensor-model-parallel-size x --pipeline-model-parallel-size x --context-parallel-size exceeds 16777216"),
            std::string::npos);
  EXPECT_NE(run("torchrun --nnodes 16777216 --nproc_per_node 1024 pretrain_gpt.py" + model)
                .find("torchrun --nnodes x --nproc_per_node exceeds"),
            std::string::npos);
  EXPECT_NE(run(model + " --micro-batch-size 99999999999999999999999").find("--micro-batch-size: must be at most"),
            std::string::npos);
  EXPECT_NE(run(" --num-layers 4 --hidden-size 4294967360 --num-attention-heads 4 --seq-length 8 --vocab-size 100")
                .find("--hidden-size: must be at most 4194304"),
            std::string::npos);
  EXPECT_NE(run(model + " --make-vocab-size-divisible-by 1099511627776").find("--make-vocab-size-divisible-by"),
            std::string::npos);
}

TEST(ImporterRanges, MegatronListsUnknownTokensAsShortExcerpts) {
  MegatronImportOptions o;
  o.gpus = 8;
  std::string cmd = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 8 --vocab-size 100";
  for (int i = 0; i < 300; ++i) cmd += " word" + std::to_string(i) + std::string(200, 'x');
  const MegatronImport m = import_megatron_args(split_command_line(cmd), o);
  ASSERT_EQ(m.unknown.size(), 101u);
  EXPECT_EQ(m.unknown.back(), "... and 200 more");
  for (const auto& u : m.unknown) EXPECT_LE(u.size(), 83u);
}

json step_trace() { return read_json_file(test::data_path("torch/gpt_small_a100_step.json"), "trace"); }

Scenario trace_scenario() {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  return load_scenario_file(test::data_path("torch/gpt_small_a100_dp8.json"), o);
}

void scale_kernels(json& trace, double factor) {
  for (json& e : trace["traceEvents"])
    if (e.value("cat", "") == "kernel") e["dur"] = e["dur"].get<double>() * factor;
}

TEST(ImporterRanges, TorchTraceWithAbsurdTimesIsRefused) {
  const Scenario s = trace_scenario();
  TorchTraceOptions o;
  o.tokens = static_cast<double>(s.plan.micro_batch) * s.model.seq_len;
  // The trace as recorded fits.
  EXPECT_NO_THROW(fit_torch_trace(parse_torch_trace(step_trace(), "t.json", o), s.cluster.gpu));
  // Kernels a million times slower: the GEMM share fitted to them is ~1e-6.
  json slow = step_trace();
  scale_kernels(slow, 1e6);
  std::string e = error_of([&] { fit_torch_trace(parse_torch_trace(slow, "t.json", o), s.cluster.gpu); });
  EXPECT_NE(e.find("t.json: traceEvents: the GEMM sustained share fitted to the measured shapes is"), std::string::npos) << e;
  // A million times faster: GEMMs above any GPU's peak.
  json fast = step_trace();
  scale_kernels(fast, 1e-6);
  e = error_of([&] { fit_torch_trace(parse_torch_trace(fast, "t.json", o), s.cluster.gpu); });
  EXPECT_NE(e.find("above twice A100-SXM4-80GB's fastest peak"), std::string::npos) << e;
  // A kernel lasting 1e30 us is not a time at all.
  json huge = step_trace();
  for (json& ev : huge["traceEvents"])
    if (ev.value("cat", "") == "kernel") {
      ev["dur"] = 1e30;
      break;
    }
  e = error_of([&] { parse_torch_trace(huge, "t.json", o); });
  EXPECT_NE(e.find(".dur: duration the number 1e+30 us on"), std::string::npos) << e;
  EXPECT_NE(e.find("longer than a day"), std::string::npos) << e;
  json dims = step_trace();
  for (json& ev : dims["traceEvents"])
    if (ev.contains("args") && ev["args"].contains("Input Dims")) {
      ev["args"]["Input Dims"] = json::array({json::array({1e300, 4})});
      break;
    }
  EXPECT_NE(error_of([&] { parse_torch_trace(dims, "t.json", o); }).find("below 2^40"), std::string::npos);
}

// Found by fuzz/nccl_tests_fuzzer: a device name with invalid UTF-8 in a text log made writing
// the calibration file throw (nlohmann refuses invalid UTF-8), exit 1 instead of a file.
TEST(ImporterRanges, NcclTextLogWordsAreWritableJson) {
  const std::string log =
      "# Collective test starting: all_reduce_perf\xff\n"
      "#   Rank  0 Pid  1 on  node-a device  0 [0x00] Tesla V100\xa3\xff\n"
      "#   Rank  1 Pid  1 on  node-a device  1 [0x01] Tesla V100\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n"
      "     1048576        262144     float     sum      -1    50.00   20.97   20.97      0    50.00   20.97   20.97      0\n";
  const NcclTestsLog l = parse_nccl_tests_text(log, "x.log");
  EXPECT_EQ(l.device, "Tesla V100??");
  const NcclFit fit = fit_nccl_log(l.out_of_place);
  EXPECT_NO_THROW(nccl_calibration_json({l}, {fit}, json()).dump());
}

// Found by fuzz/nccl_tests_fuzzer: column indices of an odd header read past a row (a size
// column after the others; an in-place group with a time but no algbw: t[-1]).
TEST(ImporterRanges, NcclHeaderColumnsStayInsideTheRow) {
  const std::string late_size =
      "#  time algbw busbw #wrong count type size\n"
      "   8 0 0 0\n";
  EXPECT_NE(error_of([&] { parse_nccl_tests_text(late_size, "x.log"); }).find("x.log:2: expected 7 columns"),
            std::string::npos);
  const std::string half_group =
      "#  size count type redop root time algbw busbw #wrong time\n"
      "   8 2 float sum -1 10.0 0.00 0.00 0 10.0\n"
      "   1048576 262144 float sum -1 50.0 20.97 20.97 0 50.0\n";
  NcclTestsLog l;
  EXPECT_NO_THROW(l = parse_nccl_tests_text("# nThread 1 nGpus 2\n" + half_group, "x.log"));
  EXPECT_EQ(l.out_of_place.size(), 2u);
  EXPECT_TRUE(l.in_place.empty());
}

// Found by fuzz/torch_trace_fuzzer: an "External id" of 1.2e34 was cast to long long (undefined
// behaviour, caught by UBSan); an id no exporter writes now links nothing.
TEST(ImporterRanges, TorchTraceIdsBeyondALongAreNoIds) {
  json t = step_trace();
  int changed = 0;
  for (json& ev : t["traceEvents"])
    if (ev.contains("args") && ev["args"].contains("External id") && changed < 3) {
      ev["args"]["External id"] = changed == 0 ? json(1.2e34) : changed == 1 ? json(uint64_t{1} << 63) : json(-5);
      ++changed;
    }
  ASSERT_EQ(changed, 3);
  EXPECT_NO_THROW(parse_torch_trace(t, "t.json"));
}

TEST(ImporterRanges, CalibrationValuesAreCheckedForTypeAndRange) {
  const json good = {{"format", "trainsim-calibration"}, {"version", 1}};
  struct Case {
    const char* name;
    json edit;
    const char* expected;
  };
  const Case cases[] = {
      {"format a number", {{"format", 7}}, "calibration.format: expected a string, got the number 7"},
      {"peak not an object", {{"peak_flop_per_s", {{"bf16", 5}}}}, "calibration.peak_flop_per_s.bf16: expected an object"},
      {"peak NaN-like string", {{"peak_flop_per_s", {{"bf16", {{"flop_per_s", "SECRET"}}}}}},
       "calibration.peak_flop_per_s.bf16.flop_per_s: expected a number above 0 and at most 1e+19, got a string (6 characters)"},
      {"bandwidth 1e30", {{"memory_bandwidth_bytes_per_s", 1e30}}, "calibration.memory_bandwidth_bytes_per_s: expected a number above 0 and at most 1e+16"},
      {"gemm efficiency absurd",
       {{"gemm", json::array({{{"dtype", "bf16"}, {"m", 4096}, {"n", 4096}, {"k", 4096}, {"efficiency", 1e-300}}})}},
       "calibration.gemm: the GEMM sustained share fitted to the measured shapes is"},
      {"gemm without m", {{"gemm", json::array({{{"dtype", "bf16"}, {"n", 4096}, {"k", 4096}, {"efficiency", 0.5}}})}},
       "calibration.gemm[0].m: missing"},
      {"gemm efficiency 1e9",
       {{"gemm", json::array({{{"dtype", "bf16"}, {"m", 4096}, {"n", 4096}, {"k", 4096}, {"efficiency", 1e9}}})}},
       "calibration.gemm[0].efficiency: expected a number above 0 and at most 2"},
      {"ranks 1e30", {{"collectives", json::array({{{"op", "all_reduce"}, {"ranks", 1e30}}})}},
       "calibration.collectives[0].ranks: expected an integer"},
      {"op a list", {{"collectives", json::array({{{"op", json::array()}, {"ranks", 8}}})}},
       "calibration.collectives[0].op: expected a string"},
      {"wrong a string", {{"wrong", "0"}}, "calibration.wrong: expected a count"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    json cal = good;
    cal.update(c.edit);
    Scenario s = trace_scenario();
    const std::string e = error_of([&] { apply_calibration(cal, s); });
    EXPECT_NE(e.find(c.expected), std::string::npos) << e;
    EXPECT_EQ(e.find("SECRET"), std::string::npos);
  }
}

}  // namespace
}  // namespace trainsim
