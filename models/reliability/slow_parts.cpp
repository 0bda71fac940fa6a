#include "models/reliability/slow_parts.hpp"

#include "models/core/leaf_switch.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/reliability/straggler.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

// The pipeline part of a step: the schedule played with each stage's own costs.
double pipeline_makespan_s(const Workload& w) {
  const int m = w.micro_batches;
  if (w.pp == 1) {
    const StageWork& s = w.stages.front();
    return m * (s.forward_s + s.backward_s);
  }
  std::vector<StageCosts> costs;
  for (const StageWork& s : w.stages) costs.push_back(stage_costs(w, s));
  return play_schedule(*w.schedule, w.pp, w.vpp, m, costs, 0.0).step_s;
}

// Makespan of workload `w` with its stages slowed by `speeds`, minus the nominal makespan.
double straggler_delta_s(Workload w, const std::vector<double>& speeds, double nominal_makespan_s) {
  apply_stage_speeds(w, speeds);
  return pipeline_makespan_s(w) - nominal_makespan_s;
}

}  // namespace

SlowParts estimate_slow_parts(const Scenario& s, const Result& nominal) {
  SlowParts out;
  out.nominal_step_s = nominal.step_time_s;
  out.straggler_step_s = nominal.step_time_s;
  out.degraded_step_s = nominal.step_time_s;
  out.slowed_step_s = nominal.step_time_s;
  const FaultSpec& f = s.training.faults;
  if (!f.enabled || !nominal.feasible) return out;

  Workload w;
  Result scratch;
  if (!build_workload(s, w, scratch)) return out;
  const double nominal_makespan = pipeline_makespan_s(w);

  double expected_straggler_delta = 0;
  const StragglerEffect effect = straggler_effect(s);
  // A straggler pinned to a stage without a fraction is there for sure; with a fraction, the
  // pinned stage only says where it sits.
  const double p_straggler =
      f.stragglers.forced_stage >= 0 && f.stragglers.fraction <= 0 ? 1.0 : effect.probability_any;
  out.straggler_probability = p_straggler;
  if (effect.stage >= 0) {
    out.straggler_stage = effect.stage;
    const double delta = straggler_delta_s(w, effect.stage_speed, nominal_makespan);
    out.straggler_step_s = nominal.step_time_s + std::max(0.0, delta);
    expected_straggler_delta = p_straggler * std::max(0.0, delta);
    if (!effect.rebalanced_layers_per_stage.empty()) {
      out.rebalanced_layers_per_stage = effect.rebalanced_layers_per_stage;
      Workload rw;
      Result rscratch;
      if (build_workload(rebalanced_scenario(s, effect), rw, rscratch)) {
        const double rdelta = straggler_delta_s(std::move(rw), effect.stage_speed, nominal_makespan);
        out.rebalanced_step_s = nominal.step_time_s + rdelta;
        if (f.rebalance) expected_straggler_delta = p_straggler * std::max(0.0, rdelta);
      }
    } else if (!effect.note.empty()) {
      out.notes.push_back(effect.note);
    }
  }

  // Degraded links: only a job that spans more than one leaf uses switch-to-switch links.
  const LinkDegradationSpec& ld = f.link_degradation;
  const FailureDomains d = failure_domains(s);
  double degraded_delta = 0;
  if (ld.fraction > 0 && ld.bandwidth_factor < 1 && d.leaf_switches > 1) {
    const int radix = switch_radix(s.cluster.network);
    const double uplinks = d.leaf_switches * std::max(1.0, (radix / 2) / std::max(1.0, s.cluster.network.oversubscription));
    out.degraded_link_probability = 1.0 - std::pow(1.0 - ld.fraction, uplinks);
    const TimeBreakdown& b = nominal.breakdown;
    const double inter_node_comm_s = b.dp_comm_s + b.pp_comm_s + b.ep_comm_s + b.cp_comm_s;
    const double stretch = inter_node_comm_s * (1.0 / ld.bandwidth_factor - 1.0);
    out.degraded_step_s = nominal.step_time_s + stretch;
    degraded_delta = out.degraded_link_probability * stretch;
  }
  out.slowed_step_s = nominal.step_time_s + expected_straggler_delta + degraded_delta;
  return out;
}

}  // namespace trainsim
