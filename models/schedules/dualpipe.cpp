// DualPipe (DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, section 3.2.1): two pipelines in
// opposite directions share the devices, m/2 micro-batches each; device d runs stage d of the
// forward direction and stage p-1-d of the reverse one, so it holds two copies of its
// parameters. B split from W, at most p+1 micro-batches in flight per device. Bubble
// (p/2-1)(F&B + B - 3W), F&B = F+B overlapped: a device that picks a B runs the forward its rule
// would start next beside it, as one program (fb_overlap.hpp), and that B carries its W (the
// reference implementation's overlapped chunk runs the whole backward; a B alone defers its W).
#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {
namespace {

class DualPipe final : public PipelineSchedule {
 public:
  DualPipe()
      : PipelineSchedule("dualpipe", "DeepSeek DualPipe: bidirectional, two model copies per stage",
                         ScheduleTraits{.splits_backward = true, .bidirectional = true,
                                        .overlaps_forward_backward = true}) {}
  int in_flight_limit(int pp, int, int, int) const override { return pp + 1; }
  int weight_hold_limit(int pp) const override { return pp + 1; }

 protected:
  // Each direction keeps its own 1F1B limit (p - s for its stage s; the two sum to p + 1): one
  // shared limit lets both directions fill a device with forwards whose backwards wait on the
  // other end, which deadlocks once m/2 exceeds it. The smallest ready forward of a direction
  // under its limit: direction 0 holds the micro-batches below (m+1)/2, so its forwards sort
  // before direction 1's, and the first of direction 1 is found by its rank instead of a scan.
  std::optional<PipeOp> pick_forward(PipeDevice& d, int device, int pp, int m) const override {
    const bool open[2] = {d.f_dir[0] - d.b_dir[0] < pp - device,
                          d.f_dir[1] - d.b_dir[1] < device + 1};
    if (d.f_done - d.b_done < d.in_flight_limit && (open[0] || open[1])) {
      const std::size_t i =
          open[0] ? 0 : d.ready_f.rank(PipeOp{PipeOpKind::kForward, (m + 1) / 2, 0, false});
      if (i < d.ready_f.size() && open[d.ready_f.ascending(i).chunk]) {
        const PipeOp op = d.ready_f.ascending(i);
        d.ready_f.erase_ascending(i);
        return op;
      }
    }
    return std::nullopt;
  }
  double pipeline_bubble_s(const BubbleInputs& in) const override {
    const double p = in.pp, f = in.forward_s, b = in.backward_s, w = in.backward_weight_s;
    return std::max(0.0, p / 2 - 1) * std::max(0.0, (f + b) + b - 3 * w);
  }
  std::string plan_constraint(int pp, int, int m) const override {
    if (pp % 2 != 0) return "dualpipe needs an even plan.pp, got " + std::to_string(pp);
    if (m < pp) return "dualpipe needs at least plan.pp micro-batches per pipeline";
    return "";
  }
  double held_micro_batches(int pp, int, int, int m) const override {
    return std::min<double>(m, pp + 1.0);
  }
};

}  // namespace

const PipelineSchedule& dualpipe_schedule() {
  static const DualPipe s;
  return s;
}

}  // namespace trainsim
