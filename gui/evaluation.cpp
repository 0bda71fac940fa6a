#include "gui/evaluation.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include "models/estimate/estimate.hpp"
#include "models/reliability/slow_parts.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::gui {

const std::vector<std::string>& gui_preset_dirs() {
  static const std::vector<std::string> dirs = default_preset_dirs();
  return dirs;
}

bool has_figures(const Evaluation& ev) { return ev.loaded && ev.result.step_time_s > 0; }

std::string infeasible_note(const Evaluation& ev) {
  if (!ev.loaded || ev.result.feasible) return {};
  return "infeasible: " + ev.result.reason;
}

Evaluation evaluate_scenario(const nlohmann::json& raw, const std::string& origin_dir) {
  const auto t0 = std::chrono::steady_clock::now();
  Evaluation ev;
  ev.raw = raw;
  try {
    LoadOptions options;
    options.preset_dirs = gui_preset_dirs();
    ev.resolved = resolve_scenario_json(raw, options, origin_dir);
    ev.scenario = parse_scenario(ev.resolved);
    EstimatedStep step = estimate_step(ev.scenario);
    ev.result = std::move(step.result);
    ev.timeline = std::move(step.timeline);
    ev.timeline_skipped = std::move(step.timeline_skipped);
    ev.timeline_note = std::move(step.timeline_note);
    ev.p2p_boundary_s = step.workload.p2p_boundary_s;
    ev.placement = step.workload.placement;
    // The goodput `trainsim run` reports for the estimate: the same function on the same step,
    // slow parts and trials.
    if (ev.scenario.training.faults.enabled && ev.result.feasible)
      ev.goodput = goodput(ev.scenario, ev.result, estimate_slow_parts(ev.scenario, ev.result));
    ev.loaded = true;
  } catch (const ScenarioError& e) {
    ev.error_path = e.path();
    ev.error_message = e.what();
  } catch (const std::exception& e) {
    // nlohmann type errors and the like: still bad input, without a path.
    ev.error_message = e.what();
  }
  ev.evaluate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ev;
}

}  // namespace trainsim::gui
