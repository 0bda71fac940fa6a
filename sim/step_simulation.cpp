#include "sim/step_simulation.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "models/estimate/estimate.hpp"
#include "models/workload/cost_bounds.hpp"
#include "models/reliability/straggler.hpp"
#include "models/workload/workload.hpp"
#include "sim/forked_run.hpp"
#include "sim/link_stats.hpp"
#include "sim/platform.hpp"
#include "models/workload/placement.hpp"
#include "sim/step_player.hpp"
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

namespace {

StepOptions step_options(const Scenario& sc, const StepOptions& base) {
  StepOptions so = base;
  so.overlap_pp = sc.plan.overlap.pp;
  return so;
}

// One comparison run (in a forked child): the step time of `sc` on `topo` with `speeds`;
// -1 when the plan does not build or the fabric is cut.
std::vector<double> simulate_variant(const Scenario& sc, const TopologyOptions& topo,
                                     const std::vector<double>& speeds, const StepOptions& base) {
  Result r;
  Workload w;
  if (!build_workload(sc, w, r)) return {-1};
  Platform& platform = Platform::create(sc.cluster, topo);
  const RankPlacement& placement = w.placement;
  if (!platform.topology().disconnection(placement.all_gpus()).empty()) return {-1};
  StepOptions so = step_options(sc, base);
  so.progress = nullptr;
  so.device_speed = speeds;
  return {play_step(platform, w, placement, so).step_end_s};
}

// The compute ops and collectives the step player would start (every pass of every chunk of
// every device, every micro-batch), and what its collectives' flows cost the engine
// (collective_flow_scans over the flows in flight: the representative groups' in-layer
// collectives, the data-parallel kinds' in every group of their stage, the gradient reduction);
// empty when within both bounds.
constexpr double kMaxSimulatedProgramOps = 2e7;
// About a minute of engine time on a 2-core VM at the measured 3e7 scans a second.
constexpr double kMaxSimulatedCollectiveScans = 2e9;
std::string beyond_simulated_op_budget(const Workload& w) {
  double ops = 0, scans = 0;
  for (const DeviceProgram& d : w.programs)
    for (const ChunkProgram& ch : d.chunks)
      for (const PassProgram& p : ch.pass)
        for (const OpBlock& b : p.blocks) ops += static_cast<double>(b.compute.size() + b.comm.size()) * b.repeat;
  // A data-parallel kind's collective runs in every group of its stage at once (step_player's
  // plan_groups: their flows share the NICs), so its flows in flight are its group's times the
  // stage's groups of that kind, and its scans that count squared. A GPT-3 175B ZeRO-3 step on
  // 16,384 A100 (TP8 PP16, 4 micro-batches: 1.2e9 scans by this count) played in 40 s.
  const std::array<double, kCommGroups> group_scans = collective_scans_by_group(w);
  const double stage_gpus = static_cast<double>(w.tp) * w.cp * w.dp;
  for (int k = 0; k < kCommGroups; ++k) {
    const double groups =
        data_parallel_kind(static_cast<CommGroup>(k)) ? stage_gpus / std::max(1, w.group_shapes[k].ranks) : 1;
    scans += group_scans[k] * groups * groups;
  }
  ops *= w.micro_batches;
  scans *= w.micro_batches;
  // The ZeRO-0/1/2 gradient reduction runs in every data-parallel group of every stage
  // (step_player: each bucket when its layers' weight gradients are done; a device's chunks one
  // after another), one flow per rank of each group's ring, so about one flow per GPU in flight
  // together, and every completion scans them all (SimGrid 3.32 keeps a detached comm in one
  // list that each completion walks; 3.34 replaced it with a set); ZeRO-1/2 run a reduce-scatter
  // and an all-gather. Measured (GPT-3 175B, TP8 PP16 ZeRO-1, 1F1B): 16,384 A100 (5.4e8 scans by
  // this count) played in 13 s, 32,768 (2.1e9) in over a minute, 65,536 (8.6e9) in 228 s.
  if (w.zero_stage < 3 && w.dp > 1) {
    const double groups = static_cast<double>(w.tp) * w.cp * w.pp * (w.expert_dp_group.ranks > 1 ? 2 : 1);
    const double flows = collective_flows(CollectiveOp::kAllReduce, w.dp) * groups;
    scans += (w.zero_stage >= 1 ? 2 : 1) * collective_flow_scans(flows);
  }
  char buf[400];
  if (ops > kMaxSimulatedProgramOps) {
    std::snprintf(buf, sizeof buf,
                  "the step has %.3g compute ops and collectives to play, beyond the simulate tier's bound of "
                  "%.0e: the estimate answers (fewer micro-batches, or --fidelity estimate)",
                  ops, kMaxSimulatedProgramOps);
    return buf;
  }
  if (scans > kMaxSimulatedCollectiveScans) {
    std::snprintf(buf, sizeof buf,
                  "the step's collectives start flows that would cost the flow engine %.3g scans (an all-to-all "
                  "over n ranks is n(n-1) flows in flight at once, a gradient reduction one per GPU), beyond the "
                  "simulate tier's bound of %.0e: the estimate answers (smaller EP groups, fewer micro-batches or "
                  "GPUs, or --fidelity estimate)",
                  scans, kMaxSimulatedCollectiveScans);
    return buf;
  }
  return {};
}

Result fall_back_to_estimate(const Scenario& sc, const std::string& why, nlohmann::json& extra) {
  Result r = estimate(sc);
  r.warnings.push_back("simulate tier skipped: " + why);
  extra["simulation"] = {{"skipped", why}};
  return r;
}

}  // namespace

