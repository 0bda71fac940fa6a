#include "validate/cpu_validation.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/scenario_error.hpp"
#include "models/cost/calibration.hpp"

namespace trainsim::validate {
using nlohmann::json;

namespace {

std::string s(int v) { return std::to_string(v); }

// The trainer's --compression names and the plan's (models/cost/compression.hpp).
std::string plan_compression_method(const std::string& trainer_method) {
  return trainer_method == "2of4" ? "2:4" : trainer_method;
}

// The op class of a priced compute op of the op graph (measured_run.hpp op_class names).
std::string op_class(const ComputeOp& op) {
  switch (op.kind) {
    case ComputeKind::kGemm: return "gemm";
    case ComputeKind::kAttention: return "attention";
    case ComputeKind::kOptimizer: return "optimizer";
    case ComputeKind::kMemoryBound: break;
  }
  switch (op.role) {
    case OpRole::kNorm: return "layernorm";
    case OpRole::kActivation: return "gelu";
    case OpRole::kResidual: return "residual";
    case OpRole::kSoftmaxXent:
    case OpRole::kFusedSoftmaxXent: return "softmax_xent";
    case OpRole::kEmbedding: return "embedding";
    default: return "copy";
  }
}

bool layer_op_class(const std::string& cls) {
  return std::any_of(std::begin(kLayerOpClasses), std::end(kLayerOpClasses), [&](const char* c) { return cls == c; });
}

// Per rank: the median over the used steps of its layer ops' measured time over the prediction
// for its stage; empty when a stage predicts none.
std::vector<double> rank_layer_speed(const CpuPrediction& p, const MeasuredRun& run, const std::vector<int>& used) {
  std::vector<double> out;
  if (used.empty()) return out;
  for (int r = 0; r < run.ranks; ++r) {
    std::vector<double> ratio;
    for (int st : used) {
      const RankStep& rs = run.steps[st][r];
      if (rs.pp_rank < 0 || rs.pp_rank >= static_cast<int>(p.layer_ops_s.size()) || !(p.layer_ops_s[rs.pp_rank] > 0))
        return {};
      double t = 0;
      for (const auto& [cls, sec] : rs.compute_class_s)
        if (layer_op_class(cls)) t += sec;
      ratio.push_back(t / p.layer_ops_s[rs.pp_rank]);
    }
    out.push_back(median_ci(std::move(ratio)).median);
  }
  return out;
}

}  // namespace

std::string check_cpu_job(const CpuJob& j) {
  if (j.tp < 1 || j.pp < 1 || j.dp < 1) return "--tp, --pp and --dp must be >= 1";
  if (j.layers < 1 || j.hidden < 1 || j.heads < 1 || j.seq < 2) return "--layers, --hidden, --heads >= 1, --seq >= 2";
  if (j.vocab < 256) return "--vocab " + s(j.vocab) + " must be >= 256 (byte-level tokens)";
  if (j.hidden % j.heads) return "--heads " + s(j.heads) + " does not divide --hidden " + s(j.hidden);
  if (j.heads % j.tp) return "--tp " + s(j.tp) + " does not divide --heads " + s(j.heads);
  if (j.layers % j.pp) return "--pp " + s(j.pp) + " does not divide --layers " + s(j.layers);
  if (j.micro_batch < 1 || j.micro_batches < 1) return "--micro-batch and --micro-batches must be >= 1";
  // The warm-up is found within the first half of the steps (measured_run.cpp, select_steps), and
  // the verdict needs lim.min_used_steps (10) after it: 20 steps leave 10 however long it was.
  if (j.steps < 20) return "--steps must be >= 20 (a warm-up of up to half the steps, then at least 10 measured)";
  if (j.zero != 0 && j.zero != 1) return "--zero must be 0 or 1";
  if (j.schedule != "1f1b" && j.schedule != "gpipe") return "--schedule " + j.schedule + ": expected 1f1b or gpipe";
  static const char* kMethods[] = {"none", "int8", "int4", "fp8", "2of4", "topk"};
  if (std::find(std::begin(kMethods), std::end(kMethods), j.compression) == std::end(kMethods))
    return "--compression " + j.compression + ": expected none, int8, int4, fp8, 2of4 or topk";
  return "";
}

std::string model_shape_arg(const CpuJob& j) {
  return "layers=" + s(j.layers) + ",hidden=" + s(j.hidden) + ",heads=" + s(j.heads) + ",seq=" + s(j.seq) +
         ",vocab=" + s(j.vocab) + ",micro_batch=" + s(j.micro_batch) + ",micro_batches=" + s(j.micro_batches) + ",tp=" + s(j.tp) + ",pp=" + s(j.pp) +
         ",dp=" + s(j.dp) + ",zero=" + s(j.zero) + ",in_flight=" +
         s(j.schedule == "gpipe" ? j.micro_batches : std::min(j.micro_batches, j.pp));
}

std::vector<std::string> train_args(const CpuJob& j, const std::string& backend) {
  return {"train", "--backend", backend, "--tp", s(j.tp), "--pp", s(j.pp), "--dp", s(j.dp), "--zero", s(j.zero),
          "--layers", s(j.layers), "--hidden", s(j.hidden), "--heads", s(j.heads), "--seq", s(j.seq),
          "--vocab", s(j.vocab), "--micro-batch", s(j.micro_batch), "--global-batch", s(j.global_batch()),
          "--steps", s(j.steps), "--schedule", j.schedule, "--compression", j.compression, "--threads", "1"};
}

Scenario cpu_job_scenario(const CpuJob& j, const json& cal, std::vector<std::string>* applied) {
  Scenario sc;
  sc.name = "trainsim-train";
  sc.description = "the `trainsim train` GPT on this machine's ranks (validate --backend)";
  ModelSpec& m = sc.model;
  m.name = "trainsim-train-gpt";
  m.layers = j.layers;
  m.hidden = j.hidden;
  m.heads = j.heads;
  m.kv_heads = j.heads;
  m.ffn_hidden = 4 * int64_t{j.hidden};
  m.ffn_act = FfnActivation::kGelu;
  m.vocab = j.vocab;
  m.seq_len = j.seq;
  m.tied_embeddings = false;  // gpt_model.hpp: untied LM head, learned positions
  ClusterSpec& c = sc.cluster;
  c.name = "this-machine";
  c.gpu.name = "rank (" + cal.value("device", std::string("?")) + ")";
  // Placeholders that apply_calibration replaces with what the calibration measured.
  c.gpu.peak_flops_fp32 = 1e10;
  c.gpu.hbm_bandwidth_bytes_per_s = 1e10;
  // The trainer's buffers are far below any capacity; memory is compared as model states.
  c.gpu.hbm_capacity_bytes = 1e12;
  // A backend op is a direct call on cpu (no launch queue ahead of the device to model); on
  // cuda the measured op rates include the launch.
  c.gpu.kernel.host_launch_s = 1e-12;
  c.nodes = 1;
  c.gpus_per_node = j.ranks();
  c.intra_node.bandwidth_bytes_per_s = 2e10;
  c.intra_node.latency_s = 1e-6;
  c.intra_node.efficiency = 1.0;
  c.intra_node.fabric = "pcie";  // no NVLink SHARP, PCI step latencies (processes over shared memory)
  c.intra_node.nvls = 0;
  c.network.topology = "fat-tree";
  c.network.nic_bandwidth_bytes_per_s = 1.25e9;
  c.network.nics_per_node = 1;
  c.network.latency_s = 5e-6;
  c.pcie_bandwidth_bytes_per_s = 1e10;
  c.host_memory_bytes = 1e12;
  ParallelPlan& p = sc.plan;
  p.tp = j.tp;
  p.pp = j.pp;
  p.dp = j.dp;
  p.micro_batch = j.micro_batch;
  p.global_batch = j.global_batch();
  p.zero_stage = j.zero;
  p.precision = Precision::kFp32;
  p.schedule = j.schedule;
  p.overlap.dp = false;  // the trainer reduces after the last backward
  p.overlap.tp = false;  // blocking collectives on the compute path
  p.overlap.pp = true;   // sends are non-blocking (waited at the end of the step)
  p.flash_attention = true;  // the backend's attention keeps the log-sum-exp, not the s x s scores
  p.grad_accumulation_fusion = true;  // the weight-gradient GEMMs accumulate (beta = 1) into the gradients
  p.vocab_parallel = false;  // gpt_model.hpp: every TP rank holds the embedding and the LM head whole
  p.attention_relayout = false;  // gpt_model.cpp: Q, K and V come from GEMMs of their own, in the attention's layout
  if (j.compression != "none") {
    CompressionStage st;
    st.method = plan_compression_method(j.compression);
    p.compression.push_back(st);
  }
  sc.training.steps = j.steps;
  const std::vector<std::string> lines = apply_calibration(cal, sc);
  if (applied) *applied = lines;
  OpRatesShape shape;
  const OpRates rates = read_op_rates(cal, &shape);
  if (!rates.present())
    throw ScenarioError("calibration.op_rates", "missing: run trainsim calibrate --model-shape " + model_shape_arg(j));
  if (shape.hidden != j.hidden || shape.heads != j.heads || shape.seq != j.seq || shape.vocab != j.vocab ||
      shape.micro_batch != j.micro_batch || shape.tp != j.tp)
    throw ScenarioError("calibration.op_rates.shape",
                        "measured at another shape than the job's (" + model_shape_arg(j) + ")");
  return sc;
}

CpuPrediction predict_cpu_job(const CpuJob& j, const json& cal) {
  CpuPrediction out;
  const Scenario sc = cpu_job_scenario(j, cal, &out.calibration_applied);
  // The reference route keeps the op graph, which the op classes and the trace read (the
  // memoised route gives the same numbers without it).
  EstimateOptions options;
  options.memoise = false;
  out.estimate = estimate_step(sc, options);
  const Result& r = out.estimate.result;
  if (!r.feasible) throw ScenarioError("plan", r.reason);
  const Workload& w = out.estimate.workload;
  // The stage the estimate's breakdown describes (estimate.cpp: the largest F + B).
  for (int st = 0; st < static_cast<int>(w.stages.size()); ++st) {
    const StageWork& a = w.stages[st];
    const StageWork& b = w.stages[out.critical_stage];
    if (a.forward_s + a.backward_s > b.forward_s + b.backward_s) out.critical_stage = st;
  }
  const TimeBreakdown& bd = r.breakdown;
  out.component_s[static_cast<int>(Component::kCompute)] = bd.compute_s;
  out.component_s[static_cast<int>(Component::kTp)] = bd.tp_comm_s;
  out.component_s[static_cast<int>(Component::kPipeline)] = bd.bubble_s + bd.pp_comm_s;
  out.component_s[static_cast<int>(Component::kDp)] = bd.dp_comm_s;
  out.component_s[static_cast<int>(Component::kOptimizer)] = bd.optimizer_s;
  // Every stage's priced ops, m micro-batches: the critical stage's by op class, and each
  // stage's layer ops.
  out.layer_ops_s.assign(w.programs.size(), 0.0);
  for (std::size_t st = 0; st < w.programs.size(); ++st)
    for (const ChunkProgram& ch : w.programs[st].chunks)
      for (int k = 0; k < kPassKinds; ++k)
        for (const OpBlock& b : ch.pass[k].blocks)
          for (std::size_t i = 0; i < b.compute.size(); ++i) {
            const std::string cls = op_class(b.compute[i]);
            const double t = b.compute_s[i] * b.repeat * w.micro_batches;
            if (static_cast<int>(st) == out.critical_stage) out.compute_class_s[cls] += t;
            if (layer_op_class(cls)) out.layer_ops_s[st] += t;
          }
  const MemoryBreakdown& mb = r.per_stage[out.critical_stage].breakdown;
  out.model_state_bytes = mb.params_bytes + mb.grads_bytes + mb.optimizer_bytes;
  return out;
}

double Row::error() const { return measured.median > 0 ? predicted / measured.median - 1 : NAN; }
double Row::error_lo() const { return measured.hi > 0 ? predicted / measured.hi - 1 : NAN; }
double Row::error_hi() const { return measured.lo > 0 ? predicted / measured.lo - 1 : NAN; }

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kTooNoisy: return "too noisy to judge";
    case Verdict::kMachineChanged: return "machine changed during the run";
    case Verdict::kOversubscribed: return "oversubscribed: not judged";
  }
  return "?";
}

