// How each pipeline stage chooses its next op under a schedule. A PipelineRunner holds the
// dependency state of one step (which forward (F), backward-input (B) and backward-weight (W)
// ops are ready on which device) and the schedule's rule for picking among them. Drivers supply
// time: the closed-form timeline player (timeline.hpp) with a fixed transfer delay, and the
// SimGrid step simulation with real, contending flows. Bubbles are never computed from formulas
// here: they emerge from the dependencies, and the formulas in pipeline_schedule.hpp test them.
//
// Rules (p stages, stage s, m micro-batches, v chunks):
//   gpipe        all forwards of a stage before any backward.
//   1f1b         Megatron's static order: min(p-s-1, m) warm-up forwards, then one F one B
//                (at most p - s micro-batches in flight).
//   interleaved  Megatron's static order: forward k of chunk (k/p)%v, micro-batch (k/(pv))p + k%p;
//                (p-s-1)*2 + (v-1)p warm-up forwards, then one F one B.
//   zb-h1        1F1B's in-flight limit, B split from W, W fills the gaps (Qi et al. ICLR'24).
//   zb-h2        as zb-h1 with 2(p-s)-1 in flight: fills the warm-up bubble too.
//   dualpipe     two pipelines in opposite directions share the devices, m/2 micro-batches each,
//                at most p+1 in flight per device, B split from W.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {

enum class PipeOpKind { kForward, kBackward, kBackwardWeight };

struct PipeOp {
  PipeOpKind kind = PipeOpKind::kForward;
  int micro_batch = 0;
  int chunk = 0;  // model chunk on the device; DualPipe: 0 = forward direction, 1 = reverse
  // True when B carries W with it (schedules that do not split the backward pass).
  bool with_weight_grad = true;
  bool operator<(const PipeOp& o) const {
    return std::tie(micro_batch, chunk, kind) < std::tie(o.micro_batch, o.chunk, o.kind);
  }
};

const char* to_string(PipeOpKind kind);

// An input that becomes available on `device` once the op that produced it completes; `p2p`
// says whether it travels between devices (activation or gradient send/recv).
struct Handoff {
  int device = 0;
  PipeOp op;
  bool p2p = false;
};

// Ready ops of one kind on one device, smallest (micro-batch, chunk, kind) first, as std::set
// orders them: a vector kept in descending order, so the smallest is taken from the back. A
// device holds a few ready ops at a time; a vector reused from step to step allocates nothing
// per op, where a set allocates a node for each.
class PipeOpSet {
 public:
  bool empty() const { return v_.empty(); }
  std::size_t size() const { return v_.size(); }
  // An op equivalent to one present is not added again (std::set::insert).
  void insert(const PipeOp& op);
  PipeOp take_smallest() {
    const PipeOp op = v_.back();
    v_.pop_back();
    return op;
  }
  // How many ops are smaller than `op` (the ascending index of the first one not smaller).
  std::size_t rank(const PipeOp& op) const;
  // The i-th smallest, and removing it.
  const PipeOp& ascending(std::size_t i) const { return v_[v_.size() - 1 - i]; }
  void erase_ascending(std::size_t i) { v_.erase(v_.begin() + static_cast<std::ptrdiff_t>(v_.size() - 1 - i)); }
  // Removes the op equivalent to `op`; false when there is none.
  bool erase(const PipeOp& op);
  void clear() { v_.clear(); }

 private:
  std::vector<PipeOp> v_;  // descending
};

class PipelineRunner {
 public:
  PipelineRunner(ScheduleKind schedule, int pp, int vpp, int micro_batches);
  // Starts a new step, keeping the buffers (no allocation once they are large enough).
  void reset(ScheduleKind schedule, int pp, int vpp, int micro_batches);

  int devices() const { return pp_; }
  // The op an idle device should start now, if any (it is removed from the ready set).
  std::optional<PipeOp> pick(int device);
  // The op finished: returns the inputs it produces (delivered later by arrive()).
  std::vector<Handoff> finish(int device, const PipeOp& op);
  // The same into out[] (at most kMaxHandoffs), returning how many: no allocation.
  static constexpr int kMaxHandoffs = 2;
  int finish(int device, const PipeOp& op, Handoff out[kMaxHandoffs]);
  // An input reached its device: the op it feeds is ready.
  void arrive(const Handoff& h);
  bool done() const { return remaining_ == 0; }
  int64_t total_ops() const { return total_ops_; }
  // Virtual pipeline stage that runs `chunk` on `device` (0 .. p*v-1, or DualPipe's mirrored).
  int virtual_stage(int device, int chunk) const;
  // Virtual stages a micro-batch passes in its direction (p*v; DualPipe: p).
  int virtual_stages() const { return stages_in_direction(); }
  // Schedules whose devices run a fixed op order (1f1b, interleaved): that order, as pick()
  // follows it. Empty for the schedules that pick among ready ops.
  bool has_static_order() const { return static_order(); }
  const std::vector<PipeOp>& order_of(int device) const { return dev_[device].order; }

 private:
  struct Device {
    PipeOpSet ready_f, ready_b, ready_w;
    int f_done = 0, b_done = 0, w_done = 0, f_total = 0;
    int f_dir[2] = {0, 0}, b_dir[2] = {0, 0};  // DualPipe: per direction
    std::vector<PipeOp> order;  // static order (1f1b, interleaved)
    std::size_t next = 0;
    PipeOpSet arrived;          // static order: inputs present
  };
  int in_flight_limit(int device) const;
  bool split_backward() const;
  bool static_order() const {
    return schedule_ == ScheduleKind::kInterleaved || schedule_ == ScheduleKind::k1F1B;
  }
  int device_of(int virtual_stage, int direction) const;
  int chunk_of(int virtual_stage, int direction) const;
  int direction_of_micro_batch(int mb) const;
  int stages_in_direction() const;

  ScheduleKind schedule_ = ScheduleKind::k1F1B;
  int pp_ = 1, vpp_ = 1, m_ = 1;
  std::vector<Device> dev_;  // at least pp_ (reset() keeps larger ones for their buffers)
  int64_t remaining_ = 0;
  int64_t total_ops_ = 0;
};

}  // namespace trainsim
