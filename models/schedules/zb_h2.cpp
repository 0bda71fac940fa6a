// Zero-bubble H2 (Qi et al., ICLR'24): as H1 with 2(p-s)-1 micro-batches in flight, which
// fills the warm-up bubble too, at about twice 1F1B's activations. One step alone still starts
// the last device (p-1)F late; with the optimizer step's synchronisation removed (post-
// validation, ScheduleTraits::steps_overlap) that fill runs beside the previous step's drain,
// and the bubble per step is max(0, (p-1)(F+B-3W)), about zero when W >= (F+B)/3.
#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {
namespace {

class ZbH2 final : public PipelineSchedule {
 public:
  ZbH2()
      : PipelineSchedule("zb-h2",
                         "zero-bubble H2: near-zero bubble at about twice 1F1B's activations",
                         ScheduleTraits{.splits_backward = true, .rule_order_fixed = true, .steps_overlap = true}) {}
  int in_flight_limit(int pp, int, int, int device) const override { return 2 * (pp - device) - 1; }
  // The first stage's peak: deferring W never raises the peak activation memory above it.
  int weight_hold_limit(int pp) const override { return 2 * pp - 1; }

 protected:
  double pipeline_bubble_s(const BubbleInputs& in) const override {
    const double f = in.others_f(), b = in.others_b(), w = in.others_w();
    return std::max(0.0, f + b - 3 * w);
  }
  double held_micro_batches(int pp, int, int stage, int m) const override {
    return std::min<double>(m, 2.0 * (pp - stage));
  }
};

}  // namespace

const PipelineSchedule& zb_h2_schedule() {
  static const ZbH2 s;
  return s;
}

}  // namespace trainsim
