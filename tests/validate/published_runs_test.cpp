#include "validate/published_runs.hpp"

#include "models/cost/collectives/collective_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <filesystem>

#include "models/cost/memory.hpp"
#include "models/workload/layer_program.hpp"

namespace trainsim::validate {
namespace {

using nlohmann::json;

LoadOptions options() {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  return o;
}

double mape_of(const PublishedReport& r, const std::string& metric) {
  for (const auto& [m, v] : r.mape)
    if (m == metric) return v;
  return -1;
}

// The accuracy gate (CONVENTIONS.md #12): the visible published runs, with the shipped
// calibration, stay within the stated error.
const std::string kRuns = std::string(TRAINSIM_DATA) + "/published_runs.json";

TEST(PublishedRuns, VisibleRunsStayWithinTheStatedError) {
  ASSERT_TRUE(std::filesystem::exists(kRuns)) << "the published runs ship in the repository: " << kRuns;
  const PublishedReport r = compare_published(read_published_file(kRuns), options());
  EXPECT_LE(mape_of(r, "tokens_per_s"), 0.08);
  EXPECT_GE(mape_of(r, "tokens_per_s"), 0.0);
  EXPECT_LE(mape_of(r, "model_state_bytes"), 0.02);
  EXPECT_LE(mape_of(r, "busbw_bytes_per_s"), 0.20);
  int predicted = 0;
  for (const auto& run : r.runs) predicted += run.predicted;
  EXPECT_GE(predicted, 160);
}

// The training steps measured on one H200 (data/measured/h200-2026-12-04, docs/accuracy.md "One
// H200, measured"): bf16 autocast over fp32 weights (plan.autocast), with biases. Every run
// predicted, 4.8% on average, every run fast: 2-7% at 8k-32k tokens a step, 6% and 11% at 4k
// and 2k (micro-batches 2 and 1, where small kernels and the host's eager launches show). The
// bound keeps the miss from growing unnoticed; no run may be predicted more than 5% slow.
TEST(PublishedRuns, TheH200TrainingStepsArePredictedWithTheirKnownMiss) {
  const std::string file = std::string(TRAINSIM_DATA) + "/measured/h200-2026-12-04/training_runs.json";
  const PublishedReport r = compare_published(read_published_file(file), options());
  int predicted = 0;
  for (const auto& run : r.runs) {
    predicted += run.predicted;
    for (const auto& m : run.metrics) {
      if (m.metric == "step_time_s") {
        EXPECT_LT(m.error(), 0.05) << run.id;
      }
    }
  }
  EXPECT_EQ(predicted, 12);
  EXPECT_LE(mape_of(r, "step_time_s"), 0.06);
  EXPECT_GE(mape_of(r, "step_time_s"), 0.0);
}

// The steps as Megatron and FSDP's bf16 mixed precision compute them (bf16 weights, no
// autocast) and without biases, measured in a second session on the same H200
// (data/measured/h200-2026-12-04b): what the model describes. GPT 125M-2.7B at sequence 2k
// within 6% each and 3% on average (measured: 3.8, 0.5, 1.5, 2.4% and 1.2% for 1.3B with
// biases: the smallest model the furthest, its 768-wide norms slower than the model's rate);
// sequence 8k and full recomputation within 6% (PyTorch's non-reentrant checkpoint, which stops
// recomputing before each block's last GEMM: the record says training.recompute_early_stop).
TEST(PublishedRuns, TheH200StepsWithBf16WeightsArePredictedWithinTheirStatedError) {
  const std::string file = std::string(TRAINSIM_DATA) + "/measured/h200-2026-12-04b/training_runs.json";
  const PublishedReport r = compare_published(read_published_file(file), options());
  double sum = 0;
  int family = 0;
  for (const auto& run : r.runs) {
    if (run.id.find("-bf16") == std::string::npos) continue;
    for (const auto& m : run.metrics) {
      if (m.metric != "step_time_s") continue;
      const bool seq2k = run.id.find("seq8k") == std::string::npos && run.id.find("ckpt") == std::string::npos;
      EXPECT_LT(std::fabs(m.error()), 0.06) << run.id;
      if (seq2k) sum += std::fabs(m.error()), ++family;
    }
  }
  ASSERT_EQ(family, 5);
  EXPECT_LT(sum / family, 0.03);
}

// The one parameter fitted on end-to-end runs (the training-loop tensor share) is what the
// runs give, and it carries from sources to another: fitted on all but one source, it predicts
// the held-out source's runs within the stated error.
TEST(PublishedRuns, TheShippedTensorShareIsTheFitAndCarriesAcrossSources) {
  const json records = read_published_file(kRuns);
  const PublishedReport r = compare_published(records, options());
  const ShareFit all = fit_training_tensor_share(r, records, [](const json&) { return true; });
  EXPECT_NEAR(all.share, kDefaultTrainingTensorShare, 0.01);
  const auto folds = cross_validate_sources(r, records);
  ASSERT_GE(folds.size(), 3u);
  double sum = 0;
  int n = 0;
  for (const SourceFold& f : folds) {
    SCOPED_TRACE(f.source);
    EXPECT_GT(f.fitted_share, 0.8);
    EXPECT_LT(f.fitted_share, 0.95);
    sum += f.mape * f.runs;
    n += f.runs;
  }
  EXPECT_LE(sum / n, 0.085);
}

TEST(PublishedRuns, BuildsTheScenarioARecordDescribes) {
  const json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 48, "hidden": 8192, "heads": 64, "seq_len": 2048, "vocab": 51200},
    "hardware": {"gpu": "NVIDIA A100 SXM4 80GB", "num_gpus": 512, "gpus_per_node": 8,
                 "inter_node": "8x NVIDIA Mellanox 200Gb/s HDR InfiniBand HCAs per node"},
    "parallel": {"tp": 8, "pp": 2, "dp": 32, "pipeline_schedule": "interleaved 1F1B (v=3)", "ddp_impl": "local"},
    "training": {"global_batch": 1536, "micro_batch": 4, "precision": "fp16 mixed", "recompute": "full"},
    "measured": {"derived_iteration_time_s": 14.45}})J");
  std::vector<std::string> notes;
  const json s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["plan"]["tp"], 8);
  EXPECT_EQ(s["plan"]["schedule"], "interleaved");
  EXPECT_EQ(s["plan"]["vpp"], 3);
  EXPECT_EQ(s["plan"]["precision"], "fp16");
  EXPECT_EQ(s["plan"]["recompute"], "full");
  EXPECT_EQ(s["plan"]["overlap"]["dp"], false);
  EXPECT_EQ(s["cluster"]["nodes"], 64);
  EXPECT_EQ(s["cluster"]["network"]["nics_per_node"], 8);
  EXPECT_EQ(s["cluster"]["network"]["nic_bandwidth"], "200Gbps");
  const RunComparison c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  EXPECT_EQ(c.metrics.front().metric, "tokens_per_s");
}

