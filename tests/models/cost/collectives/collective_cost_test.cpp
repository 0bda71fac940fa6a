// The collective closed forms against NCCL's published tuning model (src/graph/tuning.cc,
// NCCL 2.30.7, as data/nccl_tuning.json records it): every expected value below is written out
// from those constants by hand, not taken from the code.
#include "models/cost/collectives/collective_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/core/scenario_error.hpp"
#include "models/cost/collectives/collective_algorithm.hpp"
#include "models/cost/collectives/nccl_model.hpp"

namespace trainsim {
namespace {

using nlohmann::json;
constexpr double kGiB = 1024.0 * 1024 * 1024;

// A fabric whose latencies equal NCCL's reference ones (no latencyInter offset) so the NCCL
// tables apply as printed.
FabricTerms fabric(GpuArch arch, int gpn, double nvlink_dir, int nics, double nic) {
  FabricTerms f;
  f.arch = arch;
  f.gpus_per_node = gpn;
  f.intra_bandwidth_bytes_per_s = nvlink_dir;
  f.intra_latency_s = 1e-6;
  f.nics_per_node = nics;
  f.nic_bandwidth_bytes_per_s = nic;
  f.nic_bandwidth_per_gpu_bytes_per_s = nic * nics / gpn;
  f.net_latency_s = nccl::kReferenceNetLatencyS;
  f.nvls = arch >= GpuArch::kHopper;
  return f;
}

json tuning_record(const std::string& id) {
  const auto path = std::filesystem::path(__FILE__).parent_path() / "../../../../data/nccl_tuning.json";
  std::ifstream in(path);
  const json all = json::parse(in);
  for (const auto& r : all["records"])
    if (r["id"] == id) return r["measured"];
  ADD_FAILURE() << "no record " << id;
  return json::object();
}

TEST(CollectiveCost, TablesAreNcclsPublishedConstants) {
  const json base = tuning_record("nccl_base_latencies")["latency_us"];
  const char* algos[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  const char* protos[] = {"LL", "LL128", "Simple"};
  const char* hw[] = {"nccl_hw_latencies_nvlink", "nccl_hw_latencies_pci", "nccl_hw_latencies_net"};
  for (int a = 0; a < nccl::kAlgoCount; ++a)
    for (int p = 0; p < 3; ++p) {
      SCOPED_TRACE(std::string(algos[a]) + "/" + protos[p]);
      EXPECT_DOUBLE_EQ(nccl::kBaseLatencyUs[a][p], base[algos[a]][protos[p]].get<double>());
      for (int h = 0; h < 3; ++h)
        EXPECT_DOUBLE_EQ(nccl::kHwLatencyUs[h][a][p],
                         tuning_record(hw[h])["latency_us"][algos[a]][protos[p]].get<double>());
    }
  const json ll = tuning_record("nccl_ll_max_bws")["cap_gb_per_s"];
  const char* rows[] = {"volta_or_intel", "ampere_or_amd", "hopper", "blackwell"};
  const char* archs[] = {"volta", "ampere", "hopper", "blackwell"};
  const json ring128 = tuning_record("nccl_perChMaxRingLL128Bws")["cap_gb_per_s_per_channel"];
  const json tree128 = tuning_record("nccl_perChMaxTreeLL128Bws")["cap_gb_per_s_per_channel"];
  const json tree = tuning_record("nccl_perChMaxTreeBws")["cap_gb_per_s_per_channel"];
  const json nvlstree = tuning_record("nccl_perChMaxNVLSTreeBws")["cap_gb_per_s_per_channel"];
  const json eff = tuning_record("nccl_nvls_efficiency")["efficiency"];
  for (int r = 0; r < 4; ++r) {
    EXPECT_DOUBLE_EQ(nccl::kNvlsEfficiency[r], eff[archs[r]].get<double>());
    for (int c = 0; c < 3; ++c) {
      EXPECT_DOUBLE_EQ(nccl::kLlMaxBwGBs[r][c], ll[rows[r]][c].get<double>());
      EXPECT_DOUBLE_EQ(nccl::kPerChMaxRingLL128GBs[r][c], ring128[archs[r]][c].get<double>());
      EXPECT_DOUBLE_EQ(nccl::kPerChMaxTreeLL128GBs[r][c], tree128[archs[r]][c].get<double>());
      EXPECT_DOUBLE_EQ(nccl::kPerChMaxTreeGBs[r][c], tree[archs[r]][c].get<double>());
      EXPECT_DOUBLE_EQ(nccl::kPerChMaxNvlsTreeGBs[r][c], nvlstree[archs[r]][c].get<double>());
    }
  }
  const json corr = tuning_record("nccl_tree_correction_factor")["factor"];
  for (int p = 0; p < 3; ++p)
    for (int i = 0; i < 24; ++i) EXPECT_DOUBLE_EQ(nccl::kTreeCorrection[p][i], corr[protos[p]][i].get<double>());
  const json f = tuning_record("nccl_protocol_bw_factors");
  EXPECT_DOUBLE_EQ(nccl::kRingLLFactor, f["ring_LL_factor"].get<double>());
  EXPECT_DOUBLE_EQ(nccl::kRingLL128Factor, f["ring_LL128_factor"].get<double>());
  EXPECT_DOUBLE_EQ(nccl::kTreeFactor, f["tree_allreduce_factor"].get<double>());
  EXPECT_DOUBLE_EQ(nccl::kTreeLLDivisor, f["tree_LL_divisor"].get<double>());
  EXPECT_DOUBLE_EQ(nccl::kPatFactor, f["pat_factor"].get<double>());
  const json lat = tuning_record("nccl_latency_model_terms");
  EXPECT_DOUBLE_EQ(nccl::kPatUsPerRank, lat["pat_linear_term_us_per_rank"].get<double>());
  EXPECT_DOUBLE_EQ(nccl::kPatLogDivisor, lat["pat_log_term_divisor"].get<double>());
  EXPECT_DOUBLE_EQ(nccl::kRingPlateauFactor, lat["ring_simple_allreduce_multinode_plateau_latency_factor"]["sm80_plus"].get<double>());
}

TEST(CollectiveCost, RingOnOneNodeIsNcclsStepLatencyAndTheNvlinkRate) {
  // 8 A100 on NVSwitch, 240 GB/s per direction. Simple: 8.4 us + 14 steps x 3.4 us (NVLink
  // ring Simple); algbw = 240 GB/s x 8 / 14.
  const FabricTerms f = fabric(GpuArch::kAmpere, 8, 240e9, 1, 25e9);
  const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple, kGiB,
                                 {8, 1, 8}, f);
  EXPECT_EQ(c.algo, CollectiveAlgo::kRing);
  EXPECT_NEAR(c.latency_s, (8.4 + 14 * 3.4) * 1e-6, 1e-12);
  EXPECT_NEAR(c.bandwidth_s, kGiB / (240e9 * 8 / 14), 1e-9);
  // LL: min(llMaxBw(Ampere, 1 node) = 87.7 GB/s, 0.5 x 240) as bus bandwidth; 6.6 + 14 x 0.6 us.
  const auto ll = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kLL, kGiB,
                                  {8, 1, 8}, f);
  EXPECT_NEAR(ll.latency_s, (6.6 + 14 * 0.6) * 1e-6, 1e-12);
  EXPECT_NEAR(ll.bandwidth_s, kGiB / (87.7e9 * 8 / 14), 1e-9);
  // LL128: 0.92 x 240 (below 12 channels x 20 GB/s); 14 + 14 x 1.9 us. All-gather: 7 steps.
  const auto ll128 = collective_cost(CollectiveOp::kAllGather, CollectiveAlgo::kRing, CollectiveProtocol::kLL128,
                                     kGiB, {8, 1, 8}, f);
  EXPECT_NEAR(ll128.latency_s, (14 + 7 * 1.9) * 1e-6, 1e-12);
  EXPECT_NEAR(ll128.bandwidth_s, kGiB / (0.92 * 240e9 * 8 / 7), 1e-9);
}

TEST(CollectiveCost, RingAcrossNodesPaysNetStepsOnlyAtNodeBoundaries) {
  // 4 nodes x 8 GPUs, 8 NICs of 25 GB/s: nsteps = 62, of which 2 x 3 cross nodes (NET ring
  // Simple 14 us) and 56 stay on NVLink at max(3.4, 3 x 1 us net overhead); x1.4 plateau.
  const FabricTerms f = fabric(GpuArch::kAmpere, 8, 240e9, 8, 25e9);
  const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple, kGiB,
                                 {32, 4, 8}, f);
  EXPECT_NEAR(c.latency_s, (8.4 + 56 * 3.4 + 6 * 14.0) * 1.4 * 1e-6, 1e-12);
  // Bus bandwidth: the node's 8 NICs (200 GB/s) below NVLink (240 GB/s).
  EXPECT_NEAR(c.bandwidth_s, kGiB / (200e9 * 32 / 62), 1e-9);
  // A cluster latency above the reference adds NCCL's latencyInter to each NET step (twice
  // for Simple).
  FabricTerms slow = f;
  slow.net_latency_s += 2e-6;
  const auto s = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple, kGiB,
                                 {32, 4, 8}, slow);
  EXPECT_NEAR(s.latency_s - c.latency_s, 6 * 4e-6 * 1.4, 1e-12);
}

