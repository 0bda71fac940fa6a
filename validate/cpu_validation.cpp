#include "validate/cpu_validation.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "models/cost/calibration.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/estimate/estimate.hpp"
#include "models/core/scenario_error.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

namespace trainsim::validate {
using nlohmann::json;

namespace {

constexpr double kF32 = 4;  // the trainer runs fp32 end to end: activations, wire, states

std::string s(int v) { return std::to_string(v); }

// Parameters of pipeline stage `stage` on one rank, padded as GptStage pads them (dp x 256).
double stage_params_padded(const CpuJob& j, int stage) {
  const double h = j.hidden, hl = h / j.tp, fl = 4 * h / j.tp;
  double n = double(j.layers / j.pp) * (4 * h + 4 * h * hl + 2 * h * fl);
  if (stage == 0) n += double(j.vocab) * h + double(j.seq) * h;  // wte, wpe
  if (stage == j.pp - 1) n += 2 * h + h * j.vocab;               // final LN, untied LM head
  const double pad = 256.0 * j.dp;
  return std::ceil(n / pad) * pad;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::string check_cpu_job(const CpuJob& j) {
  if (j.tp < 1 || j.pp < 1 || j.dp < 1) return "--tp, --pp and --dp must be >= 1";
  if (j.layers < 1 || j.hidden < 1 || j.heads < 1 || j.seq < 2) return "--layers, --hidden, --heads >= 1, --seq >= 2";
  if (j.hidden % j.heads) return "--heads " + s(j.heads) + " does not divide --hidden " + s(j.hidden);
  if (j.heads % j.tp) return "--tp " + s(j.tp) + " does not divide --heads " + s(j.heads);
  if (j.layers % j.pp) return "--pp " + s(j.pp) + " does not divide --layers " + s(j.layers);
  if (j.micro_batch < 1 || j.micro_batches < 1) return "--micro-batch and --micro-batches must be >= 1";
  if (j.steps < 2) return "--steps must be >= 2 (the first is warm-up)";
  return "";
}

std::string model_shape_arg(const CpuJob& j) {
  return "layers=" + s(j.layers) + ",hidden=" + s(j.hidden) + ",heads=" + s(j.heads) + ",seq=" + s(j.seq) +
         ",vocab=" + s(j.vocab) + ",micro_batch=" + s(j.micro_batch) + ",tp=" + s(j.tp) + ",pp=" + s(j.pp) +
         ",dp=" + s(j.dp) + ",zero=" + s(j.zero);
}

std::vector<std::string> train_args(const CpuJob& j) {
  return {"train", "--backend", "cpu", "--tp", s(j.tp), "--pp", s(j.pp), "--dp", s(j.dp), "--zero", s(j.zero),
          "--layers", s(j.layers), "--hidden", s(j.hidden), "--heads", s(j.heads), "--seq", s(j.seq),
          "--vocab", s(j.vocab), "--micro-batch", s(j.micro_batch), "--global-batch", s(j.global_batch()),
          "--steps", s(j.steps), "--threads", "1"};
}

Scenario cpu_job_scenario(const CpuJob& j, const json& cal) {
  Scenario sc;
  sc.name = "trainsim-train-cpu";
  sc.description = "the `trainsim train` GPT on this machine's MPI ranks (validate --backend cpu)";
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
  c.name = "this-machine-cpu";
  c.gpu.name = "cpu-rank (" + cal.value("device", std::string("cpu")) + ", one core per rank)";
  // Placeholders until apply_calibration replaces them with measured values.
  c.gpu.peak_flops_fp32 = 1e10;
  c.gpu.hbm_bandwidth_bytes_per_s = 1e10;
  // Host memory, not a device: the memory figure of interest is the trainer's own buffers.
  c.gpu.hbm_capacity_bytes = 1e12;
  c.nodes = 1;
  c.gpus_per_node = j.ranks();
  c.intra_node.bandwidth_bytes_per_s = 2e10;
  c.intra_node.latency_s = 1e-6;
  c.intra_node.efficiency = 1.0;
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
  p.schedule = "1f1b";
  p.overlap.dp = false;  // the trainer reduces after the last backward
  p.overlap.tp = false;  // blocking MPI all-reduces
  p.overlap.pp = true;   // sends are non-blocking (waited at the end of the step)
  p.flash_attention = true;  // the cpu attention keeps the log-sum-exp, not the s x s scores
  sc.training.steps = j.steps;
  return sc;
}

double trainer_peak_bytes(const CpuJob& j, int stage) {
  const double T = double(j.micro_batch) * j.seq, h = j.hidden, hl = h / j.tp, fl = 4 * h / j.tp;
  const double heads_l = double(j.heads) / j.tp, Th = T * h, V = j.vocab;
  const bool first = stage == 0, last = stage == j.pp - 1;
  const int L = j.layers / j.pp, m = j.micro_batches;
  const double n = stage_params_padded(j, stage), shard = n / j.dp;
  const double opt_n = j.zero == 1 ? shard : n;
  // Params + grads (one flat buffer each) + AdamW m and v.
  const double persistent = kF32 * (2 * n + 2 * opt_n);
  // MicroBatchActivations::Layer: x_in a1 x_mid a2 (T h), mean/rstd x2 (T), q k v o (T h/tp),
  // lse (b heads/tp s), u g (T 4h/tp); plus x_out (T h) and, first stage, the tokens (T int32).
  const double act_layer = kF32 * (4 * Th + 4 * T + 4 * T * hl + T * heads_l + 2 * T * fl);
  const double x_out = kF32 * Th;
  const double act_mb = L * act_layer + x_out + (first ? 4 * T : 0);
  double live = persistent, peak = persistent;
  auto fwd = [&] {
    const double input = first ? 4 * T : kF32 * Th;  // token upload or received activation
    peak = std::max(peak, live + input + act_mb);
    live += act_mb;  // x_out stays: in acts, or (not last) in the send list until the step ends
  };
  auto bwd = [&] {
    double cur = live + kF32 * Th;  // dx_out
    if (last) {
      // Targets, final LN output + stats (kept in acts), logits/dlogits, losses, d(final LN out).
      const double kept = 4 * T + kF32 * (Th + 2 * T);
      peak = std::max(peak, cur + kept + kF32 * (T * V + T + Th));
      cur += kept;
    }
    if (!first) cur += kF32 * Th;  // dx_in, kept in the send list
    // Top layer, MLP block: dx, tmp, dxl (T h) + dg, du (T 4h/tp); attention block: dO dq dk dv.
    peak = std::max(peak, cur + kF32 * (3 * Th + std::max(2 * T * fl, 4 * T * hl)));
    live -= act_mb - (last ? 0 : x_out);
    if (!first) live += kF32 * Th;
  };
  // trainer.cpp's 1F1B order.
  const int warmup = std::min(j.pp - stage - 1, m);
  for (int i = 0; i < warmup; ++i) fwd();
  for (int i = 0; i < m - warmup; ++i) {
    fwd();
    bwd();
  }
  for (int i = m - warmup; i < m; ++i) bwd();
  // ZeRO-1: the reduced gradient shard and the updated parameter shard.
  if (j.zero == 1) peak = std::max(peak, persistent + kF32 * 2 * shard);
  return peak;
}

CpuPrediction predict_cpu_job(const CpuJob& j, const json& cal) {
  CpuPrediction out;
  Scenario sc = cpu_job_scenario(j, cal);
  out.calibration_applied = apply_calibration(cal, sc);
  OpRatesShape shape;
  const OpRates rates = read_op_rates(cal, &shape);
  if (!rates.present())
    throw ScenarioError("calibration.op_rates",
                        "missing: run trainsim calibrate --model-shape " + model_shape_arg(j));
  if (shape.hidden != j.hidden || shape.heads != j.heads || shape.seq != j.seq || shape.vocab != j.vocab ||
      shape.micro_batch != j.micro_batch || shape.tp != j.tp)
    throw ScenarioError("calibration.op_rates.shape",
                        "measured at another shape than the job's (" + model_shape_arg(j) + ")");

  // The estimate tier as `trainsim run --calibration` computes it (the op rates in the GPU spec).
  const Result est = estimate(sc);
  out.estimate_step_time_s = est.step_time_s;
  out.estimate_peak_memory_bytes = est.peak_memory_bytes;

  // The same workload generator, its compute replaced op by op with the measured rates.
  Workload w;
  Result r;
  if (!build_workload(sc, w, r)) throw ScenarioError("plan", r.reason);
  const FabricTerms fabric = fabric_terms(sc.cluster);
  const CollectiveAlgo algo = CollectiveAlgo::kAuto;
  RankLayerShape rs;
  rs.micro_batch = j.micro_batch;
  rs.seq = j.seq;
  rs.hidden = j.hidden;
  rs.heads = j.heads;
  rs.vocab = j.vocab;
  rs.tp = j.tp;
  const double act_bytes = rs.tokens() * j.hidden * kF32;
  const LayerComputeTimes lt = layer_times_from_op_rates(rates, rs);
  const double copy_s = rs.tokens() * j.hidden * rates.copy_s_per_element;
  // Megatron TP: an all-reduce of the activation after attention and MLP, forward and backward.
  const double tp_ar_s = j.tp > 1 ? collective_cost(CollectiveOp::kAllReduce, algo, act_bytes,
                                                    GroupShape{j.tp, 1, j.tp}, fabric).time_s
                                  : 0.0;
  const double p2p_s =
      j.pp > 1 ? collective_cost(CollectiveOp::kSendRecv, algo, act_bytes, GroupShape{2, 1, 2}, fabric).time_s : 0.0;
  std::vector<StageCosts> costs;
  double busiest = 0, least_busy = 1e300, dp_s = 0, opt_s = 0, tp_s = 0;
  for (int st = 0; st < j.pp; ++st) {
    const int L = w.stages[st].layers;
    const bool first = st == 0, last = st == j.pp - 1;
    double f = L * (lt.forward_s + 2 * tp_ar_s), b = L * (lt.backward_s + 2 * tp_ar_s);
    const double wgt = L * lt.backward_weight_s;
    f += first ? embedding_time_from_op_rates(rates, rs, false) : copy_s;
    b += copy_s + (first ? embedding_time_from_op_rates(rates, rs, true) : 0.0);
    if (last) b += lm_head_time_from_op_rates(rates, rs);  // trainer.cpp runs the head in bwd
    costs.push_back({f, b - wgt, wgt});
    const double busy = j.micro_batches * (f + b);
    busiest = std::max(busiest, busy);
    least_busy = std::min(least_busy, busy);
    tp_s = std::max(tp_s, j.micro_batches * L * 4 * tp_ar_s);
    // ZeRO-1: reduce-scatter of the gradients, all-gather of the parameters (fp32 both).
    const double n = stage_params_padded(j, st);
    double d = 0;
    if (j.dp > 1) {
      const GroupShape g{j.dp, 1, j.dp};
      d = j.zero == 1 ? collective_cost(CollectiveOp::kReduceScatter, algo, n * kF32, g, fabric).time_s +
                            collective_cost(CollectiveOp::kAllGather, algo, n * kF32, g, fabric).time_s
                      : collective_cost(CollectiveOp::kAllReduce, algo, n * kF32, g, fabric).time_s;
    }
    dp_s = std::max(dp_s, d);
    const double opt_n = j.zero == 1 ? n / j.dp : n;
    opt_s = std::max(opt_s, optimizer_time_from_op_rates(rates, opt_n, n) +
                                (j.zero == 1 ? opt_n * rates.copy_s_per_element : 0.0));
  }
  const Timeline t = play_schedule(ScheduleKind::k1F1B, j.pp, 1, j.micro_batches, costs, p2p_s);
  out.compute_s = busiest - tp_s;
  out.tp_comm_s = tp_s;
  out.bubble_s = std::max(0.0, t.makespan_s - busiest);
  out.pp_comm_s = j.pp > 1 ? std::max(0.0, t.makespan_s - least_busy) : 0.0;
  out.dp_comm_s = dp_s;
  out.optimizer_s = opt_s;
  out.step_time_s = t.makespan_s + dp_s + opt_s;
  for (int st = 0; st < j.pp; ++st) out.peak_memory_bytes = std::max(out.peak_memory_bytes, trainer_peak_bytes(j, st));
  out.notes.push_back("compute: per-op rates measured at the job's shapes (calibration op_rates), " +
                      std::to_string(j.micro_batches) + " micro-batches through the 1F1B timeline");
  out.notes.push_back("memory: the trainer's buffers (params, grads, AdamW moments, activations, temporaries); "
                      "the estimate tier's framework reserve and DP buckets do not apply to it");
  return out;
}

CpuMeasurement measure_from_train_log(const std::string& jsonl) {
  std::istringstream in(jsonl);
  std::string line;
  std::vector<json> steps;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '{') continue;
    json e = json::parse(line, nullptr, false);
    if (e.is_discarded() || e.value("event", std::string()) != "step") continue;
    steps.push_back(std::move(e));
  }
  if (steps.size() < 2) throw ScenarioError("train log", "fewer than 2 step lines");
  const size_t skip = std::max<size_t>(1, steps.size() / 4);
  std::vector<double> st, tp, pp, dp, bubble, opt, mem;
  for (size_t i = skip; i < steps.size(); ++i) {
    const json& e = steps[i];
    st.push_back(e.at("step_time_s").get<double>());
    tp.push_back(e.at("comm_time_s").at("tp").get<double>());
    pp.push_back(e.at("comm_time_s").at("pp").get<double>());
    dp.push_back(e.at("comm_time_s").at("dp").get<double>());
    bubble.push_back(e.at("step_time_s").get<double>() - e.value("busy_time_s", e.at("step_time_s").get<double>()));
    opt.push_back(e.value("optimizer_time_s", 0.0));
    mem.push_back(e.at("peak_bytes").get<double>());
  }
  CpuMeasurement m;
  m.steps_used = static_cast<int>(st.size());
  m.step_time_s = median(st);
  m.tp_comm_s = median(tp);
  m.pp_comm_s = median(pp);
  m.dp_comm_s = median(dp);
  m.bubble_s = median(bubble);
  m.optimizer_s = median(opt);
  m.peak_memory_bytes = *std::max_element(mem.begin(), mem.end());
  m.step_time_spread = m.step_time_s > 0 ? (*std::max_element(st.begin(), st.end()) -
                                            *std::min_element(st.begin(), st.end())) / m.step_time_s
                                         : 0;
  return m;
}

std::vector<CpuMetricRow> compare_cpu(const CpuPrediction& p, const CpuMeasurement& m) {
  std::vector<CpuMetricRow> rows;
  auto add = [&](const char* name, double pred, double meas) {
    CpuMetricRow r{name, pred, meas, 0};
    r.error = meas > 0 ? (pred - meas) / meas : (pred > 0 ? HUGE_VAL : 0.0);
    rows.push_back(r);
  };
  add("step_time_s", p.step_time_s, m.step_time_s);
  add("comm_time_tp_s", p.tp_comm_s, m.tp_comm_s);
  add("comm_time_pp_s", p.pp_comm_s, m.pp_comm_s);
  add("comm_time_dp_s", p.dp_comm_s, m.dp_comm_s);
  add("bubble_s", p.bubble_s, m.bubble_s);
  add("optimizer_s", p.optimizer_s, m.optimizer_s);
  add("peak_memory_bytes", p.peak_memory_bytes, m.peak_memory_bytes);
  return rows;
}

}  // namespace trainsim::validate
