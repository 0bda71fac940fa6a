#include "models/interop/chakra_export.hpp"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/estimate/estimate.hpp"
#include "models/workload/cost_bounds.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario scenario(const json& plan) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json s = {{"schema_version", 1}, {"model", "gpt-1.7b"},
            {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 4}}}, {"plan", plan}};
  return parse_scenario(resolve_scenario_json(s, o));
}

struct Counts {
  int comp = 0, send = 0, recv = 0, coll = 0, forward = 0, backward = 0;
};

Counts check_trace(const json& t) {
  Counts c;
  std::set<int64_t> ids;
  for (const json& n : t["nodes"]) {
    const int64_t id = n["id"].get<int64_t>();
    for (const char* k : {"data_deps", "ctrl_deps"})
      for (const json& d : n[k]) EXPECT_TRUE(ids.count(d.get<int64_t>())) << "node " << id << " " << k;
    ids.insert(id);
    const std::string type = n["type"];
    if (type == "COMP_NODE") {
      ++c.comp;
      EXPECT_GE(n["duration_micros"].get<double>(), 0);
      if (n["pass"] == "forward") ++c.forward;
      else ++c.backward;
    } else if (type == "COMM_SEND_NODE") {
      ++c.send;
      EXPECT_GT(n["comm_size"].get<double>(), 0);
    } else if (type == "COMM_RECV_NODE") {
      ++c.recv;
    } else if (type == "COMM_COLL_NODE") {
      ++c.coll;
      const std::string kind = n["comm_type"];
      EXPECT_TRUE(kind == "ALL_REDUCE" || kind == "REDUCE_SCATTER" || kind == "ALL_GATHER") << kind;
    } else {
      ADD_FAILURE() << "unknown node type " << type;
    }
  }
  return c;
}

TEST(ChakraExport, OneFileftPerStageWithOneForwardAndBackwardPerMicroBatch) {
  // 32 GPUs: TP 1, PP 4, DP 8; 64 / (2 x 8) = 4 micro-batches.
  const auto traces = export_chakra(scenario({{"tp", 1}, {"pp", 4}, {"dp", 8}, {"micro_batch", 2},
                                              {"global_batch", 64}, {"schedule", "1f1b"}}));
  ASSERT_EQ(traces.size(), 4u);
  std::map<int64_t, int> sends, recvs;  // tag -> count
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(traces[r]["rank"], r);
    const Counts c = check_trace(traces[r]);
    EXPECT_EQ(c.forward, 4);
    EXPECT_EQ(c.backward, 4);
    EXPECT_EQ(c.coll, 1);
    // Activations go down, gradients up: inner stages send and receive 2 per micro-batch.
    EXPECT_EQ(c.send, (r < 3 ? 4 : 0) + (r > 0 ? 4 : 0));
    EXPECT_EQ(c.recv, (r > 0 ? 4 : 0) + (r < 3 ? 4 : 0));
    for (const json& n : traces[r]["nodes"]) {
      if (n["type"] == "COMM_SEND_NODE") ++sends[n["comm_tag"].get<int64_t>()];
      if (n["type"] == "COMM_RECV_NODE") {
        ++recvs[n["comm_tag"].get<int64_t>()];
        EXPECT_EQ(n["comm_dst"], r);
      }
    }
  }
  EXPECT_EQ(sends, recvs);  // every send has exactly one matching receive
}

TEST(ChakraExport, InterleavedAndZeroBubbleSchedules) {
  const auto inter = export_chakra(scenario({{"tp", 1}, {"pp", 4}, {"dp", 8}, {"vpp", 2},
                                             {"micro_batch", 2}, {"global_batch", 64},
                                             {"schedule", "interleaved"}}));
  ASSERT_EQ(inter.size(), 4u);
  for (const auto& t : inter) {
    const Counts c = check_trace(t);
    EXPECT_EQ(c.forward, 8);  // 4 micro-batches x 2 chunks
    EXPECT_EQ(c.backward, 8);
  }
  const auto zb = export_chakra(scenario({{"tp", 1}, {"pp", 4}, {"dp", 8}, {"micro_batch", 2},
                                          {"global_batch", 64}, {"schedule", "zb-h1"}}));
  for (const auto& t : zb) {
    const Counts c = check_trace(t);
    EXPECT_EQ(c.forward, 4);
    EXPECT_EQ(c.backward, 8);  // B and W apart
  }
}

TEST(ChakraExport, ShardedOptimizerReduceScattersGradientsThenAllGathersParameters) {
  // ZeRO-1 (Megatron's distributed optimizer): after the last backward each stage reduce-scatters
  // its gradients, and the all-gather of the updated parameters depends on it; bf16 training
  // reduces fp32 gradients (4 bytes each) and gathers bf16 parameters (2 bytes each).
  const Scenario s = scenario({{"tp", 1}, {"pp", 4}, {"dp", 8}, {"micro_batch", 2}, {"global_batch", 64},
                               {"schedule", "1f1b"}, {"zero_stage", 1}});
  for (const auto& t : export_chakra(s)) {
    const Counts c = check_trace(t);
    EXPECT_EQ(c.coll, 2);
    const json* rs = nullptr;
    const json* ag = nullptr;
    for (const json& n : t["nodes"]) {
      if (n["type"] != "COMM_COLL_NODE") continue;
      (n["comm_type"] == "REDUCE_SCATTER" ? rs : ag) = &n;
    }
    ASSERT_TRUE(rs && ag);
    EXPECT_EQ((*ag)["comm_type"], "ALL_GATHER");
    EXPECT_EQ((*ag)["data_deps"], json::array({(*rs)["id"]}));
    EXPECT_DOUBLE_EQ((*rs)["comm_size"].get<double>(), 2 * (*ag)["comm_size"].get<double>());
    EXPECT_GT((*rs)["comm_size"].get<double>(), 0);
  }
}