TEST(CollectiveCost, TreeIsLogarithmicWithNcclsCorrections) {
  // 16 nodes x 8 H100, 8 NICs of 50 GB/s. Latency 8.4 + 2 (7 x 4.0 + log2(16) x 14) us.
  const FabricTerms f = fabric(GpuArch::kHopper, 8, 360e9, 8, 50e9);
  const GroupShape g{128, 16, 8};
  const auto t = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kTree, CollectiveProtocol::kSimple,
                                 4 * kGiB, g, f);
  EXPECT_NEAR(t.latency_s, (8.4 + 2 * (7 * 4.0 + 4 * 14.0)) * 1e-6, 1e-12);
  // Bus bandwidth min(0.92 x 360 GB/s (NVLink, below the node's 400 GB/s of NICs), channels x
  // 36 GB/s); algbw half of it.
  const double bus = std::min(0.92 * 360e9, t.channels * 36.0e9);
  EXPECT_NEAR(t.bandwidth_s, 4 * kGiB / (bus * 0.5), 1e-9);
  // At 4 MiB (log2(4 MiB / 64) = 16) the Simple correction is 0.7.
  const double s = 4 * 1024 * 1024;
  const auto m = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kTree, CollectiveProtocol::kSimple, s, g, f);
  EXPECT_NEAR(m.bandwidth_s, s / (bus * 0.5 * 0.7), 1e-12);
  // The tree's latency grows with log2(nodes), the ring's with the ranks.
  const GroupShape big{2048, 256, 8};
  const auto tb = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kTree, CollectiveProtocol::kSimple, 8, big, f);
  const auto rb = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple, 8, big, f);
  EXPECT_NEAR(tb.latency_s, (8.4 + 2 * (7 * 4.0 + 8 * 14.0)) * 1e-6, 1e-12);
  EXPECT_GT(rb.latency_s, 20 * tb.latency_s);
}