// FSDP's mixed-precision policy by name (Composer's fsdp_config.mixed_precision): PURE reduces
// the gradients in bf16; DEFAULT leaves the plan's default (fp32 for bf16).
TEST(PublishedRuns, ReadsTheFsdpMixedPrecisionPolicy) {
  json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 24, "hidden": 1536, "heads": 12, "seq_len": 2048, "vocab": 50368},
    "hardware": {"gpu": "a100_40gb", "num_gpus": 8},
    "parallel": {"zero_stage": "3-equivalent (FSDP FULL_SHARD)", "mixed_precision_mode": "PURE"},
    "training": {"global_batch": 96, "micro_batch": 12, "precision": "bf16", "recompute": "selective"}})J");
  std::vector<std::string> notes;
  json s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["plan"]["grad_reduce_precision"], "bf16");
  EXPECT_EQ(s["plan"]["recompute"], "selective");
  rec["parallel"]["mixed_precision_mode"] = "DEFAULT";
  s = scenario_from_record(rec, notes);
  EXPECT_FALSE(s["plan"].contains("grad_reduce_precision"));
  EXPECT_EQ(grad_reduce_precision(parse_scenario(resolve_scenario_json(s, options())).plan), Precision::kFp32);
}

// The loss by llm-foundry's loss_fn or Megatron-Core's cross_entropy_loss_fusion; unstated: unfused.
TEST(PublishedRuns, ReadsAFusedLossByTheFrameworksKeys) {
  json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 24, "hidden": 1536, "heads": 12, "seq_len": 2048, "vocab": 50368},
    "hardware": {"gpu": "a100_40gb", "num_gpus": 8},
    "parallel": {"zero_stage": 3},
    "training": {"global_batch": 96, "micro_batch": 12, "precision": "bf16"}})J");
  std::vector<std::string> notes;
  EXPECT_FALSE(scenario_from_record(rec, notes)["plan"].contains("fused_loss"));
  rec["training"]["loss_fn"] = "fused_crossentropy";
  json s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["plan"]["fused_loss"], true);
  EXPECT_TRUE(parse_scenario(resolve_scenario_json(s, options())).plan.fused_loss);
  rec["training"]["loss_fn"] = "torch_crossentropy";
  EXPECT_FALSE(scenario_from_record(rec, notes)["plan"].contains("fused_loss"));
  rec["parallel"]["cross_entropy_loss_fusion"] = true;
  EXPECT_EQ(scenario_from_record(rec, notes)["plan"]["fused_loss"], true);
}

