// `trainsim plan`: searches the whole plan space of a model on a cluster with the estimate
// tier (TP, PP, DP, CP, EP, vpp, schedule, micro-batch, ZeRO, recompute, SP, optimizer offload)
// and prints the best plans with why they win. The search mutates a resolved Scenario in place:
// no JSON per plan, about a microsecond each.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli/child_runs.hpp"
#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/plan_row.hpp"
#include "cli/progress.hpp"
#include "models/cost/calibration.hpp"
#include "models/estimate/estimate.hpp"
#include "models/core/result_json.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/schedules/pipeline_schedule.hpp"
#include "models/core/units.hpp"

namespace trainsim::cli {
namespace {
using nlohmann::json;

struct PlanOptions {
  std::string model, cluster, precision = "bf16", calibration_path;
  long long gpus = 0, global_batch = 0, seq = 0;
  int top = 10, simulate_top = 0, jobs = 1;
  bool json = false;
  ProgressMode progress = ProgressMode::kAuto;
};

void declare(CLI::App& app, PlanOptions& o) {
  app.description(
      "Searches every plan of model M (a preset or a model JSON file) on N GPUs of cluster C (a preset\n"
      "or a cluster JSON file) with the estimate tier: TP (divisors of heads up to a node), PP (divisors\n"
      "of layers), CP, EP (MoE), interleaving depth, schedule, micro-batch, ZeRO 0-3 (ZeRO-3 also\n"
      "sharded within a node and replicated across nodes, FSDP's HYBRID_SHARD, shown ZeRO-3/n),\n"
      "recompute, sequence parallelism, optimizer offload. Prints the best plans by throughput with\n"
      "why they win (bubble, exposed communication, memory headroom), and why the others lost.");
  app.add_option("--model", o.model, "model preset or model JSON file")->type_name("M")->required();
  app.add_option("--cluster", o.cluster, "cluster preset or cluster JSON file")->type_name("C")->required();
  app.add_option("--gpus", o.gpus, "GPU count")->type_name("N")->required()->check(CLI::Range(1LL, 1LL << 24));
  app.add_option("--global-batch", o.global_batch, "sequences per step")
      ->type_name("B")
      ->required()
      ->check(CLI::Range(1LL, 1LL << 40));
  app.add_option("--seq", o.seq, "sequence length (default: the model's)")->type_name("S")->check(CLI::Range(1LL, 1LL << 24));
  app.add_option("--precision", o.precision, "training precision: bf16, fp16, fp8 or fp32")
      ->type_name("P")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8", "fp32"}))
      ->default_str(o.precision);
  app.add_option("--top", o.top, "plans to print")->type_name("K")->check(CLI::Range(1, 10000))->default_str("10");
  app.add_option("--simulate-top", o.simulate_top,
                 "simulate the best K in child processes and rank them by the simulation")
      ->type_name("K")
      ->check(CLI::Range(0, 10000));
  add_jobs_option(app, o.jobs, "threads for the search, and child processes at once for --simulate-top");
  app.add_option("--calibration", o.calibration_path, "apply a `trainsim calibrate` file to the cluster's GPU first")
      ->type_name("FILE");
  add_json_flag(app, o.json, "one JSON object: {searched, feasible, best: [rows], rejected: [{reason_code, plans, ...}]}");
  add_progress_options(app, o.progress);
}

struct Candidate {
  double tokens_per_s;
  uint64_t order;  // the plan's place in the search order
  Scenario scenario;
  Result result;
};

std::vector<int> divisors(int64_t n, int64_t limit) {
  std::vector<int> d;
  for (int64_t k = 1; k <= std::min(n, limit); ++k)
    if (n % k == 0) d.push_back(static_cast<int>(k));
  return d;
}

json load_part(const std::string& name_or_path, const std::string& what) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    return read_json_file(name_or_path, what);
  return name_or_path;
}

std::string why(const Result& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "bubble %.1f%%, exposed comm %.1f%% of the step, memory headroom %s",
                100 * r.bubble_fraction, 100 * r.exposed_comm_s / r.step_time_s,
                units::format_bytes(r.hbm_capacity_bytes - r.peak_memory_bytes).c_str());
  return buf;
}

