// Goodput: the checkpointing closed forms (Young 1974, Daly 2006) and the Monte Carlo that
// plays the same policy, checked against each other in the limits where the closed forms hold.
#include "models/reliability/goodput.hpp"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "models/estimate/estimate.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/reliability/slow_parts.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario make(const json& faults, int nodes = 16) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json j = {{"schema_version", 1},
            {"model", "gpt-18.4b"},
            {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", nodes}}},
            {"plan", {{"tp", 8}, {"pp", 2}, {"global_batch", 512}}},
            {"training", {{"faults", faults}}}};
  return parse_scenario(resolve_scenario_json(j, o));
}

MonteCarloInputs inputs(double mtbf_s, double delta_s, double restart_s, double tau_s) {
  MonteCarloInputs in;
  in.rates.gpu_per_s = 1.0 / mtbf_s;
  in.checkpoint.blocking_s = delta_s;
  in.checkpoint.write_s = delta_s;
  in.checkpoint.restart_s = restart_s;
  in.interval_s = tau_s;
  in.horizon_s = 2000 * mtbf_s;
  in.trials = 20;
  return in;
}

TEST(Goodput, YoungAndDalyClosedForms) {
  // Young: sqrt(2 x 60 s x 10 h) = 2078.46 s.
  EXPECT_NEAR(young_interval_s(60, 36000), 2078.46, 0.01);
  // Daly eq. (37): sqrt(2dM)[1 + sqrt(d/2M)/3 + d/(18M)] - d, d/2M = 1/1200.
  const double x = 60.0 / 72000.0;
  EXPECT_NEAR(daly_interval_s(60, 36000), 2078.46 * (1 + std::sqrt(x) / 3 + x / 9) - 60, 0.01);
  EXPECT_DOUBLE_EQ(daly_interval_s(100, 40), 40);  // delta >= 2M: tau = M
  // Daly's higher-order form is the optimum of his own T_w model to well under 1% while d << M.
  for (double m : {3600.0, 36000.0, 360000.0})
    EXPECT_NEAR(daly_exact_optimum_s(60, 600, m) / daly_interval_s(60, m), 1.0, 0.005) << m;
  // Nothing fails: only the checkpoint costs, g = tau / (tau + delta).
  EXPECT_DOUBLE_EQ(daly_useful_fraction(1000, 10, 300, INFINITY), 1000.0 / 1010.0);
}

TEST(Goodput, MonteCarloMatchesDalyWhereItHolds) {
  // Sync checkpoints, unlimited spares, failures during restarts too: Daly's model exactly.
  for (double tau : {600.0, 2000.0, 8000.0}) {
    const MonteCarloInputs in = inputs(36000, 60, 600, tau);
    const MonteCarloOutcome out = simulate_long_run(in);
    EXPECT_NEAR(out.useful_fraction_mean, daly_useful_fraction(tau, 60, 600, 36000), 0.004) << tau;
    // Each run sees horizon/M failures on average (Poisson, in wall time).
    EXPECT_NEAR(out.failures_mean / 2000.0, 1.0, 0.03) << tau;
  }
}

TEST(Goodput, LostWorkPerFailureIsHalfAnInterval) {
  // tau << M and delta ~ 0: a failure lands uniformly in the interval, losing tau/2 on average.
  const MonteCarloOutcome out = simulate_long_run(inputs(1e6, 1e-3, 0, 1000));
  EXPECT_NEAR(out.lost.lost_work_s / out.failures_mean, 500.0, 15.0);
}

TEST(Goodput, NoFailuresCostOnlyTheCheckpoints) {
  MonteCarloInputs in = inputs(1, 10, 0, 990);
  in.rates = {};
  in.horizon_s = 1e6;
  const MonteCarloOutcome out = simulate_long_run(in);
  EXPECT_NEAR(out.useful_fraction_mean, 0.99, 1e-4);
  EXPECT_EQ(out.failures_mean, 0);
}

