// Interleaved 1F1B (Narayanan et al., SC'21; Megatron-LM): each device holds v model chunks,
// chunk c of device d being virtual stage c p + d. Megatron's static order: forward k runs
// chunk (k/p) % v of micro-batch (k/(p v)) p + k % p; (p-s-1)*2 + (v-1)p warm-up forwards, then
// one F one B. Bubble (p-1)(F+B)/v.
#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {
namespace {

class Interleaved final : public PipelineSchedule {
 public:
  Interleaved()
      : PipelineSchedule("interleaved",
                         "Megatron interleaved 1F1B over vpp model chunks per stage; bubble / vpp",
                         ScheduleTraits{.virtual_stages = true}) {}
  int in_flight_limit(int, int vpp, int m, int) const override { return m * vpp; }
  // Megatron-LM schedules.py (interleaved): warm-up, steady 1F1B, cool-down.
  bool has_static_order(int, int) const override { return true; }
  void static_order(int pp, int vpp, int m, int d, std::vector<PipeOp>& order) const override {
    const int total = m * vpp;
    auto fwd = [&](int k) {
      return PipeOp{PipeOpKind::kForward, (k / (pp * vpp)) * pp + k % pp, (k / pp) % vpp, true};
    };
    auto bwd = [&](int k) {
      return PipeOp{PipeOpKind::kBackward, (k / (pp * vpp)) * pp + k % pp, vpp - 1 - (k / pp) % vpp,
                    true};
    };
    const int warmup = std::min(total, (pp - d - 1) * 2 + (vpp - 1) * pp);
    int f = 0, b = 0;
    for (; f < warmup; ++f) order.push_back(fwd(f));
    while (f < total) {
      order.push_back(fwd(f++));
      order.push_back(bwd(b++));
    }
    while (b < total) order.push_back(bwd(b++));
  }

 protected:
  double pipeline_bubble_s(const BubbleInputs& in) const override {
    return (in.others_f() + in.others_b()) / std::max(1, in.vpp);
  }
  std::string plan_constraint(int pp, int vpp, int m) const override {
    if (vpp < 2) return "plan.schedule \"interleaved\" needs plan.vpp >= 2";
    // Megatron: the number of micro-batches must be a multiple of the pipeline size.
    if (m % pp != 0)
      return "interleaved schedule needs micro-batches per pipeline (" + std::to_string(m) +
             ") to be a multiple of plan.pp (" + std::to_string(pp) + ")";
    return "";
  }
  // Megatron's interleaved warm-up runs 2(p-s-1) + (v-1)p + 1 chunks before the first
  // backward; a chunk is 1/v of the device's layers. Stage 0: (1 + (p-1)/(p v)) p, as
  // Korthikanti et al. give; later stages hold more than 1F1B's p - s.
  double held_micro_batches(int pp, int vpp, int stage, int m) const override {
    const double v = std::max(1, vpp);
    return std::min<double>(m, (2.0 * (pp - stage - 1) + (v - 1) * pp + 1) / v);
  }
};

}  // namespace

const PipelineSchedule& interleaved_schedule() {
  static const Interleaved s;
  return s;
}

}  // namespace trainsim
