// `trainsim validate --published FILE`: predict every published run and report the error per
// metric, with the mean absolute percentage error. --max-mape fails (exit 1) above a threshold.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
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
#include "models/core/scenario_error.hpp"
#include "validate/cpu_validation.hpp"
#include "validate/published_runs.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim validate --published FILE [--fidelity estimate|simulate] [-j N] [--json] [--cross-validate]
                         [--max-mape METRIC=PCT ...]
       trainsim validate --backend cpu [options]   (see trainsim validate --backend cpu --help)

Predicts every run of a published-runs file (the format of shared/data/published_runs_visible.json:
training runs, nccl-tests all-reduce reports, ZeRO model-state figures) with the estimate tier and
prints predicted vs measured per run and the mean absolute percentage error (MAPE) per metric.
Fields a record leaves out are assumed as stated in the output's "assumptions".

options:
  --published FILE        the runs to predict
  --fidelity TIER         estimate (default) or simulate: each training run is simulated in a
                          child process (one SimGrid engine per process), N at once (-j N)
  --json                  one JSON object: {runs: [...], mape: {metric: {mape, runs}}}
  --cross-validate        fit the training-loop tensor share on all sources but one, predict
                          that one, for each source (leave one source out)
  --max-mape METRIC=PCT   exit 1 if METRIC's MAPE exceeds PCT percent (repeatable),
                          e.g. --max-mape tokens_per_s=15
)";

constexpr const char* kCpuHelp =
    R"(usage: trainsim validate --backend cpu [--ranks N] [--tp N --pp N --dp N]
                         [--layers N --hidden N --heads N --seq N --micro-batch N
                          --micro-batches N --steps N] [--calibration FILE]
                         [--max-error PCT] [--json] [--keep DIR]

