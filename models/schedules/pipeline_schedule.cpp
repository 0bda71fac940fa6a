#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {

std::string PipelineSchedule::constraint(int pp, int vpp, int m) const {
  if (pp <= 1) return vpp > 1 ? "plan.vpp > 1 needs a pipeline (plan.pp > 1)" : "";
  if (vpp > 1 && !uses_virtual_stages()) {
    // Name the schedules that do take model chunks, from the registry.
    std::string which;
    for (const PipelineSchedule* s : pipeline_schedules())
      if (s->uses_virtual_stages())
        which += (which.empty() ? "\"" : " or \"") + std::string(s->name()) + "\"";
    return "plan.vpp = " + std::to_string(vpp) + " needs plan.schedule " + which + ", not \"" +
           name() + "\"";
  }
  return plan_constraint(pp, vpp, m);
}

void PipelineSchedule::static_order(int, int, int, int, std::vector<PipeOp>&) const {}

std::optional<PipeOp> PipelineSchedule::pick(PipeDevice& d, int device, int pp, int m) const {
  if (!d.ready_w.empty() && d.f_done - d.w_done >= d.weight_hold_limit)
    return d.ready_w.take_smallest();
  if (!d.ready_b.empty()) return d.ready_b.take_smallest();
  if (auto f = pick_forward(d, device, pp, m)) return f;
  if (!d.ready_w.empty()) return d.ready_w.take_smallest();
  return std::nullopt;
}

std::optional<PipeOp> PipelineSchedule::pick_forward(PipeDevice& d, int, int, int) const {
  // Micro-batches whose backward has not run yet hold their activations.
  if (!d.ready_f.empty() && d.f_done - d.b_done < d.in_flight_limit)
    return d.ready_f.take_smallest();
  return std::nullopt;
}

}  // namespace trainsim
