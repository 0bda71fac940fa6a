// `trainsim validate --published [FILE]`: predict every published run (by default the records
// shipped in data/published_runs.json) and report the error per metric, with the mean absolute
// percentage error; --max-mape fails (exit 4) above a threshold. `trainsim validate --backend
// cpu`: calibrate this machine, predict the small training job, run it, compare.
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
#include <sstream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/child_runs.hpp"
#include "cli/command_registry.hpp"
#include "cli/mpi_launch.hpp"
#include "cli/output_file.hpp"
#include "cli/progress.hpp"
#include "models/core/scenario_error.hpp"
#include "validate/cpu_validation.hpp"
#include "validate/published_runs.hpp"

namespace trainsim::cli {
namespace {

struct ValidateOptions {
  // --published
  std::string published;  // the file; empty: data/published_runs.json
  std::string fidelity = "estimate";
  int jobs = 2;
  std::vector<std::string> max_mape;
  // --backend cpu
  std::string backend;
  validate::CpuJob job;
  int ranks = 2, tp = 0, pp = 0, dp = 0, attempts = 1;
  double max_error = 25;
  std::string calibration_path, keep;
  // both
  bool json = false;
  bool cross_validate = false;  // --published: leave one source out
  ProgressMode progress = ProgressMode::kAuto;
  CLI::Option* published_opt = nullptr;
};

void declare(CLI::App& app, ValidateOptions& o) {
  app.description(
      "validate --published: predicts every run of a published-runs file (training runs, nccl-tests\n"
      "all-reduce reports, ZeRO model-state figures; each record cites its source) with the estimate\n"
      "tier and prints predicted vs measured per run and the mean absolute percentage error (MAPE) per\n"
      "metric. Fields a record leaves out are assumed as stated in the output's \"assumptions\".\n\n"
      "validate --backend cpu: measures this machine (trainsim calibrate --quick --model-shape <the\n"
      "job>, on the same ranks and threads as the run, immediately before it), predicts the train job\n"
      "from that calibration, runs it (trainsim train under mpiexec) and prints predicted vs measured\n"
      "step time, comm time per group, pipeline bubble, optimizer time and peak memory with the error\n"
      "of each (medians over the steps after warm-up).");
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
  const std::string cpu = "the CPU training job (--backend cpu)";
  app.add_option("--backend", o.backend, "measure and predict the small GPT train job on this machine")
      ->type_name("cpu")
      ->check(CLI::IsMember({"cpu"}))
      ->group(cpu);
  app.add_option("--ranks", o.ranks, "MPI ranks; the job's tp x pp x dp must equal it")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("2")->group(cpu);
  app.add_option("--tp", o.tp, "tensor-parallel degree (default 1)")->type_name("N")->check(CLI::Range(1, 1 << 20))->group(cpu);
  app.add_option("--pp", o.pp, "pipeline degree (default 2 when ranks is even, else 1)")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->group(cpu);
  app.add_option("--dp", o.dp, "data-parallel degree (default ranks / (tp pp))")->type_name("N")->check(CLI::Range(1, 1 << 20))->group(cpu);
  app.add_option("--layers", o.job.layers, "transformer layers")->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("4")->group(cpu);
  app.add_option("--hidden", o.job.hidden, "hidden size")->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("128")->group(cpu);
  app.add_option("--heads", o.job.heads, "attention heads")->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("4")->group(cpu);
  app.add_option("--seq", o.job.seq, "sequence length")->type_name("N")->check(CLI::Range(2, 1 << 20))->default_str("64")->group(cpu);
  app.add_option("--micro-batch", o.job.micro_batch, "sequences per micro-batch")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("2")->group(cpu);
  app.add_option("--micro-batches", o.job.micro_batches, "micro-batches per replica per step")
      ->type_name("N")->check(CLI::Range(1, 1 << 20))->default_str("4")->group(cpu);
  app.add_option("--steps", o.job.steps, "training steps")->type_name("N")->check(CLI::Range(2, 1 << 20))->default_str("8")->group(cpu);
  app.add_option("--calibration", o.calibration_path, "reuse this calibration (it must have op_rates at the job's shapes)")
      ->type_name("FILE")->group(cpu);
  app.add_option("--max-error", o.max_error, "exit 4 if the step-time error exceeds PCT percent")
      ->type_name("PCT")->check(finite_range(0, 1e6))->default_str("25")->group(cpu);
  app.add_option("--keep", o.keep, "keep the calibration and the training log in DIR")->type_name("DIR")->group(cpu);
  app.add_option("--attempts", o.attempts,
                 "calibrate and run again, up to N times in all, while the step-time error is above\n"
                 "--max-error (a load change on a shared machine)")
      ->type_name("N")->check(CLI::Range(1, 100))->default_str("1")->group(cpu);
  app.add_flag("--cross-validate", o.cross_validate,
               "fit the training-loop tensor share on all sources but one and predict that one, for each\n"
               "source (leave one source out)")
      ->group(pub);
  add_json_flag(app, o.json, "one JSON object instead of the table");
  add_progress_options(app, o.progress);
  app.footer(mpi_root_help());
}

// Runs argv (no shell), stdout and stderr to `log`; returns the exit status.
int run_logged(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid < 0) throw ScenarioError("--backend cpu", std::string("cannot start a process: ") + std::strerror(errno));
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

int run_cpu(ValidateOptions& o) {
  validate::CpuJob job = o.job;
  const int ranks = o.ranks, tp = o.tp, pp = o.pp, dp = o.dp, attempts = o.attempts;
  const double max_error = o.max_error;
  const bool as_json = o.json;
  std::string calibration_path = o.calibration_path;
  const std::string& keep = o.keep;
  job.tp = tp ? tp : 1;
  job.pp = pp ? pp : (ranks % (2 * job.tp) == 0 ? 2 : 1);
  job.dp = dp ? dp : std::max(1, ranks / (job.tp * job.pp));
  if (job.ranks() != ranks)
    throw ScenarioError("--ranks", std::to_string(ranks) + " but --tp x --pp x --dp = " + std::to_string(job.ranks()));
  if (auto err = validate::check_cpu_job(job); !err.empty()) throw ScenarioError("--backend cpu", err);

  namespace fs = std::filesystem;
  const fs::path tool = fs::path(self_executable(program_name().c_str())).parent_path() / "trainsim-kernels";
  if (!fs::exists(tool))
    throw ScenarioError("--backend cpu", "the measurement tools are not built here (" + tool.string() + " is missing)");
  std::string dir = keep;
  if (dir.empty()) {
    char tmpl[] = "/tmp/trainsim-validate-XXXXXX";
    if (!mkdtemp(tmpl)) throw ScenarioError("--backend cpu", std::string("cannot create a temporary folder in /tmp: ") + std::strerror(errno));
    dir = tmpl;
  } else {
    create_output_dir(dir, "--keep");
  }
  // Open MPI refuses to start as root without these (mpi_launch.hpp).
  allow_mpi_as_root();
  // Same launcher, ranks, binding and threads for the calibration and the run.
  auto launch = [&](std::vector<std::string> args) {
    args.insert(args.begin(), tool.string());
    if (ranks > 1) args.insert(args.begin(), {"mpirun", "-np", std::to_string(ranks), "--oversubscribe"});
    return args;
  };
  const bool measured_calibration = calibration_path.empty();
  for (int attempt = 1;; ++attempt) {
  if (measured_calibration) {
    calibration_path = dir + "/calibration.json";
    const int rc = run_logged(launch({"calibrate", "--backend", "cpu", "--quick", "--min-time", "0.03", "--threads", "1",
                                      "--model-shape", validate::model_shape_arg(job), "--out", calibration_path}),
                              dir + "/calibrate.log");
    if (rc != 0) return launch_failed("calibrate", rc, dir + "/calibrate.log");
  }
  const nlohmann::json cal = nlohmann::json::parse(read_text(calibration_path), nullptr, false);
  if (cal.is_discarded()) throw ScenarioError("--calibration", calibration_path + ": malformed JSON");
  auto train = validate::train_args(job);
  train.push_back("--log");
  train.push_back(dir + "/train.jsonl");
  const int rc = run_logged(launch(train), dir + "/train.out");
  if (rc != 0) return launch_failed("train", rc, dir + "/train.out");
  const auto pred = validate::predict_cpu_job(job, cal);
  const auto meas = validate::measure_from_train_log(read_text(dir + "/train.jsonl"));
  auto rows = validate::compare_cpu(pred, meas);
  // A group of one rank communicates nothing: what the trainer logs there is the call overhead
  // of a size-1 collective, which has no prediction to compare with.
  for (auto& r : rows)
    if ((r.metric == "comm_time_dp_s" && job.dp == 1) || (r.metric == "comm_time_tp_s" && job.tp == 1))
      r.error = std::nan("");
  // A load change on a shared machine between the calibration and the run (another job taking a
  // core) shows as a step-time error; --attempts N measures both again, up to N times in all.
  if (!(std::fabs(rows.front().error) * 100 <= max_error) && attempt < attempts) {
    std::fprintf(stderr, "validate: attempt %d: step-time error %.1f%% above %.1f%%; calibrating and running again\n",
                 attempt, 100 * rows.front().error, max_error);
    continue;
  }
  const double est_err = meas.step_time_s > 0 ? (pred.estimate_step_time_s - meas.step_time_s) / meas.step_time_s : 0;
  if (keep.empty()) fs::remove_all(dir);
  if (as_json) {
    nlohmann::json j;
    j["backend"] = "cpu";
    j["job"] = {{"ranks", ranks}, {"tp", job.tp}, {"pp", job.pp}, {"dp", job.dp}, {"layers", job.layers},
                {"hidden", job.hidden}, {"heads", job.heads}, {"seq", job.seq}, {"vocab", job.vocab},
                {"micro_batch", job.micro_batch}, {"micro_batches", job.micro_batches}, {"steps", job.steps},
                {"zero", job.zero}, {"precision", "fp32"}, {"schedule", "1f1b"}};
    j["calibration"] = {{"file", measured_calibration ? "measured before the run" : calibration_path},
                        {"device", cal.value("device", "")}, {"applied", pred.calibration_applied}};
    j["metrics"] = nlohmann::json::array();
    for (const auto& r : rows)
      j["metrics"].push_back({{"metric", r.metric}, {"predicted", r.predicted}, {"measured", r.measured},
                              {"error", std::isfinite(r.error) ? nlohmann::json(r.error) : nlohmann::json(nullptr)}});
    j["estimate_tier"] = {{"step_time_s", pred.estimate_step_time_s}, {"error", est_err},
                          {"peak_memory_bytes", pred.estimate_peak_memory_bytes},
                          {"note", "trainsim run --fidelity estimate --calibration FILE on the job's scenario"}};
    j["steps_used"] = meas.steps_used;
    j["step_time_spread"] = meas.step_time_spread;
    j["max_error_pct"] = max_error;
    j["notes"] = pred.notes;
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("validate --backend cpu: %d rank(s), tp %d x pp %d x dp %d, GPT layers %d hidden %d heads %d seq %d "
                "vocab %d, micro-batch %d x %d per replica, %d steps (median of the last %d)\n",
                ranks, job.tp, job.pp, job.dp, job.layers, job.hidden, job.heads, job.seq, job.vocab, job.micro_batch,
                job.micro_batches, job.steps, meas.steps_used);
    std::printf("calibration: %s (%s)\n", measured_calibration ? "measured just before the run" : calibration_path.c_str(),
                cal.value("device", std::string("?")).c_str());
    std::printf("%-20s %14s %14s %9s\n", "metric", "predicted", "measured", "error");
    for (const auto& r : rows) {
      char err[32];
      if (std::isfinite(r.error)) std::snprintf(err, sizeof err, "%+8.1f%%", 100 * r.error);
      else std::snprintf(err, sizeof err, "%9s", "n/a");
      std::printf("%-20s %14.6g %14.6g %s\n", r.metric.c_str(), r.predicted, r.measured, err);
    }
    std::printf("estimate tier (run --calibration, the same op rates): step %.6g s (%+.1f%%)\n",
                pred.estimate_step_time_s, 100 * est_err);
    std::printf("measured step-time spread (max-min)/median over the steps used: %.1f%%\n", 100 * meas.step_time_spread);
  }
  const double step_err = rows.front().error;
  if (!(std::fabs(step_err) * 100 <= max_error)) {
    std::fprintf(stderr, "validate: step-time error %.1f%% exceeds the limit %.1f%%\n", 100 * step_err, max_error);
    return kExitCheckFailed;
  }
  return kExitOk;
  }
}

int run(ValidateOptions& o) {
  if (!o.backend.empty()) return run_cpu(o);
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
      if (100 * mape > pct) {
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
