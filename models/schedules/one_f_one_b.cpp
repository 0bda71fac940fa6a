// 1F1B (PipeDream-Flush; Narayanan et al., SC'21): Megatron's static order, min(p-s-1, m)
// warm-up forwards, then one F one B, then the cool-down backwards; at most p - s micro-batches
// in flight on stage s. Bubble (p-1)(F+B).
#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {
namespace {

class OneFOneB final : public PipelineSchedule {
 public:
  OneFOneB()
      : PipelineSchedule("1f1b",
                         "one-forward-one-backward (PipeDream-Flush); p micro-batches in flight",
                         ScheduleTraits{}) {}
  // Megatron-LM schedules.py (non-interleaved). A static order, not "a ready B first": with an
  // uneven stage (a straggler, a heavy last stage) the greedy rule batches B's and F's and
  // leaves the slow stage idle, which Megatron's order does not.
  bool has_static_order(int, int) const override { return true; }
  void static_order(int pp, int, int m, int d, std::vector<PipeOp>& order) const override {
    const int warmup = std::min(m, pp - d - 1);
    int f = 0, b = 0;
    for (; f < warmup; ++f) order.push_back(PipeOp{PipeOpKind::kForward, f, 0, true});
    while (f < m) {
      order.push_back(PipeOp{PipeOpKind::kForward, f++, 0, true});
      order.push_back(PipeOp{PipeOpKind::kBackward, b++, 0, true});
    }
    while (b < m) order.push_back(PipeOp{PipeOpKind::kBackward, b++, 0, true});
  }

 protected:
  double pipeline_bubble_s(const BubbleInputs& in) const override {
    return in.others_f() + in.others_b();
  }
};

}  // namespace

const PipelineSchedule& one_f_one_b_schedule() {
  static const OneFOneB s;
  return s;
}

}  // namespace trainsim
