#include "gui/result_reader.hpp"

#include <initializer_list>
#include <limits>
#include <string>

namespace trainsim::gui {
namespace {

double num(const nlohmann::json& j, const char* key, double fallback = 0) {
  auto it = j.find(key);
  return (it != j.end() && it->is_number()) ? it->get<double>() : fallback;
}

MemoryBreakdown memory_breakdown(const nlohmann::json& j) {
  MemoryBreakdown b;
  b.params_bytes = num(j, "params_bytes");
  b.grads_bytes = num(j, "grads_bytes");
  b.optimizer_bytes = num(j, "optimizer_bytes");
  b.activations_bytes = num(j, "activations_bytes");
  b.other_bytes = num(j, "other_bytes");
  return b;
}

// A count (GPUs, micro-batches, a stage, layers): the number, within an int.
int count(const nlohmann::json& j, const char* key, int fallback = 0) {
  const double v = num(j, key, fallback);
  return v >= 0 && v <= std::numeric_limits<int>::max() ? static_cast<int>(v) : fallback;
}

// JSON writes "never" (an infinite interval or MTBF) as null.
double num_or_inf(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::numeric_limits<double>::infinity() : num(j, key);
}

const nlohmann::json& sub(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace

GoodputReport goodput_from_json(const nlohmann::json& j) {
  GoodputReport g;
  if (!j.is_object()) return g;
  g.enabled = true;
  g.tokens_per_s_nominal = num(j, "tokens_per_s_nominal");
  g.goodput_tokens_per_s = num(j, "goodput_tokens_per_s");
  g.goodput_fraction = num(j, "goodput_fraction");
  const auto& d = sub(j, "failure_domains");
  g.domains = {count(d, "gpus"), count(d, "nodes"), count(d, "nic_links"), count(d, "leaf_switches")};
  const auto& f = sub(j, "failures_per_hour");
  g.rates = {num(f, "gpu") / 3600, num(f, "node") / 3600, num(f, "link") / 3600, num(f, "switch") / 3600};
  g.system_mtbf_s = num_or_inf(j, "system_mtbf_s");
  g.expected_failures = num(j, "expected_failures");
  const auto& c = sub(j, "checkpoint");
  g.checkpoint = {num(c, "size_bytes"), num(c, "write_s"), num(c, "blocking_s"), num(c, "restart_s")};
  g.interval_s = num_or_inf(c, "interval_s");
  g.interval_from_policy = c.value("interval_from_policy", false);
  g.young_interval_s = num_or_inf(c, "young_interval_s");
  g.daly_interval_s = num_or_inf(c, "daly_interval_s");
  g.optimal_interval_closed_form_s = num_or_inf(c, "optimal_interval_closed_form_s");
  g.optimal_interval_monte_carlo_s = num(c, "optimal_interval_monte_carlo_s");
  const auto& u = sub(j, "useful_fraction");
  g.useful_fraction_closed_form = num(u, "closed_form");
  g.run.useful_fraction_mean = num(u, "monte_carlo_mean");
  g.run.useful_fraction_p10 = num(u, "monte_carlo_p10");
  g.run.useful_fraction_p90 = num(u, "monte_carlo_p90");
  g.useful_fraction_at_optimum_mc = num(u, "monte_carlo_at_optimum");
  g.run.failures_mean = g.expected_failures;
  const auto& l = sub(j, "lost_hours");
  g.lost = {num(l, "checkpoint") * 3600, num(l, "lost_work") * 3600,  num(l, "restart") * 3600,
            num(l, "repair_wait") * 3600, num(l, "stragglers") * 3600, num(l, "degraded_links") * 3600};
  const auto& s = sub(j, "slow_parts");
  g.slow.nominal_step_s = num(s, "nominal_step_time_s");
  g.slow.straggler_probability = num(s, "straggler_probability");
  g.slow.straggler_stage = count(s, "straggler_stage", -1);
  g.slow.straggler_step_s = num(s, "straggler_step_time_s");
  g.slow.degraded_link_probability = num(s, "degraded_link_probability");
  g.slow.degraded_step_s = num(s, "degraded_links_step_time_s");
  g.slow.slowed_step_s = num(s, "expected_step_time_s");
  g.slow.rebalanced_step_s = num(s, "rebalanced_step_time_s");
  for (const char* key : {"notes"})
    if (auto n = j.find(key); n != j.end() && n->is_array())
      for (const auto& t : *n)
        if (t.is_string()) g.notes.push_back(t.get<std::string>());
  return g;
}

Result result_from_json(const nlohmann::json& j) {
  Result r;
  r.feasible = j.value("feasible", true);
  r.reason = j.value("reason", std::string());
  r.fidelity = j.value("fidelity", std::string("estimate"));
  if (auto w = j.find("warnings"); w != j.end() && w->is_array())
    for (const auto& s : *w)
      if (s.is_string()) r.warnings.push_back(s.get<std::string>());
  r.step_time_s = num(j, "step_time_s");
  r.tokens_per_step = num(j, "tokens_per_step");
  r.tokens_per_s = num(j, "tokens_per_s");
  r.model_flops_per_step = num(j, "model_flops_per_step");
  r.hardware_flops_per_step = num(j, "hardware_flops_per_step");
  r.model_tflops_per_gpu = num(j, "model_tflops_per_gpu");
  r.hardware_tflops_per_gpu = num(j, "hardware_tflops_per_gpu");
  r.mfu = num(j, "mfu");
  r.hfu = num(j, "hfu");
  r.bubble_fraction = num(j, "bubble_fraction");
  r.exposed_comm_s = num(j, "exposed_comm_s");
  r.gpus = count(j, "gpus");
  r.micro_batches = count(j, "micro_batches_per_step");
  if (auto b = j.find("breakdown_s"); b != j.end() && b->is_object()) {
    r.breakdown.compute_s = num(*b, "compute");
    r.breakdown.tp_comm_s = num(*b, "tp_comm");
    r.breakdown.pp_comm_s = num(*b, "pp_comm");
    r.breakdown.dp_comm_s = num(*b, "dp_comm");
    r.breakdown.ep_comm_s = num(*b, "ep_comm");
    r.breakdown.cp_comm_s = num(*b, "cp_comm");
    r.breakdown.bubble_s = num(*b, "bubble");
    r.breakdown.optimizer_s = num(*b, "optimizer");
    r.breakdown.offload_s = num(*b, "offload");
  }
  if (auto o = j.find("overlapped_s"); o != j.end() && o->is_object()) {
    r.overlapped.tp_s = num(*o, "tp_comm");
    r.overlapped.cp_s = num(*o, "cp_comm");
    r.overlapped.ep_s = num(*o, "ep_comm");
    r.overlapped.dp_s = num(*o, "dp_comm");
  }
  if (auto c = j.find("comm_bytes_per_gpu"); c != j.end() && c->is_object()) {
    r.tp_bytes = num(*c, "tp");
    r.pp_bytes = num(*c, "pp");
    r.dp_bytes = num(*c, "dp");
    r.ep_bytes = num(*c, "ep");
    r.cp_bytes = num(*c, "cp");
  }
  if (auto m = j.find("memory"); m != j.end() && m->is_object()) {
    r.peak_memory_bytes = num(*m, "peak_bytes");
    r.hbm_capacity_bytes = num(*m, "hbm_capacity_bytes");
    if (auto b = m->find("breakdown"); b != m->end() && b->is_object()) r.peak_breakdown = memory_breakdown(*b);
    if (auto ps = m->find("per_stage"); ps != m->end() && ps->is_array()) {
      for (const auto& s : *ps) {
        StageMemory sm;
        sm.stage = count(s, "stage");
        sm.layers = count(s, "layers");
        sm.in_flight_micro_batches = num(s, "in_flight_micro_batches");
        sm.total_bytes = num(s, "total_bytes");
        if (auto b = s.find("breakdown"); b != s.end() && b->is_object()) sm.breakdown = memory_breakdown(*b);
        r.per_stage.push_back(sm);
      }
    }
  }
  return r;
}

std::string result_json_problem(const nlohmann::json& j) {
  if (!j.is_object()) return "not a trainsim run --json result (expected a JSON object)";
  if (!j.contains("step_time_s")) return "step_time_s: missing (not a trainsim run --json result)";
  if (auto f = j.find("feasible"); f != j.end() && !f->is_boolean()) return "feasible: expected true or false";
  // Every figure of the contract is a time, a count, bytes, a rate or a share: none is negative.
  auto figures = [](const nlohmann::json& obj, const std::string& where,
                    std::initializer_list<const char*> keys) -> std::string {
    for (const char* key : keys) {
      auto it = obj.find(key);
      if (it == obj.end() || it->is_null()) continue;
      const std::string field = where.empty() ? key : where + "." + key;
      if (!it->is_number()) return field + ": " + it->dump() + " is not a number";
      if (it->get<double>() < 0) return field + ": " + it->dump() + " is negative (expected a number >= 0)";
    }
    return "";
  };
  const char* kCounts[] = {"gpus", "micro_batches_per_step"};
  std::string p = figures(j, "", {"step_time_s", "tokens_per_step", "tokens_per_s", "model_flops_per_step",
                                  "hardware_flops_per_step", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu",
                                  "hfu", "bubble_fraction", "exposed_comm_s", "overlapped_comm_s", "gpus",
                                  "micro_batches_per_step"});
  for (const char* key : kCounts)
    if (p.empty() && num(j, key) > std::numeric_limits<int>::max())
      p = std::string(key) + ": " + j[key].dump() + " is beyond any cluster (expected at most " +
          std::to_string(std::numeric_limits<int>::max()) + ")";
  if (p.empty())
    p = figures(sub(j, "breakdown_s"), "breakdown_s",
                {"compute", "tp_comm", "pp_comm", "dp_comm", "ep_comm", "cp_comm", "bubble", "optimizer", "offload"});
  if (p.empty()) p = figures(sub(j, "overlapped_s"), "overlapped_s", {"tp_comm", "cp_comm", "ep_comm", "dp_comm"});
  if (p.empty()) p = figures(sub(j, "comm_bytes_per_gpu"), "comm_bytes_per_gpu", {"tp", "pp", "dp", "ep", "cp"});
  if (p.empty()) p = figures(sub(j, "memory"), "memory", {"peak_bytes", "hbm_capacity_bytes"});
  return p;
}

}  // namespace trainsim::gui
