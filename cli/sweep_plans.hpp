// The plans of a sweep and the Scenario of each. The list is kept compact (one small id per axis
// value of each plan) and each plan's Scenario is made by changing a parsed one in place, as
// `trainsim plan` does: an axis that sets a plain plan field (plan.tp, plan.schedule, ...)
// assigns the field; every other axis value is resolved and parsed once per distinct
// combination of such values (and calibrated once per plan precision). Whatever the in-place
// route cannot vouch for (a value the loader rejects, degrees past its limits, an axis over
// another part of the plan) takes
// the loader's route for that plan, so every plan gets the Scenario, or the ScenarioError,
// that resolving and parsing its JSON gives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/specs.hpp"
#include "models/scenario/sweep_spec.hpp"

namespace trainsim::cli {

class SweepPlans {
 public:
  // Lists the plans (ScenarioError above max_plans, as expand_sweep).
  SweepPlans(const SweepSpec& spec, const LoadOptions& options, const nlohmann::json& base_resolved,
             const nlohmann::json& calibration, std::size_t max_plans);
  ~SweepPlans();
  SweepPlans(const SweepPlans&) = delete;
  SweepPlans& operator=(const SweepPlans&) = delete;

  std::size_t size() const { return plans_; }
  // Plan i's Scenario, calibrated (valid until the next call), or the loader's ScenarioError.
  const Scenario& scenario(std::size_t i);
  // The scenario JSON (to_json) of the plan scenario() last returned: names of constraints and
  // objectives outside the row resolve on it. Without plan_part only its parts outside "plan"
  // are meant (shared by the plans of one combination of the other axes).
  const nlohmann::json& scenario_json(bool plan_part);
  // Plan i's scenario JSON before it is resolved: the base with the plan's overrides.
  nlohmann::json raw(std::size_t i) const;
  // The row's "overrides" object of plan i, as JSON text (keys sorted, the last axis wins).
  void overrides_text(std::size_t i, std::string& out) const;
  nlohmann::json overrides(std::size_t i) const;
  // How many plans took the loader's route (a figure for benchmarks).
  std::size_t loader_route_plans() const { return slow_plans_; }

 private:
  struct Value;
  struct Calibrated;
  struct Context;
  void add_plan(const PlanOverrides& p);
  const Scenario& slow(std::size_t i);

  const SweepSpec& spec_;
  const LoadOptions& options_;
  const nlohmann::json& base_resolved_;
  const nlohmann::json& calibration_;
  std::size_t plans_ = 0, slots_ = 0, slow_plans_ = 0;
  bool in_place_ = true;               // every axis is a plain plan field or outside the plan
  std::vector<std::string> slot_path_;
  std::vector<int> slot_field_;        // the plan field a slot sets, or -1 (a context slot)
  std::vector<std::vector<uint32_t>> slot_values_;  // ids per slot, in first-seen order
  std::vector<std::size_t> slot_last_;
  std::vector<Value> values_;
  std::vector<uint32_t> ids_;          // plans_ x slots_
  std::vector<std::pair<std::string, std::size_t>> override_keys_;  // sorted key text, its slot
  std::unordered_map<std::string, std::size_t> context_index_;
  std::vector<std::unique_ptr<Context>> contexts_;
  Context* current_ = nullptr;  // the context of the plan scenario() last returned
  Calibrated* current_calibrated_ = nullptr;
  bool current_slow_ = false;
  Scenario slow_scenario_;
  nlohmann::json slow_json_;
  nlohmann::json plan_json_;
  bool plan_json_valid_ = false;
};

}  // namespace trainsim::cli