TEST(CollectiveCost, NvlsOnAnH100NodeFromNvlsEfficiency) {
  // NVLS all-reduce: each GPU's NVLink carries S (n+1)/n each way at nvlsEfficiency (0.85 on
  // Hopper) of its rate: algbw = 0.85 x 360 GB/s x 8/9; latency the NVLink NVLS step, 25 us.
  const FabricTerms f = fabric(GpuArch::kHopper, 8, 360e9, 8, 50e9);
  const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kNvls, CollectiveProtocol::kAuto, kGiB,
                                 {8, 1, 8}, f);
  EXPECT_EQ(c.algo, CollectiveAlgo::kNvls);
  EXPECT_EQ(c.protocol, CollectiveProtocol::kSimple);  // NVLS runs Simple only
  EXPECT_NEAR(c.latency_s, 25e-6, 1e-12);
  EXPECT_NEAR(c.bandwidth_s, kGiB / (0.85 * 360e9 * 8 / 9), 1e-9);
  // The tuner takes it for large messages on Hopper, never on Ampere (nvlsEfficiency 0).
  EXPECT_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, kGiB, {8, 1, 8}, f).algo,
            CollectiveAlgo::kNvls);
  FabricTerms a100 = fabric(GpuArch::kAmpere, 8, 240e9, 8, 25e9);
  a100.nvls = true;
  EXPECT_NE(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, kGiB, {8, 1, 8}, a100).algo,
            CollectiveAlgo::kNvls);
  // Across nodes NVLS needs CollNet (SHARP); NVLS-tree does not: 2 log2(nodes) NET steps of
  // 20.9 us plus the 25 us NVLink step.
  const auto nt = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kNvlsTree, CollectiveProtocol::kSimple,
                                  kGiB, {256, 32, 8}, f);
  EXPECT_EQ(nt.algo, CollectiveAlgo::kNvlsTree);
  EXPECT_NEAR(nt.latency_s, (25 + 2 * 5 * 20.9) * 1e-6, 1e-12);
  EXPECT_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kNvls, CollectiveProtocol::kSimple, kGiB,
                            {256, 32, 8}, f)
                .algo,
            CollectiveAlgo::kRing);  // fell back: no SHARP in this fabric
}

