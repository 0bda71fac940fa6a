// `trainsim plan`: searches the whole plan space of a model on a cluster with the estimate
// tier (TP, PP, DP, CP, EP, vpp, schedule, micro-batch, ZeRO, recompute, SP, optimizer offload)
// and prints the best plans with why they win. The search mutates a resolved Scenario in place:
// no JSON per plan, about a microsecond each.
#include <algorithm>
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
#include "cli/sweep_rows.hpp"
#include "models/cost/calibration.hpp"
#include "models/estimate/estimate.hpp"
#include "models/core/result_json.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

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
      "of layers), CP, EP (MoE), interleaving depth, schedule, micro-batch, ZeRO 0-3, recompute,\n"
      "sequence parallelism, optimizer offload. Prints the best plans by throughput with why they win\n"
      "(bubble, exposed communication, memory headroom), and why the others lost.");
  app.add_option("--model", o.model, "model preset or model JSON file")->type_name("M")->required();
  app.add_option("--cluster", o.cluster, "cluster preset or cluster JSON file")->type_name("C")->required();
  app.add_option("--gpus", o.gpus, "GPU count")->type_name("N")->required()->check(CLI::Range(1LL, 1LL << 24));
  app.add_option("--global-batch", o.global_batch, "sequences per step")
      ->type_name("B")
      ->required()
      ->check(CLI::Range(1LL, 1LL << 40));
  app.add_option("--seq", o.seq, "sequence length (default: the model's)")->type_name("S")->check(CLI::Range(1LL, 1LL << 24));
  app.add_option("--precision", o.precision, "training precision")
      ->type_name("P")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8", "fp32"}))
      ->default_str(o.precision);
  app.add_option("--top", o.top, "plans to print")->type_name("K")->check(CLI::Range(1, 10000))->default_str("10");
  app.add_option("--simulate-top", o.simulate_top,
                 "simulate the best K in child processes and rank them by the simulation")
      ->type_name("K")
      ->check(CLI::Range(0, 10000));
  add_jobs_option(app, o.jobs, "child processes at once for --simulate-top");
  app.add_option("--calibration", o.calibration_path, "apply a `trainsim calibrate` file to the cluster's GPU first")
      ->type_name("FILE");
  add_json_flag(app, o.json, "one JSON object: {searched, feasible, best: [rows], rejected: {reason: count}}");
  add_progress_options(app, o.progress);
}

struct Candidate {
  double tokens_per_s;
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
  std::snprintf(buf, sizeof buf, "bubble %.1f%%, exposed comm %.1f%% of the step, memory headroom %.1f GiB",
                100 * r.bubble_fraction, 100 * r.exposed_comm_s / r.step_time_s,
                (r.hbm_capacity_bytes - r.peak_memory_bytes) / (1024.0 * 1024 * 1024));
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
  std::vector<Candidate> best;  // kept sorted, at most `keep`
  const std::size_t keep = static_cast<std::size_t>(std::max(top, simulate_top));
  std::map<std::string, long long> rejected;
  long long searched = 0, feasible = 0;
  Scenario s = base;
  const std::vector<int> tps = divisors(m.heads, node);
  const std::vector<int> pps = divisors(m.layers, m.layers);
  const std::vector<int> eps = m.moe ? divisors(m.moe->experts, gpus) : std::vector<int>{1};
  static const char* kSchedules[] = {"1f1b", "interleaved", "zb-h1", "zb-h2", "dualpipe", "gpipe"};
  for (int tp : tps)
    for (int pp : pps)
      for (int cp : {1, 2, 4, 8}) {
        const long long inner = 1ll * tp * pp * cp;
        if (gpus % inner || m.seq_len % cp) continue;
        const int dp = static_cast<int>(gpus / inner);
        for (int ep : eps) {
          if ((1ll * dp * cp) % ep) continue;
          for (const char* sched : kSchedules) {
            const bool interleaved = std::string(sched) == "interleaved";
            if (pp == 1 && std::string(sched) != "1f1b") continue;
            for (int vpp : {1, 2, 3, 4, 6, 8}) {
              if (interleaved != (vpp > 1)) continue;
              if (m.layers % (pp * vpp)) continue;
              for (long long mb = 1; mb <= 16; mb *= 2) {
                if (global_batch % (mb * dp)) continue;
                for (int zero = 0; zero <= 3; ++zero)
                  for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
                    for (bool sp : {false, true}) {
                      if (sp && tp == 1) continue;
                      for (bool offload : {false, true}) {
                        if (offload && zero == 0) continue;
                        ParallelPlan& p = s.plan;
                        p.tp = tp; p.pp = pp; p.cp = cp; p.dp = dp; p.ep = ep; p.vpp = vpp;
                        p.schedule = sched; p.micro_batch = mb; p.zero_stage = zero; p.recompute = rc;
                        p.sp = sp; p.offload.optimizer = offload;
                        ++searched;
                        Result r = estimate(s);
                        if (!r.feasible) {
                          ++rejected[reason_category(r.reason)];
                          continue;
                        }
                        ++feasible;
                        if (best.size() < keep || r.tokens_per_s > best.back().tokens_per_s) {
                          Candidate c{r.tokens_per_s, s, std::move(r)};
                          auto pos = std::upper_bound(best.begin(), best.end(), c.tokens_per_s,
                                                      [](double v, const Candidate& x) { return v > x.tokens_per_s; });
                          best.insert(pos, std::move(c));
                          if (best.size() > keep) best.pop_back();
                        }
                      }
                    }
              }
            }
          }
        }
      }
  const double search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Optional: simulate the best K.
  std::vector<json> simulated(best.size());
  if (simulate_top > 0 && !best.empty()) {
    std::vector<ChildRun> runs;
    for (std::size_t k = 0; k < best.size() && k < static_cast<std::size_t>(simulate_top); ++k)
      runs.push_back({to_json(best[k].scenario).dump(), "", "", -1});
    // The scenarios are written calibrated (to_json of the searched plan); the file goes along
    // too for what the scenario format does not carry (per-op rates). Applying it twice is a
    // no-op: it sets the same values.
    std::vector<std::string> child_args = {"--fidelity", "simulate", "--json"};
    if (!calibration_path.empty()) {
      child_args.push_back("--calibration");
      child_args.push_back(std::filesystem::absolute(calibration_path).string());
    }
    run_children(self_executable(program_name().c_str()), runs, jobs, child_args, [&](std::size_t k) {
      try {
        simulated[k] = json::parse(runs[k].output);
      } catch (const std::exception&) {
        simulated[k] = {{"error", runs[k].error.empty() ? "exit " + std::to_string(runs[k].exit_code) : runs[k].error}};
      }
    });
  }

