// DualPipe (DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, section 3.2.1): two pipelines in
// opposite directions share the devices, m/2 micro-batches each; device d runs stage d of the
// forward direction and stage p-1-d of the reverse one, so it holds two copies of its
// parameters. B split from W, at most p+1 micro-batches in flight per device. Bubble
// (p/2-1)(F&B + B - 3W), F&B = F+B overlapped: a backward and a forward run beside each other
// as one program (fb_overlap.hpp), and that B carries its W (the reference implementation's
// overlapped chunk runs the whole backward; a B alone may defer its W).
//
// Each device runs the reference implementation's fixed order (deepseek-ai/DualPipe,
// dualpipe.py, DualPipe.step: eight phases per rank, written out in static_order below), for
// the shapes it accepts: an even number of micro-batches, at least 2p. Other shapes (p <= m <
// 2p, or m odd) play the ready-op rule below: a device that starts a backward runs beside it the
// forward the rule would start next.
#include <deque>

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
  bool has_static_order(int pp, int m) const override { return pp > 1 && pp % 2 == 0 && m % 2 == 0 && m >= 2 * pp; }
  std::string order_note(int pp, int m) const override {
    if (pp <= 1 || has_static_order(pp, m)) return "";
    return "plan.schedule \"dualpipe\" with " + std::to_string(m) +
           " micro-batches per pipeline: the reference implementation (deepseek-ai/DualPipe) runs an even number of "
           "at least 2 x plan.pp (" + std::to_string(2 * pp) +
           "); this plan is played by a ready-op rule instead, which pairs fewer backwards with forwards";
  }
  // The reference's phases for rank `device` of p (half = p/2, h = min(d, p-1-d)); "phase 0" is
  // the direction whose first stage is on this half of the devices (chunk 0 for the first half,
  // chunk 1 for the second), and each direction's micro-batches run in order:
  //   1. 2(half-h-1) F0          2. h+1 x (F0, F1)          3. half-h-1 x (B1 deferring W, W, F1)
  //   4. m/2-p+h+1 x (F0&B1, F1&B0), the middle ranks' first F0 and B1 one after the other
  //   5. half-h-1 x (B1, F1&B0)  6. h+1 x (B1, B0), deferring W from the middle on
  //   7. half-h-1 x (W, B0 deferring W)                     8. h+1 W
  // where X&Y is the overlapped chunk (a forward beside a backward that carries its W) and the
  // deferred W's run oldest first.
  void static_order(int pp, int, int m, int device, std::vector<PipeOp>& out) const override {
    const int half = pp / 2, h = std::min(device, pp - 1 - device), per = m / 2;
    const int flip = device >= half ? 1 : 0;
    const bool middle = h == half - 1;
    int f[2] = {0, 0}, b[2] = {0, 0};
    std::deque<PipeOp> deferred;
    const auto first_mb = [&](int chunk) { return chunk == 0 ? 0 : (m + 1) / 2; };
    const auto fwd = [&](int phase) {
      const int c = phase ^ flip;
      out.push_back(PipeOp{PipeOpKind::kForward, first_mb(c) + f[c]++, c, false});
    };
    const auto bwd = [&](int phase, bool defer_w) {
      const int c = phase ^ flip;
      const PipeOp op{PipeOpKind::kBackward, first_mb(c) + b[c]++, c, !defer_w};
      out.push_back(op);
      if (defer_w) deferred.push_back(PipeOp{PipeOpKind::kBackwardWeight, op.micro_batch, c, false});
    };
    const auto weight = [&] {
      out.push_back(deferred.front());
      deferred.pop_front();
    };
    const auto overlapped = [&](int f_phase, int b_phase) {  // listed backward first
      bwd(b_phase, false);
      out.back().pairs_next = true;
      fwd(f_phase);
    };
    for (int i = 0; i < 2 * (half - h - 1); ++i) fwd(0);
    for (int i = 0; i < h + 1; ++i) fwd(0), fwd(1);
    for (int i = 0; i < half - h - 1; ++i) bwd(1, true), weight(), fwd(1);
    for (int i = 0; i < per - pp + h + 1; ++i) {
      if (i == 0 && middle) fwd(0), bwd(1, false);
      else overlapped(0, 1);
      overlapped(1, 0);
    }
    for (int i = 0; i < half - h - 1; ++i) bwd(1, false), overlapped(1, 0);
    bool defer = false;
    for (int i = 0; i < h + 1; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1) defer = true;
      bwd(1, defer);
      if (i == (h + 1) / 2 && h % 2 == 0) defer = true;
      bwd(0, defer);
    }
    for (int i = 0; i < half - h - 1; ++i) weight(), bwd(0, true);
    for (int i = 0; i < h + 1; ++i) weight();
  }
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