TEST(CollectiveCost, CollnetAndPatWhereTheirConditionsHold) {
  FabricTerms f = fabric(GpuArch::kHopper, 8, 360e9, 8, 50e9);
  // CollNet needs in-network reduction in the fabric.
  EXPECT_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kCollnetDirect, CollectiveProtocol::kSimple,
                            kGiB, {64, 8, 8}, f)
                .algo,
            CollectiveAlgo::kRing);
  f.collnet = true;
  const auto cd = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kCollnetDirect,
                                  CollectiveProtocol::kSimple, kGiB, {64, 8, 8}, f);
  EXPECT_EQ(cd.algo, CollectiveAlgo::kCollnetDirect);
  // 2 (1 x 3.7 + 7 x 0.4) + 31 us.
  EXPECT_NEAR(cd.latency_s, (2 * (3.7 + 7 * 0.4) + 31) * 1e-6, 1e-12);
  // PAT: all-gather with one GPU per node: 8 + log2(64) x 14 / 3.5 + 64 x 2.8 us, 0.75 of the NIC.
  const FabricTerms one = fabric(GpuArch::kHopper, 1, 0, 1, 50e9);
  const auto pat = collective_cost(CollectiveOp::kAllGather, CollectiveAlgo::kPat, CollectiveProtocol::kSimple,
                                   kGiB, {64, 64, 1}, one);
  EXPECT_EQ(pat.algo, CollectiveAlgo::kPat);
  EXPECT_NEAR(pat.latency_s, (8 + 6 * 14 / 3.5 + 64 * 2.8) * 1e-6, 1e-12);
  EXPECT_NEAR(pat.bandwidth_s, kGiB / (0.75 * 50e9), 1e-9);
  // PAT does not run with several GPUs per node.
  EXPECT_EQ(collective_cost(CollectiveOp::kAllGather, CollectiveAlgo::kPat, CollectiveProtocol::kSimple, kGiB,
                            {64, 8, 8}, f)
                .algo,
            CollectiveAlgo::kRing);
}

