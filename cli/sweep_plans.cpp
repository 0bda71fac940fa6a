#include "cli/sweep_plans.hpp"

#include <algorithm>
#include <map>

#include "models/cost/calibration.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/limits.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::cli {
using nlohmann::json;

namespace {

// The plan fields an axis may set in place: each is read by the loader from its own key alone
// (parse_plan), so a value it accepts once is accepted with any other values; what combines
// fields (expert_tp following tp, the degrees' product, dp from the GPU count, micro-batches per
// step) is redone per plan below or by finish_plan.
enum Field { kTp, kPp, kCp, kEp, kExpertTp, kDp, kSp, kVpp, kSchedule, kMicroBatch, kGlobalBatch,
             kZeroStage, kRecompute, kPrecision, kOffloadOptimizer };
constexpr const char* kFieldPaths[] = {"plan.tp", "plan.pp", "plan.cp", "plan.ep", "plan.expert_tp",
                                       "plan.dp", "plan.sp", "plan.vpp", "plan.schedule",
                                       "plan.micro_batch", "plan.global_batch", "plan.zero_stage",
                                       "plan.recompute", "plan.precision", "plan.offload.optimizer"};

int field_of(const std::string& path) {
  for (int f = 0; f < static_cast<int>(std::size(kFieldPaths)); ++f)
    if (path == kFieldPaths[f]) return f;
  return -1;
}

void copy_field(ParallelPlan& to, const ParallelPlan& from, int f) {
  switch (f) {
    case kTp: to.tp = from.tp; break;
    case kPp: to.pp = from.pp; break;
    case kCp: to.cp = from.cp; break;
    case kEp: to.ep = from.ep; break;
    case kExpertTp: to.expert_tp = from.expert_tp; break;
    case kDp: to.dp = from.dp; to.dp_from_gpus = from.dp_from_gpus; break;
    case kSp: to.sp = from.sp; break;
    case kVpp: to.vpp = from.vpp; break;
    case kSchedule: to.schedule = from.schedule; break;
    case kMicroBatch: to.micro_batch = from.micro_batch; break;
    case kGlobalBatch: to.global_batch = from.global_batch; break;
    case kZeroStage: to.zero_stage = from.zero_stage; break;
    case kRecompute: to.recompute = from.recompute; break;
    case kPrecision: to.precision = from.precision; break;
    case kOffloadOptimizer: to.offload.optimizer = from.offload.optimizer; break;
    default: break;
  }
}

// The same axis value, as its text: nlohmann's == holds 1 and 1.0 equal, but the row writes
// each as given.
bool same_value(const json& a, const std::string& a_text, const json& b) {
  if (b.is_structured()) return a.is_structured() && a_text == b.dump();
  return a.type() == b.type() && a == b;
}

}  // namespace

struct SweepPlans::Value {
  json value;
  std::string text;  // value.dump(): what apply_override reads, and the row's overrides
  enum State { kUnchecked, kInPlace, kLoader } state = kUnchecked;
  ParallelPlan plan;  // the base's plan with this value, as the loader reads it
};

struct SweepPlans::Calibrated {
  bool failed = false;  // the loader's route gives the error
  ClusterSpec cluster;
  json scenario_json;
  bool json_done = false;
};

struct SweepPlans::Context {
  bool loader = false;  // the loader's route for all its plans (it failed with the base's plan)
  Scenario base, work;
  json scenario_json;
  bool json_done = false;
  // With a calibration: the calibrated cluster per plan precision, the only part of a plan
  // apply_calibration reads (it changes the cluster's GPU and NVLink figures alone).
  std::map<int, Calibrated> calibrated;
  int work_precision = -1;  // whose calibrated cluster `work` holds
};