// FSDP's HYBRID_SHARD shards within a node and replicates across nodes unless the record gives the
// shard group's size; on one node it is FULL_SHARD.
TEST(PublishedRuns, ReadsHybridShardingAsShardingWithinANode) {
  json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 24, "hidden": 1536, "heads": 12, "seq_len": 2048, "vocab": 50368},
    "hardware": {"gpu": "H100 SXM", "num_gpus": 64},
    "parallel": {"fsdp_sharding": "HYBRID_SHARD"},
    "training": {"global_batch": 512, "micro_batch": 8, "precision": "bf16"}})J");
  std::vector<std::string> notes;
  json s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["plan"]["zero_stage"], 3);
  EXPECT_EQ(s["plan"]["dp_shard"], 8);
  EXPECT_EQ(parse_scenario(resolve_scenario_json(s, options())).plan.dp_shard, 8);
  rec["parallel"]["shard_group_size"] = 16;
  EXPECT_EQ(scenario_from_record(rec, notes)["plan"]["dp_shard"], 16);
  rec["parallel"]["shard_group_size"] = 24;  // does not divide 64: full sharding, said
  notes.clear();
  EXPECT_FALSE(scenario_from_record(rec, notes)["plan"].contains("dp_shard"));
  EXPECT_FALSE(notes.empty());
  rec["parallel"].erase("shard_group_size");
  rec["parallel"]["fsdp_sharding"] = "_HYBRID_SHARD_ZERO2";  // the ZeRO-2 form
  s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["plan"]["zero_stage"], 2);
  EXPECT_EQ(s["plan"]["dp_shard"], 8);
  // Megatron-Core's partial distributed optimizer: 4 instances of 16 ranks.
  rec["parallel"] = {{"num_distributed_optimizer_instances", 4}};
  s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["plan"]["zero_stage"], 1);
  EXPECT_EQ(s["plan"]["dp_shard"], 16);
  // ZeRO++ by DeepSpeed's keys.
  rec["parallel"] = {{"zero_stage", 3},
                     {"zero_hpz_partition_size", 8},
                     {"zero_quantized_weights", true},
                     {"zero_quantized_gradients", true}};
  s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["plan"]["zero_hpz_partition_size"], 8);
  EXPECT_EQ(s["plan"]["zero_quantized_weights"], true);
  const ParallelPlan zpp = parse_scenario(resolve_scenario_json(s, options())).plan;
  EXPECT_EQ(zpp.zero_hpz_partition_size, 8);
  EXPECT_TRUE(zpp.zero_quantized_gradients);
  rec["parallel"]["zero_quantized_gradients"] = "yes";
  EXPECT_THROW(scenario_from_record(rec, notes), ScenarioError);
  rec["parallel"] = {{"fsdp_sharding", "HYBRID_SHARD"}};
  rec["hardware"]["num_gpus"] = 8;
  EXPECT_FALSE(scenario_from_record(rec, notes)["plan"].contains("dp_shard"));
}