Measures this machine (trainsim calibrate --quick --model-shape <the job>, on the same ranks and
threads as the run, immediately before it), predicts the train job from that calibration
(per-op rates through the 1F1B timeline, calibrated MPI collectives, the trainer's buffers),
runs it (mpirun -np N trainsim train ...), and prints predicted vs measured step time, comm time
per group, pipeline bubble, optimizer time and peak memory with the error of each. Measured
figures are medians over the steps after warm-up (the first steps/4). Goal: step time within 5%,
each component within 10%.

options:
  --ranks N             MPI ranks (default 2); the job's tp x pp x dp must equal it
  --tp/--pp/--dp N      plan (default tp 1, pp 2 when N is even else 1, dp = N / (tp pp))
  --layers ... --steps  the job (defaults 4, 128, 4, 64, 2, 4 micro-batches per replica, 8 steps)
  --calibration FILE    reuse this calibration (it must have op_rates at the job's shapes)
  --max-error PCT       exit 1 if the step-time error exceeds PCT percent (default 25)
  --json                one JSON object instead of the table
  --keep DIR            keep the calibration and the training log in DIR
  --attempts N          calibrate and run again, up to N times in all, while the step-time error
                        is above --max-error (a load change on a shared machine; default 1)
)";

// Runs argv (no shell), stdout and stderr to `log`; returns the exit status.
int run_logged(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
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

int run_cpu(int argc, char** argv) {
  validate::CpuJob job;
  int ranks = 2, tp = 0, pp = 0, dp = 0;
  double max_error = 25;
  bool as_json = false;
  std::string calibration_path, keep;
  int attempts = 1;
  auto int_opt = [&](int& i, long long lo) {
    return static_cast<int>(parse_int_option(argv[i], option_value(argc, argv, i), lo, 1 << 20));
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kCpuHelp, stdout);
      return kExitOk;
    } else if (a == "--backend") {
      const std::string b = option_value(argc, argv, i);
      if (b != "cpu") throw ScenarioError("--backend", "expected cpu, got \"" + b + "\"");
    } else if (a == "--ranks") ranks = int_opt(i, 1);
    else if (a == "--tp") tp = int_opt(i, 1);
    else if (a == "--pp") pp = int_opt(i, 1);
    else if (a == "--dp") dp = int_opt(i, 1);
    else if (a == "--layers") job.layers = int_opt(i, 1);
    else if (a == "--hidden") job.hidden = int_opt(i, 1);
    else if (a == "--heads") job.heads = int_opt(i, 1);
    else if (a == "--seq") job.seq = int_opt(i, 2);
    else if (a == "--micro-batch") job.micro_batch = int_opt(i, 1);
    else if (a == "--micro-batches") job.micro_batches = int_opt(i, 1);
    else if (a == "--steps") job.steps = int_opt(i, 2);
    else if (a == "--calibration") calibration_path = option_value(argc, argv, i);
    else if (a == "--keep") keep = option_value(argc, argv, i);
    else if (a == "--attempts") attempts = int_opt(i, 1);
    else if (a == "--json") as_json = true;
    else if (a == "--max-error") {
      const std::string v = option_value(argc, argv, i);
      char* end = nullptr;
      max_error = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(max_error >= 0)) throw ScenarioError("--max-error", "expected a percentage, got \"" + v + "\"");
    } else {
      throw ScenarioError(a, "unknown option; see trainsim validate --backend cpu --help");
    }
  }
  job.tp = tp ? tp : 1;
  job.pp = pp ? pp : (ranks % (2 * job.tp) == 0 ? 2 : 1);
  job.dp = dp ? dp : std::max(1, ranks / (job.tp * job.pp));
  if (job.ranks() != ranks)
    throw ScenarioError("--ranks", std::to_string(ranks) + " but --tp x --pp x --dp = " + std::to_string(job.ranks()));
  if (auto err = validate::check_cpu_job(job); !err.empty()) throw ScenarioError("--backend cpu", err);

  namespace fs = std::filesystem;
  const fs::path tool = fs::path(self_executable(argv[0])).parent_path() / "trainsim-kernels";
  if (!fs::exists(tool))
    throw ScenarioError("--backend cpu", "the measurement tools are not built here (" + tool.string() + " is missing)");
  std::string dir = keep;
  if (dir.empty()) {
    char tmpl[] = "/tmp/trainsim-validate-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a temporary directory");
    dir = tmpl;
  } else {
    fs::create_directories(dir);
  }
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
    if (rc != 0) {
      std::fprintf(stderr, "validate: trainsim calibrate failed (exit %d):\n%s\n", rc, tail(read_text(dir + "/calibrate.log")).c_str());
      return kExitFailure;
    }
  }
  const nlohmann::json cal = nlohmann::json::parse(read_text(calibration_path), nullptr, false);
  if (cal.is_discarded()) throw ScenarioError("--calibration", calibration_path + ": malformed JSON");
  auto train = validate::train_args(job);
  train.push_back("--log");
  train.push_back(dir + "/train.jsonl");
  const int rc = run_logged(launch(train), dir + "/train.out");
  if (rc != 0) {
    std::fprintf(stderr, "validate: trainsim train failed (exit %d):\n%s\n", rc, tail(read_text(dir + "/train.out")).c_str());
    return kExitFailure;
  }
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
    return kExitFailure;
  }
  return kExitOk;
  }
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--backend") return run_cpu(argc, argv);
  std::string file;
  bool as_json = false;
  bool cross_validate = false;
  std::vector<std::pair<std::string, double>> limits;
  std::string fidelity = "estimate";
  int jobs = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--published") {
      file = option_value(argc, argv, i);
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "--cross-validate") {
      cross_validate = true;
    } else if (a == "--fidelity") {
      fidelity = option_value(argc, argv, i);
      if (fidelity != "estimate" && fidelity != "simulate")
        throw ScenarioError("--fidelity", "expected estimate or simulate, got \"" + fidelity + "\"");
    } else if (a == "-j") {
      jobs = static_cast<int>(parse_int_option(a, option_value(argc, argv, i), 1, 256));
    } else if (a == "--max-mape") {
      const auto [metric, pct] = parse_set(option_value(argc, argv, i));
      char* end = nullptr;
      const double v = std::strtod(pct.c_str(), &end);
      if (pct.empty() || *end != '\0' || !(v >= 0))
        throw ScenarioError("--max-mape", "expected METRIC=PERCENT, got \"" + metric + "=" + pct + "\"");
      limits.emplace_back(metric, v);
    } else {
      throw ScenarioError(a, "unknown option; see trainsim validate --help");
    }
  }
  if (file.empty()) throw ScenarioError("--published", "missing; see trainsim validate --help");
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
    run_children(self_executable(argv[0]), runs, jobs, {"--fidelity", "simulate", "--json"}, [&](std::size_t n) {
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
    validate::summarize(report);
  }
  if (cross_validate) {
    // How well the one fitted parameter carries from some sources to another.
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
        rc = kExitFailure;
      }
    }
    if (!found) throw ScenarioError("--max-mape", "no run has metric \"" + metric + "\"");
  }
  return rc;
}

const CommandRegistrar kRegistrar("validate", "compare predictions with published or measured runs", run);

}  // namespace
}  // namespace trainsim::cli