SweepPlans::SweepPlans(const SweepSpec& spec, const LoadOptions& options, const json& base_resolved,
                       const json& calibration, std::size_t max_plans)
    : spec_(spec), options_(options), base_resolved_(base_resolved), calibration_(calibration) {
  for (const SweepAxis& a : spec.axes) {
    if (a.degrees.empty()) slot_path_.push_back(a.path);
    else slot_path_.insert(slot_path_.end(), a.degrees.begin(), a.degrees.end());
  }
  slots_ = slot_path_.size();
  for (const std::string& p : slot_path_) {
    const int f = field_of(p);
    slot_field_.push_back(f);
    // Another part of the plan (or the whole plan) would change what the fields are read with.
    if (f < 0 && (p == "plan" || p.rfind("plan.", 0) == 0)) in_place_ = false;
  }
  slot_values_.resize(slots_);
  slot_last_.assign(slots_, 0);
  // The keys of the overrides object as nlohmann writes it: sorted, the last axis setting a path wins.
  std::map<std::string, std::size_t> keys;
  for (std::size_t s = 0; s < slots_; ++s) keys[slot_path_[s]] = s;
  for (const auto& [k, s] : keys) override_keys_.emplace_back(json(k).dump(), s);
  for_each_plan(spec, options, max_plans, [&](const PlanOverrides& p) { add_plan(p); });
}

SweepPlans::~SweepPlans() = default;

void SweepPlans::add_plan(const PlanOverrides& p) {
  if (p.size() != slots_) throw ScenarioError("axes", "internal: a plan with an unexpected number of overrides");
  for (std::size_t s = 0; s < slots_; ++s) {
    const json& v = p[s].second;
    std::vector<uint32_t>& seen = slot_values_[s];
    // Axes are listed in order: the slot's value is most often its last one or the next.
    uint32_t id = UINT32_MAX;
    const std::size_t last = slot_last_[s];
    for (std::size_t k : {last, last + 1})
      if (k < seen.size() && same_value(values_[seen[k]].value, values_[seen[k]].text, v)) {
        id = seen[k];
        slot_last_[s] = k;
        break;
      }
    if (id == UINT32_MAX) {
      for (std::size_t k = 0; k < seen.size(); ++k)
        if (same_value(values_[seen[k]].value, values_[seen[k]].text, v)) {
          id = seen[k];
          slot_last_[s] = k;
          break;
        }
    }
    if (id == UINT32_MAX) {
      id = static_cast<uint32_t>(values_.size());
      values_.push_back(Value{v, v.dump(), Value::kUnchecked, {}});
      slot_last_[s] = seen.size();
      seen.push_back(id);
    }
    ids_.push_back(id);
  }
  ++plans_;
}

json SweepPlans::raw(std::size_t i) const {
  json r = base_resolved_;
  for (std::size_t s = 0; s < slots_; ++s) apply_override(r, slot_path_[s], values_[ids_[i * slots_ + s]].text);
  return r;
}

void SweepPlans::overrides_text(std::size_t i, std::string& out) const {
  out += '{';
  bool first = true;
  for (const auto& [key, s] : override_keys_) {
    if (!first) out += ',';
    first = false;
    out += key;
    out += ':';
    out += values_[ids_[i * slots_ + s]].text;
  }
  out += '}';
}

json SweepPlans::overrides(std::size_t i) const {
  json o = json::object();
  for (std::size_t s = 0; s < slots_; ++s) o[slot_path_[s]] = values_[ids_[i * slots_ + s]].value;
  return o;
}

const Scenario& SweepPlans::slow(std::size_t i) {
  ++slow_plans_;
  current_slow_ = true;
  plan_json_valid_ = false;
  slow_scenario_ = parse_scenario(resolve_scenario_json(raw(i), options_, spec_.base_dir));
  if (!calibration_.is_null()) apply_calibration(calibration_, slow_scenario_);
  return slow_scenario_;
}