// Records write the same fact in their sources' words; each rule reads a spelling, never a run.
TEST(PublishedRuns, ReadsTheScheduleAsTheRecordWritesIt) {
  json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 48, "hidden": 8192, "heads": 64, "seq_len": 2048, "vocab": 51200},
    "hardware": {"gpu": "A100", "num_gpus": 512}, "parallel": {"tp": 8, "pp": 4},
    "training": {"global_batch": 1536, "micro_batch": 1, "precision": "fp16", "recompute": "full"}})J");
  auto plan_with = [&](const char* schedule) {
    rec["parallel"]["pipeline_schedule"] = schedule;
    std::vector<std::string> notes;
    return scenario_from_record(rec, notes)["plan"];
  };
  // Narayanan et al.'s 39.1B and 1T rows ran Megatron's non-interleaved 1F1B.
  EXPECT_FALSE(plan_with("1F1B (non-interleaved per script)").contains("schedule"));
  EXPECT_FALSE(plan_with("non interleaved").contains("vpp"));
  EXPECT_EQ(plan_with("interleaved 1F1B, 5 layers per virtual stage (v=3)")["vpp"], 3);
  EXPECT_EQ(plan_with("1F1B-I")["schedule"], "interleaved");
  EXPECT_EQ(plan_with("ZB-H1")["schedule"], "zb-h1");
  EXPECT_EQ(plan_with("zb-2p")["schedule"], "zb-h2");  // the paper's automatic schedule, H2's memory
  EXPECT_EQ(plan_with("DualPipe")["schedule"], "dualpipe");
  rec["parallel"]["vpp"] = 5;
  EXPECT_EQ(plan_with("")["vpp"], 5);
}

TEST(PublishedRuns, ReadsOtherSpellingsOfTheSameFacts) {
  const json rec = json::parse(R"J({
    "id": "x",
    "model": {"layers": 32, "hidden": 4096, "heads": 32, "num_query_groups": 8, "ffn_hidden": 14336,
              "arch": "decoder, SwiGLU MLP", "seq_len": 4096, "vocab_size": 32000,
              "moe": {"num_experts": 8, "num_experts_per_tok": 2}, "attn_impl": "torch"},
    "hardware": {"gpu": "NVIDIA B200", "num_gpus": 64, "inter_node": "3.2 Tbps per node"},
    "parallel": {"tp": 1, "pp": 1, "dp": 8, "ep": 8, "fsdp_sharding": "SHARD_GRAD_OP"},
    "training": {"global_batch_tokens": 4194304, "grad_accum": 4, "precision": "bfloat16",
                 "recompute": "none (activations kept)"}})J");
  std::vector<std::string> notes;
  const json s = scenario_from_record(rec, notes);
  EXPECT_EQ(s["model"]["kv_heads"], 8);
  EXPECT_EQ(s["model"]["ffn_act"], "swiglu");
  EXPECT_EQ(s["model"]["vocab"], 32000);
  EXPECT_EQ(s["model"]["moe"]["experts"], 8);
  EXPECT_EQ(s["model"]["moe"]["top_k"], 2);
  EXPECT_EQ(s["cluster"]["gpu"]["base"], "B200-SXM-180GB");
  EXPECT_EQ(s["cluster"]["network"]["nic_bandwidth"], "400Gbps");
  EXPECT_EQ(s["plan"]["dp"], 64);  // the GPUs decide where the record's dp does not make them
  EXPECT_EQ(s["plan"]["zero_stage"], 2);
  EXPECT_EQ(s["plan"]["global_batch"], 1024);  // 4M tokens of 4,096
  EXPECT_EQ(s["plan"]["micro_batch"], 4);      // 1,024 / (64 x 4)
  EXPECT_EQ(s["plan"]["precision"], "bf16");
  EXPECT_EQ(s["plan"]["recompute"], "none");
  EXPECT_EQ(s["plan"]["flash_attention"], false);  // attn_impl torch: the unfused path
  EXPECT_NO_THROW(parse_scenario(resolve_scenario_json(s, options())));
  // Megatron's switches by their argument names.
  json mc = rec;
  mc["parallel"] = {{"tp", 8}, {"pp", 1}, {"tp_comm_overlap", true}, {"use_distributed_optimizer", "True"},
                    {"overlap_grad_reduce", false}};
  const json plan = scenario_from_record(mc, notes)["plan"];
  EXPECT_EQ(plan["overlap"]["tp"], true);
  EXPECT_EQ(plan["overlap"]["dp"], false);
  EXPECT_EQ(plan["zero_stage"], 1);
  // Thousands separators, and a GPU count given as nodes.
  EXPECT_EQ(record::number_in(json("16,384 H100")), 16384);
  EXPECT_EQ(record::number_in(json("1,234,567")), 1234567);
  json nodes = rec;
  nodes["hardware"] = {{"gpu", "H100"}, {"num_nodes", 2}, {"gpus_per_node", 8}};
  EXPECT_EQ(scenario_from_record(nodes, notes)["cluster"]["nodes"], 2);
}

