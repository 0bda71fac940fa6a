#include "models/schedules/pipeline_schedule.hpp"

#include <algorithm>

namespace trainsim {

const std::vector<ScheduleInfo>& pipeline_schedules() {
  static const std::vector<ScheduleInfo> kSchedules = {
      {"gpipe", "all forwards, then all backwards; holds every micro-batch's activations"},
      {"1f1b", "one-forward-one-backward (PipeDream-Flush); p micro-batches in flight"},
      {"interleaved", "Megatron interleaved 1F1B over vpp model chunks per stage; bubble / vpp"},
      {"zb-h1", "zero-bubble H1: weight-grad deferred into the bubble, 1F1B memory"},
      {"zb-h2", "zero-bubble H2: near-zero bubble at about twice 1F1B's activations"},
      {"dualpipe", "DeepSeek DualPipe: bidirectional, two model copies per stage"},
  };
  return kSchedules;
}

bool is_pipeline_schedule(const std::string& name) {
  for (const auto& s : pipeline_schedules())
    if (name == s.name) return true;
  return false;
}

ScheduleKind schedule_kind(const std::string& name) {
  if (name == "gpipe") return ScheduleKind::kGpipe;
  if (name == "interleaved") return ScheduleKind::kInterleaved;
  if (name == "zb-h1") return ScheduleKind::kZbH1;
  if (name == "zb-h2") return ScheduleKind::kZbH2;
  if (name == "dualpipe") return ScheduleKind::kDualPipe;
  return ScheduleKind::k1F1B;
}

double bubble_time_s(ScheduleKind schedule, const BubbleInputs& in) {
  if (in.pp <= 1) return 0;
  const double p = in.pp, f = in.forward_s, b = in.backward_s, w = in.backward_weight_s;
  switch (schedule) {
    case ScheduleKind::kInterleaved: return (p - 1) * (f + b) / std::max(1, in.vpp);
    case ScheduleKind::kZbH1: return (p - 1) * std::max(f, f + b - 2 * w);
    case ScheduleKind::kZbH2: return (p - 1) * std::max(0.0, f + b - 3 * w);
    case ScheduleKind::kDualPipe: return std::max(0.0, p / 2 - 1) * std::max(0.0, (f + b) + b - 3 * w);
    case ScheduleKind::kGpipe:
    case ScheduleKind::k1F1B: break;
  }
  return (p - 1) * (f + b);
}

double bubble_time_s(const std::string& schedule, const BubbleInputs& in) {
  return bubble_time_s(schedule_kind(schedule), in);
}

std::string schedule_constraint(const std::string& schedule, int pp, int vpp, int m) {
  if (pp <= 1) return vpp > 1 ? "plan.vpp > 1 needs a pipeline (plan.pp > 1)" : "";
  if (schedule == "interleaved") {
    if (vpp < 2) return "plan.schedule \"interleaved\" needs plan.vpp >= 2";
    // Megatron: the number of micro-batches must be a multiple of the pipeline size.
    if (m % pp != 0)
      return "interleaved schedule needs micro-batches per pipeline (" + std::to_string(m) +
             ") to be a multiple of plan.pp (" + std::to_string(pp) + ")";
    return "";
  }
  if (vpp > 1)
    return "plan.vpp = " + std::to_string(vpp) + " needs plan.schedule \"interleaved\", not \"" +
           schedule + "\"";
  if (schedule == "dualpipe") {
    if (pp % 2 != 0) return "dualpipe needs an even plan.pp, got " + std::to_string(pp);
    if (m < pp) return "dualpipe needs at least plan.pp micro-batches per pipeline";
  }
  return "";
}

}  // namespace trainsim
