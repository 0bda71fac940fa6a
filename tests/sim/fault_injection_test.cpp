// Link failures, degraded links and stragglers in the simulate tier against closed
// forms: flows fail over to the surviving equal-cost uplinks (two flows on one surviving uplink
// take twice as long), a failed link carries nothing, a cut leaf is an infeasible result naming
// the link, a degraded link slows what crosses it by its factor, and a slow stage plays like
// the fixed-delay timeline with that stage's costs divided by its speed. Every simulation runs
// in a forked child (one s4u::Engine per process).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/workload/timeline.hpp"
#include "sim/collective_engine.hpp"
#include "sim/link_stats.hpp"
#include "sim/platform.hpp"
#include "models/workload/placement.hpp"
#include "sim/step_player.hpp"
#include "sim/step_simulation.hpp"
#include "sim/topology.hpp"
#include "sim_test_util.hpp"

namespace trainsim::sim {
namespace {

using testing::in_child_process;
using testing::test_cluster;
using testing::two_concurrent_ring_all_reduces;
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kPort = 25e9;

// 4 single-GPU nodes, 2 per leaf (radix 4), no taper: 2 spines, each leaf-spine uplink one
// NIC's rate. Destination-mod-k routing: 0 -> 2 climbs spine0, 1 -> 3 spine1 (no collision).
ClusterSpec two_leaf_cluster() { return test_cluster(4, 1, 0, kPort, 1, "fat-tree", 1.0); }
TopologyOptions two_leaf_options(LinkFaults faults = {}) {
  TopologyOptions o;
  o.switch_radix = 4;
  o.routing = RoutingPolicy::kDestinationMod;
  o.faults = std::move(faults);
  return o;
}
LinkFaults failed(std::vector<std::string> names) {
  LinkFaults f;
  f.failed_links = std::move(names);
  return f;
}

TEST(LinkFaults, RoutesSkipFailedLinksAndUseTheSurvivingEqualCostSet) {
  const Topology healthy(two_leaf_cluster(), two_leaf_options());
  const Topology t(two_leaf_cluster(), two_leaf_options(failed({"leaf0_spine0"})));
  const int dead = t.find_link("leaf0_spine0");
  ASSERT_GE(dead, 0);
  EXPECT_TRUE(t.links()[dead].failed);
  EXPECT_EQ(t.failed_links(), std::vector<int>{dead});
  for (uint64_t salt = 0; salt < 16; ++salt)
    for (auto [s, d] : {std::pair{0, 2}, std::pair{2, 0}, std::pair{1, 3}, std::pair{3, 1}}) {
      const Route r = t.route(s, d, salt);
      EXPECT_EQ(r.links.size(), 4u);  // NIC, leaf-spine, spine-leaf, NIC: still shortest
      for (DirectedLink l : r.links) EXPECT_NE(link_of(l), dead);
    }
  // 0 -> 2 took spine0 on the healthy fabric: rerouted; the healthy route is still available.
  EXPECT_NE(t.route(0, 2).links, t.route(0, 2, 0, true).links);
  EXPECT_EQ(t.route(0, 2, 0, true).links, healthy.route(0, 2).links);
  EXPECT_TRUE(t.disconnection({0, 1, 2, 3}).empty());
  // Bisection: leaf0 keeps one of its two uplinks.
  EXPECT_NEAR(healthy.bisection_bandwidth_bytes_per_s(), 2 * kPort, 1);
  EXPECT_NEAR(t.bisection_bandwidth_bytes_per_s(), kPort, 1);
}

TEST(LinkFaults, CutLeafAndBadNamesAreReported) {
  const Topology cut(two_leaf_cluster(), two_leaf_options(failed({"leaf0_spine0", "leaf0_spine1"})));
  const std::string why = cut.disconnection({0, 1, 2, 3});
  EXPECT_NE(why.find("leaf0_spine0"), std::string::npos) << why;
  EXPECT_NE(why.find("leaf0_spine1"), std::string::npos) << why;
  // GPUs under the cut leaf alone still reach each other.
  EXPECT_TRUE(cut.disconnection({0, 1}).empty());
  const Topology nic(two_leaf_cluster(), two_leaf_options(failed({"nic_node3_0"})));
  EXPECT_NE(nic.disconnection({0, 3}).find("nic_node3_0"), std::string::npos);
  try {
    Topology bad(two_leaf_cluster(), two_leaf_options(failed({"leaf0_spine0", "leaf0-spine9"})));
    FAIL() << "expected a ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "training.faults.failed_links[1]");
    EXPECT_NE(std::string(e.what()).find("leaf0_spine0"), std::string::npos) << e.what();
  }
  LinkFaults too_many;
  too_many.failed_switch_links = 5;  // the fabric has 4 leaf-spine links
  EXPECT_THROW(Topology(two_leaf_cluster(), two_leaf_options(too_many)), ScenarioError);
}

TEST(LinkFaults, SeededPicksAreDeterministic) {
  // 8 leaves x 4 spines = 32 switch links (radix 8, 16 single-GPU nodes, 2:1 taper... no taper).
  const ClusterSpec c = test_cluster(16, 1, 0, kPort, 1, "fat-tree", 1.0);
  TopologyOptions o;
  o.switch_radix = 4;
  o.faults.failed_switch_links = 3;
  o.faults.degraded_fraction = 0.25;
  o.faults.degraded_bandwidth_factor = 0.5;
  o.faults.seed = 7;
  const Topology a(c, o), b(c, o);
  EXPECT_EQ(a.failed_links(), b.failed_links());
  EXPECT_EQ(a.failed_links().size(), 3u);
  int switch_links = 0;
  for (const auto& l : a.links()) switch_links += l.kind == LinkKind::kSwitch;
  // round(0.25 x the surviving switch links), none of them failed, each at half bandwidth.
  EXPECT_EQ(static_cast<int>(a.degraded_links().size()), static_cast<int>(std::lround(0.25 * (switch_links - 3))));
  for (int l : a.degraded_links()) {
    EXPECT_FALSE(a.links()[l].failed);
    EXPECT_DOUBLE_EQ(a.links()[l].bandwidth_bytes_per_s, 0.5 * a.links()[l].nominal_bandwidth_bytes_per_s);
  }
  o.faults.seed = 8;
  const Topology other(c, o);
  EXPECT_EQ(other.failed_links().size(), 3u);
}

// All-reduce A over {0, 2} alone, then A and B over {1, 3} at once; failed-link bytes.
std::vector<double> two_all_reduces(const LinkFaults& faults) {
  return in_child_process([&] {
    Platform& p = Platform::create(two_leaf_cluster(), two_leaf_options(faults));
    std::vector<double> out = two_concurrent_ring_all_reduces(p);
    double dead_bytes = 0;
    for (int l : p.topology().failed_links())
      dead_bytes += p.link_stats().bytes(directed(l, false)) + p.link_stats().bytes(directed(l, true));
    out.push_back(dead_bytes);
    out.push_back(static_cast<double>(p.transfers_rerouted()));
    return out;
  });
}

TEST(LinkFaults, FailedSpineLinkFailsOverToTheSurvivingUplink) {
  const auto healthy = two_all_reduces({});
  const auto broken = two_all_reduces(failed({"leaf0_spine0"}));
  // A lone 2-rank ring all-reduce: 2 (n-1)/n S = S over one NIC's rate, either way.
  EXPECT_NEAR(healthy[0], kGiB / kPort, 0.01 * kGiB / kPort);
  EXPECT_NEAR(broken[0] / healthy[0], 1.0, 0.01);
  // Healthy: the two all-reduces climb different spines, no contention.
  EXPECT_NEAR(healthy[1] / healthy[0], 1.0, 0.01);
  EXPECT_NEAR(healthy[2] / healthy[0], 1.0, 0.01);
  // One uplink of leaf0 left: both all-reduces' flows share its rate in each direction:
  // time = 2 flows x S / (1 surviving uplink x rate) = twice the healthy time, no more.
  EXPECT_NEAR(broken[1] / healthy[1], 2.0, 0.02);
  EXPECT_NEAR(broken[2] / healthy[2], 2.0, 0.02);
  EXPECT_EQ(broken[3], 0.0);  // the failed link carried nothing
  EXPECT_GT(broken[4], 0.0);  // and flows were rerouted around it
  EXPECT_EQ(healthy[4], 0.0);
}

TEST(LinkFaults, DegradedLinksSlowACrossingCollectiveByTheirFactor) {
  LinkFaults slow;
  slow.degraded_fraction = 1.0;  // every leaf-spine link at 40%
  slow.degraded_bandwidth_factor = 0.4;
  const auto healthy = two_all_reduces({});
  const auto degraded = two_all_reduces(slow);
  // The crossing all-reduce's bottleneck drops from the NIC rate to 0.4 x the uplink rate.
  EXPECT_NEAR(degraded[0] / healthy[0], 1 / 0.4, 0.02 * 2.5);
}

LoadOptions presets() {
  LoadOptions o;
  o.preset_dirs = {std::string(TRAINSIM_SOURCE_DIR) + "/scenarios"};
  return o;
}

nlohmann::json fat_tree_raw() {
  return {{"schema_version", 1},
          {"name", "faults-test"},
          {"model", "gpt-1.7b"},
          {"cluster", {{"base", "dgx-a100-superpod"},
                       {"nodes", 4},
                       {"network", {{"topology", "fat-tree"}, {"switch_radix", 32}, {"oversubscription", 2}}}}},
          {"plan", {{"tp", 8}, {"dp", 4}, {"micro_batch", 1}, {"global_batch", 32}}},
          {"training", {{"faults", nlohmann::json::object()}}}};
}

nlohmann::json simulate_raw(const nlohmann::json& raw) {
  const Scenario s = parse_scenario(resolve_scenario_json(raw, presets(), "."));
  const auto bytes = in_child_process([&] {
    nlohmann::json extra = nlohmann::json::object();
    const Result r = simulate_step(s, SimulateOptions{}, extra);
    extra["feasible"] = r.feasible;
    extra["reason"] = r.reason;
    extra["step_time_s"] = r.step_time_s;
    extra["dp_comm_s"] = r.breakdown.dp_comm_s;
    extra["warnings"] = r.warnings;
    const std::string text = extra.dump();
    return std::vector<double>(text.begin(), text.end());
  });
  return nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
}

TEST(LinkFaults, CuttingALeafMakesTheStepInfeasibleNamingTheLink) {
  nlohmann::json raw = fat_tree_raw();
  // 2 nodes per leaf, 2:1 taper: 8 spines. Fail all of leaf0's uplinks.
  nlohmann::json names = nlohmann::json::array();
  for (int s = 0; s < 8; ++s) names.push_back("leaf0_spine" + std::to_string(s));
  raw["training"]["faults"]["failed_links"] = names;
  const auto out = simulate_raw(raw);
  EXPECT_FALSE(out["feasible"].get<bool>());
  EXPECT_NE(out["reason"].get<std::string>().find("leaf0_spine0"), std::string::npos) << out["reason"];
  EXPECT_EQ(out["faults"]["links"]["failed"].size(), 8u);
}

TEST(LinkFaults, StepWithAFailedSpineLinkReportsTheFailover) {
  nlohmann::json raw = fat_tree_raw();
  raw["plan"]["overlap"] = {{"dp", false}};
  raw["training"]["faults"]["failed_links"] = {"leaf0_spine0"};
  const auto out = simulate_raw(raw);
  ASSERT_TRUE(out["feasible"].get<bool>()) << out["reason"];
  const auto& links = out["faults"]["links"];
  EXPECT_EQ(links["failed"], nlohmann::json::array({"leaf0_spine0"}));
  EXPECT_EQ(links["failed_link_bytes"].get<double>(), 0.0);
  EXPECT_GT(links["transfers_rerouted"].get<double>(), 0);
  const double healthy = links["healthy_fabric_step_time_s"].get<double>();
  const double step = out["step_time_s"].get<double>();
  // Slower, but bounded: leaf0 keeps 7 of its 8 uplinks, so a ring edge that crossed the failed
  // link shares a remaining one with at most one other flow: the exposed DP reduction at most
  // doubles, so the step grows by at most half the faulted run's DP time.
  EXPECT_GE(step, healthy * (1 - 1e-9));
  EXPECT_LE(step - healthy, 0.5 * out["dp_comm_s"].get<double>() * (1 + 1e-9));
  // Bisection: 8 uplinks of one port each per leaf -> 7.
  const double bis_h = links["bisection_bytes_per_s"]["healthy"].get<double>();
  EXPECT_NEAR(links["bisection_bytes_per_s"]["with_faults"].get<double>() / bis_h, 7.0 / 8.0, 1e-9);
}

TEST(Stragglers, SlowStagePlaysLikeTheTimelineWithItsCostsDivided) {
  // 1F1B, 4 stages, 8 micro-batches; stage 2 at 0.5x speed.
  const int p = 4, m = 8;
  Workload wl;
  wl.schedule = &pipeline_schedule("1f1b");
  wl.pp = p;
  wl.micro_batches = m;
  wl.p2p_bytes = 1;
  wl.stages.resize(p);
  for (auto& s : wl.stages) {
    s.forward_s = s.forward_compute_s = 1e-3;
    s.backward_s = s.backward_compute_s = 2e-3;
    s.backward_weight_s = 1e-3;
  }
  testing::give_programs(wl);
  std::vector<StageCosts> costs(p, StageCosts{1e-3, 1e-3, 1e-3});
  costs[2] = StageCosts{2e-3, 2e-3, 2e-3};
  const Timeline ref = play_schedule(pipeline_schedule("1f1b"), p, 1, m, costs, 2e-6);
  const auto got = in_child_process([&] {
    Platform& plat = Platform::create(test_cluster(1, 8, 600e9, 25e9, 8));
    StepOptions o;
    o.device_speed = {1, 1, 0.5, 1};
    const StepTimeline tl = play_step(plat, wl, RankPlacement(1, 1, 1, p), o);
    return std::vector<double>{tl.pipeline_end_s, tl.busy_s[2], tl.busy_s[0]};
  });
  EXPECT_NEAR(got[0], ref.makespan_s, 0.01 * ref.makespan_s);
  EXPECT_NEAR(got[1], m * 6e-3, 1e-9);  // F + B of the slow stage, doubled
  EXPECT_NEAR(got[2], m * 3e-3, 1e-9);
  // Closed form (p2p latency aside): the slow stage is the critical path. Its first forward
  // starts after F0 + F1; it then computes m (F2 + B2) and waits once, for its first backward
  // input, F3 + B3 - F2 (stage 3 works on micro-batch 0 while stage 2 runs micro-batch 1's
  // forward); stages 1 and 0 drain with B1 + B0:
  //   2 + 8 x 6 + (3 - 2) + 4 = 55 ms.
  EXPECT_NEAR(got[0], 2e-3 + m * 6e-3 + 1e-3 + 4e-3, 0.001 * got[0]);
}

TEST(Stragglers, RebalancedStepRecoversPartOfTheLoss) {
  const auto out = simulate_raw(
      nlohmann::json::parse(R"({"schema_version": 1, "name": "straggler", "model": "gpt-1.7b",
        "cluster": {"base": "dgx-h100-superpod", "nodes": 4},
        "plan": {"tp": 8, "pp": 4, "dp": 1, "micro_batch": 1, "global_batch": 32},
        "training": {"faults": {"stragglers": {"fraction": 0.001, "speed_factor": 0.5, "stage": 2},
                                "rebalance": true}}})"));
  ASSERT_TRUE(out["feasible"].get<bool>()) << out["reason"];
  const auto& st = out["faults"]["straggler"];
  EXPECT_EQ(st["stage"], 2);
  const double t_nom = st["nominal_step_time_s"], t_strag = st["step_time_s"];
  const double t_reb = st["rebalance"]["step_time_s"];
  EXPECT_NEAR(t_reb, out["step_time_s"].get<double>(), 1e-12);
  EXPECT_GT(t_strag, 1.2 * t_nom);
  // The slow stage's 6 layers at half speed act like 12: the step grows by at most 2x.
  EXPECT_LT(t_strag, 2.0 * t_nom);
  EXPECT_LT(t_reb, t_strag);
  const double rec = st["rebalance"]["recovered_fraction"];
  EXPECT_NEAR(rec, (t_strag - t_reb) / (t_strag - t_nom), 1e-12);
  EXPECT_GT(rec, 0.5);
  EXPECT_LE(rec, 1.0);
  EXPECT_EQ(st["rebalance"]["layers_per_stage"], nlohmann::json::array({7, 7, 3, 7}));
}

}  // namespace
}  // namespace trainsim::sim