Result simulate_step(const Scenario& sc, const SimulateOptions& options, nlohmann::json& extra) {
  Result r;
  r.fidelity = "simulate";
  const FaultSpec& faults = sc.training.faults;
  // Stragglers and rebalancing (models/straggler.hpp): the run plays the rebalanced split.
  const StragglerEffect straggler = straggler_effect(sc);
  const bool slow = straggler.stage >= 0;
  const bool rebalanced = faults.enabled && faults.rebalance && !straggler.rebalanced_layers_per_stage.empty();
  const Scenario run_sc = rebalanced ? rebalanced_scenario(sc, straggler) : sc;
  TopologyOptions topo = topology_options(sc.cluster);
  topo.faults = link_faults(faults);
  const bool link_faults_on = topo.faults.any();

  // The simulate tier plays every op: beyond its stated bounds (models/workload/cost_bounds.hpp,
  // and the in-pass ops below) it would run for minutes and GiBs, so the estimate answers, with
  // the reason.
  const CostCheck bounds = check_cost_bounds(run_sc, CostTier::kSimulate);
  if (!bounds.within) return fall_back_to_estimate(run_sc, bounds.reason, extra);
  Workload w;
  if (!build_workload(run_sc, w, r)) return r;
  // A plan that cannot run (it does not fit in memory) has no step to play: the estimate's figures
  // of what it would need, with the reason, in the time of a closed form instead of a simulation.
  if (!r.feasible) return fall_back_to_estimate(run_sc, "the plan cannot run: " + r.reason, extra);
  if (const std::string beyond = beyond_simulated_op_budget(w); !beyond.empty())
    return fall_back_to_estimate(run_sc, beyond, extra);
  const RankPlacement& placement = w.placement;
  if (link_faults_on) {
    // Bad link names are input errors (before any engine or child); a cut fabric is infeasible.
    const Topology check(sc.cluster, topo);
    const std::string cut = check.disconnection(placement.all_gpus());
    if (!cut.empty()) {
      r.feasible = false;
      r.reason = "training.faults: " + cut;
      extra["faults"] = fault_report(sc, straggler, rebalanced, check, FaultRunFigures{});
      return r;
    }
  }

  // The comparisons, forked before this process creates its engine and run alongside it.
  FaultRunFigures figs;
  ForkedRun healthy_run, nominal_run, unbalanced_run;
  if (faults.enabled && options.fault_comparisons) {
    const std::vector<double> speeds = slow ? straggler.stage_speed : std::vector<double>{};
    if (link_faults_on) {
      TopologyOptions healthy = topo;
      healthy.faults = LinkFaults{};
      healthy_run = ForkedRun::start([&] { return simulate_variant(run_sc, healthy, speeds, options.step); });
      figs.healthy_fabric_pending = true;
    }
    if (slow) {
      nominal_run = ForkedRun::start([&] { return simulate_variant(sc, topo, {}, options.step); });
      figs.no_straggler_pending = true;
    }
    if (rebalanced) {
      unbalanced_run = ForkedRun::start([&] { return simulate_variant(sc, topo, speeds, options.step); });
      figs.no_rebalance_pending = true;
    }
  }

  Platform& platform = Platform::create(sc.cluster, topo);
  if (!options.trace_path.empty()) platform.link_stats().enable_sampling(true);
  StepOptions so = step_options(run_sc, options.step);
  if (slow) so.device_speed = straggler.stage_speed;
  if (options.progress && !so.progress)
    so.progress = [](double f) {
      std::fprintf(stderr, "{\"progress\": %.3f}\n", f);
      std::fflush(stderr);
    };
  const StepTimeline tl = play_step(platform, w, placement, so);
  compose_simulated_result(run_sc, w, tl, r, extra);

  // The hottest links of every kind (NVLink, NIC, switch), not only the network's.
  const auto hot = platform.link_stats().hottest_by_kind(options.hottest_links, 0, tl.step_end_s);
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
  compare_with_estimate(estimate(run_sc), r, extra, extra);

  if (faults.enabled) {
    figs.step_time_s = tl.step_end_s;
    auto collect = [](ForkedRun& run, bool pending, double& into, std::string& error) {
      if (!pending) return;
      const auto v = run.wait();
      if (!v.empty() && v[0] > 0)
        into = v[0];
      else
        error += (error.empty() ? "" : "; ") + (run.error().empty() ? "comparison run infeasible" : run.error());
    };
    collect(healthy_run, figs.healthy_fabric_pending, figs.healthy_fabric_step_time_s, figs.error);
    collect(nominal_run, figs.no_straggler_pending, figs.no_straggler_step_time_s, figs.error);
    collect(unbalanced_run, figs.no_rebalance_pending, figs.no_rebalance_step_time_s, figs.error);
    figs.stats = &platform.link_stats();
    figs.transfers_started = platform.transfers_started();
    figs.transfers_rerouted = platform.transfers_rerouted();
    extra["faults"] = fault_report(sc, straggler, rebalanced, platform.topology(), figs);
    for (const auto& line : extra["faults"]["summary"]) r.warnings.push_back(line.get<std::string>());
  }

  if (!options.trace_path.empty()) {
    std::ofstream out(options.trace_path);
    if (!out) throw std::runtime_error("cannot write trace file " + options.trace_path);
    write_step_trace(out, tl, &platform.link_stats(), ids);
    extra["trace"] = options.trace_path;
    if (const double stopped = platform.link_stats().sampling_stopped_s(); stopped >= 0) {
      char text[240];
      std::snprintf(text, sizeof text,
                    "the trace's link utilisation counters end at %.3f s of the %.3f s step: the run's "
                    "%zu utilisation samples were spent (the compute and transfer tracks are whole)",
                    stopped, tl.step_end_s, LinkStats::kMaxSamples);
      r.warnings.push_back(text);
    }
  }
  return r;
}

}  // namespace trainsim::sim