TEST(CollectiveCost, TunerPicksTheFastestAndHonoursForcedChoices) {
  const FabricTerms f = fabric(GpuArch::kHopper, 8, 360e9, 8, 50e9);
  const GroupShape g{64, 8, 8};
  for (double bytes : {8.0, 65536.0, 16.0 * 1024 * 1024, 4 * kGiB}) {
    SCOPED_TRACE(bytes);
    const auto best = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, bytes, g, f);
    for (const CollectiveAlgorithm* a : collective_algorithms()) {
      if (!a->tuned() || !a->supports(CollectiveOp::kAllReduce)) continue;
      for (auto p : {CollectiveProtocol::kLL, CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
        const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo(a->name()), p, bytes, g, f);
        if (c.algo == CollectiveAlgo(a->name()) && c.protocol == p) {
          EXPECT_LE(best.time_s, c.time_s * (1 + 1e-12));
        }
      }
    }
  }
  // Small messages take LL, large ones Simple (NCCL's protocol ladder).
  EXPECT_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 8, g, f).protocol, CollectiveProtocol::kLL);
  EXPECT_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, 4 * kGiB, g, f).protocol,
            CollectiveProtocol::kSimple);
  // Forcing an algorithm an op cannot run falls back (NCCL_ALGO=tree for all-gather).
  EXPECT_EQ(collective_cost(CollectiveOp::kAllGather, CollectiveAlgo::kTree, kGiB, g, f).algo, CollectiveAlgo::kRing);
  EXPECT_EQ(collective_cost(CollectiveOp::kAllToAll, CollectiveAlgo::kRing, kGiB, g, f).algo, CollectiveAlgo::kDirect);
  // LL128 is off by default over PCIe, and available when forced.
  FabricTerms pcie = f;
  pcie.intra_fabric = IntraFabric::kPcie;
  pcie.nvls = false;
  for (double bytes = 1024; bytes < 8 * kGiB; bytes *= 4)
    EXPECT_NE(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kAuto, bytes, g, pcie).protocol,
              CollectiveProtocol::kLL128);
  EXPECT_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kLL128, kGiB, g, pcie)
                .protocol,
            CollectiveProtocol::kLL128);
}

TEST(CollectiveCost, AllToAllAndSendRecvFromTheLinksTheyLoad) {
  // 4 nodes x 8 GPUs, 8 NICs of 50 GB/s, NVLink 360 GB/s: each rank sends 7/32 S over NVLink and
  // 24/32 S off the node; the node pushes 8 x 24/32 S through 400 GB/s.
  const FabricTerms f = fabric(GpuArch::kHopper, 8, 360e9, 8, 50e9);
  const auto a2a = collective_cost(CollectiveOp::kAllToAll, CollectiveAlgo::kAuto, kGiB, {32, 4, 8}, f);
  EXPECT_EQ(a2a.algo, CollectiveAlgo::kDirect);
  EXPECT_NEAR(a2a.bandwidth_s, std::max(7.0 / 32 * kGiB / 360e9, 8 * 24.0 / 32 * kGiB / 400e9), 1e-9);
  const auto sr = collective_cost(CollectiveOp::kSendRecv, CollectiveAlgo::kAuto, kGiB, {2, 2, 1, 1}, f);
  EXPECT_NEAR(sr.bandwidth_s, kGiB / 50e9, 1e-9);  // one GPU's NIC
}

TEST(CollectiveCost, GroupShapeOfExplicitGpus) {
  ClusterSpec c;
  c.nodes = 4;
  c.gpus_per_node = 8;
  c.network.nics_per_node = 4;
  const GroupShape dp = group_shape_of({0, 8, 16, 24}, c);  // one GPU per node
  EXPECT_EQ(dp.nodes, 4);
  EXPECT_EQ(dp.ranks_per_node, 1);
  EXPECT_EQ(dp.nics, 1);
  const GroupShape pair = group_shape_of({0, 1, 8, 9}, c);  // GPUs 0 and 1 share NIC 0
  EXPECT_EQ(pair.ranks_per_node, 2);
  EXPECT_EQ(pair.nics, 1);
  EXPECT_EQ(group_shape_of({0, 4, 8, 12}, c).nics, 2);  // GPUs 0 and 4 reach NICs 0 and 2
  ClusterSpec one = c;
  one.gpus_per_node = 1;
  EXPECT_EQ(group_shape_of({0, 1}, one).nics, 4);  // one GPU, four NICs of its own
}

