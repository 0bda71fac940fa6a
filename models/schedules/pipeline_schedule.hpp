// Pipeline schedules by name (CONVENTIONS.md #7) and their closed-form bubbles (REFERENCE.md
// "Pipeline schedules"). The simulate tier plays the schedules event by event; these formulas
// are what its emergent bubbles are tested against.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

enum class ScheduleKind { kGpipe, k1F1B, kInterleaved, kZbH1, kZbH2, kDualPipe };
// Unknown names map to k1F1B; the loader has already rejected them.
ScheduleKind schedule_kind(const std::string& name);

struct ScheduleInfo {
  const char* name;
  const char* summary;
};
const std::vector<ScheduleInfo>& pipeline_schedules();
bool is_pipeline_schedule(const std::string& name);

struct BubbleInputs {
  int pp = 1;
  int vpp = 1;
  int micro_batches = 1;
  double forward_s = 0;          // F: one micro-batch through the slowest stage
  double backward_s = 0;         // B + W
  double backward_weight_s = 0;  // W alone
};

// Idle time of the critical stage per step (seconds):
//   GPipe, 1F1B      (p-1)(F+B)                                    (Narayanan et al. SC'21)
//   interleaved      (p-1)(F+B)/v
//   ZB-H1            (p-1)(F+B-2W)                                  (Qi et al. ICLR'24)
//   ZB-H2            max(0, (p-1)(F+B-3W))  (~0 when W >= (F+B)/3)
//   DualPipe         (p/2-1)(F&B + B - 3W), F&B = F+B overlapped     (DeepSeek-V3 report)
double bubble_time_s(ScheduleKind schedule, const BubbleInputs& in);
double bubble_time_s(const std::string& schedule, const BubbleInputs& in);

// Structural constraints of a schedule; empty string when the plan may use it.
std::string schedule_constraint(const std::string& schedule, int pp, int vpp, int micro_batches);

}  // namespace trainsim
