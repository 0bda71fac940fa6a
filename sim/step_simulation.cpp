#include "sim/step_simulation.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "models/estimate.hpp"
#include "models/workload.hpp"
#include "sim/link_stats.hpp"
#include "sim/platform.hpp"
#include "sim/step_placement.hpp"
#include "sim/step_report.hpp"
#include "sim/step_trace.hpp"

namespace trainsim::sim {

TopologyOptions topology_options(const ClusterSpec& c) {
  TopologyOptions o;
  if (c.network.switch_radix > 0) o.switch_radix = c.network.switch_radix;
  o.fat_tree_tiers = c.network.fat_tree_tiers;
  o.torus_dims = c.network.torus_dims;
  if (c.network.dragonfly_nodes_per_router > 0)
    o.dragonfly_nodes_per_router = c.network.dragonfly_nodes_per_router;
  o.routing = routing_policy_from_string(c.network.routing.empty() ? "ecmp" : c.network.routing,
                                         "cluster.network.routing");
  o.pcie_links = false;
  return o;
}

Result simulate_step(const Scenario& sc, const SimulateOptions& options, nlohmann::json& extra) {
  Result r;
  r.fidelity = "simulate";
  Workload w;
  if (!build_workload(sc, w, r)) return r;
  Platform& platform = Platform::create(sc.cluster, topology_options(sc.cluster));
  if (!options.trace_path.empty()) platform.link_stats().enable_sampling(true);
  const RankPlacement placement(w.tp, w.cp, w.dp, w.pp, sc.plan.placement);
  StepOptions so = options.step;
  so.overlap_pp = sc.plan.overlap.pp;
  so.zero_stage = sc.plan.zero_stage;
  if (options.progress && !so.progress)
    so.progress = [](double f) {
      std::fprintf(stderr, "{\"progress\": %.3f}\n", f);
      std::fflush(stderr);
    };
  const StepTimeline tl = play_step(platform, w, placement, so);
  compose_simulated_result(sc, w, tl, r, extra);

  const auto hot = platform.link_stats().hottest(options.hottest_links, 0, tl.step_end_s);
  nlohmann::json links = nlohmann::json::array();
  std::vector<DirectedLink> ids;
  for (const LinkLoad& l : hot) {
    links.push_back({{"link", l.name},
                     {"kind", to_string(l.kind)},
                     {"bytes", l.bytes},
                     {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                     {"utilisation", l.busy_share}});
    ids.push_back(l.link);
  }
  extra["hottest_links"] = links;
  compare_with_estimate(estimate(sc), r, extra, extra);

  if (!options.trace_path.empty()) {
    std::ofstream out(options.trace_path);
    if (!out) throw std::runtime_error("cannot write trace file " + options.trace_path);
    write_step_trace(out, tl, &platform.link_stats(), ids);
    extra["trace"] = options.trace_path;
  }
  return r;
}

}  // namespace trainsim::sim