// ZeRO-3 reduces each layer's gradients as its backward ends and gathers its parameters before
// it runs: no step-end collective of the whole model (that would move the model's gradients a
// second time), the layers' exposed share inside the passes' durations.
TEST(ChakraExport, ZeroThreeHasNoStepEndReductionOfTheWholeModel) {
  json plan = {{"tp", 1}, {"pp", 2}, {"dp", 16}, {"micro_batch", 1}, {"global_batch", 64}, {"schedule", "1f1b"},
               {"zero_stage", 3}};
  for (const auto& t : export_chakra(scenario(plan))) EXPECT_EQ(check_trace(t).coll, 0);
  plan["zero_stage"] = 2;
  for (const auto& t : export_chakra(scenario(plan))) EXPECT_EQ(check_trace(t).coll, 2);
  // Sharded within a node (plan.dp_shard): the shard's all-reduce across the replicas sits
  // between the reduce-scatter and the all-gather, over the replica group.
  plan["dp_shard"] = 8;
  for (const auto& t : export_chakra(scenario(plan))) {
    EXPECT_EQ(check_trace(t).coll, 3);
    std::vector<const json*> coll;
    for (const json& n : t["nodes"])
      if (n["type"] == "COMM_COLL_NODE") coll.push_back(&n);
    ASSERT_EQ(coll.size(), 3u);
    EXPECT_EQ((*coll[1])["comm_type"], "ALL_REDUCE");
    EXPECT_EQ((*coll[1])["comm_group_size"], 2);
    EXPECT_EQ((*coll[0])["comm_group_size"], 8);
    EXPECT_EQ((*coll[1])["data_deps"], json::array({(*coll[0])["id"]}));
    EXPECT_EQ((*coll[2])["data_deps"], json::array({(*coll[1])["id"]}));
  }
}

// The closed-form counts of workload/cost_bounds.hpp (what the bound is checked on) are the
// nodes the exporter writes: a comp node per op, a send and a recv per hand-off.
// DualPipe's overlapped pairs: a rank's chain of compute nodes lasts what its stage is busy in the
// playback (a pair's time shared between its two nodes), not the two ops' times alone.
TEST(ChakraExport, APairsNodesShareThePairsTime) {
  const json plan = {{"tp", 1}, {"pp", 4}, {"dp", 8}, {"ep", 8}, {"schedule", "dualpipe"}, {"global_batch", 64},
                     {"zero_stage", 1}, {"recompute", "full"}};
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  const Scenario sc = parse_scenario(resolve_scenario_json(
      {{"schema_version", 1}, {"model", "mixtral-8x7b"}, {"cluster", {{"base", "dgx-h100-superpod"}, {"nodes", 4}}},
       {"plan", plan}},
      o));
  Workload w;
  Result r;
  ASSERT_TRUE(build_workload(sc, w, r)) << r.reason;
  const Timeline t = pipeline_timeline(w, w.p2p_s);
  const std::vector<json> traces = export_chakra(sc);
  ASSERT_EQ(traces.size(), 4u);
  for (int d = 0; d < 4; ++d) {
    double comp_us = 0;
    for (const json& n : traces[d]["nodes"])
      if (n["type"] == "COMP_NODE") comp_us += n["duration_micros"].get<double>();
    EXPECT_NEAR(comp_us * 1e-6, t.busy_s[d], 1e-9 * t.busy_s[d]) << "rank " << d;
  }
}

TEST(ChakraExport, NodeCountsAreTheCostBoundsCounts) {
  for (const char* schedule : {"1f1b", "interleaved", "zb-h1", "gpipe"}) {
    SCOPED_TRACE(schedule);
    const Scenario s = scenario({{"tp", 2}, {"pp", 4}, {"dp", 4}, {"vpp", std::string(schedule) == "interleaved" ? 2 : 1},
                                 {"micro_batch", 1}, {"global_batch", 32}, {"schedule", schedule}});
    double nodes = 0;
    for (const auto& t : export_chakra(s)) {
      const Counts c = check_trace(t);
      nodes += c.comp + c.send + c.recv;
    }
    EXPECT_EQ(nodes, plan_cost(s).chakra_nodes);
  }
}

TEST(ChakraExport, RefusesATraceBeyondItsBoundBeforeBuildingIt) {
  // 10^9 micro-batches: the trace would hold 1.6e10 nodes (tens of TB); refused at once.
  const Scenario s = scenario({{"tp", 1}, {"pp", 4}, {"dp", 8}, {"micro_batch", 1},
                               {"global_batch", int64_t{8} * 1000000000}});
  try {
    export_chakra(s);
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("plan: cannot export this plan: 1e+09 micro-batches x 4 pipeline stages"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("beyond the 5e+05 export-chakra plays"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
