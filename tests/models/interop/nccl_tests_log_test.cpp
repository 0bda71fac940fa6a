#include "models/interop/nccl_tests_log.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "tests/models/interop/interop_test_data.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

ClusterSpec cluster_of(const json& c) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  return parse_cluster(resolve_cluster_json(c, o));
}

TEST(NcclTestsLog, ReadsTheCurrentTextTable) {
  const NcclTestsLog log = read_nccl_tests_log(test::data_path("nccl/a100_8gpu_all_reduce_perf.log"));
  EXPECT_EQ(log.program, "all_reduce_perf");
  EXPECT_EQ(log.op, CollectiveOp::kAllReduce);
  EXPECT_EQ(log.ranks, 8);
  EXPECT_EQ(log.nodes, 1);
  EXPECT_EQ(log.device, "NVIDIA A100-SXM4-80GB");
  ASSERT_EQ(log.out_of_place.size(), 31u);  // 8 B .. 8 GiB, x2
  ASSERT_EQ(log.in_place.size(), 31u);
  EXPECT_EQ(log.out_of_place.front().bytes, 8);
  EXPECT_EQ(log.out_of_place.back().bytes, 8589934592.0);
  EXPECT_NEAR(log.out_of_place.back().busbw_bytes_per_s, 228.41e9, 1e7);
  EXPECT_EQ(log.out_of_place.back().wrong, 0);
}

TEST(NcclTestsLog, ReadsOldTablesWithErrorColumnsAndChatter) {
  const NcclTestsLog log = read_nccl_tests_log(test::data_path("nccl/v100_all_gather.txt"));
  EXPECT_EQ(log.op, CollectiveOp::kAllGather);  // from the file name
  EXPECT_EQ(log.ranks, 8);
  EXPECT_EQ(log.out_of_place.size(), 11u);
  EXPECT_FALSE(log.warnings.empty());  // the NCCL INFO line
}

TEST(NcclTestsLog, ReadsTheJsonReport) {
  const NcclTestsLog log = read_nccl_tests_log(test::data_path("nccl/h100_16gpu_alltoall.json"));
  EXPECT_EQ(log.op, CollectiveOp::kAllToAll);
  EXPECT_EQ(log.ranks, 16);
  EXPECT_EQ(log.nodes, 2);
  EXPECT_EQ(log.out_of_place.size(), 10u);
  EXPECT_EQ(log.in_place.size(), 10u);
}

TEST(NcclTestsLog, FitRecoversAlphaBetaOfAnExactLine) {
  std::vector<NcclSample> s;
  for (double b = 8; b <= 1 << 30; b *= 4) s.push_back({b, 10e-6 + b / 100e9, 0, 0, 0, 0});
  const AlphaBetaFit f = fit_alpha_beta(s);
  EXPECT_NEAR(f.alpha_s, 10e-6, 1e-9);
  EXPECT_NEAR(f.beta_s_per_byte, 1 / 100e9, 1e-15);
  EXPECT_LT(f.max_rel_error, 1e-9);
}

TEST(NcclTestsLog, SizeRangesFitTheA100LogWithinFivePercent) {
  const NcclTestsLog log = read_nccl_tests_log(test::data_path("nccl/a100_8gpu_all_reduce_perf.log"));
  const NcclFit fit = fit_nccl_log(log.out_of_place);
  EXPECT_EQ(fit.split_bytes, 0);  // one alpha-beta line with 3% noise: no split is worth it
  for (const auto& s : log.out_of_place)
    EXPECT_LT(std::fabs(fit.time_s(s.bytes) - s.time_s) / s.time_s, 0.05) << s.bytes;
  // The log was written from alpha 24 us and 235 GB/s ring bandwidth (busbw).
  EXPECT_NEAR(2.0 * 7 / 8 / fit.large.beta_s_per_byte / 1e9, 235, 10);
}

TEST(NcclTestsLog, TwoProtocolRegimesGetTwoRanges) {
  // NCCL switches protocol (LL -> Simple) with size: low latency and low bandwidth below, the
  // reverse above. One line cannot fit both; the split lands at the switch.
  std::vector<NcclSample> s;
  for (double b = 8; b <= 1 << 30; b *= 2)
    s.push_back({b, b < (1 << 20) ? 8e-6 + b / 20e9 : 40e-6 + b / 200e9, 0, 0, 0, 0});
  const NcclFit fit = fit_nccl_log(s);
  EXPECT_EQ(fit.split_bytes, 1 << 20);
  EXPECT_GT(fit.all.max_rel_error, 0.3);
  for (const auto& x : s) EXPECT_LT(std::fabs(fit.time_s(x.bytes) - x.time_s) / x.time_s, 1e-6);
}

