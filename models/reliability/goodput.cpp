#include "models/reliability/goodput.hpp"

#include "models/core/leaf_switch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <random>

#include "models/cost/flops.hpp"
#include "models/cost/memory.hpp"

namespace trainsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Default storage write bandwidth when the policy gives none: 1 GB/s per node, a parallel file
// system's typical per-client share (REFERENCE.md: checkpointing).
constexpr double kDefaultWritePerNodeBytesPerS = 1e9;

// 53 random bits -> [0, 1): the same stream on every standard library (mt19937_64 is specified).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
double exponential(std::mt19937_64& rng, double rate) {
  return rate > 0 ? -std::log1p(-uniform01(rng)) / rate : kInf;
}

}  // namespace

FailureDomains failure_domains(const Scenario& s) {
  const ClusterSpec& c = s.cluster;
  FailureDomains d;
  // Only the GPUs the job uses fail it; nodes are those they sit on.
  d.gpus = int64_t{s.plan.tp} * s.plan.pp * s.plan.dp * s.plan.cp;  // <= 2^24 (the loader's bound)
  d.nodes = c.gpus_per_node > 0 ? (d.gpus + c.gpus_per_node - 1) / c.gpus_per_node : 0;
  if (c.nodes > 1 && c.network.nics_per_node > 0) {
    d.nic_links = d.nodes * c.network.nics_per_node;
    const int64_t radix = switch_radix(c.network);
    const int64_t down_ports = std::max<int64_t>(1, radix / 2);
    d.leaf_switches = (d.nic_links + down_ports - 1) / down_ports;
  }
  return d;
}

double FailureRates::system_mtbf_s() const {
  const double t = total_per_s();
  return t > 0 ? 1.0 / t : kInf;
}

FailureRates failure_rates(const FaultSpec& f, const FailureDomains& d) {
  auto rate = [](int64_t count, double mtbf_s) { return mtbf_s > 0 ? static_cast<double>(count) / mtbf_s : 0.0; };
  FailureRates r;
  r.gpu_per_s = rate(d.gpus, f.gpu_mtbf_s);
  r.node_per_s = rate(d.nodes, f.node_mtbf_s);
  r.link_per_s = rate(d.nic_links, f.link_mtbf_s);
  r.switch_per_s = rate(d.leaf_switches, f.switch_mtbf_s);
  return r;
}

CheckpointCosts checkpoint_costs(const Scenario& s) {
  const CheckpointSpec& cp = s.training.faults.checkpoint;
  CheckpointCosts c;
  const StateBytes sb = state_bytes(s.plan);
  // A checkpoint holds the weights and the optimizer states (master copy, Adam m and v), not
  // the gradients: 2 + 12 bytes per parameter in mixed precision (ZeRO paper's K = 12; 2 + 8
  // with bf16 moments, 4 + 8 under autocast's fp32 weights).
  c.size_bytes = cp.size_bytes > 0 ? cp.size_bytes
                                   : count_params(s.model).total * (sb.params + sb.optimizer);
  const FailureDomains d = failure_domains(s);
  const double write_bw = cp.write_bandwidth_bytes_per_s > 0
                              ? cp.write_bandwidth_bytes_per_s
                              : kDefaultWritePerNodeBytesPerS * static_cast<double>(std::max<int64_t>(1, d.nodes));
  c.write_s = c.size_bytes / write_bw;
  if (cp.async) {
    // Each GPU copies its shard of the states to host memory; with ZeRO the shard is spread
    // over the data-parallel ranks too, otherwise one replica (tp x pp GPUs) holds it.
    const double holders = static_cast<double>(s.plan.tp) * s.plan.pp * s.plan.cp *
                           (s.plan.zero_stage >= 1 ? s.plan.dp : 1);
    const double pcie = s.cluster.pcie_bandwidth_bytes_per_s > 0 ? s.cluster.pcie_bandwidth_bytes_per_s
                                                                 : 25e9;
    c.blocking_s = std::min(c.write_s, c.size_bytes / holders / pcie);
  } else {
    c.blocking_s = c.write_s;
  }
  c.restart_s = cp.restart_s + cp.rewarm_s;
  return c;
}

