// Pipeline schedules, one file each in this folder plus one line in schedule_registry.cpp
// (CONVENTIONS.md #7, #17). A schedule is everything the tool needs to know about one: its
// closed-form bubble (REFERENCE.md "Pipeline schedules"), its structural constraints, the
// activations each stage holds, how it splits the backward pass and lays chunks on devices, and
// the rule by which a device picks its next op (a fixed per-device order, or a pick among the
// ready ops). PipelineRunner (schedule_order.hpp) plays that rule; the simulate tier's bubbles
// emerge from it and are tested against the closed forms here.
//
// Callers resolve the schedule once per plan (pipeline_schedule(name); Workload holds the
// pointer) and then ask it: no caller compares schedule names.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace trainsim {

enum class PipeOpKind { kForward, kBackward, kBackwardWeight };

struct PipeOp {
  PipeOpKind kind = PipeOpKind::kForward;
  int micro_batch = 0;
  int chunk = 0;  // model chunk on the device; bidirectional: 0 = forward direction, 1 = reverse
  // True when B carries W with it (schedules that do not split the backward pass).
  bool with_weight_grad = true;
  // Static orders: this backward runs beside the op after it in the order, a forward, as one
  // program once both inputs are in (DualPipe's overlapped F&B chunk; the backward carries its
  // W). Not part of the op's identity.
  bool pairs_next = false;
  bool operator<(const PipeOp& o) const {
    return std::tie(micro_batch, chunk, kind) < std::tie(o.micro_batch, o.chunk, o.kind);
  }
};

const char* to_string(PipeOpKind kind);

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
  void erase_ascending(std::size_t i) {
    v_.erase(v_.begin() + static_cast<std::ptrdiff_t>(v_.size() - 1 - i));
  }
  // Removes the op equivalent to `op`; false when there is none.
  bool erase(const PipeOp& op);
  bool contains(const PipeOp& op) const;
  void clear() { v_.clear(); }

 private:
  std::vector<PipeOp>::const_iterator find(const PipeOp& op) const;  // the equivalent op, or end
  std::vector<PipeOp> v_;  // descending
};

// One pipeline device as a schedule's ready-op rule sees it: the ready ops by kind, what it
// has run, and the limits PipelineRunner took from the schedule when the step began.
struct PipeDevice {
  PipeOpSet ready_f, ready_b, ready_w;
  int f_done = 0, b_done = 0, w_done = 0, f_total = 0;
  int f_dir[2] = {0, 0}, b_dir[2] = {0, 0};  // bidirectional schedules: per direction
  int in_flight_limit = 0;                   // PipelineSchedule::in_flight_limit of this device
  int weight_hold_limit = 0;                 // PipelineSchedule::weight_hold_limit
  std::vector<PipeOp> order;                 // static order (PipelineSchedule::static_order)
  std::size_t next = 0;
  PipeOpSet arrived;  // static order: inputs present
};

struct BubbleInputs {
  int pp = 1;
  int vpp = 1;
  int micro_batches = 1;
  double forward_s = 0;          // F: one micro-batch through the slowest stage
  double backward_s = 0;         // B + W
  double backward_weight_s = 0;  // W alone
  // The same, summed over the other p - 1 stages: the fill and the drain pass through them, so
  // the idle time around the slowest stage's m micro-batches is their sum, not p - 1 times its
  // own (1F1B's makespan (m - 1)(F + B)_slowest + sum over s of (F + B)_s, exact when one stage
  // is heavier than the others alike). Negative: p - 1 stages like the slowest.
  double others_forward_s = -1;
  double others_backward_s = -1;
  double others_backward_weight_s = -1;
  double others_f() const { return others_forward_s >= 0 ? others_forward_s : (pp - 1) * forward_s; }
  double others_b() const { return others_backward_s >= 0 ? others_backward_s : (pp - 1) * backward_s; }
  double others_w() const {
    return others_backward_weight_s >= 0 ? others_backward_weight_s : (pp - 1) * backward_weight_s;
  }
};