// An MLP whose width is not 4 x hidden is a gated one unless the record names a plain activation.
TEST(PublishedRuns, InfersAGatedMlpFromItsWidthUnlessTheActivationIsStated) {
  json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn_hidden": 53248,
                         "seq_len": 8192, "vocab": 128256},
    "hardware": {"gpu": "H100", "num_gpus": 16384}, "parallel": {"tp": 8, "pp": 16},
    "training": {"global_batch": 2048, "micro_batch": 1, "precision": "bf16"}})J");
  std::vector<std::string> notes;
  EXPECT_EQ(scenario_from_record(rec, notes)["model"]["ffn_act"], "swiglu");
  rec["model"]["arch"] = "decoder, GeLU MLP";
  EXPECT_FALSE(scenario_from_record(rec, notes)["model"].contains("ffn_act"));
  rec["model"].erase("arch");
  rec["model"]["ffn_hidden"] = 65536;  // 4 x hidden
  EXPECT_FALSE(scenario_from_record(rec, notes)["model"].contains("ffn_act"));
}

TEST(PublishedRuns, ReadsThroughputInTheUnitsTheRecordGives) {
  json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048, "vocab": 50368},
    "hardware": {"gpu": "h100_80gb", "num_gpus": 8}, "parallel": {"zero_stage": 3},
    "training": {"global_batch": 64, "micro_batch": 8, "precision": "amp_bf16"},
    "measured": {"samples_per_s": 100}})J");
  RunComparison c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  EXPECT_EQ(c.metrics[0].metric, "tokens_per_s");
  EXPECT_DOUBLE_EQ(c.metrics[0].measured, 100.0 * 2048);
  EXPECT_NEAR(c.metrics[1].measured, 64.0 / 100, 1e-12);  // the step a batch of 64 takes
  rec["measured"] = {{"tokens_per_s_per_gpu", 1000}, {"mfu", 0.4}};
  c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  EXPECT_DOUBLE_EQ(c.metrics[0].measured, 8000);
  EXPECT_EQ(c.metrics.back().metric, "mfu");
  EXPECT_DOUBLE_EQ(c.metrics.back().measured, 0.4);
  rec["measured"] = {{"elapsed_time_per_iteration_ms", 1500}};  // Megatron's log line
  c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  EXPECT_DOUBLE_EQ(c.metrics[1].measured, 1.5);
  rec["measured"] = {{"throughput_samples_per_gpu_per_sec", 2}};  // a spelling no list names
  c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  EXPECT_DOUBLE_EQ(c.metrics[0].measured, 2.0 * 2048 * 8);
}