  std::vector<std::pair<long long, std::string>> reasons;
  for (const auto& [r, n] : rejected) reasons.emplace_back(n, r);
  std::sort(reasons.rbegin(), reasons.rend());
  if (as_json) {
    json out = {{"searched", searched}, {"feasible", feasible}, {"search_s", search_s}, {"best", json::array()},
                {"rejected", json::object()}};
    for (std::size_t k = 0; k < best.size() && k < static_cast<std::size_t>(top); ++k) {
      json row = result_to_json(best[k].result);
      row["scenario"] = to_json(best[k].scenario);
      row["why"] = why(best[k].result);
      if (!simulated[k].is_null()) row["simulate"] = simulated[k];
      out["best"].push_back(row);
    }
    for (const auto& [n, r] : reasons) out["rejected"][r] = n;
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("trainsim plan: %s on %lld x %s (%s), global batch %lld, seq %lld\n", m.name.c_str(), gpus,
              base.cluster.gpu.name.c_str(), base.cluster.name.c_str(), global_batch, static_cast<long long>(m.seq_len));
  std::printf("searched %lld plans in %.2f s (%.0f plans/s): %lld feasible\n\n", searched, search_s,
              searched / std::max(search_s, 1e-9), feasible);
  if (best.empty()) std::printf("no feasible plan\n");
  for (std::size_t k = 0; k < best.size() && k < static_cast<std::size_t>(top); ++k) {
    const auto& p = best[k].scenario.plan;
    const Result& r = best[k].result;
    std::printf("%2zu. TP%d PP%d DP%d CP%d EP%d%s vpp%d %-11s mb%lld ZeRO-%d recompute %-9s%s  %.3f s  %.4g tok/s  MFU %.1f%%  %.1f GiB\n",
                k + 1, p.tp, p.pp, p.dp, p.cp, p.ep, p.sp ? " SP" : "", p.vpp, p.schedule.c_str(),
                static_cast<long long>(p.micro_batch), p.zero_stage, to_string(p.recompute),
                p.offload.optimizer ? " offload" : "", r.step_time_s, r.tokens_per_s, 100 * r.mfu,
                r.peak_memory_bytes / (1024.0 * 1024 * 1024));
    std::printf("    why: %s\n", why(r).c_str());
    if (!simulated[k].is_null()) {
      if (simulated[k].contains("step_time_s"))
        std::printf("    simulated: %.3f s (%+.1f%% vs estimate)\n", simulated[k]["step_time_s"].get<double>(),
                    100 * (simulated[k]["step_time_s"].get<double>() / r.step_time_s - 1));
      else
        std::printf("    simulate failed: %s\n", simulated[k].value("error", std::string("?")).c_str());
    }
  }
  if (!reasons.empty()) {
    std::printf("\nwhy the other plans lost:\n");
    for (std::size_t k = 0; k < reasons.size() && k < 10; ++k)
      std::printf("  %9lld  %s\n", reasons[k].first, reasons[k].second.c_str());
  }
  return kExitOk;
}

const CommandRegistrar kRegistrar("plan", "search the whole plan space for the best plans", declare, run);

}  // namespace
}  // namespace trainsim::cli
