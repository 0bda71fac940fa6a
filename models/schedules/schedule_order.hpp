// How each pipeline stage chooses its next op under a schedule. A PipelineRunner holds the
// dependency state of one step (which forward (F), backward-input (B) and backward-weight (W)
// ops are ready on which device) and the schedule's rule for picking among them. Drivers supply
// time: the closed-form timeline player (timeline.hpp) with a fixed transfer delay, and the
// SimGrid step simulation with real, contending flows. Bubbles are never computed from formulas
// here: they emerge from the dependencies, and the formulas in pipeline_schedule.hpp test them.
//
// Each schedule's rule is in its own file (pipeline_schedule.hpp lists what a schedule says).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {

// An input that becomes available on `device` once the op that produced it completes; `p2p`
// says whether it travels between devices (activation or gradient send/recv).
struct Handoff {
  int device = 0;
  PipeOp op;
  bool p2p = false;
};

class PipelineRunner {
 public:
  PipelineRunner() : PipelineRunner(default_pipeline_schedule(), 1, 1, 1) {}
  PipelineRunner(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches);
  // Starts a new step, keeping the buffers (no allocation once they are large enough).
  void reset(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches);
  // The schedule's ready-op rule played with every op taking one unit and no transfer delay:
  // each device's ops in the order it ran them (PipelineSchedule::rule_order_fixed).
  static void rule_orders(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches,
                          std::vector<std::vector<PipeOp>>& orders);
  const PipelineSchedule& schedule() const { return *schedule_; }

  int devices() const { return pp_; }
  // The op an idle device should start now, if any (it is removed from the ready set).
  std::optional<PipeOp> pick(int device);
  // Schedules that overlap a forward with a backward (ScheduleTraits::overlaps_forward_backward):
  // after pick() gave `first`, a backward, the forward to run beside it, if any (removed from the
  // ready set). Both finish together; the player calls finish() for each. A paired backward
  // computes its weight gradients inside the pair (`first.with_weight_grad` is set, and no W of
  // its own follows): DualPipe's overlapped chunk runs the whole backward, and only a backward
  // alone defers its W (deepseek-ai/DualPipe, dualpipe.py: the main step's
  // _forward_backward_chunk against _backward_chunk(enable_zb=True)). In a static order the
  // order names the pair (PipeOp::pairs_next); a player whose costs do not pair ops does not
  // ask, and the forward then runs after the backward.
  std::optional<PipeOp> pick_partner(int device, PipeOp& first);
  // The op finished: returns the inputs it produces (delivered later by arrive()).
  std::vector<Handoff> finish(int device, const PipeOp& op);
  // The same into out[] (at most kMaxHandoffs), returning how many: no allocation.
  static constexpr int kMaxHandoffs = 2;
  int finish(int device, const PipeOp& op, Handoff out[kMaxHandoffs]);
  // An input reached its device: the op it feeds is ready.
  void arrive(const Handoff& h);
  bool done() const { return remaining_ == 0; }
  int64_t total_ops() const { return total_ops_; }
  // Virtual pipeline stage that runs `chunk` on `device` (0 .. p*v-1, or mirrored when
  // bidirectional).
  int virtual_stage(int device, int chunk) const;
  // Virtual stages a micro-batch passes in its direction (p*v; bidirectional: p).
  int virtual_stages() const { return stages_in_direction(); }
  // Schedules whose devices run a fixed op order (PipelineSchedule::has_static_order): that
  // order, as pick() follows it. Empty for the schedules that pick among ready ops.
  bool has_static_order() const { return static_; }
  const std::vector<PipeOp>& order_of(int device) const { return dev_[device].order; }

 private:
  int device_of(int virtual_stage, int direction) const;
  int chunk_of(int virtual_stage, int direction) const;
  int direction_of_micro_batch(int mb) const;
  int stages_in_direction() const;

  void reset(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches, bool rule);

  const PipelineSchedule* schedule_ = nullptr;
  bool static_ = false, split_ = false, dual_ = false;  // the schedule's, read once per step
  int pp_ = 1, vpp_ = 1, m_ = 1;
  std::vector<PipeDevice> dev_;  // at least pp_ (reset() keeps larger ones for their buffers)
  int64_t remaining_ = 0;
  int64_t total_ops_ = 0;
};

}  // namespace trainsim
