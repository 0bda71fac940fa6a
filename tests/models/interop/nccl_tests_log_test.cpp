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

TEST(NcclTestsLog, FittedClusterMakesTheClosedFormReproduceTheLog) {
  const NcclTestsLog log = read_nccl_tests_log(test::data_path("nccl/a100_8gpu_all_reduce_perf.log"));
  const NcclFit fit = fit_nccl_log(log.out_of_place);
  const ClusterSpec base = cluster_of("dgx-a100-superpod");
  const FittedFabric ff = fit_fabric(log, fit, base);
  EXPECT_FALSE(ff.inter_node);
  const ClusterSpec fitted = cluster_of(
      {{"base", "dgx-a100-superpod"},
       {"intra_node", {{"latency", ff.latency_s}, {"efficiency", ff.efficiency}}}});
  const GroupShape g = nccl_group_shape(log, fitted);
  for (const auto& s : log.out_of_place) {
    if (s.bytes < 1 << 20) continue;  // the large range sets the bandwidth
    const double t = collective_cost(log.op, CollectiveAlgo::kRing, s.bytes, g, fabric_terms(fitted)).time_s;
    EXPECT_LT(std::fabs(t - s.time_s) / s.time_s, 0.05) << s.bytes;
  }
  // Latency-bound end: ring alpha = 2(n-1) x latency.
  const double small = collective_cost(log.op, CollectiveAlgo::kRing, 8, g, fabric_terms(fitted)).time_s;
  EXPECT_NEAR(small, fit.small.time_s(8), 0.02 * small);
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
