#include "models/reliability/straggler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/cost/flops.hpp"
#include "models/schedules/pipeline_schedule.hpp"
#include "models/core/scenario_error.hpp"
#include "models/workload/plan_structure.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double extra_at(const std::vector<double>& extra, std::size_t i) {
  return i < extra.size() ? extra[i] : 0.0;
}

std::vector<int> even_split(int layers, int stages) {
  std::vector<int> out(stages, layers / stages);
  for (int i = 0; i < layers % stages; ++i) ++out[i];
  return out;
}

}  // namespace

double bottleneck_time(const std::vector<int>& layers, const std::vector<double>& speed,
                       const std::vector<double>& extra) {
  double worst = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const double s = i < speed.size() ? speed[i] : 1.0;
    worst = std::max(worst, (layers[i] + extra_at(extra, i)) / s);
  }
  return worst;
}

std::vector<int> rebalance_layers(const std::vector<double>& speed, int layers,
                                  const std::vector<double>& extra, const std::vector<int>& current,
                                  int min_layers) {
  const int n = static_cast<int>(speed.size());
  if (n == 0) throw std::invalid_argument("rebalance_layers: no stages");
  for (double s : speed)
    if (!(s > 0)) throw std::invalid_argument("rebalance_layers: stage speeds must be > 0");
  min_layers = std::max(0, min_layers);
  if (layers < int64_t{min_layers} * n)
    throw std::invalid_argument("rebalance_layers: fewer layers than stages x min_layers");
  // Stage time with k layers, in units of one layer's cost.
  auto time = [&](int i, int k) { return (k + extra_at(extra, i)) / speed[i]; };
  // Largest layer count of stage i whose time stays within T.
  auto cap = [&](int i, double T) {
    const double c = T * speed[i] - extra_at(extra, i);
    return static_cast<int>(std::min<double>(layers, std::floor(c + 1e-9 * std::max(1.0, std::abs(c)))));
  };
  auto feasible = [&](double T) {
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const int c = cap(i, T);
      if (c < min_layers) return false;
      total += c;
    }
    return total >= layers;
  };
  // The optimum max is one of the stage times (k + e_i) / s_i: binary search over them.
  std::vector<double> candidates;
  candidates.reserve(static_cast<std::size_t>(n) * (layers - min_layers + 1));
  for (int i = 0; i < n; ++i)
    for (int k = min_layers; k <= layers; ++k) candidates.push_back(time(i, k));
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::size_t lo = 0, hi = candidates.size() - 1;  // candidates[hi] (all layers anywhere) is feasible
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (feasible(candidates[mid]))
      hi = mid;
    else
      lo = mid + 1;
  }
  const double T = candidates[lo];
  std::vector<int> caps(n);
  for (int i = 0; i < n; ++i) caps[i] = cap(i, T);

  // Closest to the current split: keep what fits, then place the displaced layers where the
  // stage time stays lowest (fewest layers moved: only those above a cap move).
  std::vector<int> x = current.size() == static_cast<std::size_t>(n) ? current : even_split(layers, n);
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = std::clamp(x[i], min_layers, caps[i]);
    sum += x[i];
  }
  while (sum < layers) {
    int best = -1;
    for (int i = 0; i < n; ++i)
      if (x[i] < caps[i] && (best < 0 || time(i, x[i] + 1) < time(best, x[best] + 1) - 1e-12)) best = i;
    ++x[best];
    ++sum;
  }
  while (sum > layers) {  // only when current had stages below min_layers
    int best = -1;
    for (int i = 0; i < n; ++i)
      if (x[i] > min_layers && (best < 0 || time(i, x[i]) > time(best, x[best]) + 1e-12)) best = i;
    --x[best];
    --sum;
  }
  return x;
}

std::vector<int> chunk_layers(const std::vector<int>& per_device, int vpp) {
  const int pp = static_cast<int>(per_device.size());
  vpp = std::max(1, vpp);
  std::vector<int> out(static_cast<std::size_t>(pp) * vpp, 0);
  for (int d = 0; d < pp; ++d)
    for (int v = 0; v < vpp; ++v)
      out[static_cast<std::size_t>(v) * pp + d] = per_device[d] / vpp + (v < per_device[d] % vpp ? 1 : 0);
  return out;
}