int run(PlanOptions& o) {
  const std::string& model = o.model;
  const std::string& cluster = o.cluster;
  const std::string& precision = o.precision;
  const long long gpus = o.gpus, global_batch = o.global_batch, seq = o.seq;
  const int top = o.top, simulate_top = o.simulate_top, jobs = o.jobs;
  const bool as_json = o.json;
  const std::string& calibration_path = o.calibration_path;

  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  json raw = {{"schema_version", 1},
              {"name", "plan-search"},
              {"model", load_part(model, "model")},
              {"cluster", load_part(cluster, "cluster")},
              {"plan", {{"global_batch", global_batch}, {"precision", precision}}}};
  json resolved = resolve_scenario_json(raw, options);
  if (seq > 0) resolved["model"]["seq_len"] = seq;
  // N GPUs of the cluster's node type.
  const int gpn = resolved["cluster"].value("gpus_per_node", 8);
  if (gpus % gpn != 0 && gpus > gpn)
    throw ScenarioError("--gpus", std::to_string(gpus) + " is not a whole number of " + std::to_string(gpn) + "-GPU nodes");
  if (gpus < gpn) resolved["cluster"]["gpus_per_node"] = gpus;
  resolved["cluster"]["nodes"] = std::max<long long>(1, gpus / gpn);
  Scenario base = parse_scenario(resolved);
  if (!calibration_path.empty()) apply_calibration(read_json_file(calibration_path, "calibration"), base);
  const ModelSpec& m = base.model;
  const int node = base.cluster.gpus_per_node;

  const auto t0 = std::chrono::steady_clock::now();
  // Twice what is shown, plus one: ZeRO-1/2 twins fold into one row afterwards.
  const std::size_t keep = 2 * static_cast<std::size_t>(std::max(top, simulate_top)) + 1;
  struct Rejected {
    long long count = 0;
    std::string example;
    uint64_t first = 0;  // the search order of the plan the example is from
  };
  // What one thread found over its share of the search. A plan's place in the search order is
  // (item index << 32) + its count within the item (an item: one TP, PP, CP, EP and schedule),
  // so the merge gives what one thread searching in order gives: the same kept plans, ties in
  // search order, the same examples.
  struct Partial {
    std::vector<Candidate> best;  // sorted by throughput, then search order; at most `keep`
    std::map<std::string, Rejected> rejected;
    long long searched = 0, feasible = 0;
    std::string last_reason, last_code;  // the last rejection's message and its reason code
  };
  // Cheapest rejections first: structure, then memory, before any pass is priced or played.
  EstimateOptions search;
  search.stop_when_infeasible = true;
  const std::vector<int> tps = divisors(m.heads, node);
  // Pipeline degrees: the layer count's divisors, and the powers of two that leave two layers
  // or more per stage (an uneven split where they do not divide it).
  std::vector<int> pps = divisors(m.layers, m.layers);
  for (int pp = 2; 2 * pp <= m.layers; pp *= 2)
    if (m.layers % pp != 0) pps.push_back(pp);
  std::sort(pps.begin(), pps.end());
  const std::vector<int> eps = m.moe ? divisors(m.moe->experts, gpus) : std::vector<int>{1};
  const std::vector<const PipelineSchedule*>& schedules = pipeline_schedules();  // registry order
  auto better = [](const Candidate& a, const Candidate& b) {
    return a.tokens_per_s != b.tokens_per_s ? a.tokens_per_s > b.tokens_per_s : a.order < b.order;
  };
  // The search in items of (TP, PP, CP, EP, schedule), in search order.
  constexpr int kCps[] = {1, 2, 4, 8};
  constexpr long long kMaxMicroBatch = 16;  // micro-batches 1, 2, 4, ... up to it
  const std::size_t schedule_count = schedules.size();
  constexpr std::size_t kCpCount = std::size(kCps);
  const std::size_t items = tps.size() * pps.size() * kCpCount * eps.size() * schedule_count;
  Progress progress("plan search", "", static_cast<double>(items), o.progress);
  auto search_item = [&](std::size_t item, Scenario& s, Partial& out) {
    std::size_t rest = item;
    const PipelineSchedule* sched = schedules[rest % schedule_count];
    rest /= schedule_count;
    const int ep = eps[rest % eps.size()];
    rest /= eps.size();
    const int cp = kCps[rest % kCpCount];
    rest /= kCpCount;
    const int pp = pps[rest % pps.size()];
    const int tp = tps[rest / pps.size()];
    uint64_t order = static_cast<uint64_t>(item) << 32;
    const long long inner = 1ll * tp * pp * cp;
    if (gpus % inner || m.seq_len % cp) return;
    const int dp = static_cast<int>(gpus / inner);
    if ((1ll * dp * cp) % ep) return;
    // With one stage every schedule plays alike: only the default is tried.
    if (pp == 1 && sched != &default_pipeline_schedule()) return;
    for (int vpp : {1, 2, 3, 4, 6, 8}) {
      if (sched->uses_virtual_stages() != (vpp > 1)) continue;
      // Without virtual stages an uneven split (plan_structure.hpp's stage_layers); interleaved
      // plans with the layers divided evenly, as Megatron lays out virtual stages.
      if (vpp > 1 ? m.layers % (pp * vpp) != 0 : m.layers < pp) continue;
      for (long long mb = 1; mb <= kMaxMicroBatch; mb *= 2) {
        if (global_batch % (mb * dp)) continue;
        // ZeRO-3 sharded over the whole DP group, and where the DP group spans nodes of more
        // than one DP rank: over the DP ranks of one node, replicated across nodes (FSDP's
        // HYBRID_SHARD, option 4), and over the whole group with ZeRO++ (a node's secondary
        // partition, int8 weight gathers and int4 gradient all-to-alls, option 5).
        const int node_shard = node % (tp * cp) == 0 ? node / (tp * cp) : 0;
        const bool hybrid = node_shard >= 2 && node_shard < dp && dp % node_shard == 0;
        // A data-parallel group of one rank has nothing to shard: ZeRO-1, 2 and 3 are ZeRO-0,
        // tried once, and with the optimizer offloaded once (offload needs a ZeRO stage).
        const bool unsharded = 1ll * dp * cp == 1;
        for (int zero_option = 0; zero_option <= (unsharded ? 1 : hybrid ? 5 : 3); ++zero_option)
          for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
            for (bool sp : {false, true}) {
              if (sp && tp == 1) continue;
              const int zero = std::min(zero_option, 3);
              for (bool offload : {false, true}) {
                if (offload && zero == 0) continue;
                if (unsharded && zero == 1 && !offload) continue;
                ParallelPlan& p = s.plan;
                p.tp = tp; p.pp = pp; p.cp = cp; p.dp = dp; p.ep = ep; p.vpp = vpp;
                p.schedule = sched->name(); p.micro_batch = mb; p.zero_stage = zero; p.recompute = rc;
                p.sp = sp; p.offload.optimizer = offload;
                p.dp_shard = zero_option == 4 ? node_shard : 0;
                p.zero_hpz_partition_size = zero_option == 5 ? node_shard : 0;
                p.zero_quantized_weights = p.zero_quantized_gradients = zero_option == 5;
                ++out.searched;
                ++order;
                // Once `keep` plans are held, a plan must beat the last of them: one that
                // cannot even without a bubble is not played (EstimateOptions).
                EstimateOptions opts = search;
                if (out.best.size() >= keep) opts.rank_floor_tokens_per_s = out.best.back().tokens_per_s;
                Result r = estimate(s, opts);
                if (!r.feasible) {
                  // Neighbouring plans are often rejected with the same message: its code once.
                  if (r.reason != out.last_reason) out.last_reason = r.reason, out.last_code = reason_code(r.reason);
                  Rejected& rej = out.rejected[out.last_code];
                  if (rej.count++ == 0) rej.example = r.reason, rej.first = order;
                  continue;
                }
                ++out.feasible;
                std::vector<Candidate>& best = out.best;
                if (best.size() < keep || r.tokens_per_s > best.back().tokens_per_s) {
                  Candidate c{r.tokens_per_s, order, s, std::move(r)};
                  auto pos = std::upper_bound(best.begin(), best.end(), c, better);
                  best.insert(pos, std::move(c));
                  if (best.size() > keep) best.pop_back();
                }
              }
            }
      }
    }
  };
  // The items shared out to --jobs threads (each with its own memo tables, memo.hpp); the main
  // thread takes a share too and draws the progress.
  const int threads = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(jobs), items)));
  std::vector<Partial> partial(static_cast<std::size_t>(threads));
  std::atomic<std::size_t> next_item{0}, items_done{0};
  auto worker = [&](int t) {
    Scenario s = base;
    Partial mine;  // on this thread's stack: no cache line shared with the other threads
    for (std::size_t item; (item = next_item.fetch_add(1)) < items;) {
      search_item(item, s, mine);
      ++items_done;
      if (t == 0) progress.update(static_cast<double>(items_done.load()));
    }
    partial[static_cast<std::size_t>(t)] = std::move(mine);
  };
  {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (std::thread& th : pool) th.join();
  }
  std::vector<Candidate> best;
  std::map<std::string, Rejected> rejected;
  long long searched = 0, feasible = 0;
  for (Partial& part : partial) {
    searched += part.searched;
    feasible += part.feasible;
    for (auto& [code, r] : part.rejected) {
      Rejected& all = rejected[code];
      if (all.count == 0 || r.first < all.first) all.example = r.example, all.first = r.first;
      all.count += r.count;
    }
    for (Candidate& c : part.best) best.push_back(std::move(c));
  }
  std::sort(best.begin(), best.end(), better);
  if (best.size() > keep) best.resize(keep);
  progress.finish();
  const double search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The kept plans as rows, ZeRO-1/2 twins folded, the best `shown` of them.
  std::vector<json> rows;
  for (std::size_t k = 0; k < best.size(); ++k) rows.push_back(make_row(static_cast<long long>(k), json::object(), best[k].scenario, best[k].result));
  std::vector<const json*> ranked;
  for (const auto& r : rows) ranked.push_back(&r);
  std::vector<RankedRow> shown = fold_zero_twins(ranked);
  if (shown.size() > static_cast<std::size_t>(std::max(top, simulate_top)))
    shown.resize(static_cast<std::size_t>(std::max(top, simulate_top)));

  // Optional: simulate the best K, then rank those K by the simulation.
  std::vector<json> simulated(best.size());
  if (simulate_top > 0 && !shown.empty()) {
    std::vector<ChildRun> runs;
    std::vector<std::size_t> which;
    for (std::size_t k = 0; k < shown.size() && k < static_cast<std::size_t>(simulate_top); ++k) {
      const std::size_t c = static_cast<std::size_t>((*shown[k].row)["index"].get<long long>());
      runs.push_back({to_json(best[c].scenario).dump(), "", "", -1});
      which.push_back(c);
    }
    // The scenarios are written calibrated (to_json of the searched plan); the file goes along
    // too for what the scenario format does not carry (per-op rates). Applying it twice is a
    // no-op: it sets the same values.
    std::vector<std::string> child_args = {"--fidelity", "simulate", "--json", "--quiet"};
    if (!calibration_path.empty()) {
      child_args.push_back("--calibration");
      child_args.push_back(std::filesystem::absolute(calibration_path).string());
    }
    Progress sim_progress("simulate", "plans", static_cast<double>(runs.size()), o.progress);
    std::size_t finished = 0;
    run_children(self_executable(program_name().c_str()), runs, jobs, child_args, [&](std::size_t k) {
      const json j = json::parse(runs[k].output, nullptr, false);
      if (!j.is_discarded() && j.is_object() && j.contains("tokens_per_s")) simulated[which[k]] = j;
      else simulated[which[k]] = {{"error", runs[k].error.empty() ? "exit " + std::to_string(runs[k].exit_code) : runs[k].error}};
      sim_progress.update(static_cast<double>(++finished));
    });
    sim_progress.finish();
    auto sim_tokens = [&](const RankedRow& r) {
      const json& j = simulated[static_cast<std::size_t>((*r.row)["index"].get<long long>())];
      return j.is_object() && j.contains("tokens_per_s") && j.value("feasible", false) ? j["tokens_per_s"].get<double>() : -1.0;
    };
    std::stable_sort(shown.begin(), shown.end(), [&](const RankedRow& a, const RankedRow& b) {
      const double x = sim_tokens(a), y = sim_tokens(b);
      if ((x >= 0) != (y >= 0)) return x >= 0;
      return x > y;
    });
  }
  if (shown.size() > static_cast<std::size_t>(top)) shown.resize(static_cast<std::size_t>(top));

  std::vector<std::pair<long long, std::string>> reasons;
  for (const auto& [code, r] : rejected) reasons.emplace_back(r.count, code);
  std::sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // No plan that runs is an infeasible answer (exit 3) with its reason, as `run` gives for one plan.
  std::string none_reason;
  if (shown.empty()) {
    if (searched == 0) {
      std::string cps;
      for (int cp : kCps) cps += (cps.empty() ? "" : cp == kCps[kCpCount - 1] ? " or " : ", ") + std::to_string(cp);
      none_reason = "no plan to search: no tensor-parallel degree (a divisor of the " + std::to_string(m.heads) +
                    " heads within a node), pipeline degree, context-parallel degree (" + cps + ") and micro-batch (1-" +
                    std::to_string(kMaxMicroBatch) + ") leave a data-parallel degree that divides both the " +
                    std::to_string(gpus) + " GPUs and the global batch of " + std::to_string(global_batch);
    } else {
      none_reason = "none of the " + std::to_string(searched) + " plans searched can run" +
                    (reasons.empty() ? std::string() : "; most often: " + reason_label(reasons.front().second));
    }
  }
  if (as_json) {
    json out = {{"searched", searched}, {"feasible", feasible}, {"search_s", search_s}, {"best", json::array()},
                {"rejected", json::array()}};
    if (!none_reason.empty()) out["reason"] = none_reason;
    for (const RankedRow& r : shown) {
      const std::size_t c = static_cast<std::size_t>((*r.row)["index"].get<long long>());
      json row = result_to_json(best[c].result);
      row["scenario"] = to_json(best[c].scenario);
      row["zero"] = r.zero_label;
      row["why"] = why(best[c].result);
      if (!simulated[c].is_null()) row["simulate"] = simulated[c];
      out["best"].push_back(row);
    }
    for (const auto& [n, code] : reasons)
      out["rejected"].push_back({{"reason_code", code}, {"label", reason_label(code)}, {"plans", n},
                                 {"example", rejected[code].example}});
    std::cout << out.dump(2) << "\n";
    return none_reason.empty() ? kExitOk : kExitInfeasible;
  }
  std::printf("trainsim plan: %s on %lld x %s (%s), global batch %lld, seq %lld\n", m.name.c_str(), gpus,
              base.cluster.gpu.name.c_str(), base.cluster.name.c_str(), global_batch, static_cast<long long>(m.seq_len));
  std::printf("searched %s plans in %.2f s (%s plans/s): %s feasible\n\n", units::format_count(static_cast<double>(searched)).c_str(),
              search_s, units::format_count(searched / std::max(search_s, 1e-9)).c_str(),
              units::format_count(static_cast<double>(feasible)).c_str());
  if (shown.empty()) std::printf("no feasible plan: %s\n", none_reason.c_str());
  if (simulate_top > 0 && !shown.empty())
    std::printf("the best %d by the estimate, simulated and ranked by the simulation:\n", std::min<int>(simulate_top, static_cast<int>(shown.size())));
  bool folded = false;
  for (std::size_t k = 0; k < shown.size(); ++k) {
    const std::size_t c = static_cast<std::size_t>((*shown[k].row)["index"].get<long long>());
    const auto& p = best[c].scenario.plan;
    const Result& r = best[c].result;
    folded = folded || shown[k].zero_label == "ZeRO-1/2";
    std::printf("%2zu. TP%d PP%d DP%d CP%d EP%d%s vpp%d %-11s mb%lld %-8s recompute %-9s%s  %s  %s tok/s  MFU %.1f%%  %s\n",
                k + 1, p.tp, p.pp, p.dp, p.cp, p.ep, p.sp ? " SP" : "", p.vpp, p.schedule.c_str(),
                static_cast<long long>(p.micro_batch), zero_column(shown[k].zero_label, p.zero_plus_plus(), p.dp_shard).c_str(), to_string(p.recompute),
                p.offload.optimizer ? " offload" : "", units::format_time(r.step_time_s).c_str(),
                units::format_count(r.tokens_per_s).c_str(), 100 * r.mfu, units::format_bytes(shown[k].memory_bytes).c_str());
    std::printf("    why: %s\n", why(r).c_str());
    if (!simulated[c].is_null()) {
      if (simulated[c].contains("step_time_s"))
        std::printf("    simulated: %s, %s tok/s (%+.1f%% step time vs the estimate)\n",
                    units::format_time(simulated[c]["step_time_s"].get<double>()).c_str(),
                    units::format_count(simulated[c].value("tokens_per_s", 0.0)).c_str(),
                    100 * (simulated[c]["step_time_s"].get<double>() / r.step_time_s - 1));
      else
        std::printf("    simulate failed: %s\n", simulated[c].value("error", std::string("?")).c_str());
    }
  }
  if (folded) std::printf("(ZeRO-1/2: ZeRO-1 and ZeRO-2 of the same plan take the same time; memory is ZeRO-2's)\n");
  if (std::any_of(shown.begin(), shown.end(), [&](const RankedRow& r) {
        return best[static_cast<std::size_t>((*r.row)["index"].get<long long>())].scenario.plan.dp_shard > 0;
      }))
    std::printf("(ZeRO-3/n: sharded over n data-parallel ranks of a node, replicated across nodes: FSDP's HYBRID_SHARD)\n");
  if (std::any_of(shown.begin(), shown.end(), [&](const RankedRow& r) {
        return best[static_cast<std::size_t>((*r.row)["index"].get<long long>())].scenario.plan.zero_plus_plus();
      }))
    std::printf("(ZeRO-3++: ZeRO++, a node's secondary partition for the backward's gathers, int8 weight gathers, "
                "int4 gradient all-to-alls)\n");
  if (!reasons.empty()) {
    std::printf("\nwhy the other plans lost:\n");
    for (std::size_t k = 0; k < reasons.size() && k < 10; ++k) {
      std::printf("  %9s  %-26s %s\n", units::format_count(static_cast<double>(reasons[k].first)).c_str(),
                  reasons[k].second.c_str(), reason_label(reasons[k].second).c_str());
      std::printf("             e.g. %s\n", rejected[reasons[k].second].example.c_str());
    }
  }
  return none_reason.empty() ? kExitOk : kExitInfeasible;
}

const CommandRegistrar kRegistrar("plan", "search the whole plan space for the best plans", declare, run);

}  // namespace
}  // namespace trainsim::cli