// nccl-tests reports: any collective nccl-tests times, its bus bandwidth or (where only that is
// given) its algorithm bandwidth, at the largest size the report states; nccl-tests'
// busbw = algbw x (n-1)/n for all-gather (the report's own definition).
TEST(PublishedRuns, ReadsAnyNcclTestsCollectiveAtTheSizeItStates) {
  json rec = json::parse(R"J({
    "id": "ag", "hardware": {"gpu": "A100-SXM4-80GB x8, 2 nodes, 4x HDR", "num_gpus": 16},
    "measured": {"collective": "all_gather_perf", "busbw_GBps": 80, "msg_range": "8B-4GB"}})J");
  RunComparison c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].metric, "busbw_bytes_per_s");
  LoadOptions o = options();
  const ClusterSpec cl = parse_cluster(resolve_cluster_json(
      json{{"base", "dgx-a100-superpod"}, {"gpu", "A100-SXM4-80GB"}, {"gpus_per_node", 8}, {"nodes", 2},
           {"network", {{"nics_per_node", 4}, {"nic_bandwidth", "200Gbps"}}}},
      o, "."));
  std::vector<int> gpus(16);
  for (int i = 0; i < 16; ++i) gpus[i] = i;
  const double bytes = 4.0 * 1024 * 1024 * 1024;
  const double t = price_collective(CollectiveOp::kAllGather, bytes, gpus, cl).time_s;
  EXPECT_NEAR(c.metrics[0].predicted, bytes / t * 15 / 16, 1e-6 * c.metrics[0].predicted);
  // Only the algorithm bandwidth, its size in its text; an algorithm the report forced.
  rec["measured"] = {{"collective", "reduce_scatter"}, {"algbw_GBps", "~40 (up to 256MB)"}, {"algo", "RING"}};
  c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  EXPECT_EQ(c.metrics[0].metric, "algbw_bytes_per_s");
  const double t_ring = price_collective(CollectiveOp::kReduceScatter, 256.0 * 1024 * 1024, gpus, cl,
                                         CollectiveAlgo::kRing).time_s;
  EXPECT_NEAR(c.metrics[0].predicted, 256.0 * 1024 * 1024 / t_ring, 1e-6 * c.metrics[0].predicted);
  rec["measured"] = {{"collective", "hypercube_shuffle"}, {"busbw_GBps", 10}};
  c = compare_record(rec, options());
  EXPECT_FALSE(c.predicted);
  EXPECT_NE(c.skipped_reason.find("not modelled"), std::string::npos);
}

// An nccl-tests report runs on the cluster a training record on the same hardware would: an H800
// report on the H800's NVLink (400 GB/s a GPU, not the H100's 900), its GPU count from its nodes.
TEST(PublishedRuns, ACollectiveReportRunsOnTheClusterItsHardwareNames) {
  json rec = json::parse(R"J({
    "id": "h800", "hardware": {"gpu": "H800 SXM", "num_nodes": 1, "gpus_per_node": 8},
    "measured": {"collective": "all_reduce", "busbw_GBps": 150, "max_msg": "8GB"}})J");
  RunComparison h800 = compare_record(rec, options());
  ASSERT_TRUE(h800.predicted) << h800.skipped_reason;
  rec["hardware"]["gpu"] = "H100 SXM";
  RunComparison h100 = compare_record(rec, options());
  ASSERT_TRUE(h100.predicted) << h100.skipped_reason;
  LoadOptions o = options();
  std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7};
  const double bytes = 8.0 * 1024 * 1024 * 1024;
  for (const auto& [c, base, gpu] : {std::tuple{&h800, "h800-cluster", "H800-SXM-80GB"},
                                     std::tuple{&h100, "dgx-h100-superpod", "H100-SXM-80GB"}}) {
    const ClusterSpec cl = parse_cluster(
        resolve_cluster_json(json{{"base", base}, {"gpu", {{"base", gpu}}}, {"gpus_per_node", 8}, {"nodes", 1}}, o, "."));
    const double t = price_collective(CollectiveOp::kAllReduce, bytes, gpus, cl).time_s;
    EXPECT_NEAR(c->metrics[0].predicted, bytes / t * 2 * 7 / 8, 1e-6 * c->metrics[0].predicted) << base;
  }
  EXPECT_LT(h800.metrics[0].predicted, 0.6 * h100.metrics[0].predicted);
  // Neither num_gpus nor num_nodes: bad input named, not a guessed 8.
  rec["hardware"] = {{"gpu", "H100"}};
  const RunComparison none = compare_record(rec, options());
  EXPECT_FALSE(none.predicted);
  EXPECT_NE(none.skipped_reason.find("hardware.num_gpus"), std::string::npos) << none.skipped_reason;
}