double young_interval_s(double delta_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) return kInf;
  return std::sqrt(2.0 * delta_s * mtbf_s);
}

double daly_interval_s(double delta_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) return kInf;
  if (delta_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = delta_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * delta_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta_s;
}

double daly_useful_fraction(double tau_s, double delta_s, double restart_s, double mtbf_s) {
  if (tau_s <= 0) return 0;
  if (!std::isfinite(mtbf_s)) return tau_s / (tau_s + delta_s);
  // expm1 keeps precision when (tau + delta) << M.
  return tau_s / (mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((tau_s + delta_s) / mtbf_s));
}

double daly_exact_optimum_s(double delta_s, double restart_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) return kInf;
  // g is unimodal in tau: golden section on log tau over a range that brackets the optimum.
  double lo = std::log(std::max(1e-6, 1e-3 * std::min(delta_s, mtbf_s)));
  double hi = std::log(100.0 * mtbf_s + delta_s);
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  auto g = [&](double log_tau) { return daly_useful_fraction(std::exp(log_tau), delta_s, restart_s, mtbf_s); };
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double ga = g(a), gb = g(b);
  for (int i = 0; i < 200 && hi - lo > 1e-10; ++i) {
    if (ga < gb) {
      lo = a; a = b; ga = gb; b = lo + phi * (hi - lo); gb = g(b);
    } else {
      hi = b; b = a; gb = ga; a = hi - phi * (hi - lo); ga = g(a);
    }
  }
  return std::exp(0.5 * (lo + hi));
}

namespace {

// One run of the horizon. Work is continuous (a checkpoint is taken every `interval` seconds of
// work); failures arrive as one Poisson process of the summed rate, in wall-clock time, drawn
// from the trial's own stream, so different intervals see the same failures (common random
// numbers make the interval search smooth).
struct TrialResult {
  double useful_s = 0;
  double failures = 0;
  LostTime lost;
};

TrialResult play_trial(const MonteCarloInputs& in, uint64_t stream) {
  std::mt19937_64 rng(in.seed * 0x9E3779B97F4A7C15ULL + stream);
  const double rate = in.rates.total_per_s();
  const double H = in.horizon_s;
  const double tau = in.interval_s;
  const double block = in.checkpoint.blocking_s;
  TrialResult r;
  double t = 0;
  double next_failure = exponential(rng, rate);
  double committed = 0;       // work saved in durable checkpoints
  double segment = 0;         // work since the last checkpoint was taken
  double pending = 0;         // async: work covered by a checkpoint not yet durable
  double pending_durable_at = kInf;
  double storage_free_at = 0;  // async: when the previous background write finishes
  int spares_free = in.spare_nodes;
  std::priority_queue<double, std::vector<double>, std::greater<>> repairs;

  auto settle_pending = [&](double now) {
    if (pending > 0 && pending_durable_at <= now) {
      committed += pending;
      pending = 0;
      pending_durable_at = kInf;
    }
  };

  const bool storage_keeps_up = !in.async || in.checkpoint.write_s <= tau;
  while (t < H) {
    settle_pending(t);
    // Whole checkpoint cycles before the next failure and the horizon, in one go (a 1 s
    // interval over a month is millions of cycles).
    if (segment == 0 && storage_keeps_up && tau + block > 0) {
      const double room = std::min(next_failure, H) - t;
      const double cycles = std::floor(room / (tau + block)) - 1;
      if (cycles >= 1) {
        t += cycles * (tau + block);
        r.lost.checkpoint_s += cycles * block;
        if (in.async) {
          committed += pending + (cycles - 1) * tau;
          pending = tau;
          pending_durable_at = t + in.checkpoint.write_s;
          storage_free_at = pending_durable_at;
        } else {
          committed += cycles * tau;
        }
        continue;
      }
    }
    // Compute until the next checkpoint, the next failure or the horizon.
    const double to_checkpoint = tau - segment;
    const double stop = std::min({t + to_checkpoint, next_failure, H});
    segment += stop - t;
    t = stop;
    if (t >= H) break;
    if (t >= next_failure) {
      // Failure: the work since the last durable checkpoint is lost.
      settle_pending(t);
      r.failures += 1;
      r.lost.lost_work_s += segment + pending;
      segment = 0;
      pending = 0;
      pending_durable_at = kInf;
      storage_free_at = t;
      // A spare replaces the failed node; the failed one is back after repair.
      double ready = t;
      if (in.spare_nodes >= 0) {
        while (!repairs.empty() && repairs.top() <= t) { repairs.pop(); ++spares_free; }
        bool failed_node_returns_to_pool = true;
        if (spares_free > 0) {
          --spares_free;  // a spare steps in; the failed node joins the pool once repaired
        } else if (!repairs.empty() && repairs.top() < t + in.repair_s) {
          ready = repairs.top();  // the first node back from repair steps in
          repairs.pop();
        } else {
          ready = t + in.repair_s;  // no spare at all: wait for this node's own repair
          failed_node_returns_to_pool = false;
        }
        if (failed_node_returns_to_pool) repairs.push(t + in.repair_s);
        const double wait = std::min(ready, H) - t;
        r.lost.repair_wait_s += wait;
      }
      t = std::min(ready, H);
      // Restart (Daly's model: a failure during the restart starts it over).
      next_failure = t + exponential(rng, rate);
      while (t < H) {
        const double done = t + in.checkpoint.restart_s;
        if (next_failure >= done) {
          r.lost.restart_s += std::min(done, H) - t;
          t = done;
          break;
        }
        r.lost.restart_s += std::min(next_failure, H) - t;
        r.failures += 1;
        t = next_failure;
        next_failure = t + exponential(rng, rate);
      }
      continue;
    }
    // Checkpoint: the loop blocks for `block`. Async: the host buffer holds one snapshot, so
    // a new copy waits for the previous background write; the copy becomes durable write_s
    // after it is taken.
    const double begin = in.async ? std::max(t, storage_free_at) : t;
    const double end = std::min(begin + block, H);
    if (next_failure < end) {
      r.lost.checkpoint_s += next_failure - t;
      t = next_failure;
      continue;  // the failure branch above loses the segment
    }
    r.lost.checkpoint_s += end - t;
    t = end;
    if (t >= H) break;
    if (in.async) {
      settle_pending(t);
      pending += segment;
      pending_durable_at = t + in.checkpoint.write_s;
      storage_free_at = pending_durable_at;
    } else {
      committed += segment;
    }
    segment = 0;
  }
  // The run ends at the horizon: work not yet saved still happened (the next run resumes it).
  r.useful_s = committed + pending + segment;
  return r;
}

}  // namespace

