#include "sim/step_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "models/estimate/estimate.hpp"
#include "sim/link_stats.hpp"

namespace trainsim::sim {
namespace {

std::string gib(double bytes) {
  const long long tenths = std::llround(bytes / (1024.0 * 1024 * 1024) * 10);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " GiB";
}

struct StageFigures {
  double idle_s = 0;
  double pp_wait_s = 0;        // idle while the next op's p2p input was in flight (+ blocked sends)
  double pp_contention_s = 0;  // the part of pp_wait_s beyond the contention-free transfer time
  double dp_busy_s = 0;
  double dp_contention_exposed_s = 0;
};

struct ContentionFigures {
  int beside = 0, alone = 0;
  double slowdown_beside = 0, slowdown_alone = 0;  // mean played / contention-free time
};

// Splits a purpose's network collectives by whether another purpose's network traffic was in
// flight during them, with the mean ratio of played to contention-free time of each set.
ContentionFigures contention_of(const StepTimeline& tl, CommPurpose p) {
  // In-pass network collectives and the gradient buckets (data-parallel traffic) alike.
  std::vector<StepCommRecord> all = tl.network_comms;
  for (const StepBucketRecord& b : tl.buckets)
    all.push_back({b.stage, CommPurpose::kDp, b.start_s, b.end_s, b.closed_form_s});
  std::vector<std::pair<double, double>> others;
  for (const StepCommRecord& c : all)
    if (c.purpose != p) others.emplace_back(c.start_s, c.end_s);
  std::sort(others.begin(), others.end());
  // Union of the others' intervals, for an overlap query by binary search.
  std::vector<std::pair<double, double>> merged;
  for (const auto& iv : others) {
    if (!merged.empty() && iv.first <= merged.back().second) merged.back().second = std::max(merged.back().second, iv.second);
    else merged.push_back(iv);
  }
  ContentionFigures f;
  for (const StepCommRecord& c : all) {
    if (c.purpose != p || c.contention_free_s <= 0) continue;
    auto it = std::lower_bound(merged.begin(), merged.end(), std::make_pair(c.end_s, 0.0));
    bool overlap = false;
    if (it != merged.begin()) overlap = std::prev(it)->second > c.start_s;
    const double ratio = (c.end_s - c.start_s) / c.contention_free_s;
    if (overlap) ++f.beside, f.slowdown_beside += ratio;
    else ++f.alone, f.slowdown_alone += ratio;
  }
  if (f.beside) f.slowdown_beside /= f.beside;
  if (f.alone) f.slowdown_alone /= f.alone;
  return f;
}

// The idle time the schedule itself leaves stage `c` with its ops as the simulation timed them
// (each stage's mean F, B and W) and every transfer instant: the pipeline's bubble, as the
// estimate's playback defines it. The rest of the stage's idle time it spent waiting for
// transfers, its own or, through the stages between, slower ones elsewhere (a 1F1B stage holds
// p - s micro-batches, so a slow boundary downstream paces it). Negative where the replay does
// not apply: a schedule that pairs a forward with a backward (its pairs' times are not single
// ops').
double schedule_bubble_s(const Workload& w, const StepTimeline& tl, int c) {
  if (w.pp <= 1 || w.schedule->overlaps_forward_backward() || w.schedule->bidirectional()) return -1;
  const std::size_t n = tl.busy_s.size();
  std::vector<std::array<double, 3>> sum(n, {0, 0, 0});
  std::vector<std::array<int, 3>> count(n, {0, 0, 0});
  for (const StepOpRecord& op : tl.ops) {
    const int k = static_cast<int>(op.op.kind);
    sum[op.stage][k] += op.end_s - op.start_s;
    ++count[op.stage][k];
  }
  std::vector<StageCosts> costs(n);
  for (std::size_t d = 0; d < n; ++d) {
    auto mean = [&](PipeOpKind kind) {
      const int k = static_cast<int>(kind);
      return count[d][k] > 0 ? sum[d][k] / count[d][k] : 0.0;
    };
    costs[d] = StageCosts{mean(PipeOpKind::kForward), mean(PipeOpKind::kBackward), mean(PipeOpKind::kBackwardWeight)};
  }
  const double step = play_step_s(*w.schedule, w.pp, w.vpp, w.micro_batches, costs.data(), n, 0.0);
  return std::max(0.0, step - tl.busy_s[static_cast<std::size_t>(c)]);
}

}  // namespace

void compose_simulated_result(const Scenario& sc, const Workload& w, const StepTimeline& tl,
                              Result& r, nlohmann::json& extra) {
  r.fidelity = "simulate";
  const int n = static_cast<int>(tl.busy_s.size());
  std::vector<StageFigures> fig(n);
  {
    std::vector<double> prev_free(tl.origin_s.begin(), tl.origin_s.end());  // waits before it: none
    for (const StepOpRecord& op : tl.ops) {
      StageFigures& f = fig[op.stage];
      const double gap_start = prev_free[op.stage];
      if (op.start_s > gap_start && op.input_transfer >= 0) {
        const StepTransferRecord& t = tl.transfers[op.input_transfer];
        // The op waited for this transfer when it arrived as the op started.
        if (t.end_s >= op.start_s - 1e-12) {
          const double waited = std::max(0.0, std::min(op.start_s, t.end_s) - std::max(gap_start, t.start_s));
          f.pp_wait_s += waited;
          f.pp_contention_s += std::min(waited, std::max(0.0, (t.end_s - t.start_s) - w.p2p_s));
        }
      }
      f.pp_wait_s += op.free_s - op.end_s;  // blocked on its own sends (overlap.pp off)
      prev_free[op.stage] = op.free_s;
    }
    for (int s = 0; s < n; ++s) fig[s].idle_s = std::max(0.0, tl.compute_end_s[s] - tl.origin_s[s] - tl.busy_s[s]);
    for (const StepBucketRecord& b : tl.buckets) {
      StageFigures& f = fig[b.stage];
      const double dur = b.busy_s();
      f.dp_busy_s += dur;
      if (b.end_s > tl.compute_end_s[b.stage])
        f.dp_contention_exposed_s += std::min(b.end_s - tl.compute_end_s[b.stage],
                                              std::max(0.0, dur - b.closed_form_s));
    }
  }
  // Critical stage: the busiest (its passes pace the pipeline; ties: its reduction ends last),
  // the stage the estimate and validate's prediction describe too (largest F + B).
  int c = 0;
  for (int s = 1; s < n; ++s) {
    if (tl.busy_s[s] > tl.busy_s[c] + 1e-12 ||
        (std::abs(tl.busy_s[s] - tl.busy_s[c]) <= 1e-12 && tl.dp_end_s[s] > tl.dp_end_s[c]))
      c = s;
  }
  // The critical stage's passes as played: compute work, and what its compute stream waited for
  // (or lost to collectives beside it) by purpose.
  const auto& exposed = tl.exposed_s[c];
  auto purpose = [&](CommPurpose p) { return exposed[static_cast<int>(p)]; };
  TimeBreakdown& bd = r.breakdown;
  bd = TimeBreakdown{};
  bd.compute_s = tl.compute_work_s[c];
  bd.tp_comm_s = purpose(CommPurpose::kTp);
  bd.cp_comm_s = purpose(CommPurpose::kCp);
  bd.ep_comm_s = purpose(CommPurpose::kEp);
  // c's idle over the pipeline's span (up to the last stage's last op, the drain included);
  // idle beyond the schedule's own bubble waited for transfers.
  double pipeline_idle = std::max(0.0, fig[c].idle_s - fig[c].pp_wait_s) +
                         (tl.pipeline_end_s - (tl.compute_end_s[c] - tl.origin_s[c]));
  bd.pp_comm_s = fig[c].pp_wait_s;
  const double own_bubble = schedule_bubble_s(w, tl, c);
  if (own_bubble >= 0 && pipeline_idle > own_bubble) {
    bd.pp_comm_s += pipeline_idle - own_bubble;
    pipeline_idle = own_bubble;
  }
  // The last reduction past the pipeline's last op (the optimizer starts when every stage's is
  // done; each ends no earlier than its stage's last op).
  const double dp_exposed = tl.optimizer_start_s - tl.pipeline_end_s;
  bd.dp_comm_s = dp_exposed + purpose(CommPurpose::kDp);
  bd.bubble_s = pipeline_idle;
  bd.optimizer_s = w.optimizer_s;
  bd.offload_s = w.offload_s;

  r.step_time_s = tl.step_end_s;
  finish_result(sc, r);
  double idle_share = 0;
  if (w.pp > 1 && tl.pipeline_end_s > 0) {
    for (int s = 0; s < n; ++s) idle_share += (tl.pipeline_end_s - tl.busy_s[s]) / tl.pipeline_end_s;
    idle_share /= n;
  }
  r.bubble_fraction = idle_share;
  r.exposed_comm_s = bd.tp_comm_s + bd.cp_comm_s + bd.ep_comm_s + bd.pp_comm_s + bd.dp_comm_s;
  const auto busy = [&](CommPurpose k) { return tl.busy_s_by_purpose[c][static_cast<int>(k)]; };
  r.overlapped = overlapped_comm(bd, busy(CommPurpose::kTp), busy(CommPurpose::kCp), busy(CommPurpose::kEp),
                                 busy(CommPurpose::kDp) + fig[c].dp_busy_s);

  // ---- activations as the schedule held them ----
  nlohmann::json stages = nlohmann::json::array();
  const double per_chunk = w.schedule->layer_chunks(w.vpp);
  bool memory_changed = false;
  std::string held_more;
  for (int s = 0; s < n && s < static_cast<int>(r.per_stage.size()); ++s) {
    StageMemory& sm = r.per_stage[s];
    const double played = tl.max_in_flight[s] / per_chunk;
    const double assumed = sm.in_flight_micro_batches;
    if (played > assumed + 1e-9) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s stage %d %.4g > %.4g", held_more.empty() ? "" : ",", s,
                    played, assumed);
      held_more += buf;
    }
    if (assumed > 0 && std::abs(played - assumed) > 1e-9 && !sc.plan.offload.activations) {
      sm.breakdown.activations_bytes *= played / assumed;
      sm.in_flight_micro_batches = played;
      sm.total_bytes = sm.breakdown.total();
      memory_changed = true;
    }
    stages.push_back({{"stage", s},
                      {"busy_s", tl.busy_s[s]},
                      {"idle_s", fig[s].idle_s},
                      {"pp_wait_s", fig[s].pp_wait_s},
                      {"pp_contention_s", fig[s].pp_contention_s},
                      {"origin_s", tl.origin_s[s]},
                      {"compute_end_s", tl.compute_end_s[s]},
                      {"dp_end_s", tl.dp_end_s[s]},
                      {"dp_exposed_s", tl.dp_end_s[s] - tl.compute_end_s[s]},
                      {"dp_busy_s", fig[s].dp_busy_s},
                      {"in_flight_micro_batches_played", played},
                      {"in_flight_micro_batches_assumed", assumed}});
  }
  if (!held_more.empty())
    r.warnings.push_back("as played, pipeline stages held more micro-batches' activations than the "
                         "memory model assumed (activation memory scaled to the played figure):" +
                         held_more);
  if (memory_changed) {
    r.peak_memory_bytes = 0;
    int worst = 0;
    for (const StageMemory& sm : r.per_stage)
      if (sm.total_bytes > r.peak_memory_bytes) {
        r.peak_memory_bytes = sm.total_bytes;
        r.peak_breakdown = sm.breakdown;
        worst = sm.stage;
      }
    const bool memory_reason = r.reason.empty() || r.reason.rfind("out of memory", 0) == 0;
    if (memory_reason) {
      if (r.peak_memory_bytes > r.hbm_capacity_bytes) {
        r.feasible = false;
        r.reason = "out of memory (activations as the schedule held them): pipeline stage " +
                   std::to_string(worst) + " needs " + gib(r.peak_memory_bytes) + " but " +
                   sc.cluster.gpu.name + " has " + gib(r.hbm_capacity_bytes);
      } else if (!r.feasible) {
        r.feasible = true;
        r.reason.clear();
      }
    }
  }

  // What the step moved, by purpose, summed over all GPUs: by the flows played, and with the
  // peers the representative groups stand for (the closed form's figure to compare with).
  nlohmann::json traffic = nlohmann::json::object(), as_flows = nlohmann::json::object(),
                 closed = nlohmann::json::object();
  for (int k = 0; k < kCommPurposes; ++k) {
    const char* name = to_string(static_cast<CommPurpose>(k));
    traffic[name] = tl.traffic_bytes[k];
    as_flows[name] = tl.traffic_bytes_as_flows[k];
    closed[name] = w.traffic_bytes[k];
  }
  // How the collectives of each purpose ran against their contention-free closed forms, over
  // every stage: where they shared links with other traffic, the ratio says how much it cost.
  nlohmann::json by_purpose = nlohmann::json::object();
  for (int k = 0; k < kCommPurposes; ++k) {
    double busy = 0, free = 0;
    for (int s = 0; s < n; ++s) {
      busy += tl.busy_s_by_purpose[s][k];
      free += tl.contention_free_s_by_purpose[s][k];
    }
    if (k == static_cast<int>(CommPurpose::kDp))
      for (const StepBucketRecord& b : tl.buckets) busy += b.busy_s(), free += b.closed_form_s;
    if (free <= 0) continue;
    const char* name = to_string(static_cast<CommPurpose>(k));
    by_purpose[name] = {{"busy_s", busy}, {"contention_free_s", free}, {"ratio", busy / free}};
    // Contention: the network collectives of this purpose that ran while other traffic crossed
    // the network (other purposes' collectives, gradient buckets) against those that ran alone.
    const ContentionFigures cf = contention_of(tl, static_cast<CommPurpose>(k));
    if (cf.beside > 0) {
      by_purpose[name]["beside_other_traffic"] = {{"collectives", cf.beside}, {"slowdown", cf.slowdown_beside}};
      by_purpose[name]["alone"] = {{"collectives", cf.alone}, {"slowdown", cf.slowdown_alone}};
      if (cf.alone > 0 && cf.slowdown_beside > 1.05 * cf.slowdown_alone) {
        char line[240];
        std::snprintf(line, sizeof line,
                      "%s collectives beside other network traffic took %.2fx as long as those alone: they "
                      "contend for shared links (simulation.hottest_links)",
                      name, cf.slowdown_beside / cf.slowdown_alone);
        r.warnings.push_back(line);
      }
    }
  }
  int buckets_dense = 0, buckets_expert = 0;
  for (const auto& b : tl.buckets) (b.expert ? buckets_expert : buckets_dense)++;
  extra["simulation"] = {
      {"critical_stage", c},
      {"pipeline_makespan_s", tl.pipeline_end_s},
      {"optimizer_start_s", tl.optimizer_start_s},
      {"pp_contention_s", fig[c].pp_contention_s},
      {"dp_contention_exposed_s", fig[c].dp_contention_exposed_s},
      {"p2p_transfers", tl.transfers.size()},
      {"p2p_mirror_flows", tl.mirror_flows},
      {"dp_buckets_simulated", buckets_dense},
      {"dp_buckets_per_chunk_max", tl.buckets_per_chunk},
      {"expert_dp_buckets_simulated", buckets_expert},
      {"transfers_started", tl.transfers_started},
      {"per_stage", stages},
      {"traffic_bytes", traffic},
      {"collectives_by_purpose", by_purpose},
      {"traffic_bytes_as_flows", as_flows},
      {"traffic_bytes_closed_form", closed},
      {"collectives_started", tl.collectives_started},
      {"mirror_collectives", tl.mirror_collectives},
      {"approximations",
       "compute once per stage on its representative GPU (DP replica 0, CP rank 0, TP rank 0), "
       "slowed by the collectives beside it; every collective of its passes (TP/SP, CP, EP, "
       "ZeRO-3 gathers and reduce-scatters) as flows on its group's GPUs, every data-parallel "
       "group of the stage alongside, other replicas' TP/CP/EP groups as flows when they cross "
       "nodes (within a flow budget) and standing for their peers otherwise; p2p as real flows "
       "for every TP rank of the representative pipeline (other replicas' p2p as background "
       "flows when affordable); ZeRO-0/1/2 gradient buckets of every group as flows, Megatron "
       "buckets merged beyond max_buckets_per_chunk; optimizer and offload as fixed costs"}};
}

