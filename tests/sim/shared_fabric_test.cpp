// Several jobs on one fabric (`trainsim share`): node layouts, and the contention two
// identical jobs see when their gradient all-reduces cross the same leaf uplink (interleaved)
// against none when each job sits under its own leaf (packed). Closed form: with one uplink per
// leaf at one NIC's rate, the two concurrent 2-rank all-reduces of S bytes each take 2 S / rate
// instead of S / rate, so the shared step is longer by exactly S / rate. Forked children.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/scenario/scenario_loader.hpp"
#include "models/workload/workload.hpp"
#include "sim/shared_fabric.hpp"
#include "sim_test_util.hpp"

namespace trainsim::sim {
namespace {

using testing::in_child_process;

TEST(SharedFabric, PackedAndInterleavedLayouts) {
  std::string reason;
  EXPECT_EQ(place_nodes({2, 2}, 4, JobPlacement::kPacked, reason),
            (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(place_nodes({2, 3}, 6, JobPlacement::kInterleaved, reason),
            (std::vector<std::vector<int>>{{0, 2}, {1, 3, 4}}));
  EXPECT_TRUE(reason.empty());
  EXPECT_TRUE(place_nodes({2, 3}, 4, JobPlacement::kPacked, reason).empty());
  EXPECT_NE(reason.find("need 5 nodes"), std::string::npos) << reason;
}

Scenario job(const std::string& name) {
  LoadOptions o;
  o.preset_dirs = {std::string(TRAINSIM_SOURCE_DIR) + "/scenarios"};
  // 2 single-GPU nodes per leaf (radix 4), 2:1 taper: one uplink per leaf at one NIC's rate.
  const nlohmann::json raw = {
      {"schema_version", 1},
      {"name", name},
      {"model", "gpt-1.7b"},
      {"cluster", {{"base", "dgx-a100-superpod"},
                   {"nodes", 2},
                   {"gpus_per_node", 1},
                   {"network", {{"topology", "fat-tree"}, {"switch_radix", 4}, {"oversubscription", 2},
                                {"nics_per_node", 1}}}}},
      {"plan", {{"tp", 1}, {"dp", 2}, {"micro_batch", 1}, {"global_batch", 2}, {"overlap", {{"dp", false}}}}}};
  return parse_scenario(resolve_scenario_json(raw, o, "."));
}

// Step times: [alone A, alone B, shared A, shared B].
std::vector<double> share(JobPlacement placement, double& grad_bytes, double& rate) {
  const SharedSetup setup = prepare_shared({job("a"), job("b")}, placement, 4);
  EXPECT_TRUE(setup.reason.empty()) << setup.reason;
  Workload w;
  Result r;
  EXPECT_TRUE(build_workload(setup.jobs[0], w, r));
  grad_bytes = w.stages[0].dense_params * w.grad_bytes_per_param * w.dp_wire_ratio;
  rate = setup.fabric.network.nic_bandwidth_bytes_per_s * setup.fabric.network.efficiency;
  std::vector<double> out;
  for (int j : {0, 1})
    out.push_back(in_child_process([&] { return simulate_jobs(setup, {j}).step_time_s; }).at(0));
  const auto both = in_child_process([&] {
    const SharedRun run = simulate_jobs(setup, {0, 1});
    std::vector<double> v = run.step_time_s;
    v.push_back(static_cast<double>(run.shared_links.size()));
    return v;
  });
  out.insert(out.end(), both.begin(), both.end());
  return out;
}

TEST(SharedFabric, InterleavedJobsContendOnTheSpineAndPackedOnesDoNot) {
  double bytes = 0, rate = 0;
  const auto packed = share(JobPlacement::kPacked, bytes, rate);
  EXPECT_DOUBLE_EQ(packed[2], packed[0]);  // each job under its own leaf: nothing shared
  EXPECT_DOUBLE_EQ(packed[3], packed[1]);
  EXPECT_EQ(packed[4], 0.0);
  const auto inter = share(JobPlacement::kInterleaved, bytes, rate);
  EXPECT_NEAR(inter[0], inter[1], 1e-9 * inter[0]);
  // Alone, interleaved nodes 0 and 2 sit under different leaves; shared, both all-reduces
  // cross the one uplink per direction: longer by S / rate.
  EXPECT_GT(inter[2], inter[0]);
  EXPECT_NEAR(inter[2] - inter[0], bytes / rate, 0.02 * bytes / rate);
  EXPECT_NEAR(inter[3] - inter[1], bytes / rate, 0.02 * bytes / rate);
  EXPECT_GE(inter[4], 2.0);  // leaf uplink both ways, at least
}

}  // namespace
}  // namespace trainsim::sim