double expected_trial_events(const MonteCarloInputs& in) {
  const double rate = in.rates.total_per_s();
  // A failure costs ~3 loop turns (the failure, the restart, the compute resumed); failures
  // during restarts are part of the same Poisson stream.
  double events = 8 + 3 * in.horizon_s * rate;
  // Async checkpoints that storage cannot keep up with are played one by one.
  if (in.async && in.checkpoint.write_s > in.interval_s)
    events += in.horizon_s / std::max(1e-9, in.interval_s + in.checkpoint.blocking_s);
  return std::isfinite(events) ? events : HUGE_VAL;
}

MonteCarloOutcome simulate_long_run(const MonteCarloInputs& in) {
  MonteCarloOutcome out;
  std::vector<double> fractions;
  fractions.reserve(in.trials);
  for (int i = 0; i < in.trials; ++i) {
    const TrialResult tr = play_trial(in, static_cast<uint64_t>(i));
    fractions.push_back(tr.useful_s / in.horizon_s);
    out.failures_mean += tr.failures / in.trials;
    out.lost.checkpoint_s += tr.lost.checkpoint_s / in.trials;
    out.lost.lost_work_s += tr.lost.lost_work_s / in.trials;
    out.lost.restart_s += tr.lost.restart_s / in.trials;
    out.lost.repair_wait_s += tr.lost.repair_wait_s / in.trials;
  }
  double sum = 0;
  for (double f : fractions) sum += f;
  out.useful_fraction_mean = fractions.empty() ? 0 : sum / fractions.size();
  std::sort(fractions.begin(), fractions.end());
  auto quantile = [&](double q) {
    if (fractions.empty()) return 0.0;
    const std::size_t k = std::min(fractions.size() - 1, static_cast<std::size_t>(q * fractions.size()));
    return fractions[k];
  };
  out.useful_fraction_p10 = quantile(0.1);
  out.useful_fraction_p90 = quantile(0.9);
  return out;
}

