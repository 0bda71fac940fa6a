// A training precision that changes with the step (plan.precision_stages): FP32 for a warm-up,
// BF16 or FP16 after, FP8 late in the run, as "dynamic mixed precision" policies switch it.
// Every step runs at one precision, so the run's mean step is the step-weighted mix of the
// steps of its precisions: t = sum_i (n_i / n) t_i over the n training.steps, n_i of them at
// precision i. Each t_i is the ordinary single-precision step (op graph, compute model,
// collectives, memory) of the scenario at precision i; nothing is interpolated between them.
// The run must hold its largest step in memory, so its memory is that of the precision with
// the highest peak, and it is feasible only if every precision it runs is.
#pragma once

#include <functional>
#include <vector>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

struct PrecisionShare {
  Precision precision = Precision::kBf16;
  double steps = 0;  // training steps run at this precision (> 0)
};

// The steps of training.steps each precision covers: plan.precision before the first stage's
// from_step, each stage from its from_step to the next one's (clipped to the run); precisions
// that repeat are merged, in order of first use; stages that start past the run are left out.
// Without stages: plan.precision for every step.
std::vector<PrecisionShare> precision_shares(const Scenario& scenario);

// The scenario at one precision throughout (plan.precision_stages cleared).
Scenario at_precision(const Scenario& scenario, Precision precision);

// The run's result: `tier` evaluated once per precision of precision_shares(scenario) and mixed
// step by step as the header comment says. Times and bytes per step are the step-weighted means;
// tokens/s follows from the mean step; MFU and HFU divide the FLOPs by the peak the run had on
// offer, sum_i n_i t_i peak_i (PaLM appendix B's definition over a run of mixed precisions).
// Infeasible when one of the precisions is, with that precision's reason.
using TierFn = std::function<Result(const Scenario&)>;
Result mix_precision_stages(const Scenario& scenario, const TierFn& tier);

}  // namespace trainsim
