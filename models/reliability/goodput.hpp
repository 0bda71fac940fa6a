// Goodput over a long run: useful tokens per wall-clock second once failures,
// checkpoints, restarts, stragglers and degraded links have taken their share.
//
// Failures. Every component class fails as a Poisson process (exponential lifetimes, the
// standard assumption of the checkpointing literature); the job's failure rate is the sum
//   lambda = G/MTBF_gpu + N/MTBF_node + L_nic/MTBF_link + S_leaf/MTBF_switch,   M = 1/lambda.
// Only failures that stop a synchronous job count: GPUs, nodes, the NIC links and the leaf
// switches the nodes hang from. Switch-to-switch links and upper switches fail over to the
// surviving paths (the routing layer's business: bandwidth lost, not the job).
//
// Checkpoints. Blocking cost delta = size / write bandwidth (sync), or the copy of each GPU's
// shard to host memory over PCIe (async; the write to storage then runs in the background and
// a checkpoint only counts once it is durable). Restart cost R = restart + re-warm.
//
// Closed forms (sync checkpoints, unlimited spares):
//   Daly 2006, eq. (20): expected wall time for T_s of work with interval tau,
//     T_w = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau
//   so the useful fraction is g(tau) = tau / (M e^{R/M} (e^{(tau+delta)/M} - 1)).
//   Young 1974: tau_opt ~ sqrt(2 delta M).
//   Daly 2006, eq. (37): tau_opt = sqrt(2 delta M) [1 + sqrt(delta/(2M))/3 + delta/(18M)] - delta
//     for delta < 2M, else M.
// The Monte Carlo plays the same policy event by event (and what the closed form leaves out:
// async checkpoints, a finite spare pool with repairs), and the interval that maximises its
// goodput is searched on common random numbers.
#pragma once

#include <functional>

#include <cstdint>
#include <string>
#include <vector>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

// Component counts the failure model needs, from the cluster spec alone (models/ knows no
// topology graph): NIC links = nodes x NICs; leaf switches = ceil(NIC ports / (radix / 2)) for a
// fabric with switches (half of a leaf's ports face down), none for a single node.
struct FailureDomains {
  // 64-bit: nodes x NICs per node passes 2^31 on the largest clusters the loader accepts.
  int64_t gpus = 0;
  int64_t nodes = 0;
  int64_t nic_links = 0;
  int64_t leaf_switches = 0;
};
FailureDomains failure_domains(const Scenario& scenario);

struct FailureRates {
  double gpu_per_s = 0, node_per_s = 0, link_per_s = 0, switch_per_s = 0;
  double total_per_s() const { return gpu_per_s + node_per_s + link_per_s + switch_per_s; }
  double system_mtbf_s() const;  // 1 / total (infinity when nothing fails)
};
FailureRates failure_rates(const FaultSpec& faults, const FailureDomains& domains);

// Checkpoint costs derived from the model states and the policy.
struct CheckpointCosts {
  double size_bytes = 0;   // weights + optimizer states of the whole model
  double write_s = 0;      // size / write bandwidth (time until durable)
  double blocking_s = 0;   // what the training loop waits for (write_s, or the PCIe copy when async)
  double restart_s = 0;    // restart + re-warm
};
CheckpointCosts checkpoint_costs(const Scenario& scenario);

// Closed forms (see the header comment).
double young_interval_s(double delta_s, double mtbf_s);
double daly_interval_s(double delta_s, double mtbf_s);
double daly_useful_fraction(double interval_s, double delta_s, double restart_s, double mtbf_s);
// The tau maximising daly_useful_fraction (golden-section search on log tau).
double daly_exact_optimum_s(double delta_s, double restart_s, double mtbf_s);

// What one long run loses, by cause (seconds of wall clock over the horizon).
struct LostTime {
  double checkpoint_s = 0;    // blocking checkpoint writes
  double lost_work_s = 0;     // work since the last durable checkpoint, redone after a failure
  double restart_s = 0;       // restart + re-warm (including restarts interrupted by failures)
  double repair_wait_s = 0;   // no spare left: waiting for a repaired node
  double stragglers_s = 0;    // compute time stretched by slow GPUs
  double degraded_links_s = 0;  // communication stretched by degraded links
  double total() const {
    return checkpoint_s + lost_work_s + restart_s + repair_wait_s + stragglers_s + degraded_links_s;
  }
};

