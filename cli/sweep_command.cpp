// `trainsim sweep SWEEP.json`: evaluates every plan of a sweep with the estimate tier, appends
// one JSON row per plan as it finishes, simulates the best ones in child processes, and prints
// the best plans, the Pareto front and why plans were rejected. Shards over mpirun ranks or a
// batch scheduler's array tasks; --resume continues a killed sweep.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <algorithm>
#include <thread>

#include "cli/child_runs.hpp"
#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/output_file.hpp"
#include "cli/progress.hpp"
#include "cli/plan_row.hpp"
#include "cli/sweep_plans.hpp"
#include "cli/sweep_row_text.hpp"
#include "cli/sweep_rows.hpp"
#include "models/cost/calibration.hpp"
#include "models/estimate/estimate.hpp"
#include "models/core/scenario_error.hpp"
#include "models/core/units.hpp"
#include "models/core/result_json.hpp"
#include "models/scenario/sweep_spec.hpp"

namespace trainsim::cli {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// Plans a sweep may list before it starts (documented in --help and docs/cli.md): about 500
// bytes each while it runs (its ids, its CSV line, the record of a ranked row) and 10 us or less
// each to evaluate (bench/bench_sweep.sh), so the default bounds a sweep to about a GiB and
// well under a minute on one core; --max-plans raises it.
constexpr std::size_t kDefaultMaxPlans = 2'000'000;

struct SweepOptions {
  std::string sweep_file, prefix, calibration_path;
  bool resume = false, all = false;
  int jobs = 1, simulate_top = -1, slow_ms = 0;
  std::size_t max_plans = kDefaultMaxPlans;
  double merge_timeout_s = 3600;
  ProgressMode progress = ProgressMode::kAuto;
};

void declare(CLI::App& app, SweepOptions& o) {
  app.description(
      "Evaluates every plan of a sweep file with the estimate tier, in this process; then simulates\n"
      "the best K plans (by the objective) each in a child process, N at once.\n\n"
      "Output (--out PREFIX; its folder is created if missing; PREFIX.lock keeps a second sweep out):\n"
      "  PREFIX.rows.jsonl       one JSON row per plan, appended as each finishes (flushed every 50 ms)\n"
      "  PREFIX.csv              the same rows as CSV\n"
      "  PREFIX.simulated.jsonl  the simulated rows\n"
      "  PREFIX.summary.txt      best plans, Pareto front (throughput, peak memory, GPUs), rejections");
  app.add_option("SWEEP", o.sweep_file, "the sweep JSON file")->required();
  app.add_option("--out", o.prefix, "where the outputs go: PREFIX.rows.jsonl, ... (e.g. --out runs/NAME)")
      ->type_name("PREFIX")
      ->required();
  app.add_flag("--resume", o.resume, "continue a killed sweep: rows already written are kept, none is run twice");
  add_jobs_option(app, o.jobs, "child processes at once for the simulate stage");
  app.add_option("--simulate-top", o.simulate_top, "simulate the best K plans (default: the sweep's simulate_top, else 0)")
      ->type_name("K")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--all", o.all, "simulate every feasible plan");
  app.add_option("--max-plans", o.max_plans, "refuse sweeps of more plans than this (the product of the axes)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{50'000'000}))
      ->default_str(units::format_count(static_cast<double>(kDefaultMaxPlans)));
  add_progress_options(app, o.progress);
  app.add_option("--merge-timeout", o.merge_timeout_s, "under mpirun, how long rank 0 waits for the other ranks, in seconds")
      ->type_name("S")
      ->check(finite_range(0, 86400 * 7))
      ->default_str("3600");
  app.add_option("--calibration", o.calibration_path, "apply a `trainsim calibrate` file to every plan (and its simulation)")
      ->type_name("FILE");
  app.add_option("--slow-ms", o.slow_ms, "sleep MS per plan (a testing aid for kill/resume tests)")
      ->type_name("MS")
      ->check(CLI::Range(0, 60000));
  app.footer(
      "Sharding: under `mpirun -np K trainsim sweep ...` (OMPI_COMM_WORLD_RANK/SIZE) or a batch array\n"
      "(SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT) each rank takes plans i with i % K == rank and\n"
      "writes PREFIX.rank<r>of<K>.jsonl; under mpirun rank 0 merges them; array pieces are merged with\n"
      "`trainsim sweep-merge PREFIX`.");
}

struct Shard {
  int rank = 0;
  int count = 1;
  bool mpi = false;
};

Shard detect_shard() {
  Shard s;
  auto env_int = [](const char* name) -> int {
    const char* v = std::getenv(name);
    return v ? std::atoi(v) : -1;
  };
  if (env_int("OMPI_COMM_WORLD_SIZE") > 1) {
    s.rank = env_int("OMPI_COMM_WORLD_RANK");
    s.count = env_int("OMPI_COMM_WORLD_SIZE");
    s.mpi = true;
  } else if (env_int("PMI_SIZE") > 1) {
    s.rank = env_int("PMI_RANK");
    s.count = env_int("PMI_SIZE");
    s.mpi = true;
  } else if (env_int("SLURM_ARRAY_TASK_COUNT") > 1 && env_int("SLURM_ARRAY_TASK_ID") >= 0) {
    const int min = std::max(0, env_int("SLURM_ARRAY_TASK_MIN"));
    s.rank = env_int("SLURM_ARRAY_TASK_ID") - min;
    s.count = env_int("SLURM_ARRAY_TASK_COUNT");
  }
  if (s.rank < 0 || s.rank >= s.count) s = Shard{};
  return s;
}

void write_outputs(const std::string& prefix, const std::string& csv_lines, SweepTally& tally, const SweepSpec& spec,
                   const std::map<long long, json>& simulated, const std::string& extra) {
  write_csv_text(prefix + ".csv", csv_lines);
  const std::string summary = summarize_rows(tally, spec.maximize, spec.objective.text(), spec.top_k, simulated) + extra;
  replace_output_file(prefix + ".summary.txt", summary, "--out");
  std::cout << summary;
}

// The plans of a sweep before they are listed: value axes multiply; a degrees axis counts the
// factorisations of the base's GPU count (an axis that changes the GPU count can change it; the
// listing then checks the exact count against the same cap).
double sweep_size(const SweepSpec& spec, const LoadOptions& options, std::string& formula) {
  double n = 1;
  int base_gpus = -1;
  for (const SweepAxis& a : spec.axes) {
    double k = static_cast<double>(a.values.size());
    if (!a.degrees.empty()) {
      if (base_gpus < 0) base_gpus = parse_scenario(resolve_scenario_json(spec.base_raw, options, spec.base_dir)).cluster.total_gpus();
      k = static_cast<double>(factorisations(base_gpus, static_cast<int>(a.degrees.size())).size());
    }
    n *= k;
    formula += (formula.empty() ? "" : " x ") + units::format_count(k);
  }
  return n;
}

// A row of the simulate stage: the simulation's result, judged by the sweep's constraints and
// objective as the estimate's row was, so the summary can rank by it.
json simulated_row(long long index, const json& estimate_plan, const ChildRun& run, const SweepSpec& spec) {
  json row = {{"index", index}};
  const json sim = json::parse(run.output, nullptr, false);
  if (sim.is_discarded() || !sim.is_object() || !sim.contains("step_time_s")) {
    row["error"] = run.error.empty() ? "exit code " + std::to_string(run.exit_code) : run.error;
    return row;
  }
  row["simulate"] = sim;
  json judged = sim;
  judged.erase("scenario");
  judged["plan"] = estimate_plan;
  judged["feasible"] = sim.value("feasible", false);
  judge_row(judged, sim.value("scenario", json::object()), spec.constraints, spec.objective);
  row["feasible"] = judged["feasible"];
  row["meets_constraints"] = judged["meets_constraints"];
  row["objective"] = judged["objective"];
  if (judged.contains("reason_code")) row["reason_code"] = judged["reason_code"];
  return row;
}

int run(SweepOptions& o) {
  const std::string& sweep_file = o.sweep_file;
  const std::string& prefix = o.prefix;
  const bool resume = o.resume, all = o.all;
  const int jobs = o.jobs, slow_ms = o.slow_ms;
  int simulate_top = o.simulate_top;
  const double merge_timeout_s = o.merge_timeout_s;
  const std::string& calibration_path = o.calibration_path;
  if (prefix.empty())
    throw ScenarioError("--out", "missing: where the outputs go; --out runs/NAME writes runs/NAME.rows.jsonl, "
                                 "runs/NAME.csv, runs/NAME.simulated.jsonl and runs/NAME.summary.txt");
  // The outputs: checked (and their folder created) before any work, and locked.
  const fs::path out_dir = fs::path(prefix).has_parent_path() ? fs::path(prefix).parent_path() : fs::path(".");
  if (fs::path(prefix).filename().empty()) throw ScenarioError("--out", "\"" + prefix + "\" names a folder; give PREFIX, e.g. " + prefix + "/NAME");
  create_output_dir(out_dir.string(), "--out");
  const Shard shard = detect_shard();
  const bool merger = shard.count == 1 || (shard.mpi && shard.rank == 0);
  std::unique_ptr<SweepLock> lock;
  if (merger) {
    for (const char* ext : {".rows.jsonl", ".csv", ".summary.txt", ".simulated.jsonl"}) {
      check_output_file(prefix + ext, "--out");
      refuse_overwriting_inputs(prefix + ext, "--out", {o.sweep_file, calibration_path});
    }
    lock = std::make_unique<SweepLock>(prefix + ".lock");
  }
  const std::string shard_tag = "rank" + std::to_string(shard.rank) + "of" + std::to_string(shard.count);
  const std::unique_ptr<SweepLock> shard_lock =
      shard.count > 1 ? std::make_unique<SweepLock>(prefix + "." + shard_tag + ".lock") : nullptr;

  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  const SweepSpec spec = load_sweep_file(sweep_file, options);
  const json calibration = calibration_path.empty() ? json() : read_json_file(calibration_path, "calibration");
  if (simulate_top < 0) simulate_top = spec.simulate_top;
  std::string formula;
  const double size = sweep_size(spec, options, formula);
  if (size > static_cast<double>(o.max_plans))
    throw ScenarioError("axes", "the sweep has " + formula + " = " + units::format_count(size) +
                                    " plans, above the cap of " + units::format_count(static_cast<double>(o.max_plans)) +
                                    " (--max-plans; about 500 bytes and 10 us each): split it or narrow its axes");
  // The base resolved once; each plan changes a parsed copy (SweepPlans).
  const json base_resolved = resolve_scenario_json(spec.base_raw, options, spec.base_dir);
  SweepPlans plans(spec, options, base_resolved, calibration, o.max_plans);
  const std::string rows_path = shard.count > 1 ? prefix + "." + shard_tag + ".jsonl" : prefix + ".rows.jsonl";
  const std::string fingerprint = sweep_fingerprint({{"sweep", read_json_file(sweep_file, "sweep")},
                                                     {"base", base_resolved},
                                                     {"calibration", calibration},
                                                     {"trainsim_version", TRAINSIM_VERSION}});
  const json header = sweep_header(fingerprint, spec.name, static_cast<long long>(plans.size()));
  // A typo in a constraint or the objective stops the sweep here (exit 2, naming it), before
  // every plan would be marked invalid: the names are checked on the first plan that loads.
  for (std::size_t i = 0; i < plans.size() && i < 64; ++i) {
    try {
      const json resolved = resolve_scenario_json(plans.raw(i), options, spec.base_dir);
      const Scenario scenario = parse_scenario(resolved);
      check_expression_names(make_row(0, json::object(), scenario, estimate(scenario)), to_json(scenario),
                             spec.constraints, spec.objective);
      break;
    } catch (const ScenarioError& e) {
      if (e.path().rfind("constraints[", 0) == 0 || e.path() == "objective") throw;
    }
  }

  RowWriter writer(rows_path, resume, header);
  std::size_t mine = 0;
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (static_cast<int>(i % shard.count) == shard.rank) ++mine;
  // One process writing every row: the summary and CSV are kept from the rows as they are made;
  // otherwise (a resumed or sharded sweep) they are read back from the rows files.
  const bool collect = shard.count == 1 && writer.done().empty();
  SweepTally tally;
  std::string csv_lines, overrides;
  // Room for every CSV line (about 200 bytes each): pages are touched only as lines fill them,
  // and the text is never copied as it grows.
  if (collect) csv_lines.reserve(mine * 256);
  RowText row_text(spec, tally);
  std::size_t current = 0;
  RowJudge judge(spec, [&](bool plan_part) -> const json& { return plans.scenario_json(plan_part); },
                 [&] { return plans.overrides(current); });
  EstimateOptions infeasible_stops;
  infeasible_stops.stop_when_infeasible = true;
  Progress progress("sweep", "plans", static_cast<double>(mine), o.progress);
  std::size_t done = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (static_cast<int>(i % shard.count) != shard.rank) continue;
    ++done;
    if (writer.done().count(static_cast<long long>(i))) continue;
    current = i;
    const long long index = static_cast<long long>(i);
    overrides.clear();
    plans.overrides_text(i, overrides);
    std::string& text = writer.buffer();
    const std::size_t mark = text.size();
    try {
      const Scenario& scenario = plans.scenario(i);
      // An infeasible row keeps only why (and the memory it would need): the estimate stops there.
      const Result result = estimate(scenario, infeasible_stops);
      RowJudge::Verdict verdict;
      if (result.feasible) verdict = judge.judge(index, scenario, result);
      row_text.plan_row(index, overrides, scenario, result, result.feasible ? &verdict : nullptr, text,
                        collect ? &csv_lines : nullptr);
    } catch (const ScenarioError& e) {
      // An axis value the loader rejects is a row with its reason, not the end of the sweep.
      text.resize(mark);
      row_text.json_row(invalid_row(index, plans.overrides(i), e.what()), text, collect ? &csv_lines : nullptr);
    }
    writer.commit();
    if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
    progress.update(static_cast<double>(done));
  }
  progress.finish();
  writer.close();
  // Rank 0 of an mpirun sweep waits for the other ranks' markers (one process needs none).
  if (shard.count > 1) write_output_file(rows_path + ".done", "done\n", "--out");

  if (shard.count > 1 && !shard.mpi) {
    std::cerr << "sweep: shard " << shard.rank << " of " << shard.count << " done (" << rows_path
              << "); merge with: trainsim sweep-merge " << prefix << "\n";
    return kExitOk;
  }
  std::vector<std::string> pieces = {rows_path};
  if (shard.count > 1) {
    if (shard.rank != 0) return kExitOk;
    // Rank 0 waits for the other ranks' markers, then merges everything.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(merge_timeout_s);
    for (int r = 1; r < shard.count; ++r) {
      const std::string piece = prefix + ".rank" + std::to_string(r) + "of" + std::to_string(shard.count) + ".jsonl";
      while (!fs::exists(piece + ".done") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (!fs::exists(piece + ".done")) std::cerr << "sweep: rank " << r << " did not finish; merging what it wrote\n";
      if (!fs::exists(piece)) continue;
      if (header_fingerprint(read_sweep_header(piece)) != fingerprint)
        throw ScenarioError("--out", "\"" + piece + "\" holds rows of another sweep; not merged");
      pieces.push_back(piece);
    }
  }
  if (!collect) {
    // The rows as the files hold them, each once: what this process tallied is set aside.
    tally = SweepTally();
    csv_lines.clear();
    const std::map<long long, json> rows = read_rows(pieces);
    if (shard.count > 1) write_rows_jsonl(prefix + ".rows.jsonl", rows, header);
    for (const auto& [i, row] : rows) {
      tally.add_json(row);
      append_csv_line(row, csv_lines);
    }
  }
  // Simulate stage: the best K feasible plans, each in a child process.
  std::string extra;
  std::vector<const RankedPlan*> best;
  for (const RankedPlan& r : tally.ranked()) best.push_back(&r);
  std::sort(best.begin(), best.end(), [&](const RankedPlan* a, const RankedPlan* b) {
    const double x = a->objective, y = b->objective;
    if (x != y) return spec.maximize ? x > y : x < y;
    return a->index < b->index;
  });
  const std::size_t k = all ? best.size() : std::min<std::size_t>(best.size(), simulate_top);
  std::map<long long, json> simulated;
  const std::string sim_path = prefix + ".simulated.jsonl";
  if (k > 0) {
    RowWriter sim_writer(sim_path, resume, header);
    std::vector<ChildRun> runs;
    std::vector<const RankedPlan*> chosen;
    for (std::size_t n = 0; n < k; ++n) {
      const long long i = best[n]->index;
      if (sim_writer.done().count(i)) continue;
      runs.push_back({resolve_scenario_json(plans.raw(static_cast<std::size_t>(i)), options, spec.base_dir).dump(), "", "", -1});
      chosen.push_back(best[n]);
    }
    Progress sim_progress("simulate", "plans", static_cast<double>(runs.size()), o.progress);
    std::size_t finished = 0;
    int failures = 0;
    std::vector<std::string> child_args = {"--fidelity", "simulate", "--json", "--quiet"};
    if (!calibration_path.empty()) {
      child_args.push_back("--calibration");
      child_args.push_back(fs::absolute(calibration_path).string());
    }
    run_children(self_executable(program_name().c_str()), runs, jobs, child_args, [&](std::size_t n) {
      const json row = simulated_row(chosen[n]->index, tally.plan_json(*chosen[n]), runs[n], spec);
      failures += row.contains("error");
      sim_writer.add(row);
      sim_progress.update(static_cast<double>(++finished));
    }, out_dir.string());
    sim_progress.finish();
    sim_writer.close();
    simulated = read_rows({sim_path});
    extra = "\nsimulated " + std::to_string(runs.size()) + " plans in child processes (" +
            std::to_string(failures) + " failed): " + sim_path + "\n";
  }
  write_outputs(prefix, csv_lines, tally, spec, simulated, extra);
  return kExitOk;
}

const CommandRegistrar kRegistrar("sweep", "evaluate a sweep of plans; rows, CSV, Pareto front", declare, run);

struct MergeOptions {
  std::string prefix;
  std::vector<std::string> inputs;
};

void declare_merge(CLI::App& app, MergeOptions& o) {
  app.description(
      "Merges the shard files PREFIX.rank<r>of<K>.jsonl (and any rows files given) into\n"
      "PREFIX.rows.jsonl and PREFIX.csv, sorted by plan index, each plan once.");
  app.add_option("PREFIX", o.prefix, "the --out PREFIX the shards were written with")->required();
  app.add_option("ROWS", o.inputs, "more rows files to merge in");
}

int merge(MergeOptions& o) {
  const std::string& prefix = o.prefix;
  std::vector<std::string> inputs = o.inputs;
  if (prefix.empty() || fs::path(prefix).filename().empty())
    throw ScenarioError("PREFIX", "\"" + prefix + "\" names no file; give the --out PREFIX of the sweep, e.g. runs/NAME");
  for (const auto& in : inputs) {
    std::error_code ec;
    if (!fs::is_regular_file(in, ec))
      throw ScenarioError("ROWS", "\"" + in + "\": " + (fs::exists(in, ec) ? "not a regular file" : "not found"));
  }
  // The targets, checked and locked before anything is read.
  for (const char* ext : {".rows.jsonl", ".csv"}) check_output_file(prefix + ext, "PREFIX");
  const SweepLock lock(prefix + ".lock");
  const fs::path dir = fs::path(prefix).has_parent_path() ? fs::path(prefix).parent_path() : fs::path(".");
  const std::string stem = fs::path(prefix).filename().string() + ".rank";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(stem, 0) == 0 && entry.path().extension() == ".jsonl") inputs.push_back(entry.path().string());
  }
  if (inputs.empty()) throw ScenarioError(prefix, "no shard files " + stem + "*.jsonl found");
  std::sort(inputs.begin(), inputs.end());
  // Every piece must come from the same sweep (the fingerprint in its header).
  json header;
  for (const auto& in : inputs) {
    const json h = read_sweep_header(in);
    const std::string f = header_fingerprint(h);
    if (f.empty()) throw ScenarioError(in, "no sweep header: not the rows of a trainsim sweep");
    if (header.is_null()) header = h;
    else if (f != header_fingerprint(header))
      throw ScenarioError(in, "holds rows of another sweep (fingerprint " + f + ", the others " +
                                  header_fingerprint(header) + "); not merged");
  }
  const auto rows = read_rows(inputs);
  write_rows_jsonl(prefix + ".rows.jsonl", rows, header);
  write_rows_csv(prefix + ".csv", rows);
  std::cout << "merged " << rows.size() << " rows from " << inputs.size() << " files into " << prefix
            << ".rows.jsonl and " << prefix << ".csv\n";
  return kExitOk;
}

const CommandRegistrar kMergeRegistrar("sweep-merge", "merge sharded sweep rows", declare_merge, merge);

}  // namespace
}  // namespace trainsim::cli
