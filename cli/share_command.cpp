// `trainsim share A.json B.json [...]`: several jobs on one fabric. Each job gets whole
// nodes of the first scenario's cluster (packed or interleaved), keeps its own plan, and one
// step of all of them is simulated at once (sim/shared_fabric.hpp); each job is also simulated
// alone on the same nodes, in a forked child (one SimGrid engine per process), to give its
// slowdown. Needs the SimGrid layer (cli/CMakeLists.txt leaves this file out without it).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "models/estimate/estimate.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/core/units.hpp"
#include "sim/forked_run.hpp"
#include "sim/shared_fabric.hpp"

namespace trainsim::cli {
namespace {

std::string printf_string(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string seconds(double s) { return s >= 1 ? printf_string("%.3f s", s) : printf_string("%.2f ms", s * 1e3); }

struct ShareOptions {
  std::vector<std::string> files, preset_dirs;
  std::string placement = "packed";
  bool json = false;
  int nodes = 0;
};

void declare(CLI::App& app, ShareOptions& o) {
  app.description(
      "Several training jobs on one cluster: every job gets whole nodes of the FIRST scenario's\n"
      "cluster (its fabric; --nodes N resizes it) and keeps its own plan (tp x pp x dp x cp GPUs).\n"
      "One step of every job is simulated concurrently on the shared fabric, where their p2p and\n"
      "gradient flows contend on shared switch links, and each job alone on the same nodes.\n"
      "Reports per job the step time alone and shared, the slowdown, and the hottest shared links.");
  app.add_option("JOBS", o.files, "the scenario files, one per job")->required();
  app.add_option("--placement", o.placement,
                 "packed: job k on the nodes after job k-1's; interleaved: nodes dealt out to the\n"
                 "jobs in turn (they share leaves)")
      ->type_name("P")
      ->default_str(o.placement);
  app.add_option("--nodes", o.nodes, "fabric size in nodes (default: the first scenario's cluster.nodes)")
      ->type_name("N")
      ->check(CLI::Range(1, 16384));
  add_json_flag(app, o.json, "one JSON object on stdout");
  add_presets_option(app, o.preset_dirs);
}

int share(ShareOptions& o) {
  const std::vector<std::string>& files = o.files;
  const std::string& placement_name = o.placement;
  const bool as_json = o.json;
  const int nodes = o.nodes;
  LoadOptions options;
  options.preset_dirs = o.preset_dirs;
  const sim::JobPlacement placement = sim::job_placement_from_string(placement_name, "--placement");
  for (const auto& d : default_preset_dirs()) options.preset_dirs.push_back(d);

  std::vector<Scenario> scenarios;
  for (const auto& f : files) {
    scenarios.push_back(load_scenario_file(f, options));
    if (scenarios.back().name.empty()) scenarios.back().name = f;
  }
  const sim::SharedSetup setup = sim::prepare_shared(scenarios, placement, nodes);

  nlohmann::json out = {{"placement", sim::to_string(placement)},
                        {"fabric", {{"cluster", setup.fabric.name},
                                    {"nodes", setup.fabric.nodes},
                                    {"gpus_per_node", setup.fabric.gpus_per_node},
                                    {"topology", setup.fabric.network.topology}}},
                        {"warnings", setup.warnings},
                        {"trainsim_version", TRAINSIM_VERSION}};
  auto infeasible = [&](const std::string& reason) {
    out["feasible"] = false;
    out["reason"] = reason;
    if (as_json)
      std::cout << out.dump(2) << "\n";
    else
      std::printf("infeasible: %s\n", reason.c_str());
    return kExitInfeasible;
  };
  if (!setup.reason.empty()) {
    if (setup.nodes_needed > setup.fabric.nodes)
      return infeasible(setup.reason + " (--nodes " + std::to_string(setup.nodes_needed) +
                        " sizes the first job's cluster to hold them)");
    return infeasible(setup.reason);
  }
  for (std::size_t j = 0; j < setup.jobs.size(); ++j) {
    const Result est = estimate(setup.jobs[j]);
    if (!est.feasible) return infeasible(setup.jobs[j].name + ": " + est.reason);
  }

  // Each job alone (children, started before this process creates its engine), then all.
  std::vector<sim::ForkedRun> alone;
  for (std::size_t j = 0; j < setup.jobs.size(); ++j)
    alone.push_back(sim::ForkedRun::start([&setup, j] {
      const sim::SharedRun r = sim::simulate_jobs(setup, {static_cast<int>(j)});
      return r.reason.empty() ? r.step_time_s : std::vector<double>{-1};
    }));
  std::vector<int> all;
  for (std::size_t j = 0; j < setup.jobs.size(); ++j) all.push_back(static_cast<int>(j));
  const sim::SharedRun shared = sim::simulate_jobs(setup, all);
  std::vector<double> alone_s;
  for (auto& run : alone) {
    const auto v = run.wait();
    alone_s.push_back(v.empty() ? -1 : v[0]);
  }
  if (!shared.reason.empty()) return infeasible(shared.reason);

  nlohmann::json jobs = nlohmann::json::array();
  for (std::size_t j = 0; j < setup.jobs.size(); ++j) {
    const Scenario& sc = setup.jobs[j];
    nlohmann::json job = {{"name", sc.name},
                          {"file", files[j]},
                          {"gpus", sc.cluster.total_gpus()},
                          {"nodes", setup.nodes[j]},
                          {"plan", {{"tp", sc.plan.tp}, {"pp", sc.plan.pp}, {"dp", sc.plan.dp}, {"cp", sc.plan.cp}}},
                          {"step_time_shared_s", shared.step_time_s[j]}};
    if (alone_s[j] > 0) {
      job["step_time_alone_s"] = alone_s[j];
      job["slowdown_pct"] = 100 * (shared.step_time_s[j] / alone_s[j] - 1);
    } else {
      job["error"] = "the run alone failed";
    }
    jobs.push_back(job);
  }
  out["feasible"] = true;
  out["jobs"] = jobs;
  out["shared_links"] = shared.shared_links;
  if (as_json) {
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("%zu jobs on %s (%d nodes x %d GPUs, %s), %s placement\n", setup.jobs.size(),
              setup.fabric.name.c_str(), setup.fabric.nodes, setup.fabric.gpus_per_node,
              setup.fabric.network.topology.c_str(), sim::to_string(placement));
  for (const auto& w : setup.warnings) std::printf("  warning: %s\n", w.c_str());
  std::printf("\n  %-28s %5s  %-16s %12s %12s %9s\n", "job", "GPUs", "nodes", "alone", "shared", "slowdown");
  for (const auto& job : jobs) {
    std::string node_list;
    for (const auto& n : job["nodes"]) node_list += (node_list.empty() ? "" : ",") + std::to_string(n.get<int>());
    if (node_list.size() > 16) node_list = node_list.substr(0, 13) + "...";
    const double a = job.value("step_time_alone_s", -1.0), s = job["step_time_shared_s"].get<double>();
    std::printf("  %-28s %5d  %-16s %12s %12s %9s\n", job["name"].get<std::string>().c_str(),
                job["gpus"].get<int>(), node_list.c_str(), a > 0 ? seconds(a).c_str() : "failed",
                seconds(s).c_str(),
                a > 0 ? printf_string("%+.1f%%", job["slowdown_pct"].get<double>()).c_str() : "-");
  }
  if (!shared.shared_links.empty()) {
    std::printf("\n  hottest shared links:\n");
    for (const auto& l : shared.shared_links) {
      std::string per;
      for (std::size_t k = 0; k < l["bytes_per_job"].size(); ++k)
        per += (k ? " / " : "") + units::format_bytes_si(l["bytes_per_job"][k].get<double>());
      std::printf("    %-28s %5.1f%% busy  %s by job\n", l["link"].get<std::string>().c_str(),
                  100 * l["utilisation"].get<double>(), per.c_str());
    }
  } else {
    std::printf("\n  no link carries traffic of two jobs\n");
  }
  return kExitOk;
}

const CommandRegistrar kRegistrar("share", "several jobs on one fabric: step time alone vs shared", declare, share);

}  // namespace
}  // namespace trainsim::cli