struct MonteCarloOutcome {
  double useful_fraction_mean = 0;  // useful step time / wall time (before slow-part losses)
  double useful_fraction_p10 = 0;
  double useful_fraction_p90 = 0;
  double failures_mean = 0;
  LostTime lost;  // mean per trial
};

// Plays `trials` runs of `horizon_s`; a step's work is `step_s` seconds (failures are checked
// between events, work is continuous). Deterministic for a given seed.
struct MonteCarloInputs {
  double horizon_s = 0;
  double interval_s = 0;  // work between checkpoints
  CheckpointCosts checkpoint;
  bool async = false;
  FailureRates rates;
  FailureDomains domains;
  int spare_nodes = -1;  // -1 unlimited
  double repair_s = 0;
  int trials = 200;
  uint64_t seed = 1;
};
MonteCarloOutcome simulate_long_run(const MonteCarloInputs& in);

// The Monte Carlo's cost is bounded before it runs (CONVENTIONS.md #18): a trial plays a few
// events per failure (expected failures = horizon x failure rate, restarts included) and, when
// async checkpoints outpace storage, one per checkpoint. goodput() plays the run and its
// interval search within kMaxMonteCarloEvents expected events in all (about a second): beyond, it
// lowers the trial count (down to kMinMonteCarloTrials), and beyond that it reports Daly's
// closed form instead, with a note. (A GPU MTBF of 1 s over 1e10 s is 1e14 events a trial.)
constexpr double kMaxMonteCarloEvents = 2e7;
constexpr int kMinMonteCarloTrials = 20;
// Expected loop events of one trial (an upper estimate).
double expected_trial_events(const MonteCarloInputs& in);

// The step with the scenario's slow parts (models/slow_parts.hpp fills it from the estimate
// tier; the simulate tier may measure it instead).
struct SlowParts {
  double nominal_step_s = 0;
  double straggler_probability = 0;  // some GPU of the job is slow
  int straggler_stage = -1;
  double straggler_step_s = 0;   // nominal + the straggler (= nominal when none)
  double rebalanced_step_s = 0;  // straggler with layers moved off its stage (0: not evaluated)
  std::vector<int> rebalanced_layers_per_stage;
  double degraded_link_probability = 0;  // the job's traffic crosses a degraded link
  double degraded_step_s = 0;    // nominal + degraded links (= nominal when none)
  double slowed_step_s = 0;      // both; with rebalancing when the plan asks for it
  std::vector<std::string> notes;
};

struct GoodputReport {
  bool enabled = false;
  FailureDomains domains;
  FailureRates rates;
  double system_mtbf_s = 0;
  CheckpointCosts checkpoint;
  double interval_s = 0;          // the policy's (or the optimum when the policy leaves it 0)
  bool interval_from_policy = false;
  double young_interval_s = 0;
  double daly_interval_s = 0;
  double optimal_interval_closed_form_s = 0;  // argmax of Daly's g(tau)
  double optimal_interval_monte_carlo_s = 0;  // argmax of the simulated goodput on a grid
  double useful_fraction_closed_form = 0;     // g(interval) (sync checkpoints)
  double useful_fraction_at_optimum_mc = 0;
  MonteCarloOutcome run;                      // at interval_s
  int monte_carlo_trials = 0;                 // trials played (0: closed form only, see notes)

  SlowParts slow;

  double tokens_per_s_nominal = 0;  // step time alone
  double goodput_tokens_per_s = 0;  // over the long run, everything included
  double goodput_fraction = 0;      // goodput / nominal
  double expected_failures = 0;
  LostTime lost;                    // mean per run, seconds of wall clock
  std::vector<std::string> notes;
};

// Goodput of a scenario whose one-step prediction is `step` (either tier), with its slow parts.
// `progress`, when given, hears the share of the Monte Carlo runs done (0 to 1).
GoodputReport goodput(const Scenario& scenario, const Result& step, const SlowParts& slow,
                      const std::function<void(double)>& progress = {});

}  // namespace trainsim