void compare_with_estimate(const Result& est, const Result& sim, const nlohmann::json& sim_extra,
                           nlohmann::json& extra) {
  const double diff = est.step_time_s > 0 ? (sim.step_time_s - est.step_time_s) / est.step_time_s : 0;
  const TimeBreakdown& e = est.breakdown;
  const TimeBreakdown& s = sim.breakdown;
  double pp_cont = 0, dp_cont = 0;
  if (sim_extra.contains("simulation")) {
    pp_cont = sim_extra["simulation"].value("pp_contention_s", 0.0);
    dp_cont = sim_extra["simulation"].value("dp_contention_exposed_s", 0.0);
  }
  const double contention = pp_cont + dp_cont;
  // Stage imbalance and the schedule's real bubble versus the formula on the slowest stage.
  const double imbalance = (s.bubble_s - e.bubble_s) + (s.compute_s + s.tp_comm_s + s.cp_comm_s + s.ep_comm_s) -
                           (e.compute_s + e.tp_comm_s + e.cp_comm_s + e.ep_comm_s);
  // How much of the reduction and the p2p traffic hid behind compute, contention aside.
  const double overlap = (s.dp_comm_s - e.dp_comm_s - dp_cont) + (s.pp_comm_s - e.pp_comm_s - pp_cont);
  nlohmann::json j = {{"estimate_step_time_s", est.step_time_s},
                      {"simulate_step_time_s", sim.step_time_s},
                      {"difference_pct", diff * 100},
                      {"effects_s", {{"contention", contention}, {"overlap", overlap}, {"imbalance", imbalance}}}};
  if (std::abs(diff) > 0.05) {
    std::string cause = "contention";
    double best = std::abs(contention);
    if (std::abs(overlap) > best) {
      cause = "overlap";
      best = std::abs(overlap);
    }
    if (std::abs(imbalance) > best) cause = "imbalance";
    j["cause"] = cause;
  } else {
    j["cause"] = "none (within 5%)";
  }
  extra["estimate_vs_simulate"] = j;
}

