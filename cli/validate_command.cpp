// `trainsim validate --published [FILE]`: predict every published run (by default the records
// shipped in data/published_runs.json) and report the error per metric, with the mean absolute
// percentage error; --max-mape fails (exit 4) above a threshold. `trainsim validate --backend
// cpu|cuda`: calibrate this machine, predict the small training job with the estimate tier, run
// it with every op recorded, calibrate again, compare (validate/cpu_validation.hpp).
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/child_runs.hpp"
#include "cli/command_registry.hpp"
#include "cli/mpi_launch.hpp"
#include "cli/output_file.hpp"
#include "cli/progress.hpp"
#include "models/core/scenario_error.hpp"
#include "models/cost/calibration.hpp"
#include "models/scenario/input_file.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "validate/cpu_validation.hpp"
#include "validate/measured_run.hpp"
#include "validate/validation_report.hpp"
#include "validate/published_runs.hpp"

namespace trainsim::cli {
namespace {

struct ValidateOptions {
  // --published
  std::string published;  // the file; empty: data/published_runs.json
  std::string fidelity = "estimate";
  int jobs = 2;
  std::vector<std::string> max_mape;
  // --backend cpu|cuda
  std::string backend;
  validate::CpuJob job;
  int ranks = 2, tp = 0, pp = 0, dp = 0;
  validate::Limits limits;
  double max_error_pct = 5, max_component_error_pct = 15;
  std::string calibration_path, keep, trace_path, report_dir;
  // both
  bool json = false;
  bool cross_validate = false;  // --published: leave one source out
  std::string scenario_of;      // --published: print this record's scenario instead
  ProgressMode progress = ProgressMode::kAuto;
  CLI::Option* published_opt = nullptr;
};

void declare(CLI::App& app, ValidateOptions& o) {
  app.description(
      "validate --published: predicts every run of a published-runs file (training runs, nccl-tests\n"
      "reports of any collective, ZeRO model-state figures; each record cites its source) with the\n"
      "estimate tier and prints predicted vs measured per run and the mean absolute percentage error\n"
      "(MAPE) per metric. Fields a record leaves out are assumed as stated in the output's\n"
      "\"assumptions\" (docs/accuracy.md, \"How a record is read\").\n\n"
      "validate --backend cpu (or cuda): measures this machine (trainsim calibrate --quick\n"
      "--model-shape <the job>, on the same ranks, one per core, as the run), predicts the train job\n"
      "with the estimate tier (the op graph of trainsim run) fed by that calibration, runs it (trainsim\n"
      "train under mpiexec, every op recorded by each rank), calibrates again, and prints predicted vs\n"
      "measured step time and components (compute, TP comm, pipeline p2p + bubble, DP comm, optimizer)\n"
      "with the median and 95% interval of each over the undisturbed steps after warm-up. Exit 4 when\n"
      "the prediction is outside the limits, and also when the run cannot be judged: too noisy (steps\n"
      "disturbed by other processes, a wide interval), the machine changed between the calibrations\n"
      "or its ranks' cores ran at different speeds, or more ranks than cores (docs/validation.md).");
  const std::string pub = "published runs (--published)";
  o.published_opt = app.add_option("--published", o.published,
                                   "the runs to predict (default: data/published_runs.json, shipped with trainsim)")
                        ->type_name("[FILE]")
                        ->expected(0, 1)
                        ->group(pub);
  app.add_option("--fidelity", o.fidelity,
                 "estimate, or simulate: each training run simulated in a child process (one SimGrid\n"
                 "engine per process), N at once (-j N)")
      ->type_name("TIER")
      ->check(CLI::IsMember({"estimate", "simulate"}))
      ->default_str("estimate")
      ->group(pub);
  app.add_option("-j,--jobs", o.jobs, "child processes at once with --fidelity simulate")
      ->type_name("N")
      ->check(CLI::Range(1, 256))
      ->default_str("2")
      ->group(pub);
  app.add_option("--max-mape", o.max_mape,
                 "exit 4 if METRIC's MAPE exceeds PCT percent (repeatable), e.g. tokens_per_s=15")
      ->type_name("METRIC=PCT")
      ->allow_extra_args(false)
      ->group(pub);
  const std::string cpu = "the training job on this machine (--backend cpu|cuda)";
  app.add_option("--backend", o.backend, "measure and predict the small GPT train job on this machine's cores (cpu) or GPUs (cuda)")
      ->type_name("cpu|cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->excludes(o.published_opt)  // two modes: measuring this machine does not read published runs
      ->group(cpu);
  app.add_option("--ranks", o.ranks, "MPI ranks; the job's tp x pp x dp must equal it")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("2")->group(cpu);
  app.add_option("--tp", o.tp, "tensor-parallel degree (default 1)")->type_name("N")->check(CLI::Range(1, 1 << 20))->group(cpu);
  app.add_option("--pp", o.pp, "pipeline degree (default 2 when ranks is even, else 1)")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->group(cpu);
  app.add_option("--dp", o.dp, "data-parallel degree (default ranks / (tp pp))")->type_name("N")->check(CLI::Range(1, 1 << 20))->group(cpu);
  app.add_option("--zero", o.job.zero, "ZeRO stage of the data-parallel reduction: 0 or 1")
      ->type_name("Z")->check(CLI::Range(0, 1))->default_str("1")->group(cpu);
  app.add_option("--schedule", o.job.schedule, "pipeline order: 1f1b or gpipe")
      ->type_name("S")->check(CLI::IsMember({"1f1b", "gpipe"}))->default_str("1f1b")->group(cpu);
  app.add_option("--compression", o.job.compression, "DP gradient compression: none, int8, int4, fp8, 2of4 or topk")
      ->type_name("C")->check(CLI::IsMember({"none", "int8", "int4", "fp8", "2of4", "topk"}))->default_str("none")->group(cpu);
  app.add_option("--layers", o.job.layers, "transformer layers")->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("4")->group(cpu);
  app.add_option("--hidden", o.job.hidden, "hidden size")->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("128")->group(cpu);
  app.add_option("--heads", o.job.heads, "attention heads")->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("4")->group(cpu);
  app.add_option("--seq", o.job.seq, "sequence length")->type_name("N")->check(CLI::Range(2, 1 << 20))->default_str("64")->group(cpu);
  app.add_option("--vocab", o.job.vocab, "vocabulary (>= 256, byte-level tokens)")
      ->type_name("N")->check(CLI::Range(256, 1 << 20))->default_str("256")->group(cpu);
  app.add_option("--micro-batch", o.job.micro_batch, "sequences per micro-batch")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("2")->group(cpu);
  app.add_option("--micro-batches", o.job.micro_batches, "micro-batches per replica per step")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("4")->group(cpu);
  app.add_option("--steps", o.job.steps, "training steps (warm-up included; more steps narrow the 95% intervals)")
      ->type_name("N")->check(CLI::Range(20, 1 << 20))->default_str("60")->group(cpu);
  app.add_option("--calibration", o.calibration_path,
                 "predict from this calibration (it must have op_rates at the job's shapes) instead of\n"
                 "measuring one before and after the run; the machine-change check is then skipped")
      ->type_name("FILE")->group(cpu);
  app.add_option("--max-error", o.max_error_pct, "exit 4 if the step-time error exceeds PCT percent")
      ->type_name("PCT")->check(finite_range(0, 1e6))->default_str("5")->group(cpu);
  app.add_option("--max-component-error", o.max_component_error_pct,
                 "exit 4 if a component holding >= 10% of the step is off by more than PCT percent")
      ->type_name("PCT")->check(finite_range(0, 1e6))->default_str("15")->group(cpu);
  app.add_option("--trace", o.trace_path,
                 "write the measured and the predicted step side by side as a Chrome / Perfetto trace\n"
                 "(process \"measured\": a thread per rank; \"predicted\": a thread per stage)")
      ->type_name("FILE")->group(cpu);
  app.add_option("--report", o.report_dir,
                 "write DIR/index.html (self-contained: error per component with its 95% interval, both\n"
                 "timelines, step times, the calibration used), DIR/report.json and DIR/trace.json")
      ->type_name("DIR")->group(cpu);
  app.add_option("--keep", o.keep, "keep the calibrations, the training log and the op timelines in DIR")->type_name("DIR")->group(cpu);
  app.add_flag("--cross-validate", o.cross_validate,
               "fit the training-loop tensor share on all sources but one and predict that one, for each\n"
               "source (leave one source out)")
      ->group(pub);
  app.add_option("--scenario-of", o.scenario_of,
                 "print the scenario the record with this id is predicted from (save it and run it with\n"
                 "trainsim run, or change it), and its assumptions on stderr")
      ->type_name("ID")->group(pub);
  add_json_flag(app, o.json, "one JSON object instead of the table");
  add_progress_options(app, o.progress);
  app.footer(mpi_root_help());
}

// Runs argv (no shell), stdout and stderr to `log`; returns the exit status.
int run_logged(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid < 0) throw ScenarioError("--backend", std::string("cannot start a process: ") + std::strerror(errno));
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stdout);
    if (f) dup2(fileno(stdout), fileno(stderr));
    std::vector<char*> c;
    for (const auto& a : args) c.push_back(const_cast<char*>(a.c_str()));
    c.push_back(nullptr);
    execvp(c[0], c.data());
    std::perror(c[0]);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail(const std::string& text, std::size_t n = 1500) {
  return text.size() > n ? text.substr(text.size() - n) : text;
}

// A measurement step that failed: bad input and failed checks keep their codes; mpiexec refusing
// to run (as root, say) is the machine's setup, reported as such (exit 2), not as a bug.
int launch_failed(const char* step, int rc, const std::string& log_path) {
  const std::string log = read_text(log_path);
  std::fprintf(stderr, "validate: trainsim %s failed (exit %d):\n%s\n", step, rc, tail(log).c_str());
  if (mpi_refused_root(log)) {
    std::fprintf(stderr, "validate: mpiexec refused to start: %s\n", mpi_root_help());
    return kExitBadInput;
  }
  if (rc == kExitBadInput || rc == kExitCheckFailed) return rc;
  return kExitFailure;
}

// The cores this process may run on (its affinity mask), which the ranks inherit.
int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

nlohmann::json read_calibration(const std::string& path, const char* what) {
  nlohmann::json cal;
  try {
    cal = read_json_file(path, "calibration");  // its errors name the path
  } catch (const ScenarioError& e) {
    throw ScenarioError(what, e.what());
  }
  try {
    check_calibration_header(cal);
  } catch (const ScenarioError& e) {
    throw ScenarioError(what, path + ": " + e.what());
  }
  return cal;
}

int run_measured(ValidateOptions& o) {
  validate::CpuJob job = o.job;
  const int ranks = o.ranks;
  job.tp = o.tp ? o.tp : 1;
  job.pp = o.pp ? o.pp : (ranks % (2 * job.tp) == 0 ? 2 : 1);
  job.dp = o.dp ? o.dp : std::max(1, ranks / (job.tp * job.pp));
  if (job.ranks() != ranks)
    throw ScenarioError("--ranks", std::to_string(ranks) + " but --tp x --pp x --dp = " + std::to_string(job.ranks()));
  if (auto err = validate::check_cpu_job(job); !err.empty()) throw ScenarioError("--backend " + o.backend, err);
  validate::Limits limits = o.limits;
  limits.step = o.max_error_pct / 100;
  limits.component = o.max_component_error_pct / 100;

  namespace fs = std::filesystem;
  const fs::path tool = fs::path(self_executable(program_name().c_str())).parent_path() / "trainsim-kernels";
  if (!fs::exists(tool))
    throw ScenarioError("--backend", "the measurement tools are not built here (" + tool.string() + " is missing)");
  if (!o.trace_path.empty()) check_output_file(o.trace_path, "--trace");
  if (!o.report_dir.empty()) create_output_dir(o.report_dir, "--report");
  std::string dir = o.keep;
  if (dir.empty()) {
    char tmpl[] = "/tmp/trainsim-validate-XXXXXX";
    if (!mkdtemp(tmpl)) throw ScenarioError("--backend", std::string("cannot create a temporary folder in /tmp: ") + std::strerror(errno));
    dir = tmpl;
  } else {
    create_output_dir(dir, "--keep");
  }
  // One rank per core, each pinned to its own (Open MPI --bind-to core --map-by core), when the
  // machine has a core for every rank; beyond that the ranks time-share cores, which the
  // prediction does not model: the run still goes (it checks the job works) but is not judged.
  validate::RunContext ctx;
  ctx.backend = o.backend;
  ctx.cores = usable_cores();
  const bool oversubscribed = o.backend == "cpu" && ranks > ctx.cores;
  ctx.binding = oversubscribed ? "oversubscribed: " + std::to_string(ranks) + " ranks on " + std::to_string(ctx.cores) +
                                     " cores, not pinned"
                               : "one rank per core, each pinned (mpiexec --bind-to core), one thread per rank";
  allow_mpi_as_root();  // Open MPI refuses to start as root without it (mpi_launch.hpp)
  auto launch = [&](std::vector<std::string> args) {
    args.insert(args.begin(), tool.string());
    std::vector<std::string> mpi{"mpirun", "-np", std::to_string(ranks)};
    if (oversubscribed) mpi.insert(mpi.end(), {"--oversubscribe", "--bind-to", "none"});
    else mpi.insert(mpi.end(), {"--bind-to", "core", "--map-by", "core"});
    args.insert(args.begin(), mpi.begin(), mpi.end());
    return args;
  };
  auto calibrate = [&](const std::string& out, const std::string& log) {
    return run_logged(launch({"calibrate", "--backend", o.backend, "--quick", "--min-time", "0.03", "--threads", "1",
                              "--model-shape", validate::model_shape_arg(job), "--out", out}),
                      log);
  };
  const bool measure_calibration = o.calibration_path.empty();
  std::string cal_path = o.calibration_path;
  if (measure_calibration) {
    cal_path = dir + "/calibration_before.json";
    if (const int rc = calibrate(cal_path, dir + "/calibrate_before.log"); rc != 0)
      return launch_failed("calibrate", rc, dir + "/calibrate_before.log");
  }
  ctx.calibration = read_calibration(cal_path, "--calibration");
  ctx.calibration_file = measure_calibration ? "" : cal_path;
  auto train = validate::train_args(job, o.backend);
  train.insert(train.end(), {"--log", dir + "/train.jsonl", "--timeline", dir + "/timeline"});
  if (const int rc = run_logged(launch(train), dir + "/train.out"); rc != 0) return launch_failed("train", rc, dir + "/train.out");
  if (measure_calibration) {
    const std::string after = dir + "/calibration_after.json";
    if (const int rc = calibrate(after, dir + "/calibrate_after.log"); rc != 0)
      return launch_failed("calibrate", rc, dir + "/calibrate_after.log");
    ctx.calibration_after = read_calibration(after, "calibration after the run");
  }
  const validate::CpuPrediction pred = validate::predict_cpu_job(job, ctx.calibration);
  std::optional<validate::CpuPrediction> pred_after;
  if (!ctx.calibration_after.is_null()) pred_after = validate::predict_cpu_job(job, ctx.calibration_after);
  const validate::MeasuredRun run = validate::read_timelines(dir + "/timeline", ranks);
  const validate::Comparison cmp =
      validate::compare(job, pred, pred_after ? &*pred_after : nullptr, run, limits, oversubscribed);
  const nlohmann::json report = validate::comparison_json(job, pred, cmp, ctx);
  if (o.json) std::cout << report.dump(2) << "\n";
  else std::cout << validate::comparison_text(job, pred, cmp, ctx);
  const int step = validate::representative_step(run, cmp);
  if (!o.trace_path.empty()) write_output_file(o.trace_path, validate::trace_json(job, pred, run, step).dump() + "\n", "--trace");
  if (!o.report_dir.empty()) {
    write_output_file(o.report_dir + "/index.html", validate::report_html(job, pred, cmp, run, ctx), "--report");
    write_output_file(o.report_dir + "/report.json", report.dump(2) + "\n", "--report");
    write_output_file(o.report_dir + "/trace.json", validate::trace_json(job, pred, run, step).dump() + "\n", "--report");
  }
  if (o.keep.empty()) fs::remove_all(dir);
  if (cmp.verdict != validate::Verdict::kPass) {
    std::fprintf(stderr, "validate: %s\n", validate::to_string(cmp.verdict));
    for (const auto& r : cmp.reasons) std::fprintf(stderr, "validate:   %s\n", r.c_str());
    return kExitCheckFailed;
  }
  return kExitOk;
}

int run(ValidateOptions& o) {
  if (!o.backend.empty()) return run_measured(o);
  std::string file = o.published;
  if (file.empty()) {
    file = validate::default_published_runs_path();
    if (!o.published_opt->count() && !o.json)
      std::fprintf(stderr, "validate: the published runs in %s (--published FILE for others)\n", file.c_str());
  }
  const bool as_json = o.json;
  const std::string& fidelity = o.fidelity;
  const int jobs = o.jobs;
  std::vector<std::pair<std::string, double>> limits;
  for (const auto& text : o.max_mape) {
    const auto eq = text.find('=');
    const std::string metric = eq == std::string::npos ? text : text.substr(0, eq);
    const std::string pct = eq == std::string::npos ? std::string() : text.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(pct.c_str(), &end);
    if (metric.empty() || pct.empty() || *end != '\0' || !(v >= 0) || !std::isfinite(v))
      throw ScenarioError("--max-mape", "expected METRIC=PERCENT, got \"" + text + "\"");
    limits.emplace_back(metric, v);
  }
  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  const nlohmann::json records = validate::read_published_file(file);
  if (!o.scenario_of.empty()) {
    for (const auto& rec : records) {
      if (!rec.is_object() || rec.value("id", std::string()) != o.scenario_of) continue;
      std::vector<std::string> assumptions;
      const nlohmann::json scenario = validate::scenario_from_record(rec, assumptions);
      for (const auto& a : assumptions) std::fprintf(stderr, "validate: assumed: %s\n", a.c_str());
      std::cout << scenario.dump(2) << "\n";
      return kExitOk;
    }
    throw ScenarioError("--scenario-of", "no record with id \"" + o.scenario_of + "\" in " + file);
  }
  auto report = validate::compare_published(records, options);
  if (fidelity == "simulate") {
    // Re-predict every training run with the simulate tier, each in a child process.
    std::vector<ChildRun> runs;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < report.runs.size(); ++i) {
      if (!report.runs[i].predicted || report.runs[i].kind != "training") continue;
      runs.push_back({report.runs[i].scenario.dump(), "", "", -1});
      which.push_back(i);
    }
    Progress progress("validate (simulate)", "runs", static_cast<double>(runs.size()), o.progress);
    std::size_t finished = 0;
    run_children(self_executable(program_name().c_str()), runs, jobs, {"--fidelity", "simulate", "--json"}, [&](std::size_t n) {
      progress.update(static_cast<double>(++finished));
      auto& run = report.runs[which[n]];
      try {
        const auto j = nlohmann::json::parse(runs[n].output);
        Result r;
        r.step_time_s = j.at("step_time_s").get<double>();
        r.tokens_per_step = j.at("tokens_per_step").get<double>();
        r.tokens_per_s = j.at("tokens_per_s").get<double>();
        r.hardware_tflops_per_gpu = j.at("hardware_tflops_per_gpu").get<double>();
        r.mfu = j.at("mfu").get<double>();
        validate::fill_training_metrics(records[which[n]], r, run);
        run.assumptions.push_back("simulate tier");
      } catch (const std::exception&) {
        run.assumptions.push_back("simulate failed, estimate kept: " + runs[n].error.substr(0, 200));
      }
    });
    progress.finish();
    validate::summarize(report);
  }
  if (o.cross_validate) {
    // How well the one parameter fitted on end-to-end runs carries from some sources to another.
    const auto folds = validate::cross_validate_sources(report, records);
    const auto all = validate::fit_training_tensor_share(report, records, [](const nlohmann::json&) { return true; });
    std::cout << validate::cross_validation_to_text(folds, all);
    return kExitOk;
  }
  if (as_json) std::cout << validate::report_to_json(report).dump(2) << "\n";
  else std::cout << validate::report_to_text(report);
  int rc = kExitOk;
  for (const auto& [metric, pct] : limits) {
    bool found = false;
    for (const auto& [m, mape] : report.mape) {
      if (m != metric) continue;
      found = true;
      if (!(100 * mape <= pct)) {  // a NaN error (a figure out of range) fails the gate too
        std::fprintf(stderr, "validate: %s MAPE %.1f%% exceeds the limit %.1f%%\n", m.c_str(), 100 * mape, pct);
        rc = kExitCheckFailed;
      }
    }
    if (!found) throw ScenarioError("--max-mape", "no run has metric \"" + metric + "\"");
  }
  return rc;
}

const CommandRegistrar kRegistrar("validate", "compare predictions with published or measured runs", declare, run);

}  // namespace
}  // namespace trainsim::cli