// Size sweeps "measured" on a cluster whose efficiencies and network latency are known: the
// fit, started from the preset, must recover them (the reference is the generating cluster).
TEST(NcclTestsLog, FitRecoversTheClusterThatProducedTheLogs) {
  const ClusterSpec truth = cluster_of({{"base", "dgx-h100-superpod"},
                                        {"intra_node", {{"efficiency", 0.6}}},
                                        {"network", {{"efficiency", 0.7}, {"latency", "9us"}}}});
  const ClusterSpec start = cluster_of("dgx-h100-superpod");
  std::vector<NcclTestsLog> logs;
  std::vector<std::vector<NcclSample>> samples;
  const struct {
    CollectiveOp op;
    int ranks, nodes;
  } sweeps[] = {{CollectiveOp::kAllReduce, 8, 1}, {CollectiveOp::kAllGather, 8, 1},
                {CollectiveOp::kAllReduce, 32, 4}, {CollectiveOp::kReduceScatter, 64, 8}};
  for (const auto& w : sweeps) {
    NcclTestsLog log;
    log.source = to_string(w.op) + std::to_string(w.ranks);
    log.op = w.op;
    log.op_known = true;
    log.ranks = w.ranks;
    log.nodes = w.nodes;
    std::vector<NcclSample> s;
    for (double b = 8; b <= 8.0 * 1024 * 1024 * 1024; b *= 4) {
      NcclSample x;
      x.bytes = b;
      x.time_s = nccl_model_time_s(log, b, truth);
      s.push_back(x);
    }
    logs.push_back(log);
    samples.push_back(s);
  }
  const FittedCluster f = fit_cluster(logs, samples, start);
  ASSERT_TRUE(f.intra);
  ASSERT_TRUE(f.net);
  EXPECT_NEAR(f.intra_efficiency, 0.6, 0.01);
  EXPECT_NEAR(f.net_efficiency, 0.7, 0.01);
  EXPECT_NEAR(f.net_latency_s, 9e-6, 0.5e-6);
  EXPECT_GT(f.mean_error_before, 0.05);
  EXPECT_LT(f.mean_error_after, 0.01);
}

TEST(NcclTestsLog, FittedClusterReproducesTheA100Log) {
  const NcclTestsLog log = read_nccl_tests_log(test::data_path("nccl/a100_8gpu_all_reduce_perf.log"));
  const FittedCluster f = fit_cluster({log}, {log.out_of_place}, cluster_of("dgx-a100-superpod"));
  EXPECT_TRUE(f.intra);
  EXPECT_FALSE(f.net);
  const ClusterSpec fitted = apply_fit(cluster_of("dgx-a100-superpod"), f);
  for (const auto& s : log.out_of_place) {
    if (s.bytes < 64 << 20) continue;  // the large sizes set the bandwidth
    EXPECT_LT(std::fabs(nccl_model_time_s(log, s.bytes, fitted) - s.time_s) / s.time_s, 0.05) << s.bytes;
  }
}

TEST(NcclTestsLog, RejectsLogsNoClusterExplains) {
  NcclTestsLog log;
  log.source = "flat.log";
  std::vector<NcclSample> flat;
  for (double b = 8; b <= 1 << 30; b *= 8) flat.push_back({b, 20e-6});  // time independent of size
  EXPECT_THROW(check_fit_is_physical(log, fit_nccl_log(flat)), ScenarioError);
  // A row whose algbw is not size / time, and one faster than nccl-tests can print.
  const std::string head =
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
  EXPECT_THROW(parse_nccl_tests_text(head + "  1048576  262144  float  sum  -1  10.00  900.00  1575.00  0  10.00  "
                                            "104.86  183.50  0\n",
                                     "bad_algbw.log"),
               ScenarioError);
  EXPECT_THROW(parse_nccl_tests_text(head + "  1048576  262144  float  sum  -1  0.00  0.00  0.00  0  0.00  0.00  "
                                            "0.00  0\n",
                                     "zero_time.log"),
               ScenarioError);
}

TEST(NcclTestsLog, CalibrationFileFollowsTheKernelsFormat) {
  const NcclTestsLog log = read_nccl_tests_log(test::data_path("nccl/a100_8gpu_all_reduce_perf.log"));
  const json c = nccl_calibration_json({log}, {fit_nccl_log(log.out_of_place)}, json());
  EXPECT_EQ(c["format"], "trainsim-calibration");
  EXPECT_EQ(c["version"], 1);
  ASSERT_EQ(c["collectives"].size(), 1u);
  const json& row = c["collectives"][0];
  EXPECT_EQ(row["op"], "allreduce");
  EXPECT_EQ(row["ranks"], 8);
  EXPECT_EQ(row["samples"].size(), 31u);
  EXPECT_EQ(row["ranges"].size(), 1u);
  EXPECT_GT(row["bus_bandwidth_bytes_per_s"].get<double>(), 200e9);
}

TEST(NcclTestsLog, OpNamesFromProgramsAndFiles) {
  CollectiveOp op;
  ASSERT_TRUE(nccl_op_from_name("reduce_scatter_perf", op));
  EXPECT_EQ(op, CollectiveOp::kReduceScatter);
  ASSERT_TRUE(nccl_op_from_name("logs/AllReduce-2nodes.txt", op));
  EXPECT_EQ(op, CollectiveOp::kAllReduce);
  ASSERT_TRUE(nccl_op_from_name("reduce_perf", op));
  EXPECT_EQ(op, CollectiveOp::kReduce);
  EXPECT_FALSE(nccl_op_from_name("run1.log", op));
}

}  // namespace
}  // namespace trainsim
