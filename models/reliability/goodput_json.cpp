#include "models/reliability/goodput_json.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "models/core/units.hpp"

namespace trainsim {
namespace {

// JSON has no infinity: "never" intervals and MTBFs are written as null.
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

// Long durations read better in minutes and hours than in seconds.
std::string duration(double s) {
  if (!std::isfinite(s)) return "never";
  char buf[64];
  if (s >= 7200) {
    std::snprintf(buf, sizeof buf, "%.2f h", s / 3600);
  } else if (s >= 120) {
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  } else {
    return units::format_time(s);
  }
  return buf;
}

}  // namespace

nlohmann::json goodput_to_json(const GoodputReport& g) {
  using nlohmann::json;
  const SlowParts& s = g.slow;
  json slow = {{"nominal_step_time_s", s.nominal_step_s},
               {"straggler_probability", s.straggler_probability},
               {"straggler_stage", s.straggler_stage >= 0 ? nlohmann::json(s.straggler_stage) : nlohmann::json(nullptr)},
               {"straggler_step_time_s", s.straggler_step_s},
               {"degraded_link_probability", s.degraded_link_probability},
               {"degraded_links_step_time_s", s.degraded_step_s},
               {"expected_step_time_s", s.slowed_step_s},
               {"notes", s.notes}};
  if (s.rebalanced_step_s > 0) {
    slow["rebalanced_step_time_s"] = s.rebalanced_step_s;
    slow["rebalanced_layers_per_stage"] = s.rebalanced_layers_per_stage;
    const double loss = s.straggler_step_s - s.nominal_step_s;
    slow["rebalance_recovered_fraction"] =
        loss > 0 ? (s.straggler_step_s - s.rebalanced_step_s) / loss : 0.0;
  }
  return {
      {"tokens_per_s_nominal", g.tokens_per_s_nominal},
      {"goodput_tokens_per_s", g.goodput_tokens_per_s},
      {"goodput_fraction", g.goodput_fraction},
      {"failure_domains", {{"gpus", g.domains.gpus}, {"nodes", g.domains.nodes},
                           {"nic_links", g.domains.nic_links}, {"leaf_switches", g.domains.leaf_switches}}},
      {"failures_per_hour", {{"gpu", g.rates.gpu_per_s * 3600}, {"node", g.rates.node_per_s * 3600},
                             {"link", g.rates.link_per_s * 3600}, {"switch", g.rates.switch_per_s * 3600},
                             {"total", g.rates.total_per_s() * 3600}}},
      {"system_mtbf_s", finite_or_null(g.system_mtbf_s)},
      {"expected_failures", g.expected_failures},
      {"checkpoint", {{"size_bytes", g.checkpoint.size_bytes},
                      {"write_s", g.checkpoint.write_s},
                      {"blocking_s", g.checkpoint.blocking_s},
                      {"restart_s", g.checkpoint.restart_s},
                      {"interval_s", finite_or_null(g.interval_s)},
                      {"interval_from_policy", g.interval_from_policy},
                      {"young_interval_s", finite_or_null(g.young_interval_s)},
                      {"daly_interval_s", finite_or_null(g.daly_interval_s)},
                      {"optimal_interval_closed_form_s", finite_or_null(g.optimal_interval_closed_form_s)},
                      {"optimal_interval_monte_carlo_s", g.optimal_interval_monte_carlo_s > 0
                                                             ? json(g.optimal_interval_monte_carlo_s)
                                                             : json()}}},
      {"useful_fraction", {{"closed_form", g.useful_fraction_closed_form},
                           {"monte_carlo_mean", g.run.useful_fraction_mean},
                           {"monte_carlo_p10", g.run.useful_fraction_p10},
                           {"monte_carlo_p90", g.run.useful_fraction_p90},
                           {"monte_carlo_at_optimum", g.useful_fraction_at_optimum_mc}}},
      {"lost_hours", {{"checkpoint", g.lost.checkpoint_s / 3600},
                      {"lost_work", g.lost.lost_work_s / 3600},
                      {"restart", g.lost.restart_s / 3600},
                      {"repair_wait", g.lost.repair_wait_s / 3600},
                      {"stragglers", g.lost.stragglers_s / 3600},
                      {"degraded_links", g.lost.degraded_links_s / 3600},
                      {"total", g.lost.total() / 3600}}},
      {"slow_parts", slow},
      {"notes", g.notes}};
}

std::string goodput_to_text(const GoodputReport& g) {
  std::ostringstream o;
  char line[256];
  o << "\n  goodput over a long run (training.faults)\n";
  std::snprintf(line, sizeof line, "    goodput            %s tokens/s = %.1f%% of %s tokens/s\n",
                units::format_count(g.goodput_tokens_per_s).c_str(), 100 * g.goodput_fraction,
                units::format_count(g.tokens_per_s_nominal).c_str());
  o << line;
  std::snprintf(line, sizeof line, "    job MTBF           %s (%.3g failures/h; %.1f failures expected)\n",
                duration(g.system_mtbf_s).c_str(), g.rates.total_per_s() * 3600, g.expected_failures);
  o << line;
  std::snprintf(line, sizeof line, "    checkpoint         %s, blocks %s, restart %s\n",
                units::format_bytes_si(g.checkpoint.size_bytes).c_str(),
                duration(g.checkpoint.blocking_s).c_str(), duration(g.checkpoint.restart_s).c_str());
  o << line;
  std::snprintf(line, sizeof line,
                "    interval           %s%s; optimum %s (Monte Carlo %s), Young %s, Daly %s\n",
                duration(g.interval_s).c_str(),
                g.interval_from_policy ? ""
                : std::isfinite(g.optimal_interval_closed_form_s) ? " (optimum)" : " (one, at the end)",
                duration(g.optimal_interval_closed_form_s).c_str(),
                g.optimal_interval_monte_carlo_s > 0 ? duration(g.optimal_interval_monte_carlo_s).c_str() : "-",
                duration(g.young_interval_s).c_str(), duration(g.daly_interval_s).c_str());
  o << line;
  std::snprintf(line, sizeof line,
                "    useful fraction    %.2f%% simulated (p10 %.2f%%, p90 %.2f%%), %.2f%% closed form\n",
                100 * g.run.useful_fraction_mean, 100 * g.run.useful_fraction_p10,
                100 * g.run.useful_fraction_p90, 100 * g.useful_fraction_closed_form);
  o << line;
  o << "    time lost per cause (hours over the run):\n";
  const std::pair<const char*, double> causes[] = {
      {"checkpoint writes", g.lost.checkpoint_s}, {"lost work", g.lost.lost_work_s},
      {"restarts", g.lost.restart_s},             {"waiting for repair", g.lost.repair_wait_s},
      {"stragglers", g.lost.stragglers_s},        {"degraded links", g.lost.degraded_links_s}};
  for (const auto& [name, s] : causes) {
    std::snprintf(line, sizeof line, "      %-20s %9.2f h\n", name, s / 3600);
    o << line;
  }
  const SlowParts& s = g.slow;
  if (s.straggler_stage >= 0) {
    std::snprintf(line, sizeof line,
                  "    straggler          stage %d, P(any slow GPU) %.1f%%: step %s -> %s\n",
                  s.straggler_stage, 100 * s.straggler_probability,
                  units::format_time(s.nominal_step_s).c_str(), units::format_time(s.straggler_step_s).c_str());
    o << line;
    if (s.rebalanced_step_s > 0) {
      const double loss = s.straggler_step_s - s.nominal_step_s;
      std::string split;
      for (int l : s.rebalanced_layers_per_stage) split += (split.empty() ? "" : ",") + std::to_string(l);
      std::snprintf(line, sizeof line,
                    "    rebalanced         layers [%s]: step %s, recovers %.0f%% of the loss\n",
                    split.c_str(), units::format_time(s.rebalanced_step_s).c_str(),
                    loss > 0 ? 100 * (s.straggler_step_s - s.rebalanced_step_s) / loss : 0.0);
      o << line;
    }
  }
  if (s.degraded_link_probability > 0) {
    std::snprintf(line, sizeof line, "    degraded links     P(crossed) %.1f%%: step %s -> %s\n",
                  100 * s.degraded_link_probability, units::format_time(s.nominal_step_s).c_str(),
                  units::format_time(s.degraded_step_s).c_str());
    o << line;
  }
  for (const auto& n : s.notes) o << "    note: " << n << "\n";
  for (const auto& n : g.notes) o << "    note: " << n << "\n";
  return o.str();
}

}  // namespace trainsim
