#include "models/workload/cost_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {

PlanCost plan_cost(const Scenario& s) {
  const ParallelPlan& p = s.plan;
  PlanCost c;
  const double per_micro_batch = static_cast<double>(std::max<int64_t>(1, p.micro_batch)) * std::max(1, p.dp);
  c.micro_batches = std::max(1.0, std::floor(static_cast<double>(p.global_batch) / per_micro_batch));
  c.pipeline_devices = std::max(1, p.pp);
  const PipelineSchedule& schedule = plan_pipeline_schedule(p.schedule, p.pp);
  c.chunks_per_device = schedule.chunks_per_device(p.pp, p.vpp);
  c.passes = schedule.splits_backward() ? 3 : 2;
  const double stages = static_cast<double>(c.pipeline_devices) * c.chunks_per_device;
  c.pipeline_ops = stages * c.micro_batches * c.passes;
  c.handoffs = 2.0 * c.micro_batches * (stages - 1);
  c.p2p_flows = c.handoffs * std::max(1, p.tp);
  c.chakra_nodes = c.pipeline_ops + 2.0 * c.handoffs;
  c.trace_events = c.pipeline_ops + 4.0 * c.handoffs;
  return c;
}

namespace {
std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}
}  // namespace

CostCheck check_cost_bounds(const Scenario& s, CostTier tier) {
  CostCheck out;
  out.cost = plan_cost(s);
  const PlanCost& c = out.cost;
  const std::string shape = g(c.micro_batches) + " micro-batches x " + std::to_string(c.pipeline_devices) +
                            " pipeline stages x " + std::to_string(c.chunks_per_device) + " chunks x " +
                            std::to_string(c.passes) + " passes";
  auto refuse = [&](const std::string& what, double count, double bound, const char* tier_name,
                    const char* instead) {
    out.within = false;
    out.reason = shape + " = " + g(count) + " " + what + ", beyond the " + g(bound) + " " + tier_name +
                 " plays in bounded time and memory (models/workload/cost_bounds.hpp); " + instead;
  };
  if (!s.plan.precision_stages.empty()) {
    // Both play one step, at one precision; a run of several is a mix of steps
    // (models/estimate/precision_schedule.hpp), which the estimate tier composes.
    out.within = false;
    out.reason = tier != CostTier::kChakraExport
                     ? "plan.precision_stages: the simulate tier plays one step at one precision; the estimate "
                       "tier mixes the run's precisions step by step (--fidelity estimate)"
                     : "plan.precision_stages: a trace is one step at one precision; drop the stages and set "
                       "plan.precision to the one to export";
    return out;
  }
  const char* instead = "the estimate tier answers this plan in closed form (--fidelity estimate), "
                        "or fewer micro-batches (a larger plan.micro_batch) make it playable";
  if (tier == CostTier::kSimulate || tier == CostTier::kTrace) {
    if (c.pipeline_ops > kMaxSimulatedPipelineOps)
      refuse("pipeline ops", c.pipeline_ops, kMaxSimulatedPipelineOps, "the simulate tier", instead);
    else if (c.p2p_flows > kMaxSimulatedP2pFlows)
      refuse("pipeline hand-off flows (x plan.tp " + std::to_string(s.plan.tp) + ")", c.p2p_flows,
             kMaxSimulatedP2pFlows, "the simulate tier", instead);
    else if (tier == CostTier::kTrace && c.trace_events > kMaxTraceEvents)
      refuse("trace events (a slice per op; a send, a receive and a flow arrow per hand-off)", c.trace_events,
             kMaxTraceEvents, "a trace", "run without --trace, or trace a step of fewer micro-batches (a larger "
             "plan.micro_batch)");
  } else if (c.chakra_nodes > kMaxChakraNodes) {
    refuse("Chakra nodes (ops plus a send and a recv per hand-off)", c.chakra_nodes, kMaxChakraNodes,
           "export-chakra", "fewer micro-batches (a larger plan.micro_batch) make a trace of it");
  }
  return out;
}

}  // namespace trainsim