// A record is of a run that ran: where its plan as stated does not fit, the unstated choices
// that make it fit are taken, the least departure first, and listed.
TEST(PublishedRuns, AnUnstatedChoiceIsTakenWhereThePlanOtherwiseDoesNotFit) {
  json rec = json::parse(R"J({
    "id": "x", "model": {"layers": 96, "hidden": 12288, "heads": 96, "seq_len": 2048, "vocab": 51200},
    "hardware": {"gpu": "A100 80GB", "num_gpus": 1536, "inter_node": "8x 200Gb/s HDR"},
    "parallel": {"tp": 1, "pp": 1, "zero_stage": 3},
    "training": {"global_batch": 1536, "precision": "fp16"},
    "measured": {"tflops_per_gpu": 100}})J");
  RunComparison c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  auto said = [&](const std::string& text) {
    return std::any_of(c.assumptions.begin(), c.assumptions.end(),
                       [&](const std::string& a) { return a.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(said("full recompute assumed"));
  EXPECT_FALSE(said("FlashAttention-2 assumed"));  // recomputing fits: the unfused era's answer
  EXPECT_EQ(parse_scenario(c.scenario).plan.recompute, Recompute::kFull);
  // Stated choices stay as stated: the run is then predicted infeasible, and says so.
  rec["training"]["recompute"] = "none";
  c = compare_record(rec, options());
  ASSERT_TRUE(c.predicted) << c.skipped_reason;
  EXPECT_TRUE(said("predicted infeasible"));
}

TEST(PublishedRuns, HostileRecordsAreSkippedWithAReasonNeverACrash) {
  const json records = json::parse(R"([
    42, "text", null, [], {},
    {"id": "no-measured", "model": {}, "hardware": {}, "parallel": {}, "training": {}},
    {"id": "bad-types", "model": {"layers": "many", "hidden": -1}, "hardware": {"gpu": 7},
     "parallel": [], "training": {}, "measured": {"iteration_time_ms": 5}},
    {"id": "unknown-gpu", "model": {"layers": 2, "hidden": 64, "heads": 2, "seq_len": 16},
     "hardware": {"gpu": "Abacus 3000", "num_gpus": 1}, "parallel": {}, "training": {"global_batch": 1},
     "measured": {"iteration_time_ms": 5}},
    {"id": "huge", "model": {"layers": 1e12, "hidden": 1e12, "heads": 1, "seq_len": 1e12},
     "hardware": {"gpu": "A100", "num_gpus": 1e15}, "parallel": {"tp": 1e9}, "training": {"global_batch": 1e18},
     "measured": {"iteration_time_ms": 5}},
    {"id": "astronomic", "model": {"layers": 2, "hidden": 64, "heads": 2, "seq_len": 16},
     "hardware": {"gpu": "A100", "num_gpus": 1e300}, "parallel": {}, "training": {"global_batch": 8},
     "measured": {"iteration_time_ms": 5}},
    {"id": "collective-without-bw", "hardware": {"gpu": "A100", "num_gpus": 8}, "measured": {"collective": "all_reduce"}},
    {"id": "collective-zero-gpus", "hardware": {"gpu": "A100", "num_gpus": 0}, "measured": {"collective": "all_reduce", "busbw_GBps": 90}},
    {"id": "zero-gpus-per-node", "model": {"layers": 2, "hidden": 64, "heads": 2, "seq_len": 16},
     "hardware": {"gpu": "A100", "num_gpus": 8, "gpus_per_node": 0}, "parallel": {}, "training": {"global_batch": 8},
     "measured": {"iteration_time_ms": 5}},
    {"id": "nan-ish", "model": {"layers": 2, "hidden": 64, "heads": 2, "seq_len": 16},
     "hardware": {"gpu": "A100", "num_gpus": 8}, "parallel": {"tp": -3, "pp": 1e300}, "training": {"global_batch": 8},
     "measured": {"iteration_time_ms": 5}}
  ])");
  const PublishedReport r = compare_published(records, options());
  ASSERT_EQ(r.runs.size(), records.size());
  for (const auto& run : r.runs) {
    SCOPED_TRACE(run.id);
    EXPECT_FALSE(run.predicted);
    EXPECT_FALSE(run.skipped_reason.empty());
    EXPECT_LT(run.skipped_reason.size(), 200u) << "a reason is a line, not a 300-digit number";
  }
}

}  // namespace
}  // namespace trainsim::validate