namespace {
std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}
std::string join_layers(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "/" : "") + std::to_string(v[i]);
  return s;
}
}  // namespace

nlohmann::json fault_report(const Scenario& sc, const StragglerEffect& st, bool rebalanced,
                            const Topology& topo, const FaultRunFigures& fig) {
  using nlohmann::json;
  json out = json::object();
  json summary = json::array();
  const bool have_stats = fig.stats != nullptr;

  // ---- links ----
  if (topo.has_link_faults()) {
    json failed = json::array(), degraded = json::array();
    double lost = 0, failed_bytes = 0;
    for (int l : topo.failed_links()) {
      const TopologyLink& link = topo.links()[l];
      failed.push_back(link.name);
      lost += link.nominal_bandwidth_bytes_per_s;
      if (have_stats) failed_bytes += fig.stats->bytes(directed(l, false)) + fig.stats->bytes(directed(l, true));
    }
    for (int l : topo.degraded_links()) {
      const TopologyLink& link = topo.links()[l];
      degraded.push_back({{"link", link.name},
                          {"bandwidth_bytes_per_s", link.bandwidth_bytes_per_s},
                          {"bandwidth_factor", link.bandwidth_bytes_per_s / link.nominal_bandwidth_bytes_per_s}});
      lost += link.nominal_bandwidth_bytes_per_s - link.bandwidth_bytes_per_s;
    }
    json links = {{"failed", failed},
                  {"degraded", degraded},
                  {"bandwidth_lost_bytes_per_s", lost}};  // per direction, summed over links
    if (have_stats) {
      links["failed_link_bytes"] = failed_bytes;
      links["transfers_started"] = fig.transfers_started;
      links["transfers_rerouted"] = fig.transfers_rerouted;
    }
    // Bisection (max-flow) of the healthy and the faulted fabric; skipped on big clusters
    // (push-relabel over every vertex).
    if (topo.gpu_count() <= 4096) {
      TopologyOptions healthy = topo.options();
      healthy.faults = LinkFaults{};
      links["bisection_bytes_per_s"] = {
          {"healthy", Topology(topo.cluster(), healthy).bisection_bandwidth_bytes_per_s()},
          {"with_faults", topo.bisection_bandwidth_bytes_per_s()}};
    }
    std::string line = "faults: " + std::to_string(failed.size()) + " failed link" +
                       (failed.size() == 1 ? "" : "s");
    std::string names;
    for (std::size_t i = 0; i < failed.size() && i < 3; ++i)
      names += (i ? ", " : "") + failed[i].get<std::string>();
    if (failed.size() > 3) names += ", ...";
    if (!names.empty()) line += " (" + names + ")";
    if (!degraded.empty())
      line += ", " + std::to_string(degraded.size()) + " degraded to " +
              fmt("%.0f%%", 100 * sc.training.faults.link_degradation.bandwidth_factor);
    if (have_stats)
      line += ": " + std::to_string(fig.transfers_rerouted) + " of " + std::to_string(fig.transfers_started) +
              " flows rerouted";
    if (fig.healthy_fabric_step_time_s > 0 && fig.step_time_s > 0) {
      links["healthy_fabric_step_time_s"] = fig.healthy_fabric_step_time_s;
      links["slowdown_pct"] = 100 * (fig.step_time_s / fig.healthy_fabric_step_time_s - 1);
      line += fmt("; step %.4g s vs %.4g s on the healthy fabric (%+.1f%%)", fig.step_time_s,
                  fig.healthy_fabric_step_time_s, 100 * (fig.step_time_s / fig.healthy_fabric_step_time_s - 1));
    }
    summary.push_back(line);
    out["links"] = links;
  }

  // ---- straggler ----
  if (st.stage >= 0) {
    const double t_strag = rebalanced ? fig.no_rebalance_step_time_s : fig.step_time_s;
    const double t_nom = fig.no_straggler_step_time_s;
    json j = {{"stage", st.stage},
              {"speed_factor", st.speed_factor},
              {"probability_any", st.probability_any},
              {"expected_slow_gpus", st.expected_slow_gpus},
              {"layers_per_stage", st.layers_per_stage},
              {"estimate", {{"bottleneck_slowdown", st.bottleneck_slowdown},
                            {"rebalanced_bottleneck_slowdown", st.rebalanced_bottleneck_slowdown}}}};
    if (t_strag > 0) j["step_time_s"] = t_strag;
    if (t_nom > 0) j["nominal_step_time_s"] = t_nom;
    std::string line = fmt("faults: straggler on pipeline stage %.0f at %.2fx speed", st.stage, st.speed_factor);
    if (t_strag > 0 && t_nom > 0) {
      j["slowdown_pct"] = 100 * (t_strag / t_nom - 1);
      line += fmt(": step %.4g s vs %.4g s without it (%+.1f%%)", t_strag, t_nom, 100 * (t_strag / t_nom - 1));
    }
    summary.push_back(line);
    if (!st.rebalanced_layers_per_stage.empty()) {
      const double est_recovered =
          st.bottleneck_slowdown > 1 ? (st.bottleneck_slowdown - st.rebalanced_bottleneck_slowdown) /
                                           (st.bottleneck_slowdown - 1)
                                     : 0;
      json rb = {{"applied", rebalanced},
                 {"layers_per_stage", st.rebalanced_layers_per_stage},
                 {"estimate_recovered_fraction", est_recovered}};
      if (rebalanced) {
        rb["step_time_s"] = fig.step_time_s;
        std::string rline = "faults: rebalanced layers " + join_layers(st.layers_per_stage) + " -> " +
                            join_layers(st.rebalanced_layers_per_stage) + fmt(": step %.4g s", fig.step_time_s);
        if (t_strag > 0 && t_nom > 0 && t_strag > t_nom) {
          // (T_straggler - T_rebalanced) / (T_straggler - T_nominal): 1 = the loss fully recovered.
          const double rec = (t_strag - fig.step_time_s) / (t_strag - t_nom);
          rb["recovered_fraction"] = rec;
          rline += fmt(", recovers %.0f%% of the straggler's loss (estimate %.0f%%)", 100 * rec, 100 * est_recovered);
        }
        summary.push_back(rline);
      }
      j["rebalance"] = rb;
    } else if (!st.note.empty()) {
      j["rebalance"] = {{"applied", false}, {"note", st.note}};
    }
    out["straggler"] = j;
  }
  out["comparisons"] =
      "healthy-fabric, no-straggler and no-rebalance step times are separate simulations run in "
      "forked child processes (one SimGrid engine per process) alongside this run";
  if (!fig.error.empty()) out["comparison_error"] = fig.error;
  out["summary"] = summary;
  return out;
}

}  // namespace trainsim::sim