StragglerEffect straggler_effect(const Scenario& sc) {
  StragglerEffect e;
  const StragglerSpec& st = sc.training.faults.stragglers;
  const ParallelPlan& p = sc.plan;
  const int pp = std::max(1, p.pp);
  const int vpp = std::max(1, p.vpp);
  const double gpus = static_cast<double>(sc.cluster.total_gpus());
  const bool on = sc.training.faults.enabled;
  if (on) {
    e.probability_any = 1 - std::pow(1 - st.fraction, gpus);
    e.expected_slow_gpus = st.fraction * gpus;
  }
  e.stage_speed.assign(pp, 1.0);

  // The plan's per-device split (chunks summed; plan_structure.hpp's stage_layers).
  const int chunks = pp * vpp;
  e.layers_per_stage.assign(pp, 0);
  for (int c = 0; c < chunks; ++c) e.layers_per_stage[c % pp] += stage_layers(sc.model, p, c);

  if (on && st.forced_stage >= pp)
    throw ScenarioError("training.faults.stragglers.stage",
                        std::to_string(st.forced_stage) + " is not a pipeline stage of plan.pp = " +
                            std::to_string(pp) + " (expected 0.." + std::to_string(pp - 1) + ")");
  const bool present =
      on && st.speed_factor < 1.0 && (st.forced_stage >= 0 || st.fraction > 0);
  if (!present) {
    e.note = "no straggler";
    return e;
  }
  e.speed_factor = st.speed_factor;
  if (st.forced_stage >= 0) {
    e.stage = st.forced_stage;
  } else {
    // A GPU drawn uniformly; under the default placement GPU g sits on stage g / (GPUs / pp).
    const uint64_t total = static_cast<uint64_t>(std::max(1.0, gpus));
    const uint64_t g = splitmix64(sc.training.faults.seed) % total;
    e.stage = static_cast<int>(g * static_cast<uint64_t>(pp) / total);
  }
  e.stage_speed[e.stage] = e.speed_factor;

  // Per-layer cost and per-device extras from the workload (the same generator as both tiers):
  // device time = F + B of one micro-batch; the reference per-layer cost is a middle device's
  // (first and last hold the embedding / logits), the rest of each device's time is its extra.
  std::vector<double> extra(pp, 0.0);
  {
    Workload w;
    Result r;
    bool ok = false;
    try {
      ok = build_workload(sc, w, r) && static_cast<int>(w.stages.size()) == pp;
    } catch (const std::exception&) {
      ok = false;
    }
    const int ref = pp >= 3 ? 1 : 0;
    if (ok && w.stages[ref].layers > 0) {
      auto t = [&](int d) { return w.stages[d].forward_s + w.stages[d].backward_s; };
      e.layer_cost_s = t(ref) / w.stages[ref].layers;
      if (e.layer_cost_s > 0)
        for (int d = 0; d < pp; ++d) extra[d] = t(d) / e.layer_cost_s - w.stages[d].layers;
      extra[ref] = 0;
    } else {
      // The plan does not build: the logits GEMM relative to one layer, by FLOPs.
      const double layer = layer_forward_flops_per_token(sc.model, false).total();
      if (layer > 0) extra[pp - 1] = logits_forward_flops_per_token(sc.model) / layer;
    }
    e.stage_extra_s.resize(pp);
    for (int d = 0; d < pp; ++d) e.stage_extra_s[d] = extra[d] * e.layer_cost_s;
  }
  const std::vector<double> nominal(pp, 1.0);
  const double t_nominal = bottleneck_time(e.layers_per_stage, nominal, extra);
  if (t_nominal > 0)
    e.bottleneck_slowdown = bottleneck_time(e.layers_per_stage, e.stage_speed, extra) / t_nominal;
  e.rebalanced_bottleneck_slowdown = e.bottleneck_slowdown;
  if (pp == 1) {
    e.note = "one pipeline stage: no other stage to move layers to";
    return e;
  }
  if (pipeline_schedule(p.schedule).bidirectional()) {
    e.note = "DualPipe devices hold two mirrored stages: not rebalanced";
    return e;
  }
  if (sc.model.layers < pp * vpp) {
    e.note = "fewer layers than pipeline chunks";
    return e;
  }
  e.rebalanced_layers_per_stage =
      rebalance_layers(e.stage_speed, sc.model.layers, extra, e.layers_per_stage, vpp);
  // The rebalance keeps a layer on every stage; a plan that already left a stage empty can be
  // faster than any such split. Never move layers to a slower step.
  if (bottleneck_time(e.rebalanced_layers_per_stage, e.stage_speed, extra) >
      bottleneck_time(e.layers_per_stage, e.stage_speed, extra)) {
    e.rebalanced_layers_per_stage.clear();
    e.note = "the plan's split is already faster under the straggler than any split with a layer on every stage";
    return e;
  }
  if (t_nominal > 0)
    e.rebalanced_bottleneck_slowdown =
        bottleneck_time(e.rebalanced_layers_per_stage, e.stage_speed, extra) / t_nominal;
  return e;
}

Scenario rebalanced_scenario(const Scenario& sc, const StragglerEffect& e) {
  Scenario out = sc;
  if (!e.rebalanced_layers_per_stage.empty())
    out.plan.layers_per_stage = chunk_layers(e.rebalanced_layers_per_stage, std::max(1, sc.plan.vpp));
  return out;
}

void apply_stage_speeds(Workload& w, const std::vector<double>& speed) {
  for (std::size_t d = 0; d < w.stages.size() && d < speed.size(); ++d) {
    const double s = speed[d];
    if (!(s > 0) || s == 1.0) continue;
    StageWork& sw = w.stages[d];
    // F and B carry their exposed in-layer communication folded in (workload.hpp); only the
    // compute part slows down.
    const double f_comm = sw.forward_s - sw.forward_compute_s;
    const double b_comm = sw.backward_s - sw.backward_compute_s;
    sw.forward_compute_s /= s;
    sw.backward_compute_s /= s;
    sw.backward_weight_s /= s;
    sw.forward_s = sw.forward_compute_s + f_comm;
    sw.backward_s = sw.backward_compute_s + b_comm;
    // A bidirectional schedule's device plays its two stages' own passes and their pairs
    // (stage_costs): their compute slows alike. A pair runs both passes' compute ops on one
    // stream, so it lasts longer by what they do.
    double f_compute[2], b_compute[2];
    for (int k = 0; k < 2; ++k) {
      f_compute[k] = sw.direction_forward_s[k] - sw.direction_forward_beyond_compute_s[k];
      b_compute[k] = sw.direction_backward_s[k] - sw.direction_backward_beyond_compute_s[k];
      sw.direction_forward_s[k] += f_compute[k] * (1 / s - 1);
      sw.direction_backward_s[k] += b_compute[k] * (1 / s - 1);
      sw.direction_backward_weight_s[k] /= s;
    }
    for (int f = 0; f < 2; ++f)
      for (int b = 0; b < 2; ++b)
        if (sw.pair_s[f][b] >= 0) sw.pair_s[f][b] += (f_compute[f] + b_compute[b]) * (1 / s - 1);
  }
}

}  // namespace trainsim