TEST(Goodput, MonteCarloOptimumAgreesWithClosedForm) {
  const Scenario s = make({{"gpu_mtbf", "2000h"}, {"node_mtbf", "20000h"},
                           {"checkpoint", {{"write_bandwidth", "20GB/s"}, {"restart", "5min"},
                                           {"rewarm", "0s"}}},
                           {"horizon", "30d"}, {"trials", 60}});
  const Result step = estimate(s);
  ASSERT_TRUE(step.feasible) << step.reason;
  const GoodputReport g = goodput(s, step, SlowParts{});
  ASSERT_TRUE(g.enabled);
  // 128 GPUs at 2000 h and 16 nodes at 20000 h: M = 1 / (128/2000 + 16/20000) h = 15.43 h.
  EXPECT_NEAR(g.system_mtbf_s / 3600, 1.0 / (128.0 / 2000 + 16.0 / 20000), 1e-9);
  // 18.4B params x (2 + 12) bytes at 20 GB/s.
  EXPECT_NEAR(g.checkpoint.blocking_s, g.checkpoint.size_bytes / 20e9, 1e-9);
  EXPECT_NEAR(g.checkpoint.size_bytes / 18.4e9, 14.0, 0.3);
  // The grid is quarter-octaves: agree within two steps.
  const double ratio = g.optimal_interval_monte_carlo_s / g.optimal_interval_closed_form_s;
  EXPECT_GT(ratio, std::pow(2.0, -0.5));
  EXPECT_LT(ratio, std::pow(2.0, 0.5));
  EXPECT_NEAR(g.run.useful_fraction_mean, g.useful_fraction_closed_form, 0.01);
  EXPECT_LT(g.goodput_fraction, 1.0);
  EXPECT_NEAR(g.goodput_tokens_per_s, g.goodput_fraction * step.tokens_per_s, 1e-6 * step.tokens_per_s);
  // Everything lost is accounted for: useful + lost = horizon.
  EXPECT_NEAR(g.run.useful_fraction_mean * 30 * 86400 + g.lost.total(), 30 * 86400, 30 * 86400 * 1e-6);
}

TEST(Goodput, SparePoolAndAsyncChangeTheOutcomeTheRightWay) {
  json base = {{"gpu_mtbf", "500h"}, {"checkpoint", {{"write_bandwidth", "2GB/s"}, {"interval", "1h"}}},
               {"horizon", "30d"}, {"trials", 40}};
  const Scenario unlimited = make(base);
  json few = base;
  few["spare_nodes"] = 0;
  few["repair"] = "12h";
  const Scenario no_spares = make(few);
  json async = base;
  async["checkpoint"]["async"] = true;
  const Scenario async_s = make(async);
  const Result step = estimate(unlimited);
  const GoodputReport a = goodput(unlimited, step, {});
  const GoodputReport b = goodput(no_spares, step, {});
  const GoodputReport c = goodput(async_s, step, {});
  EXPECT_EQ(a.lost.repair_wait_s, 0);
  EXPECT_GT(b.lost.repair_wait_s, 0);
  EXPECT_LT(b.goodput_fraction, a.goodput_fraction);
  // A 258 GB checkpoint at 2 GB/s blocks 2 minutes; async blocks for the PCIe copy only.
  EXPECT_LT(c.checkpoint.blocking_s, a.checkpoint.blocking_s / 10);
  EXPECT_GT(c.goodput_fraction, a.goodput_fraction);
}

TEST(Goodput, SlowPartsCostTheirShareOfUsefulTime) {
  const Scenario s = make({{"horizon", "1d"}, {"trials", 2}});  // nothing fails
  const Result step = estimate(s);
  SlowParts slow;
  slow.straggler_step_s = step.step_time_s * 1.25;
  slow.slowed_step_s = step.step_time_s * 1.25;
  const GoodputReport g = goodput(s, step, slow);
  EXPECT_NEAR(g.goodput_fraction, 0.8, 1e-6);  // one checkpoint at the end costs nothing here
  EXPECT_NEAR(g.lost.stragglers_s, 86400 * 0.2, 1.0);
  EXPECT_EQ(g.lost.degraded_links_s, 0);
}