// What a schedule is, as data (read on every plan: no virtual call).
struct ScheduleTraits {
  // B and W run as separate ops (zero-bubble schedules, DualPipe); otherwise B carries W.
  bool splits_backward = false;
  // A device's layers are split into plan.vpp model chunks (interleaved virtual stages).
  bool virtual_stages = false;
  // Two pipelines in opposite directions share the devices: device d runs stage d of one and
  // stage p-1-d of the other, holding two copies of its parameters.
  bool bidirectional = false;
  // Its devices run a fixed op order: what its ready-op rule picks when F, B and W take equal
  // time and transfers none (the zero-bubble paper's handcrafted ZB-H1 and ZB-H2 are drawn
  // there, and runtimes run such an order, each device waiting for its next op's input). Played
  // as a rule instead, a device that finds its B a transfer away starts a W or an F, and the
  // delay cascades down the pipeline.
  bool rule_order_fixed = false;
  // A device runs one micro-batch's backward beside another's forward when both are ready, each
  // one's collectives beside the other's compute (DualPipe's F&B chunk; fb_overlap.hpp): the
  // players ask PipelineRunner::pick_partner for the forward.
  bool overlaps_forward_backward = false;
  // Its runtime does not hold the stages at the optimizer step: each stage updates its own
  // parameters once its gradients are reduced and starts the next step, and a step whose update
  // turns out invalid (non-finite gradients, clipping) is rolled back afterwards (the
  // zero-bubble paper's post-validation, Qi et al., ICLR'24, section 4). Back-to-back steps then
  // tile: the next step's fill runs beside this one's drain, and a step takes the longest
  // device's span, first op to last, not the makespan from the first device's first op. ZB-H2's
  // parallelogram needs it (the paper: "the synchronization between the optimizer steps is
  // removed here"); a schedule whose first device also ends last (1F1B, ZB-H1) gains nothing.
  bool steps_overlap = false;
};

class PipelineSchedule {
 public:
  // name: the plan.schedule value; summary: one line for --help and the GUI.
  PipelineSchedule(const char* name, const char* summary, ScheduleTraits traits)
      : name_(name), summary_(summary), key_(name), traits_(traits) {}
  virtual ~PipelineSchedule() = default;
  PipelineSchedule(const PipelineSchedule&) = delete;
  PipelineSchedule& operator=(const PipelineSchedule&) = delete;
  const char* name() const { return name_; }
  const char* summary() const { return summary_; }
  bool is_named(const std::string& name) const { return name == key_; }

  // Idle time of the critical stage per step (seconds); none without a pipeline.
  double bubble_time_s(const BubbleInputs& in) const {
    return in.pp <= 1 ? 0 : pipeline_bubble_s(in);
  }

  // Structural constraints; empty when the plan may use the schedule.
  std::string constraint(int pp, int vpp, int micro_batches) const;

  // Micro-batches whose activations stage `stage` holds at its peak (memory.hpp multiplies one
  // micro-batch's activations by it); one without a pipeline.
  double in_flight_micro_batches(int pp, int vpp, int stage, int micro_batches) const {
    return pp <= 1 ? 1 : held_micro_batches(pp, vpp, stage, micro_batches);
  }

  bool splits_backward() const { return traits_.splits_backward; }
  bool rule_order_fixed() const { return traits_.rule_order_fixed; }
  bool uses_virtual_stages() const { return traits_.virtual_stages; }
  bool bidirectional() const { return traits_.bidirectional; }
  bool overlaps_forward_backward() const { return traits_.overlaps_forward_backward; }
  bool steps_overlap() const { return traits_.steps_overlap; }

  // Model chunks a device's layers are cut into (each chunk's pass costs 1/chunks of the
  // device's), and chunks a device runs (a bidirectional schedule runs its stage twice).
  int layer_chunks(int vpp) const { return uses_virtual_stages() ? std::max(1, vpp) : 1; }
  int chunks_per_device(int pp, int vpp) const {
    return bidirectional() && pp > 1 ? 2 : layer_chunks(vpp);
  }