const Scenario& SweepPlans::scenario(std::size_t i) {
  current_ = nullptr;
  current_calibrated_ = nullptr;
  current_slow_ = false;
  plan_json_valid_ = false;
  if (!in_place_) return slow(i);
  const uint32_t* ids = &ids_[i * slots_];
  // The context: the values of the slots outside the plan fields.
  std::string key;
  for (std::size_t s = 0; s < slots_; ++s)
    if (slot_field_[s] < 0) key.append(reinterpret_cast<const char*>(&ids[s]), sizeof(uint32_t));
  auto it = context_index_.find(key);
  if (it == context_index_.end()) {
    auto c = std::make_unique<Context>();
    try {
      json r = base_resolved_;
      for (std::size_t s = 0; s < slots_; ++s)
        if (slot_field_[s] < 0) apply_override(r, slot_path_[s], values_[ids[s]].text);
      c->base = parse_scenario(resolve_scenario_json(std::move(r), options_, spec_.base_dir));
      c->work = c->base;
    } catch (const ScenarioError&) {
      c->loader = true;
    }
    it = context_index_.emplace(key, contexts_.size()).first;
    contexts_.push_back(std::move(c));
  }
  Context& c = *contexts_[it->second];
  if (c.loader) return slow(i);
  Scenario& s = c.work;
  s.plan = c.base.plan;
  bool expert_set = false;
  for (std::size_t k = 0; k < slots_; ++k) {
    const int f = slot_field_[k];
    if (f < 0) continue;
    Value& v = values_[ids[k]];
    if (v.state == Value::kUnchecked) {
      // The loader's reading of the value, once: the base with this one override.
      try {
        json r = base_resolved_;
        apply_override(r, slot_path_[k], v.text);
        v.plan = parse_scenario(resolve_scenario_json(std::move(r), options_, spec_.base_dir)).plan;
        v.state = Value::kInPlace;
      } catch (const ScenarioError&) {
        v.state = Value::kLoader;  // its error (or the combination's) comes from the loader's route
      }
    }
    if (v.state == Value::kLoader) return slow(i);
    copy_field(s.plan, v.plan, f);
    expert_set = expert_set || f == kExpertTp;
  }
  // plan.expert_tp defaults to plan.tp (parse_plan) when the base gives none.
  if (!expert_set && !base_resolved_["plan"].contains("expert_tp")) s.plan.expert_tp = s.plan.tp;
  // The degrees' product the loader bounds (parse_plan): past it, the loader's error.
  int64_t product = 1;
  for (int64_t d : {int64_t{s.plan.tp}, int64_t{s.plan.pp}, int64_t{s.plan.cp},
                    int64_t{s.plan.dp_from_gpus ? 1 : s.plan.dp}})
    product = product < 0 ? -1 : limits::checked_product(product, d, limits::kMaxGpus);
  if (product < 0) return slow(i);
  try {
    finish_plan(s);
  } catch (const ScenarioError&) {
    return slow(i);
  }
  current_calibrated_ = nullptr;
  if (!calibration_.is_null()) {
    const int precision = static_cast<int>(s.plan.precision);
    auto [at, fresh] = c.calibrated.try_emplace(precision);
    Calibrated& cal = at->second;
    if (fresh) {
      Scenario calibrated = c.base;
      calibrated.plan = s.plan;
      try {
        apply_calibration(calibration_, calibrated);
        cal.cluster = calibrated.cluster;
      } catch (const ScenarioError&) {
        cal.failed = true;
      }
    }
    if (cal.failed) return slow(i);
    if (c.work_precision != precision) {
      s.cluster = cal.cluster;
      c.work_precision = precision;
    }
    current_calibrated_ = &cal;
  }
  current_ = &c;
  return s;
}

const json& SweepPlans::scenario_json(bool plan_part) {
  if (current_slow_ || plan_part || !current_) {
    if (!plan_json_valid_) {
      plan_json_ = to_json(current_slow_ || !current_ ? slow_scenario_ : current_->work);
      plan_json_valid_ = true;
    }
    return plan_json_;
  }
  // Outside the plan, to_json of a plan's scenario is its context's (with its calibration).
  if (current_calibrated_) {
    if (!current_calibrated_->json_done) {
      Scenario calibrated = current_->base;
      calibrated.cluster = current_calibrated_->cluster;
      current_calibrated_->scenario_json = to_json(calibrated);
      current_calibrated_->json_done = true;
    }
    return current_calibrated_->scenario_json;
  }
  if (!current_->json_done) {
    current_->scenario_json = to_json(current_->base);
    current_->json_done = true;
  }
  return current_->scenario_json;
}

}  // namespace trainsim::cli