// The Monte Carlo's cost is bounded before it runs: fewer trials when the requested ones would
// pass kMaxMonteCarloEvents, the closed form when even kMinMonteCarloTrials would.
TEST(Goodput, MonteCarloIsBoundedByEvents) {
  // 256 GPUs failing every minute over 1e10 s: ~4e10 failures a trial (this ran > 10 min).
  const Scenario storm = make({{"gpu_mtbf", "60s"}, {"horizon", "1e10s"}, {"trials", 100000}});
  const Result step = estimate(storm);
  const GoodputReport g = goodput(storm, step, {});
  EXPECT_EQ(g.monte_carlo_trials, 0);
  bool noted = false;
  for (const auto& n : g.notes) noted = noted || n.find("Daly's closed form") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(g.run.useful_fraction_mean, std::clamp(g.useful_fraction_closed_form, 0.0, 1.0));
  EXPECT_NEAR(g.run.useful_fraction_mean * 1e10 + g.lost.total(), 1e10, 1e10 * 1e-6);
  // ~180 failures a trial: 100000 trials and the interval search would pass the bound.
  const Scenario busy = make({{"gpu_mtbf", "500h"}, {"horizon", "30d"}, {"trials", 100000}});
  const GoodputReport b = goodput(busy, estimate(busy), {});
  EXPECT_LT(b.monte_carlo_trials, 100000);
  EXPECT_GE(b.monte_carlo_trials, kMinMonteCarloTrials);
  MonteCarloInputs in;
  in.horizon_s = 30 * 86400;
  in.rates = b.rates;
  in.interval_s = b.interval_s;
  in.checkpoint = b.checkpoint;
  EXPECT_LE(expected_trial_events(in) * (b.monte_carlo_trials + 17.0 * std::min(b.monte_carlo_trials, 100)),
            kMaxMonteCarloEvents * 1.5);
  // The failure count the bound is reckoned from is the one the Monte Carlo sees.
  EXPECT_NEAR(b.run.failures_mean, 30 * 86400 * b.rates.total_per_s(), 0.1 * 30 * 86400 * b.rates.total_per_s());
}

TEST(FaultsSchema, FailureDomainsCountIn64Bits) {
  // 2^21 nodes x 1024 NICs = 2^31 NIC links: past an int.
  const Scenario s = parse_scenario(resolve_scenario_json(
      json{{"schema_version", 1}, {"model", "gpt-18.4b"},
           {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 1 << 21}, {"network", {{"nics_per_node", 1024}}}}},
           {"plan", {{"tp", 8}, {"pp", 2}, {"global_batch", 1 << 20}}}},
      LoadOptions{default_preset_dirs(), {}}));
  const FailureDomains d = failure_domains(s);
  EXPECT_EQ(d.gpus, int64_t{1} << 24);
  EXPECT_EQ(d.nic_links, int64_t{1} << 31);
}

TEST(FaultsSchema, ThermalStragglersAndErrors) {
  const Scenario s = make({{"stragglers", {{"temperature_mean_c", 70}, {"temperature_stddev_c", 5},
                                           {"throttle_threshold_c", 80}, {"speed_factor", 0.7}}}});
  // P(T > mean + 2 sigma) = erfc(2/sqrt 2)/2 = 0.02275.
  EXPECT_NEAR(s.training.faults.stragglers.fraction, 0.0227501, 1e-6);
  EXPECT_DOUBLE_EQ(s.training.faults.stragglers.speed_factor, 0.7);
  // Round trip through to_json keeps every field.
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  const Scenario back = parse_scenario(resolve_scenario_json(to_json(s), o));
  EXPECT_NEAR(back.training.faults.stragglers.fraction, 0.0227501, 1e-6);
  EXPECT_TRUE(back.training.faults.enabled);

  auto error_of = [](const json& faults) -> std::string {
    try {
      make(faults);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({{"gpu_mtbf", "5 parsecs"}}).find("training.faults.gpu_mtbf"), std::string::npos);
  EXPECT_NE(error_of({{"stragglers", {{"fraction", 0.1}, {"throttle_threshold_c", 80},
                                      {"temperature_mean_c", 60}, {"temperature_stddev_c", 5}}}})
                .find("training.faults.stragglers.fraction"),
            std::string::npos);
  EXPECT_NE(error_of({{"checkpoint", {{"intervall", "1h"}}}}).find("training.faults.checkpoint"),
            std::string::npos);
  EXPECT_NE(error_of({{"failed_links", {1}}}).find("training.faults.failed_links[0]"), std::string::npos);
  EXPECT_NE(error_of({{"stragglers", {{"speed_factor", 0}}}}).find("speed_factor"), std::string::npos);
}

TEST(FaultsSchema, FailureDomainsOfAFatTree) {
  const Scenario s = make({{"link_mtbf", "100000h"}, {"switch_mtbf", "50000h"}}, 128);
  // Only the job's GPUs count: tp 8 x pp 2 x dp (derived from 128 nodes x 8 GPUs) = 1024.
  const FailureDomains d = failure_domains(s);
  EXPECT_EQ(d.gpus, 1024);
  EXPECT_EQ(d.nodes, 128);
  EXPECT_EQ(d.nic_links, 128 * s.cluster.network.nics_per_node);
  const int radix = s.cluster.network.switch_radix > 0 ? s.cluster.network.switch_radix : 64;
  EXPECT_EQ(d.leaf_switches, (d.nic_links + radix / 2 - 1) / (radix / 2));
  const FailureRates r = failure_rates(s.training.faults, d);
  EXPECT_DOUBLE_EQ(r.link_per_s, d.nic_links / (100000.0 * 3600));
  EXPECT_DOUBLE_EQ(r.gpu_per_s, 0);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

Scenario straggled(int forced_stage, double speed, bool rebalance) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  json j = {{"schema_version", 1},
            {"model", "gpt-18.4b"},
            {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 16}}},
            {"plan", {{"tp", 8}, {"pp", 4}, {"global_batch", 1024}}},
            {"training", {{"faults", {{"stragglers", {{"stage", forced_stage}, {"speed_factor", speed}}},
                                      {"rebalance", rebalance}}}}}};
  return parse_scenario(resolve_scenario_json(j, o));
}