  // ---- the order rule PipelineRunner plays ----
  // Schedules with a fixed per-device op order (Megatron's, DualPipe's reference) say for which
  // shapes and write it; PipelineRunner then runs each device's order as its inputs arrive.
  // `vpp` is the runner's chunks per device.
  virtual bool has_static_order(int pp, int micro_batches) const {
    (void)pp, (void)micro_batches;
    return false;
  }
  virtual void static_order(int pp, int vpp, int micro_batches, int device,
                            std::vector<PipeOp>& out) const;
  // A warning for a plan whose shape the schedule's reference implementation does not run
  // (the players then fall back on its ready-op rule); empty where it does.
  virtual std::string order_note(int pp, int micro_batches) const {
    (void)pp, (void)micro_batches;
    return "";
  }
  // Schedules without a static order whose ready-op rule reduces to a fixed order when every
  // transfer takes the same time, which the closed-form playback may run without events.
  virtual bool has_fixed_delay_order() const { return false; }
  virtual void fixed_delay_order(int pp, int vpp, int micro_batches, int device,
                                 std::vector<PipeOp>& out) const {
    static_order(pp, vpp, micro_batches, device, out);
  }
  // Schedules without a static order: the op an idle device starts now among its ready ops
  // (removed from its ready set), if any. The default rule is the zero-bubble family's (Qi et
  // al., ICLR'24): W first once the deferred weight gradients hold `weight_hold_limit`
  // micro-batches' inputs, then a ready B, then a forward (pick_forward), then W into the gap.
  // Where B carries W there is no W to run, and the rule is greedy 1F1B.
  virtual std::optional<PipeOp> pick(PipeDevice& d, int device, int pp, int micro_batches) const;
  // The forward an overlapping schedule runs beside a backward it just picked: the one its rule
  // would start next (pick_forward), if any.
  std::optional<PipeOp> forward_beside(PipeDevice& d, int device, int pp, int micro_batches) const {
    return pick_forward(d, device, pp, micro_batches);
  }
  // Micro-batches a device may hold between F and B under the ready-op rule.
  virtual int in_flight_limit(int pp, int vpp, int micro_batches, int device) const {
    (void)vpp, (void)micro_batches;
    return pp - device;  // 1F1B's
  }
  // Deferred weight gradients keep W's inputs alive: a device holds at most this many
  // micro-batches past their forward before a W must run (the first stage's peak anyway).
  virtual int weight_hold_limit(int pp) const { return pp; }

 protected:
  virtual double pipeline_bubble_s(const BubbleInputs& in) const = 0;  // pp > 1
  // pp > 1. By default 1F1B's: stage s holds p - s micro-batches (Narayanan et al., SC'21),
  // fewer when there are fewer.
  virtual double held_micro_batches(int pp, int vpp, int stage, int micro_batches) const {
    (void)vpp;
    return std::min<double>(micro_batches, pp - stage);
  }
  // Constraints beyond the common ones (vpp only where virtual stages are used), pp > 1.
  virtual std::string plan_constraint(int pp, int vpp, int micro_batches) const {
    (void)pp, (void)vpp, (void)micro_batches;
    return "";
  }
  // The forward the default rule starts, if any: the smallest ready one while fewer than the
  // in-flight limit are held.
  virtual std::optional<PipeOp> pick_forward(PipeDevice& d, int device, int pp,
                                             int micro_batches) const;

 private:
  const char* name_;
  const char* summary_;
  std::string key_;  // name_, compared by size first
  ScheduleTraits traits_;
};

// Every registered schedule, in registration order (schedule_registry.cpp): the first is the
// default (plan.schedule's default, and the one plan search tries on one-stage plans).
const std::vector<const PipelineSchedule*>& pipeline_schedules();
const PipelineSchedule* find_pipeline_schedule(const std::string& name);  // nullptr if unknown
const PipelineSchedule& default_pipeline_schedule();
// The named schedule; ScenarioError on plan.schedule for an unknown name.
const PipelineSchedule& pipeline_schedule(const std::string& name);
// The schedule a plan of `pp` stages runs: the named one, or with one stage (no pipeline) the
// default's loop, a forward then a backward per micro-batch, which frameworks run whatever
// schedule is configured (Megatron-LM's forward_backward_no_pipelining): splitting W from B or
// a second direction buys nothing without other stages, and a split would leave only W to
// hide the gradient reduction behind.
const PipelineSchedule& plan_pipeline_schedule(const std::string& name, int pp);
std::vector<const char*> pipeline_schedule_names();

}  // namespace trainsim
