// One evaluation of the scenario being edited: raw JSON -> loader -> estimate. Everything a
// view needs, in one value, so that views are pure functions of it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/reliability/goodput.hpp"
#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "models/workload/placement.hpp"
#include "models/workload/timeline.hpp"

namespace trainsim::gui {

struct Evaluation {
  bool loaded = false;       // the loader accepted the scenario (scenario/result valid)
  std::string error_path;    // ScenarioError::path() when not loaded
  std::string error_message; // ScenarioError::what() (names the path) when not loaded
  nlohmann::json raw;        // what the user edits (presets by name)
  nlohmann::json resolved;   // presets expanded, SI units
  Scenario scenario;
  Result result;
  // The pipeline as the estimate played it (its per-stage passes, each boundary's
  // contention-free transfer time): what the Timeline view draws.
  Timeline timeline;
  std::string timeline_skipped;
  std::string timeline_note;     // what the timeline stands for when it is not the result's step  // why the timeline is empty for an estimated plan (too large)
  std::vector<double> p2p_boundary_s;  // Workload::p2p_boundary_s: boundary d joins stages d and d + 1 mod p
  // Where every rank sits and the groups it talks in: the placement the estimate priced (and
  // the simulator plays); 1x1x1x1 when the plan's structure allows no workload.
  RankPlacement placement{1, 1, 1, 1};
  // Enabled when the scenario has training.faults: goodput() on the shown step, with the
  // scenario's own Monte Carlo trials and seed, exactly as `trainsim run` computes it.
  GoodputReport goodput;
  double evaluate_s = 0;     // wall time of load + estimate + goodput, in-process
  // After Simulate: what the child `trainsim run --fidelity simulate --json` printed (result,
  // goodput, hottest_links, ...), and its wall time. Null / 0 for the live estimate.
  nlohmann::json simulation;
  double simulate_s = 0;
  bool simulated() const { return !simulation.is_null(); }
};

// True when the estimate produced figures to draw: the scenario loads and the plan's structure
// allows a workload (a plan that only runs out of memory still has figures: what it would need).
bool has_figures(const Evaluation& ev);
// "infeasible: <reason>" for an infeasible plan, empty otherwise; views show it instead of (or
// above) their figures.
std::string infeasible_note(const Evaluation& ev);

// Resolves, parses and estimates. Never throws: bad input comes back as error_path/message.
// origin_dir: the scenario file's folder, searched for presets first (as the CLI does).
Evaluation evaluate_scenario(const nlohmann::json& raw, const std::string& origin_dir);

// The preset folders the GUI searches (the loader's defaults).
const std::vector<std::string>& gui_preset_dirs();

}  // namespace trainsim::gui