TEST(SlowParts, OneSlowStageOf1F1BCostsMTimesItsExtraTime) {
  const Scenario s = straggled(1, 0.5, false);
  const Result nominal = estimate(s);
  ASSERT_TRUE(nominal.feasible) << nominal.reason;
  Workload w;
  Result scratch;
  ASSERT_TRUE(build_workload(s, w, scratch));
  // 1F1B with one stage slower: the steady state runs at the pace of the slowest stage, so the
  // step grows by m x (t_slow - max_i t_i), t = F + B of a stage (only its compute slows), up to
  // the fill and drain, (p-1)/m of it.
  double t_max = 0;
  for (const StageWork& st : w.stages) t_max = std::max(t_max, st.forward_s + st.backward_s);
  const StageWork& st = w.stages[1];
  const double t_slow = st.forward_s + st.backward_s + (st.forward_compute_s + st.backward_compute_s) * (1 / 0.5 - 1);
  const SlowParts sp = estimate_slow_parts(s, nominal);
  EXPECT_EQ(sp.straggler_stage, 1);
  EXPECT_NEAR((sp.straggler_step_s - nominal.step_time_s) / (w.micro_batches * (t_slow - t_max)), 1.0,
              1.5 * (w.pp - 1.0) / w.micro_batches);
  // Rebalancing moves layers off stage 1 and recovers most of the loss (not all: whole layers).
  ASSERT_GT(sp.rebalanced_step_s, 0);
  EXPECT_LT(sp.rebalanced_layers_per_stage[1], w.stages[1].layers);
  EXPECT_GT((sp.straggler_step_s - sp.rebalanced_step_s) / (sp.straggler_step_s - nominal.step_time_s), 0.5);
  // Without faults.rebalance the expected step keeps the straggler's full cost.
  EXPECT_NEAR(sp.slowed_step_s, sp.straggler_step_s, 1e-9);
  const SlowParts rb = estimate_slow_parts(straggled(1, 0.5, true), nominal);
  EXPECT_NEAR(rb.slowed_step_s, rb.rebalanced_step_s, 1e-9);
}

TEST(SlowParts, DegradedLinksStretchInterNodeCommunication) {
  const Scenario s = make({{"link_degradation", {{"fraction", 0.01}, {"bandwidth_factor", 0.25}}}}, 64);
  const Result nominal = estimate(s);
  const SlowParts sp = estimate_slow_parts(s, nominal);
  const FailureDomains d = failure_domains(s);
  ASSERT_GT(d.leaf_switches, 1);
  const int radix = s.cluster.network.switch_radix > 0 ? s.cluster.network.switch_radix : 64;
  const double uplinks = d.leaf_switches * (radix / 2) / std::max(1.0, s.cluster.network.oversubscription);
  EXPECT_NEAR(sp.degraded_link_probability, 1 - std::pow(0.99, uplinks), 1e-9);
  const TimeBreakdown& b = nominal.breakdown;
  EXPECT_NEAR(sp.degraded_step_s - nominal.step_time_s, (b.dp_comm_s + b.pp_comm_s + b.ep_comm_s + b.cp_comm_s) * 3, 1e-9);
}

}  // namespace
}  // namespace trainsim
