// Zero-bubble H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24): the backward pass
// split into B (input gradient) and W (weight gradient); 1F1B's in-flight limit, with W
// deferred into the bubble. Bubble (p-1)(F+B-2W), 1F1B's activation memory.
#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {
namespace {

class ZbH1 final : public PipelineSchedule {
 public:
  ZbH1()
      : PipelineSchedule("zb-h1",
                         "zero-bubble H1: weight-grad deferred into the bubble, 1F1B memory",
                         ScheduleTraits{.splits_backward = true, .rule_order_fixed = true}) {}
  // The default ready-op rule with 1F1B's limits: p - s in flight, W's inputs held for at
  // most p micro-batches.

 protected:
  double pipeline_bubble_s(const BubbleInputs& in) const override {
    const double f = in.others_f(), b = in.others_b(), w = in.others_w();
    return std::max(f, f + b - 2 * w);
  }
};

}  // namespace

const PipelineSchedule& zb_h1_schedule() {
  static const ZbH1 s;
  return s;
}

}  // namespace trainsim
