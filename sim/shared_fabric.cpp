#include "sim/shared_fabric.hpp"

#include <algorithm>
#include <memory>

#include "models/core/scenario_error.hpp"
#include "models/reliability/straggler.hpp"
#include "models/workload/workload.hpp"
#include "sim/link_stats.hpp"
#include "sim/platform.hpp"
#include "models/workload/placement.hpp"
#include "sim/step_player.hpp"
#include "sim/step_simulation.hpp"

namespace trainsim::sim {

const char* to_string(JobPlacement p) { return p == JobPlacement::kPacked ? "packed" : "interleaved"; }

JobPlacement job_placement_from_string(const std::string& name, const std::string& path) {
  if (name == "packed") return JobPlacement::kPacked;
  if (name == "interleaved") return JobPlacement::kInterleaved;
  throw ScenarioError(path, "unknown placement \"" + name + "\"; expected one of packed, interleaved");
}

std::vector<std::vector<int>> place_nodes(const std::vector<int>& need, int fabric_nodes,
                                          JobPlacement placement, std::string& reason) {
  long total = 0;
  for (int n : need) total += n;
  if (total > fabric_nodes) {
    reason = "the jobs need " + std::to_string(total) + " nodes but the fabric has " +
             std::to_string(fabric_nodes);
    return {};
  }
  std::vector<std::vector<int>> nodes(need.size());
  int next = 0;
  if (placement == JobPlacement::kPacked) {
    for (std::size_t j = 0; j < need.size(); ++j)
      for (int k = 0; k < need[j]; ++k) nodes[j].push_back(next++);
  } else {
    // Deal nodes out in turn to the jobs that still need some: 0 -> A, 1 -> B, 2 -> A, ...
    bool any = true;
    while (any) {
      any = false;
      for (std::size_t j = 0; j < need.size(); ++j)
        if (static_cast<int>(nodes[j].size()) < need[j]) {
          nodes[j].push_back(next++);
          any = true;
        }
    }
  }
  return nodes;
}

namespace {
constexpr int kMaxSharedFabricNodes = 16384;
}  // namespace

SharedSetup prepare_shared(const std::vector<Scenario>& scenarios, JobPlacement placement,
                           int fabric_nodes) {
  SharedSetup s;
  if (scenarios.empty()) throw ScenarioError("JOBS", "give at least one scenario");
  s.fabric = scenarios.front().cluster;
  if (fabric_nodes > 0) s.fabric.nodes = fabric_nodes;
  // The shared fabric is built whole (every GPU a SimGrid host, every NVLink, NIC and switch port
  // a link): about 1 GB and 20 s at 20,000 nodes. 16,384 nodes (131,072 GPUs at 8 a node) is the
  // largest fabric built; jobs that need more do not share one here.
  if (s.fabric.nodes > kMaxSharedFabricNodes)
    throw ScenarioError(fabric_nodes > 0 ? "--nodes" : "cluster.nodes",
                        "a shared fabric of " + std::to_string(s.fabric.nodes) + " nodes: at most " +
                            std::to_string(kMaxSharedFabricNodes) + " are built (give --nodes N for a smaller fabric)");
  const int gpn = s.fabric.gpus_per_node;
  std::vector<int> need;
  for (std::size_t j = 0; j < scenarios.size(); ++j) {
    Scenario job = scenarios[j];
    const std::string name = job.name.empty() ? "job " + std::to_string(j) : job.name;
    const long gpus = long{job.plan.tp} * job.plan.pp * job.plan.dp * job.plan.cp;
    if (gpus % gpn != 0) {
      s.reason = name + " uses " + std::to_string(gpus) + " GPUs, not a whole number of the fabric's " +
                 std::to_string(gpn) + "-GPU nodes";
      return s;
    }
    if (job.cluster.name != s.fabric.name || job.cluster.gpu.name != s.fabric.gpu.name ||
        job.cluster.gpus_per_node != gpn)
      s.warnings.push_back(name + ": its cluster (" + job.cluster.name + ", " + job.cluster.gpu.name +
                           ") is replaced by the shared fabric's (" + s.fabric.name + ", " +
                           s.fabric.gpu.name + ")");
    // The fabric's faults are the first scenario's (the fabric is its cluster); another job's
    // failed or degraded links would name links of a fabric that is not built.
    const FaultSpec& f = job.training.faults;
    if (j > 0 && f.enabled && (!f.failed_links.empty() || f.failed_switch_links > 0 || f.link_degradation.fraction > 0))
      throw ScenarioError(name + ": training.faults",
                          "failed or degraded links of the shared fabric are given in the first scenario, whose "
                          "cluster the fabric is; this job's would be ignored");
    job.cluster = s.fabric;
    job.cluster.nodes = static_cast<int>(gpus / gpn);
    need.push_back(job.cluster.nodes);
    s.jobs.push_back(std::move(job));
  }
  for (int n : need) s.nodes_needed += n;
  s.nodes = place_nodes(need, s.fabric.nodes, placement, s.reason);
  return s;
}

SharedRun simulate_jobs(const SharedSetup& setup, const std::vector<int>& play, int hottest_links) {
  SharedRun out;
  const int gpn = setup.fabric.gpus_per_node;
  TopologyOptions topo = topology_options(setup.fabric);
  topo.faults = link_faults(setup.jobs.front().training.faults);
  struct Job {
    Workload w;
    std::unique_ptr<RankPlacement> placement;
    StepOptions options;
  };
  std::vector<Job> jobs(play.size());
  std::vector<int> owner(static_cast<std::size_t>(setup.fabric.total_gpus()), -1);
  for (std::size_t i = 0; i < play.size(); ++i) {
    const Scenario& sc = setup.jobs[play[i]];
    Result r;
    if (!build_workload(sc, jobs[i].w, r)) {
      out.reason = (sc.name.empty() ? "job " + std::to_string(play[i]) : sc.name) + ": " + r.reason;
      return out;
    }
    const Workload& w = jobs[i].w;
    jobs[i].placement = std::make_unique<RankPlacement>(w.placement);
    std::vector<int> map(jobs[i].placement->gpus());
    for (int g = 0; g < static_cast<int>(map.size()); ++g) {
      map[g] = setup.nodes[play[i]][g / gpn] * gpn + g % gpn;
      owner[map[g]] = static_cast<int>(i);
    }
    jobs[i].placement->set_gpu_map(std::move(map));
    jobs[i].options.overlap_pp = sc.plan.overlap.pp;
    const StragglerEffect st = straggler_effect(sc);
    if (st.stage >= 0) jobs[i].options.device_speed = st.stage_speed;
  }
  Platform& platform = Platform::create(setup.fabric, topo);
  for (std::size_t i = 0; i < play.size(); ++i) {
    const std::string cut = platform.topology().disconnection(jobs[i].placement->all_gpus());
    if (!cut.empty()) {
      out.reason = setup.jobs[play[i]].name + ": training.faults: " + cut;
      return out;
    }
  }
  platform.link_stats().set_owners(owner, static_cast<int>(play.size()));
  std::vector<StepJob> steps;
  for (auto& j : jobs) steps.push_back(StepJob{&j.w, j.placement.get(), j.options});
  const std::vector<StepTimeline> tls = play_steps(platform, steps);
  double makespan = 0;
  for (const StepTimeline& tl : tls) {
    out.step_time_s.push_back(tl.step_end_s);
    makespan = std::max(makespan, tl.step_end_s);
  }
  // Links that carried bytes of at least two jobs, busiest (relative to bandwidth) first.
  const LinkStats& stats = platform.link_stats();
  const auto& links = platform.topology().links();
  std::vector<std::pair<double, DirectedLink>> shared;
  for (DirectedLink d = 0; d < static_cast<DirectedLink>(links.size() * 2); ++d) {
    int users = 0;
    for (int o = 0; o < stats.owners(); ++o) users += stats.owner_bytes(o, d) > 0;
    if (users >= 2) shared.emplace_back(stats.bytes(d) / links[link_of(d)].bandwidth_bytes_per_s, d);
  }
  std::sort(shared.begin(), shared.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (std::size_t k = 0; k < shared.size() && static_cast<int>(k) < hottest_links; ++k) {
    const DirectedLink d = shared[k].second;
    nlohmann::json per_job = nlohmann::json::array();
    for (int o = 0; o < stats.owners(); ++o) per_job.push_back(stats.owner_bytes(o, d));
    out.shared_links.push_back({{"link", directed_link_name(platform.topology(), d)},
                                {"kind", to_string(links[link_of(d)].kind)},
                                {"bytes", stats.bytes(d)},
                                {"bytes_per_job", per_job},
                                {"bandwidth_bytes_per_s", links[link_of(d)].bandwidth_bytes_per_s},
                                {"utilisation", makespan > 0 ? shared[k].first / makespan : 0.0}});
  }
  return out;
}

}  // namespace trainsim::sim