GoodputReport goodput(const Scenario& s, const Result& step, const SlowParts& slow,
                      const std::function<void(double)>& progress) {
  GoodputReport g;
  const FaultSpec& f = s.training.faults;
  g.enabled = f.enabled;
  g.slow = slow;
  if (!f.enabled || !step.feasible || step.step_time_s <= 0) return g;
  g.domains = failure_domains(s);
  g.rates = failure_rates(f, g.domains);
  g.system_mtbf_s = g.rates.system_mtbf_s();
  g.checkpoint = checkpoint_costs(s);
  const double M = g.system_mtbf_s;
  const double delta = g.checkpoint.blocking_s;
  const double R = g.checkpoint.restart_s;
  g.young_interval_s = young_interval_s(delta, M);
  g.daly_interval_s = daly_interval_s(delta, M);
  g.optimal_interval_closed_form_s = daly_exact_optimum_s(delta, R, M);
  g.interval_from_policy = f.checkpoint.interval_s > 0;
  if (g.interval_from_policy) {
    g.interval_s = f.checkpoint.interval_s;
  } else if (std::isfinite(g.optimal_interval_closed_form_s)) {
    g.interval_s = g.optimal_interval_closed_form_s;
    g.notes.push_back("checkpoint.interval not given: using the goodput-optimal interval");
  } else {
    g.interval_s = f.horizon_s;  // nothing fails: one checkpoint at the end
    g.notes.push_back("no component can fail: no checkpoint interval is optimal; one at the end");
  }
  // Async checkpoints cannot start more often than storage finishes the previous one.
  if (f.checkpoint.async && g.interval_s < g.checkpoint.write_s - delta)
    g.notes.push_back("checkpoint.interval is shorter than one background write: training waits for storage");
  g.useful_fraction_closed_form = daly_useful_fraction(g.interval_s, delta, R, M);
  if (f.checkpoint.async || f.spare_nodes >= 0)
    g.notes.push_back("the closed form assumes synchronous checkpoints and unlimited spares; "
                      "the Monte Carlo plays the policy as given");

  MonteCarloInputs mc;
  mc.horizon_s = f.horizon_s;
  mc.interval_s = g.interval_s;
  mc.checkpoint = g.checkpoint;
  mc.async = f.checkpoint.async;
  mc.rates = g.rates;
  mc.domains = g.domains;
  mc.spare_nodes = f.spare_nodes;
  mc.repair_s = f.repair_s;
  mc.trials = f.trials;
  mc.seed = f.seed;

  // Bound the work before it starts: the run at interval_s, then 17 probes of the interval
  // search at up to 100 trials each (the shortest probe interval costs the most).
  const bool search = std::isfinite(g.optimal_interval_closed_form_s);
  MonteCarloInputs costliest = mc;
  if (search)
    costliest.interval_s = std::min(mc.interval_s, g.optimal_interval_closed_form_s * std::pow(2.0, -2.0));
  const double per_trial = std::max(expected_trial_events(mc), expected_trial_events(costliest));
  auto work = [&](int trials) { return per_trial * (trials + (search ? 17.0 * std::min(trials, 100) : 0.0)); };
  int trials = f.trials;
  if (work(trials) > kMaxMonteCarloEvents) {
    // The most trials within the bound: work(t) = per_trial (t + 17 min(t, 100)).
    const double budget = kMaxMonteCarloEvents / per_trial;
    const double fit = !search ? budget : budget - 1700 >= 100 ? budget - 1700 : budget / 18;
    trials = fit >= kMinMonteCarloTrials ? static_cast<int>(std::min<double>(fit, f.trials)) : 0;
  }
  char buf[320];
  if (trials == 0) {
    // Closed form only: Daly's useful fraction at the interval, the losses split by the same
    // model (checkpoints taken per useful second, a restart per failure, the rest lost work).
    std::snprintf(buf, sizeof buf,
                  "the Monte Carlo would play ~%.3g events a trial (%.3g expected failures over the "
                  "horizon), beyond its bound of %.3g events in all: the figures are Daly's closed "
                  "form (synchronous checkpoints, unlimited spares)",
                  per_trial, f.horizon_s * g.rates.total_per_s(), kMaxMonteCarloEvents);
    g.notes.push_back(buf);
    MonteCarloOutcome& run = g.run;
    const double u = std::clamp(g.useful_fraction_closed_form, 0.0, 1.0);
    run.useful_fraction_mean = run.useful_fraction_p10 = run.useful_fraction_p90 = u;
    run.failures_mean = std::isfinite(M) ? f.horizon_s / M : 0;
    const double useful = u * f.horizon_s;
    run.lost.checkpoint_s = std::min(f.horizon_s - useful, g.interval_s > 0 ? useful * delta / g.interval_s : 0.0);
    const double rest = std::max(0.0, f.horizon_s - useful - run.lost.checkpoint_s);
    run.lost.restart_s = std::min(rest, run.failures_mean * R);
    run.lost.lost_work_s = rest - run.lost.restart_s;
    g.optimal_interval_monte_carlo_s = g.optimal_interval_closed_form_s;
    g.useful_fraction_at_optimum_mc = search ? daly_useful_fraction(g.optimal_interval_closed_form_s, delta, R, M) : u;
  } else {
    if (trials < f.trials) {
      std::snprintf(buf, sizeof buf,
                    "Monte Carlo trials lowered from %d to %d: ~%.3g events a trial, bound %.3g events in all",
                    f.trials, trials, per_trial, kMaxMonteCarloEvents);
      g.notes.push_back(buf);
    }
    mc.trials = trials;
    g.monte_carlo_trials = trials;
    g.run = simulate_long_run(mc);
    if (progress) progress(1.0 / 18);  // the run, then 17 interval probes
  }

  // The interval that maximises the simulated goodput: a grid of quarter-octaves around the
  // closed-form optimum, same failures for every interval.
  if (search && trials > 0) {
    double best = -1;
    for (int k = -8; k <= 8; ++k) {
      MonteCarloInputs probe = mc;
      probe.interval_s = g.optimal_interval_closed_form_s * std::pow(2.0, k / 4.0);
      probe.trials = std::min(trials, 100);
      const double u = simulate_long_run(probe).useful_fraction_mean;
      if (progress) progress((k + 10) / 18.0);
      if (u > best) {
        best = u;
        g.optimal_interval_monte_carlo_s = probe.interval_s;
        g.useful_fraction_at_optimum_mc = u;
      }
    }
  }

  // Useful step-seconds over the horizon, then the slow parts: with them each step takes
  // slowed_step_s instead of the nominal step, so a share (1 - nominal/slowed) of the useful
  // time does no nominal work.
  const double nominal = step.step_time_s;
  const double slowed = slow.slowed_step_s > 0 ? slow.slowed_step_s : nominal;
  const double useful_wall = g.run.useful_fraction_mean * f.horizon_s;
  g.lost = g.run.lost;
  const double slow_loss = useful_wall * (1.0 - nominal / slowed);
  const double d_strag = std::max(0.0, (slow.straggler_step_s > 0 ? slow.straggler_step_s : nominal) - nominal);
  const double d_link = std::max(0.0, (slow.degraded_step_s > 0 ? slow.degraded_step_s : nominal) - nominal);
  if (d_strag + d_link > 0) {
    g.lost.stragglers_s = slow_loss * d_strag / (d_strag + d_link);
    g.lost.degraded_links_s = slow_loss * d_link / (d_strag + d_link);
  }
  g.tokens_per_s_nominal = step.tokens_per_step / nominal;
  g.goodput_tokens_per_s = useful_wall / slowed * step.tokens_per_step / f.horizon_s;
  g.goodput_fraction = g.goodput_tokens_per_s / g.tokens_per_s_nominal;
  g.expected_failures = g.run.failures_mean;
  return g;
}

}  // namespace trainsim