namespace trainsim::sim {
namespace {

// A small MoE model on single-GPU nodes behind a fat-tree: every EP all-to-all and every
// gradient reduction crosses the network.
nlohmann::json moe_raw(double oversubscription) {
  return nlohmann::json::parse(R"({"schema_version": 1, "name": "moe",
    "model": {"name": "moe-small", "layers": 4, "hidden": 1024, "heads": 8, "ffn_hidden": 4096, "vocab": 32000,
              "seq_len": 1024, "ffn_act": "swiglu",
              "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 2048}},
    "cluster": {"base": "dgx-a100-superpod", "nodes": 8, "gpus_per_node": 1,
                "network": {"topology": "fat-tree", "nic_bandwidth": "200Gbps", "nics_per_node": 1,
                            "oversubscription": )" + std::to_string(oversubscription) + R"(, "switch_radix": 4}},
    "plan": {"tp": 1, "pp": 1, "dp": 8, "ep": 8, "expert_tp": 1, "micro_batch": 1, "global_batch": 32,
             "zero_stage": 1, "schedule": "1f1b"}})");
}

TEST(StepTraffic, EveryCollectiveKindIsMovedAsFlowsAndMatchesTheClosedForm) {
  // TP 2, CP 2, PP 2, DP 2 on 2 nodes, MoE with EP 2: tp, cp, ep, dp and pp traffic all run as
  // flows; what the step moved (summed over GPUs) is what the closed form counts.
  nlohmann::json raw = moe_raw(1);
  raw["cluster"] = {{"base", "dgx-a100-superpod"}, {"nodes", 2}};
  raw["plan"] = {{"tp", 2}, {"cp", 2}, {"pp", 2}, {"dp", 2}, {"ep", 2}, {"expert_tp", 1}, {"sp", true},
                 {"micro_batch", 1}, {"global_batch", 8}, {"zero_stage", 1}};
  const auto out = simulate_raw(raw);
  ASSERT_TRUE(out.contains("simulation")) << out.dump();
  const auto& sim = out["simulation"];
  for (const char* k : {"tp", "cp", "ep", "dp", "pp"}) {
    SCOPED_TRACE(k);
    const double closed = sim["traffic_bytes_closed_form"][k].get<double>();
    const double moved = sim["traffic_bytes"][k].get<double>();
    EXPECT_GT(closed, 0);
    EXPECT_NEAR(moved, closed, 0.05 * closed);
    EXPECT_GT(sim["traffic_bytes_as_flows"][k].get<double>(), 0);
  }
}

// Without expert parallelism every GPU holds every expert, and the experts' gradients (most of
// this model's) are reduced over the data-parallel group as the dense ones are, from their own
// buffer: the step moves what the closed form counts.
TEST(StepTraffic, ExpertGradientsAreReducedWithoutExpertParallelism) {
  nlohmann::json raw = moe_raw(1);
  raw["plan"]["ep"] = 1;
  const auto out = simulate_raw(raw);
  ASSERT_TRUE(out.contains("simulation")) << out.dump();
  const auto& sim = out["simulation"];
  const double closed = sim["traffic_bytes_closed_form"]["dp"].get<double>();
  EXPECT_GT(closed, 0);
  EXPECT_NEAR(sim["traffic_bytes"]["dp"].get<double>(), closed, 0.05 * closed);
  EXPECT_GT(sim["expert_dp_buckets_simulated"].get<double>(), 0);
}

// A dense model on 2 nodes, data parallel over 16 GPUs sharded within each node (plan.dp_shard 8),
// simulated: its DP traffic moved as flows, and the closed form's count of it.
nlohmann::json simulate_sharded_within_nodes(int zero_stage, const nlohmann::json& plan_extra = nlohmann::json::object()) {
  nlohmann::json raw = moe_raw(1);
  raw["model"].erase("moe");
  raw["cluster"] = {{"base", "dgx-a100-superpod"}, {"nodes", 2}};
  raw["plan"] = {{"tp", 1}, {"pp", 1}, {"dp", 16}, {"micro_batch", 1}, {"global_batch", 16},
                 {"zero_stage", zero_stage}, {"dp_shard", 8}};
  raw["plan"].update(plan_extra);
  const auto out = simulate_raw(raw);
  EXPECT_TRUE(out.contains("simulation")) << out.dump();
  const auto& sim = out.contains("simulation") ? out["simulation"] : out;
  const double closed = sim.value("traffic_bytes_closed_form", nlohmann::json::object()).value("dp", 0.0);
  EXPECT_GT(closed, 0);
  EXPECT_NEAR(sim["traffic_bytes"]["dp"].get<double>(), closed, 0.05 * closed);
  EXPECT_GT(sim["traffic_bytes_as_flows"]["dp"].get<double>(), 0.95 * closed);
  return sim;
}

TEST(StepTraffic, HybridShardedGathersAndReplicaAllReducesRunAsFlows) {
  // ZeRO-3: every layer's gathers and reduce-scatters over a node's GPUs and the shard's
  // all-reduce between the nodes run as flows, and move what the closed form counts.
  simulate_sharded_within_nodes(3);
}

TEST(StepTraffic, ZeroPlusPlusSecondaryGathersRunAsFlows) {
  // ZeRO++ over the whole DP group: the forward's int8 gathers over 16 GPUs, the backward's over a
  // node's secondary partition, as flows.
  simulate_sharded_within_nodes(3, {{"dp_shard", 0}, {"zero_hpz_partition_size", 8}, {"zero_quantized_weights", true}});
}

TEST(StepTraffic, ZeroPlusPlusQuantizedGradientAllToAllsRunAsFlows) {
  // qgZ over the whole DP group: every layer's int4 all-to-all among a node's GPUs and then among
  // the two GPUs at each in-node index, as flows; they move less than the reduce-scatter did.
  const auto qgz = simulate_sharded_within_nodes(3, {{"dp_shard", 0}, {"zero_quantized_gradients", true}});
  const auto plain = simulate_sharded_within_nodes(3, {{"dp_shard", 0}});
  EXPECT_LT(qgz["traffic_bytes"]["dp"].get<double>(), plain["traffic_bytes"]["dp"].get<double>());
}

TEST(StepTraffic, PartiallyShardedGradientBucketsRunAsFlows) {
  // ZeRO-1: every gradient bucket reduce-scatters over a node, all-reduces the shard between the
  // nodes and all-gathers the parameters over the node, as flows.
  EXPECT_GT(simulate_sharded_within_nodes(1)["dp_buckets_simulated"].get<int>(), 0);
}

TEST(StepTraffic, ASyncIntervalSpreadsTheShardedReductionOverItsSteps) {
  // plan.sync_interval 4: the gradients are reduced and the parameters gathered every fourth
  // step, a quarter of each a step on average, in the flows as in the closed form.
  const double every_step = simulate_sharded_within_nodes(2)["traffic_bytes_closed_form"]["dp"].get<double>();
  const auto sim = simulate_sharded_within_nodes(2, {{"sync_interval", 4}});
  EXPECT_NEAR(sim["traffic_bytes"]["dp"].get<double>(), every_step / 4, 0.05 * every_step / 4);
}

TEST(StepTraffic, ACompressedReductionMovesItsCompressedBytes) {
  // int4 gradients all-reduced over two nodes (4 bits of each fp32 gradient, and the per-block
  // scales: 1/8 + 1/128 of the bytes):
  // the flows move the compressed payload, as the closed form counts it, and the quantisation
  // kernels are waited beside them, not moved as bytes (the flows used to carry the bytes scaled
  // by the reduction's time ratio, kernels included: 16x the payload on a fast NVLink group).
  nlohmann::json raw = moe_raw(1);
  raw["model"].erase("moe");
  raw["cluster"] = {{"base", "dgx-a100-superpod"}, {"nodes", 2}};
  raw["plan"] = {{"tp", 1}, {"pp", 1}, {"dp", 16}, {"micro_batch", 1}, {"global_batch", 16}, {"zero_stage", 0}};
  const auto plain = simulate_raw(raw);
  raw["plan"]["compression"] = {{{"from_step", 0}, {"method", "int4"}}};
  const auto packed = simulate_raw(raw);
  ASSERT_TRUE(plain.contains("simulation") && packed.contains("simulation")) << packed.dump();
  const double full = plain["simulation"]["traffic_bytes_closed_form"]["dp"].get<double>();
  const double closed = packed["simulation"]["traffic_bytes_closed_form"]["dp"].get<double>();
  EXPECT_NEAR(closed, full * (1.0 / 8 + 1.0 / 128), 0.01 * full);
  EXPECT_NEAR(packed["simulation"]["traffic_bytes"]["dp"].get<double>(), closed, 0.05 * closed);
  EXPECT_GT(packed["simulation"]["traffic_bytes_as_flows"]["dp"].get<double>(), 0.95 * closed);
}

TEST(StepTraffic, ExpertAllToAllsContendWithTheGradientReductionOnAnOversubscribedFabric) {
  // On a 4:1 tapered fat-tree the last micro-batch's expert all-to-alls run while the gradient
  // buckets cross the same spine: both take longer beside each other than alone, and the report
  // says so for each.
  const auto out = simulate_raw(moe_raw(4));
  ASSERT_TRUE(out.contains("simulation")) << out.dump();
  const auto& by = out["simulation"]["collectives_by_purpose"];
  for (const char* k : {"ep", "dp"}) {
    SCOPED_TRACE(k);
    ASSERT_TRUE(by[k].contains("beside_other_traffic")) << by.dump();
    EXPECT_GT(by[k]["beside_other_traffic"]["slowdown"].get<double>(),
              1.05 * by[k]["alone"]["slowdown"].get<double>());
    bool said = false;
    for (const auto& w : out["warnings"]) said |= w.get<std::string>().rfind(std::string(k) + " collectives beside", 0) == 0;
    EXPECT_TRUE(said) << out["warnings"].dump();
  }
  // The taper costs the step.
  EXPECT_GT(out["step_time_s"].get<double>(), simulate_raw(moe_raw(1))["step_time_s"].get<double>());
}

// Simulates a plan the simulate tier should not play: in-process (no platform is built), the
// estimate answers with a warning and the reason, which is returned.
std::string reason_the_simulation_was_skipped(const nlohmann::json& raw) {
  const Scenario s = parse_scenario(resolve_scenario_json(raw, presets(), "."));
  nlohmann::json extra = nlohmann::json::object();
  const Result r = simulate_step(s, SimulateOptions{}, extra);
  EXPECT_EQ(r.fidelity, "estimate");
  EXPECT_GT(r.step_time_s, 0);
  bool said = false;
  for (const auto& w : r.warnings) said |= w.find("simulate tier skipped") != std::string::npos;
  EXPECT_TRUE(said);
  return extra["simulation"].value("skipped", std::string());
}

TEST(StepSimulation, PlansBeyondTheSimulateBoundAreAnsweredByTheEstimateWithTheReason) {
  nlohmann::json raw = moe_raw(1);
  raw["plan"]["global_batch"] = 8 * 4000000;  // 4e6 micro-batches a pipeline
  const std::string why = reason_the_simulation_was_skipped(raw);
  EXPECT_NE(why.find("8e+06 pipeline ops"), std::string::npos) << why;
}

TEST(StepSimulation, AllToAllsTooCostlyForTheFlowEngineAreAnsweredByTheEstimate) {
  // EP 128 over 128 one-GPU nodes: each all-to-all is 128 x 127 flows in flight at once, about
  // 2.6e8 scans of the engine's comm list (collective_flow_scans); 4 MoE layers x 4 all-to-alls
  // (dispatch and combine, forward and backward) make 16 x (128 x 127)^2 = 4.23e9, beyond the
  // bound of 2e9.
  EXPECT_EQ(collective_flows(CollectiveOp::kAllToAll, 128), 128.0 * 127);
  EXPECT_EQ(collective_flows(CollectiveOp::kAllGather, 128), 128.0);
  nlohmann::json raw = moe_raw(1);
  raw["model"]["moe"]["experts"] = 128;
  raw["cluster"]["nodes"] = 128;
  raw["cluster"]["network"]["switch_radix"] = 64;
  raw["plan"]["dp"] = 128;
  raw["plan"]["ep"] = 128;
  raw["plan"]["global_batch"] = 128;
  const std::string why = reason_the_simulation_was_skipped(raw);
  EXPECT_NE(why.find("4.23e+09 scans"), std::string::npos) << why;
  EXPECT_NE(why.find("all-to-all"), std::string::npos) << why;
}

TEST(StepSimulation, GradientReductionsOverTensOfThousandsOfGpusAreAnsweredByTheEstimate) {
  // ZeRO-1 on 4,096 DGX A100 (TP8 PP16 DP256): the 128 data-parallel groups of the 16 stages
  // reduce together, 256 flows each: 32,768 flows in flight, every completion scanning them all;
  // a reduce-scatter and an all-gather are 2 x 32,768^2 = 2.15e9 scans, beyond the bound of 2e9.
  nlohmann::json raw = {
      {"schema_version", 1},
      {"name", "gpt3-32k"},
      {"model", "gpt3-175b"},
      {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 4096}}},
      {"plan", {{"tp", 8}, {"pp", 16}, {"micro_batch", 1}, {"global_batch", 4096}, {"zero_stage", 1}}}};
  std::string why = reason_the_simulation_was_skipped(raw);
  EXPECT_NE(why.find("2.15e+09 scans"), std::string::npos) << why;
  EXPECT_NE(why.find("gradient reduction"), std::string::npos) << why;
  // ZeRO-3 on 2,048 nodes (DP128), 8 micro-batches: each layer's gathers and reduce-scatters run
  // in the 8 shard groups of the stage at once, 8 x 128 flows in flight: 64 times the scans of
  // one group's 128, 2.47e9 for the step.
  raw["cluster"]["nodes"] = 2048;
  raw["plan"]["zero_stage"] = 3;
  raw["plan"]["global_batch"] = 1024;
  why = reason_the_simulation_was_skipped(raw);
  EXPECT_NE(why.find("2.47e+09 scans"), std::string::npos) << why;
}

}  // namespace
}  // namespace trainsim::sim
