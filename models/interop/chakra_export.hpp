// Chakra execution traces (MLCommons Chakra, et_def.proto: Node {id, name, type, ctrl_deps,
// data_deps, duration_micros, attr[comm_type, comm_size, comm_src, comm_dst, comm_tag]}) in JSON
// form, one per rank of the representative pipeline (data-parallel rank 0, TP rank 0): what
// the workload generator (workload.hpp) computes, in the order the schedule (schedule_order.hpp)
// plays it. Other simulators (ASTRA-sim and its Chakra feeders) can read the same workload.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/specs.hpp"

namespace trainsim {

// Node types and collective names as et_def.proto spells them.
constexpr const char* kChakraComp = "COMP_NODE";
constexpr const char* kChakraCommColl = "COMM_COLL_NODE";
constexpr const char* kChakraSend = "COMM_SEND_NODE";
constexpr const char* kChakraRecv = "COMM_RECV_NODE";

// One trace per pipeline stage (index = stage). Throws ScenarioError when the plan cannot be
// built (the workload's infeasibility reason) or its trace would pass export-chakra's bound
// (workload/cost_bounds.hpp: 5e5 nodes), checked before any work. Each trace: {"schema": "chakra-json", "rank",
// "global_rank", "pipeline_stage", "scenario", "nodes": [...]}. Node order is the schedule's;
// ctrl_deps chain a rank's nodes in that order, data_deps name the node whose output is consumed
// (recv -> the forward/backward that uses it -> the send of its result; the last backward ->
// the data-parallel all-reduce). Send/recv pairs share comm_tag.
std::vector<nlohmann::json> export_chakra(const Scenario& scenario);

}  // namespace trainsim
