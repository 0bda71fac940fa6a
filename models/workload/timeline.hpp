// Plays a schedule (schedule_order.hpp) with per-op durations and a fixed point-to-point delay
// between stages. No SimGrid: this is the estimate tier's timeline and the GUI's Gantt chart;
// the simulate tier replaces the fixed delay with real flows that contend.
#pragma once

#include <algorithm>
#include <vector>

#include "models/schedules/schedule_order.hpp"

namespace trainsim {

struct StageCosts {
  double forward_s = 0;          // per micro-batch per chunk
  double backward_s = 0;         // B (input gradient) per micro-batch per chunk
  double backward_weight_s = 0;  // W per micro-batch per chunk
  // A bidirectional schedule's chunk 1 (the reverse direction's stage on this device), when it
  // costs other than chunk 0; negative: as chunk 0.
  double reverse_forward_s = -1;
  double reverse_backward_s = -1;
  double reverse_backward_weight_s = -1;
  // A schedule that overlaps a forward with a backward: the pair's time, [forward's chunk]
  // [backward's chunk] (the merged program of fb_overlap.hpp of the forward and the whole
  // backward, B + W, reduced); negative: no pairs, each op runs alone.
  double pair_s[2][2] = {{-1, -1}, {-1, -1}};
  bool pairs() const { return pair_s[0][0] >= 0; }
  bool operator==(const StageCosts&) const = default;
};

// What one op costs alone on a stage: F, B (with W where it carries it) or W of its chunk.
double stage_op_cost(const StageCosts& costs, const PipeOp& op);

struct TimelineOp {
  int stage = 0;
  PipeOp op;
  double start_s = 0;
  double end_s = 0;
};

struct Timeline {
  std::vector<TimelineOp> ops;  // in start order (the two ops of a pair start and end together)
  double makespan_s = 0;  // the first op's start to the last op's end
  // The pipeline's time per step: the makespan, or where the schedule's steps overlap
  // (ScheduleTraits::steps_overlap) the longest device span, first op to last.
  double step_s = 0;
  std::vector<double> busy_s;  // per stage
  double bubble_fraction = 0;  // idle / step_s, averaged over stages
  // Per stage, what its overlapped pairs saved: the sum over them of (F + B alone) - the pair.
  std::vector<double> pair_saved_s;
};

// Hooks into the playback for exporters that need each op and each handoff as it happens
// (chakra_export.cpp); the Timeline alone has the ops but not who fed whom.
class PlaybackObserver {
 public:
  virtual ~PlaybackObserver() = default;
  // `beside`: for the forward of an overlapped pair, the backward it runs beside (started just
  // before it, over the same interval); nullptr for an op that runs alone.
  virtual void started(int device, const PipeOp& op, double start_s, double end_s, const PipeOp* beside) {}
  // One call per input the finished op produces (p2p or local).
  virtual void handed_off(int device, const PipeOp& op, const Handoff& handoff, double time_s) {}
  // A p2p input reached its device.
  virtual void arrived(const Handoff& handoff, double time_s) {}
};

// The transfer time between neighbouring pipeline devices: one for every boundary, or one per
// boundary, boundary d joining device d and device (d + 1) mod p (p - 1 joins the last device
// to the first, which interleaved chunks cross). A boundary that crosses a node or a tapered
// leaf uplink takes longer than one inside a node, and the slow ones pace the pipeline.
struct TransferDelays {
  TransferDelays(double uniform_s = 0.0) : uniform_s(uniform_s) {}  // NOLINT: one for all
  TransferDelays(const double* per_boundary_s, int boundaries)
      : boundary_s(boundaries > 0 ? per_boundary_s : nullptr), boundaries(boundaries) {}
  // From device `from` to its neighbour `to` of `devices` (two devices: one pair, boundary 0).
  double between(int from, int to, int devices) const {
    if (!boundary_s) return uniform_s;
    const int b = devices <= 2 ? 0 : (from + 1) % devices == to ? from : to;
    return boundary_s[std::min(b, boundaries - 1)];
  }
  bool none() const;  // every transfer takes no time
  double uniform_s = 0.0;
  const double* boundary_s = nullptr;
  int boundaries = 0;
};

// costs[stage] (one entry per device); `delays` the transfer times between neighbouring stages.
// When a schedule does not split the backward pass, B runs for backward_s + backward_weight_s.
Timeline play_schedule(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches,
                       const std::vector<StageCosts>& costs, TransferDelays delays,
                       PlaybackObserver* observer = nullptr);

// The step time of the same playback (Timeline::step_s, bit for bit), without recording ops:
// per-thread buffers, no allocation once they are large enough. What the estimate tier needs of
// a playback. costs[0 .. stages-1], one entry per device (stages >= 1).
// With pair_saved_s (stages entries), what each device's overlapped pairs saved is added to it.
double play_step_s(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches, const StageCosts* costs,
                   std::size_t stages, TransferDelays delays, double* pair_saved_s = nullptr);

}  // namespace trainsim
