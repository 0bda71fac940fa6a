#include "models/scenario/sweep_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "models/core/result_json.hpp"
#include "models/scenario/json_reader.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::vector<int>> factorisations(int n, int k) {
  std::vector<std::vector<int>> out;
  std::vector<int> cur;
  std::function<void(int, int)> rec = [&](int rest, int left) {
    if (left == 1) {
      cur.push_back(rest);
      out.push_back(cur);
      cur.pop_back();
      return;
    }
    for (int d = 1; d <= rest; ++d) {
      if (rest % d) continue;
      cur.push_back(d);
      rec(rest / d, left - 1);
      cur.pop_back();
    }
  };
  if (n >= 1 && k >= 1) rec(n, k);
  return out;
}

namespace {

const json* find_path(const json& j, const std::string& dotted) {
  const json* node = &j;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

int64_t resolve_integer(const json& v, const json& base_resolved, const std::string& path) {
  if (v.is_string()) {
    const json* target = find_path(base_resolved, v.get<std::string>());
    if (!target || !target->is_number_integer())
      throw ScenarioError(path, "\"" + safe_excerpt(v.get<std::string>()) + "\" is not an integer field of the base scenario");
    return target->get<int64_t>();
  }
  return json_to_integer(v, path, 1, int64_t{1} << 40);
}

// An axis path must name a field of the scenario: one that does not (a typo) would make every
// plan an invalid row and the sweep report that as its result. The base with the axis's first
// value is loaded; a loader error that the path is an unknown key (or not a path at all) is the
// axis's error. Other errors (a value out of range) stay the rows' own.
void check_axis_path(const SweepSpec& s, const SweepAxis& axis, const std::string& apath, const LoadOptions& options) {
  json raw = s.base_raw;
  try {
    apply_override(raw, axis.path, axis.values.front().dump());
  } catch (const ScenarioError& e) {
    throw ScenarioError(apath + ".path", e.message());
  }
  try {
    parse_scenario(resolve_scenario_json(raw, options, s.base_dir));
  } catch (const ScenarioError& e) {
    const bool on_path = e.path() == axis.path || axis.path.rfind(e.path() + ".", 0) == 0;
    if (on_path && e.message().rfind("unknown key", 0) == 0)
      throw ScenarioError(apath + ".path", "\"" + safe_excerpt(axis.path) + "\" is not a scenario field (" +
                                               safe_excerpt(e.path()) + ": " + e.message() + ")");
  }
}

}  // namespace

SweepSpec parse_sweep(const json& j, const std::string& dir, const LoadOptions& options) {
  JsonReader r(j, "");
  SweepSpec s;
  const int64_t version = r.integer("schema_version", 1, 1000);
  if (version != 1) r.fail("schema_version", "this trainsim reads sweep schema_version 1");
  s.name = r.string_or("name", "sweep");
  const json* base = r.raw("base");
  if (!base) r.fail("base", "missing (required): a scenario file path or a scenario object");
  if (base->is_string()) {
    fs::path file = fs::path(base->get<std::string>());
    if (file.is_relative()) file = fs::path(dir) / file;
    s.base_raw = read_json_file(file.string(), "base scenario");
    s.base_dir = file.parent_path().string();
  } else if (base->is_object()) {
    s.base_raw = *base;
    s.base_dir = dir;
  } else {
    r.fail("base", "expected a scenario file path or object, got " + json_type_name(*base));
  }
  // The base must itself be a valid scenario.
  const json base_resolved = resolve_scenario_json(s.base_raw, options, s.base_dir);
  const json base_scenario = to_json(parse_scenario(base_resolved));
  // Names in constraints and objectives must mean something: a typo would make every plan fail
  // (or pass) its constraint and the sweep would report it as a result. A name is known when it
  // resolves on a result row (every key of result_to_json) or on the base scenario; optional
  // sections an axis may switch on (model.moe, training.faults) are accepted as they are.
  json sample_row = result_to_json(Result{});
  sample_row["plan"]["offload_optimizer"] = false;  // the one plan key a sweep row adds
  const auto known = row_lookup(sample_row, base_scenario);
  auto check_names = [&](const Expression& e, const std::string& path) {
    for (const std::string& n : e.names()) {
      if (known(n) || n.rfind("model.moe.", 0) == 0 || n.rfind("training.faults.", 0) == 0) continue;
      throw ScenarioError(path, "unknown name \"" + safe_excerpt(n) +
                                    "\"; names are result keys (step_time_s, tokens_per_s, mfu, "
                                    "memory.peak_bytes, ...), scenario paths (plan.tp, model.layers, "
                                    "cluster.gpu.hbm_capacity, ...) and hbm, gpus, nodes, gpus_per_node");
    }
  };

  const json* axes = r.raw("axes");
  if (!axes || !axes->is_array() || axes->empty())
    r.fail("axes", "expected a non-empty list of axes");
  if (axes->size() > 64) r.fail("axes", "at most 64 axes");
  for (std::size_t i = 0; i < axes->size(); ++i) {
    const std::string apath = "axes[" + std::to_string(i) + "]";
    JsonReader a((*axes)[i], apath);
    SweepAxis axis;
    if (const json* deg = a.raw("degrees")) {
      if (!deg->is_array() || deg->size() < 2 || deg->size() > 6)
        a.fail("degrees", "expected a list of 2 to 6 plan paths, e.g. [\"plan.tp\", \"plan.pp\", \"plan.dp\"]");
      // The degrees whose product is the GPU count, each once.
      static const std::set<std::string> kDegreePaths = {"plan.tp", "plan.pp", "plan.dp", "plan.cp", "plan.ep"};
      for (const auto& d : *deg) {
        if (!d.is_string() || !kDegreePaths.count(d.get<std::string>()))
          a.fail("degrees", "expected parallel degrees among plan.tp, plan.pp, plan.dp, plan.cp, plan.ep, got " +
                                describe_json_value(d));
        if (std::find(axis.degrees.begin(), axis.degrees.end(), d.get<std::string>()) != axis.degrees.end())
          a.fail("degrees", "\"" + d.get<std::string>() + "\" is listed twice");
        for (std::size_t k = 0; k < s.axes.size(); ++k)
          if (s.axes[k].path == d.get<std::string>())
            a.fail("degrees", "\"" + d.get<std::string>() + "\" is already varied by axes[" + std::to_string(k) + "]");
        axis.degrees.push_back(d.get<std::string>());
      }
      a.finish({"description"});
      s.axes.push_back(std::move(axis));
      continue;
    }
    axis.path = a.string("path");
    int forms = 0;
    if (const json* v = a.raw("values")) {
      ++forms;
      if (!v->is_array() || v->empty() || v->size() > 100000) a.fail("values", "expected a non-empty list");
      axis.values.assign(v->begin(), v->end());
    }
    if (const json* d = a.raw("divisors_of")) {
      ++forms;
      const int64_t n = resolve_integer(*d, base_resolved, a.child_path("divisors_of"));
      if (n > 100'000'000) a.fail("divisors_of", "at most 1e8");
      for (int64_t k = 1; k <= n; ++k)
        if (n % k == 0) axis.values.push_back(k);
    }
    if (const json* p2 = a.raw("powers_of_two")) {
      ++forms;
      if (!p2->is_array() || p2->size() != 2) a.fail("powers_of_two", "expected [from, to]");
      const int64_t from = json_to_integer((*p2)[0], a.child_path("powers_of_two[0]"), 1, int64_t{1} << 40);
      const int64_t to = json_to_integer((*p2)[1], a.child_path("powers_of_two[1]"), from, int64_t{1} << 40);
      for (int64_t k = 1; k <= to; k *= 2)
        if (k >= from) axis.values.push_back(k);
    }
    if (const json* rg = a.raw("range")) {
      ++forms;
      if (!rg->is_array() || rg->size() < 2 || rg->size() > 3) a.fail("range", "expected [from, to] or [from, to, step]");
      const int64_t from = json_to_integer((*rg)[0], a.child_path("range[0]"), -(int64_t{1} << 40), int64_t{1} << 40);
      const int64_t to = json_to_integer((*rg)[1], a.child_path("range[1]"), from, int64_t{1} << 40);
      const int64_t step = rg->size() == 3 ? json_to_integer((*rg)[2], a.child_path("range[2]"), 1, int64_t{1} << 40) : 1;
      if ((to - from) / step > 100000) a.fail("range", "more than 100000 values");
      for (int64_t k = from; k <= to; k += step) axis.values.push_back(k);
    }
    if (forms != 1)
      a.fail("values", "give exactly one of values, divisors_of, powers_of_two, range (or use degrees)");
    // A value written twice, or two axes over one field, would list the same plans again (the
    // later axis overriding the earlier one's values). Values are compared as written: 1 and
    // 1.0 are two spellings the loader reads alike (a sweep may probe both).
    for (std::size_t k = 0; k < axis.values.size(); ++k)
      for (std::size_t m = 0; m < k; ++m)
        if (axis.values[k].dump() == axis.values[m].dump())
          throw ScenarioError(apath, safe_excerpt(axis.values[k].dump()) + " is listed twice");
    for (std::size_t k = 0; k < s.axes.size(); ++k)
      if (s.axes[k].path == axis.path || (s.axes[k].path.empty() && std::find(s.axes[k].degrees.begin(), s.axes[k].degrees.end(), axis.path) != s.axes[k].degrees.end()))
        a.fail("path", "\"" + safe_excerpt(axis.path) + "\" is already varied by axes[" + std::to_string(k) + "]");
    check_axis_path(s, axis, apath, options);
    a.finish({"description"});
    s.axes.push_back(std::move(axis));
  }
  if (const json* cons = r.raw("constraints")) {
    if (!cons->is_array()) r.fail("constraints", "expected a list of expressions");
    for (std::size_t i = 0; i < cons->size(); ++i) {
      const std::string cpath = "constraints[" + std::to_string(i) + "]";
      if (!(*cons)[i].is_string()) throw ScenarioError(cpath, "expected an expression string");
      s.constraints.push_back(Expression::parse((*cons)[i].get<std::string>(), cpath));
      check_names(s.constraints.back(), cpath);
    }
  }
  s.objective = Expression::parse("tokens_per_s", "objective");
  if (const json* obj = r.raw("objective")) {
    JsonReader o(*obj, "objective");
    if (o.has("maximize") == o.has("minimize"))
      o.fail("maximize", "give exactly one of maximize or minimize");
    s.maximize = o.has("maximize");
    const std::string key = s.maximize ? "maximize" : "minimize";
    s.objective = Expression::parse(o.string(key), o.child_path(key));
    check_names(s.objective, o.child_path(key));
    o.finish();
  }
  s.top_k = static_cast<int>(r.integer_or("top_k", 10, 1, 100000));
  s.simulate_top = static_cast<int>(r.integer_or("simulate_top", 0, 0, 100000));
  r.finish({"description"});
  return s;
}

SweepSpec load_sweep_file(const std::string& path, const LoadOptions& options) {
  const json j = read_json_file(path, "sweep");
  const std::string dir = fs::path(path).parent_path().string();
  return parse_sweep(j, dir.empty() ? "." : dir, options);
}

std::vector<PlanOverrides> expand_sweep(const SweepSpec& spec, const LoadOptions& options,
                                        std::size_t max_plans) {
  std::vector<PlanOverrides> plans;
  for_each_plan(spec, options, max_plans, [&](const PlanOverrides& p) { plans.push_back(p); });
  return plans;
}

void for_each_plan(const SweepSpec& spec, const LoadOptions& options, std::size_t max_plans,
                   const std::function<void(const PlanOverrides&)>& visit) {
  std::size_t listed = 0;
  PlanOverrides cur;
  std::function<void(std::size_t)> rec = [&](std::size_t axis_index) {
    if (axis_index == spec.axes.size()) {
      if (listed >= max_plans)
        throw ScenarioError("axes", "the sweep has more than " + std::to_string(max_plans) + " plans");
      ++listed;
      visit(cur);
      return;
    }
    const SweepAxis& axis = spec.axes[axis_index];
    if (!axis.degrees.empty()) {
      // The GPU count of the scenario as the axes so far make it.
      json raw = spec.base_raw;
      int gpus = 0;
      try {
        for (const auto& [p, v] : cur) apply_override(raw, p, v.dump());
        gpus = parse_scenario(resolve_scenario_json(raw, options, spec.base_dir)).cluster.total_gpus();
      } catch (const ScenarioError&) {
        // The earlier axes' values make no scenario: one plan (its degrees 1), which becomes an
        // invalid row naming the error, as it would without a degrees axis.
        for (const std::string& d : axis.degrees) cur.emplace_back(d, 1);
        rec(axis_index + 1);
        cur.resize(cur.size() - axis.degrees.size());
        return;
      }
      for (const auto& f : factorisations(gpus, static_cast<int>(axis.degrees.size()))) {
        for (std::size_t k = 0; k < f.size(); ++k) cur.emplace_back(axis.degrees[k], f[k]);
        rec(axis_index + 1);
        cur.resize(cur.size() - f.size());
      }
      return;
    }
    for (const auto& v : axis.values) {
      cur.emplace_back(axis.path, v);
      rec(axis_index + 1);
      cur.pop_back();
    }
  };
  rec(0);
}

Expression::Lookup row_lookup(const json& row, const json& scenario) {
  return [&row, &scenario](const std::string& name) -> std::optional<double> {
    auto number = [](const json* v) -> std::optional<double> {
      if (v && v->is_number()) return v->get<double>();
      if (v && v->is_boolean()) return v->get<bool>() ? 1.0 : 0.0;
      return std::nullopt;
    };
    if (name == "hbm") return number(find_path(scenario, "cluster.gpu.hbm_capacity"));
    if (name == "gpus_per_node") return number(find_path(scenario, "cluster.gpus_per_node"));
    if (name == "nodes") return number(find_path(scenario, "cluster.nodes"));
    if (name == "gpus") {
      auto n = number(find_path(scenario, "cluster.nodes"));
      auto g = number(find_path(scenario, "cluster.gpus_per_node"));
      if (n && g) return *n * *g;
      return std::nullopt;
    }
    if (auto v = number(find_path(row, name))) return v;
    return number(find_path(scenario, name));
  };
}

}  // namespace trainsim