namespace {

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * v);
  return b;
}

}  // namespace

Comparison compare(const CpuJob& j, const CpuPrediction& p, const CpuPrediction* after, const MeasuredRun& run,
                   const Limits& lim, bool oversubscribed) {
  Comparison c;
  c.oversubscribed = oversubscribed;
  c.selection = select_steps(run);
  const std::vector<int>& used = c.selection.used;
  const int stage = p.critical_stage;
  auto over_steps = [&](auto&& f) {
    std::vector<double> v;
    for (int st : used) v.push_back(f(st));
    return median_ci(std::move(v));
  };
  Row step{"step_time_s", p.estimate.result.step_time_s, over_steps([&](int st) { return step_time_s(run, st); })};
  step.share = 1;
  step.judged = true;
  step.limit = lim.step;
  c.rows.push_back(step);
  const double step_median = step.measured.median;
  for (int k = 0; k < kComponents; ++k) {
    const auto comp = static_cast<Component>(k);
    Row r{to_string(comp), p.component_s[k], over_steps([&](int st) { return stage_component_s(run, st, stage, comp); })};
    r.share = step_median > 0 ? r.measured.median / step_median : 0;
    r.modelled = comp != Component::kOther;
    r.judged = r.modelled && r.share >= lim.component_share;
    r.limit = lim.component;
    c.rows.push_back(r);
  }
  {
    Row mem{"model_state_bytes", p.model_state_bytes, over_steps([&](int st) {
              double sum = 0;
              int k = 0;
              for (const RankStep& r : run.steps[st])
                if (r.pp_rank == stage) sum += r.persistent_bytes, ++k;
              return k ? sum / k : 0.0;
            })};
    c.rows.push_back(mem);
  }
  std::vector<std::string> classes;
  for (const auto& [cls, t] : p.compute_class_s) classes.push_back(cls);
  for (int st : used)
    for (const RankStep& r : run.steps[st])
      for (const auto& [cls, t] : r.compute_class_s)
        if (std::find(classes.begin(), classes.end(), cls) == classes.end()) classes.push_back(cls);
  for (const std::string& cls : classes) {
    auto it = p.compute_class_s.find(cls);
    Row r{cls, it == p.compute_class_s.end() ? 0.0 : it->second,
          over_steps([&](int st) { return stage_compute_class_s(run, st, stage, cls); })};
    r.share = step_median > 0 ? r.measured.median / step_median : 0;
    r.modelled = it != p.compute_class_s.end();
    c.compute_classes.push_back(r);
  }

  // Verdict: the measurement must be worth judging before the prediction is judged.
  if (oversubscribed) {
    c.verdict = Verdict::kOversubscribed;
    c.reasons.push_back("more ranks than cores: the ranks time-share cores, which the prediction does not model");
    return c;
  }
  if (after) {
    const double a = after->estimate.result.step_time_s, b = p.estimate.result.step_time_s;
    c.calibration_drift = b > 0 ? a / b - 1 : 0;
    if (std::fabs(c.calibration_drift) > lim.max_calibration_drift) {
      c.verdict = Verdict::kMachineChanged;
      c.reasons.push_back("the calibration after the run predicts a step " + pct(c.calibration_drift) +
                          " away from the one before it (limit " + pct(lim.max_calibration_drift) + ")");
    }
  }
  // One calibration of the machine predicts every core alike: ranks whose cores ran at different
  // speeds (another tenant on one core, a core's clock) wait for each other in ways the
  // prediction cannot hold, whatever its error.
  c.rank_layer_speed = rank_layer_speed(p, run, used);
  if (c.rank_layer_speed.size() > 1) {
    const auto [lo, hi] = std::minmax_element(c.rank_layer_speed.begin(), c.rank_layer_speed.end());
    c.rank_speed_spread = *lo > 0 ? *hi / *lo - 1 : 0;
    if (c.rank_speed_spread > lim.max_rank_speed_spread) {
      c.verdict = Verdict::kMachineChanged;
      c.reasons.push_back("the ranks' cores ran at different speeds: the layers' attention and GELU, the same ops on "
                          "every rank, took " + pct(c.rank_speed_spread) + " longer on rank " +
                          std::to_string(hi - c.rank_layer_speed.begin()) + " than on rank " +
                          std::to_string(lo - c.rank_layer_speed.begin()) + " against the prediction (limit " +
                          pct(lim.max_rank_speed_spread) + ")");
    }
  }
  const int after_warmup = static_cast<int>(run.steps.size()) - c.selection.warmup;
  if (static_cast<int>(used.size()) < lim.min_used_steps ||
      used.size() < lim.min_used_share * std::max(1, after_warmup)) {
    if (c.verdict == Verdict::kPass) c.verdict = Verdict::kTooNoisy;
    c.reasons.push_back(std::to_string(c.selection.disturbed.size()) + " of " + std::to_string(after_warmup) +
                        " steps after warm-up were disturbed by other processes (a rank had its core for less than " +
                        pct(kMinCpuShare) + " of the step); " + std::to_string(used.size()) + " left, need " +
                        std::to_string(lim.min_used_steps) + " and " + pct(lim.min_used_share));
  }
  if (!used.empty() && step.measured.half_width_rel() > lim.max_ci_half_width) {
    if (c.verdict == Verdict::kPass) c.verdict = Verdict::kTooNoisy;
    c.reasons.push_back("the measured step's 95% interval is +-" + pct(step.measured.half_width_rel()) +
                        " of its median (limit +-" + pct(lim.max_ci_half_width) + "): more --steps or a quieter machine");
  }
  if (!c.selection.warmup_found) c.reasons.push_back("no stable run of steps found: warm-up taken as the first half");
  if (c.verdict != Verdict::kPass) return c;
  for (const Row& r : c.rows)
    if (!r.within()) {
      c.verdict = Verdict::kFail;
      c.reasons.push_back(r.name + " error " + pct(r.error()) + " exceeds " + pct(r.limit) + " (" + pct(r.share) +
                          " of the step)");
    }
  (void)j;
  return c;
}

}  // namespace trainsim::validate