TEST(CollectiveCost, ConcurrentGroupsShareTheirNodesNic) {
  // 8 GPUs on one 12.5 GB/s NIC, ring all-reduce over 4 nodes, one rank per node. Alone (an
  // explicit group: nics = 1) the ring has the whole NIC; as one of a plan's 8 concurrent DP
  // groups (nics = 0) each ring gets an eighth, so its bandwidth term is 8x.
  const FabricTerms f = fabric(GpuArch::kAmpere, 8, 240e9, 1, 12.5e9);
  const GroupShape alone{4, 4, 1, 1};
  const GroupShape concurrent{4, 4, 1, 0};
  const auto a = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple,
                                 kGiB, alone, f);
  const auto c = collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple,
                                 kGiB, concurrent, f);
  EXPECT_NEAR(c.bandwidth_s / a.bandwidth_s, 8.0, 1e-9);
  // Ring all-reduce moves 2(n-1)/n of the buffer through each node's NIC share.
  EXPECT_NEAR(c.bandwidth_s, 2 * 3.0 / 4 * kGiB / (12.5e9 / 8), 0.02 * c.bandwidth_s);
  // With a NIC per GPU nothing is shared: the two agree.
  const FabricTerms rail = fabric(GpuArch::kAmpere, 8, 240e9, 8, 12.5e9);
  EXPECT_DOUBLE_EQ(collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple,
                                   kGiB, concurrent, rail).bandwidth_s,
                   collective_cost(CollectiveOp::kAllReduce, CollectiveAlgo::kRing, CollectiveProtocol::kSimple,
                                   kGiB, alone, rail).bandwidth_s);
}

TEST(CollectiveCost, NamesAndBusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveOp::kSendRecv, 2), 1.0);
  EXPECT_EQ(collective_protocol_from_string("ll128", "--protocol"), CollectiveProtocol::kLL128);
  EXPECT_EQ(collective_protocol_from_string("SIMPLE", "--protocol"), CollectiveProtocol::kSimple);
  EXPECT_EQ(collective_algo_from_string("nvls_tree", "--algo"), CollectiveAlgo::kNvlsTree);
  EXPECT_THROW(collective_algo_from_string("butterfly", "--algo"), ScenarioError);
  EXPECT_THROW(collective_protocol_from_string("LL64", "--protocol"), ScenarioError);
  // Every registered algorithm has a unique name and appears in the list of choices.
  const auto names = collective_algo_names();
  EXPECT_EQ(names.front(), "auto");
  EXPECT_EQ(names.size(), collective_algorithms().size() + 1);
}

TEST(CollectiveCost, GpuGenerationFromTheName) {
  GpuSpec g;
  g.name = "H200-SXM-141GB";
  EXPECT_EQ(gpu_arch(g), GpuArch::kHopper);
  g.name = "A100-SXM4-80GB";
  EXPECT_EQ(gpu_arch(g), GpuArch::kAmpere);
  g.name = "GB200";
  EXPECT_EQ(gpu_arch(g), GpuArch::kBlackwell);
  g.compute_capability = 7.0;
  EXPECT_EQ(gpu_arch(g), GpuArch::kVolta);
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.gpu.name = "H100-SXM-80GB";
  EXPECT_TRUE(fabric_terms(c).nvls);  // Hopper NVSwitch nodes have NVLink SHARP
  c.intra_node.nvls = 0;
  EXPECT_FALSE(fabric_terms(c).nvls);
}

}  // namespace
}  // namespace trainsim
