// GPipe (Huang et al., NeurIPS'19): every forward of a stage, then every backward. Bubble
// (p-1)(F+B) as 1F1B's (Narayanan et al., SC'21), but a stage holds all m micro-batches'
// activations.
#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {
namespace {

class Gpipe final : public PipelineSchedule {
 public:
  Gpipe()
      : PipelineSchedule("gpipe",
                         "all forwards, then all backwards; holds every micro-batch's activations",
                         ScheduleTraits{}) {}
  // The ready-op rule: forwards first, smallest micro-batch first; backwards once every
  // forward of the device has run.
  std::optional<PipeOp> pick(PipeDevice& d, int, int, int) const override {
    if (!d.ready_f.empty()) return d.ready_f.take_smallest();
    if (d.f_done == d.f_total && !d.ready_b.empty()) return d.ready_b.take_smallest();
    return std::nullopt;
  }
  int in_flight_limit(int, int, int m, int) const override { return m; }
  // With a fixed transfer delay GPipe runs a fixed order: F0 .. F(m-1), then B0 .. B(m-1) on
  // every device. Device 0 holds every forward input from the start and takes the smallest;
  // each later device receives its inputs in the order its neighbour ran them (one delay for
  // all), so the smallest ready op is always the next in that order; backwards start once
  // every forward of the device has ended (the order puts them last). Not so under the
  // simulate tier's contending flows, whose arrivals may overtake one another: there the
  // ready-op rule plays.
  bool has_fixed_delay_order() const override { return true; }
  void fixed_delay_order(int, int, int m, int, std::vector<PipeOp>& out) const override {
    out.clear();
    for (int k = 0; k < m; ++k) out.push_back({PipeOpKind::kForward, k, 0, true});
    for (int k = 0; k < m; ++k) out.push_back({PipeOpKind::kBackward, k, 0, true});
  }

 protected:
  double pipeline_bubble_s(const BubbleInputs& in) const override {
    return in.others_f() + in.others_b();
  }
  double held_micro_batches(int, int, int, int m) const override { return m; }
};

}  // namespace

const PipelineSchedule& gpipe_schedule() {
  static const Gpipe s;
  return s;
}

}  // namespace trainsim
