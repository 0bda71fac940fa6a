// Several training jobs on one fabric (`trainsim share`): each job
// gets whole nodes of one cluster (packed: job after job; interleaved: nodes dealt out in turn,
// so jobs share leaves and uplinks), keeps its own plan, and one step of every job is played at
// once on one platform: their p2p and gradient flows contend on shared switch links through
// max-min sharing. Playing a job alone on the same fabric and nodes gives the slowdown.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/specs.hpp"
#include "sim/topology.hpp"

namespace trainsim::sim {

enum class JobPlacement { kPacked, kInterleaved };
const char* to_string(JobPlacement p);
JobPlacement job_placement_from_string(const std::string& name, const std::string& path);

// The jobs as they run on the fabric: each scenario's cluster replaced by the fabric's with the
// job's node count (so each plan keeps its GPU count), and which nodes every job holds.
struct SharedSetup {
  ClusterSpec fabric;
  std::vector<Scenario> jobs;
  std::vector<std::vector<int>> nodes;  // per job, fabric node indices
  std::vector<std::string> warnings;
  std::string reason;  // not empty: the jobs cannot be placed (infeasible)
  long nodes_needed = 0;  // the jobs' nodes together
};

// fabric_nodes 0: the first scenario's cluster as it is; otherwise that cluster with this many
// nodes. A job uses tp x pp x dp x cp GPUs, which must fill whole nodes.
SharedSetup prepare_shared(const std::vector<Scenario>& scenarios, JobPlacement placement,
                           int fabric_nodes = 0);

// Per-node layout alone (exposed for tests): nodes of each job, or empty + reason.
std::vector<std::vector<int>> place_nodes(const std::vector<int>& nodes_per_job, int fabric_nodes,
                                          JobPlacement placement, std::string& reason);

struct SharedRun {
  std::vector<double> step_time_s;  // per job played (order of `play`)
  std::string reason;               // infeasible (a job does not build, or the fabric is cut)
  nlohmann::json shared_links = nlohmann::json::array();  // hottest links >= 2 jobs used
};

// Plays one step of setup.jobs[i] for every i in `play`, concurrently, on the fabric (with the
// first scenario's link faults; each job's straggler slows its own stage). Creates the
// process's Platform: one call per process.
SharedRun simulate_jobs(const SharedSetup& setup, const std::vector<int>& play, int hottest_links = 5);

}  // namespace trainsim::sim
