#include "models/schedules/schedule_order.hpp"

#include <algorithm>
#include <cassert>

namespace trainsim {

const char* to_string(PipeOpKind kind) {
  switch (kind) {
    case PipeOpKind::kForward: return "F";
    case PipeOpKind::kBackward: return "B";
    case PipeOpKind::kBackwardWeight: return "W";
  }
  return "?";
}

bool PipelineRunner::split_backward() const {
  return schedule_ == ScheduleKind::kZbH1 || schedule_ == ScheduleKind::kZbH2 ||
         schedule_ == ScheduleKind::kDualPipe;
}

int PipelineRunner::stages_in_direction() const {
  return schedule_ == ScheduleKind::kDualPipe ? pp_ : pp_ * vpp_;
}

int PipelineRunner::direction_of_micro_batch(int mb) const {
  return schedule_ == ScheduleKind::kDualPipe && mb >= (m_ + 1) / 2 ? 1 : 0;
}

// Non-interleaved: virtual stage = device. Interleaved: chunk c of device d is virtual stage
// c*p + d. DualPipe: the reverse direction runs virtual stage k on device p-1-k.
int PipelineRunner::device_of(int vs, int direction) const {
  if (schedule_ == ScheduleKind::kDualPipe) return direction == 0 ? vs : pp_ - 1 - vs;
  return vs % pp_;
}
int PipelineRunner::chunk_of(int vs, int direction) const {
  if (schedule_ == ScheduleKind::kDualPipe) return direction;
  return vs / pp_;
}
int PipelineRunner::virtual_stage(int device, int chunk) const {
  if (schedule_ == ScheduleKind::kDualPipe) return chunk == 0 ? device : pp_ - 1 - device;
  return chunk * pp_ + device;
}

int PipelineRunner::in_flight_limit(int device) const {
  switch (schedule_) {
    case ScheduleKind::kGpipe: return m_;
    case ScheduleKind::k1F1B:
    case ScheduleKind::kZbH1: return pp_ - device;
    case ScheduleKind::kZbH2: return 2 * (pp_ - device) - 1;
    case ScheduleKind::kDualPipe: return pp_ + 1;
    case ScheduleKind::kInterleaved: return m_ * vpp_;
  }
  return m_;
}

void PipeOpSet::insert(const PipeOp& op) {
  auto greater = [](const PipeOp& a, const PipeOp& b) { return b < a; };
  auto it = std::lower_bound(v_.begin(), v_.end(), op, greater);  // first not greater than op
  if (it != v_.end() && !(*it < op)) return;                      // an equivalent op is present
  v_.insert(it, op);
}

std::size_t PipeOpSet::rank(const PipeOp& op) const {
  auto greater = [](const PipeOp& a, const PipeOp& b) { return b < a; };
  // v_ is descending: the ops below `op` are those from the first one not greater than it on
  // that are also not equivalent to it.
  auto it = std::lower_bound(v_.begin(), v_.end(), op, greater);
  if (it != v_.end() && !(*it < op)) ++it;
  return static_cast<std::size_t>(v_.end() - it);
}

bool PipeOpSet::erase(const PipeOp& op) {
  auto greater = [](const PipeOp& a, const PipeOp& b) { return b < a; };
  auto it = std::lower_bound(v_.begin(), v_.end(), op, greater);
  if (it == v_.end() || *it < op) return false;
  v_.erase(it);
  return true;
}

PipelineRunner::PipelineRunner(ScheduleKind schedule, int pp, int vpp, int micro_batches) {
  reset(schedule, pp, vpp, micro_batches);
}

void PipelineRunner::reset(ScheduleKind schedule, int pp, int vpp, int micro_batches) {
  schedule_ = schedule;
  pp_ = std::max(1, pp);
  vpp_ = schedule == ScheduleKind::kInterleaved ? std::max(1, vpp) : 1;
  m_ = std::max(1, micro_batches);
  if (dev_.size() < static_cast<std::size_t>(pp_)) dev_.resize(static_cast<std::size_t>(pp_));
  for (int d = 0; d < pp_; ++d) {
    Device& dv = dev_[d];
    dv.ready_f.clear();
    dv.ready_b.clear();
    dv.ready_w.clear();
    dv.arrived.clear();
    dv.order.clear();
    dv.f_done = dv.b_done = dv.w_done = dv.f_total = 0;
    dv.f_dir[0] = dv.f_dir[1] = dv.b_dir[0] = dv.b_dir[1] = 0;
    dv.next = 0;
  }
  if (schedule_ == ScheduleKind::kDualPipe) vpp_ = 2;  // two directions per device
  const int ops_per_pass = split_backward() ? 3 : 2;
  // Every micro-batch passes every virtual stage of its direction once.
  total_ops_ = int64_t{m_} * stages_in_direction() * ops_per_pass;
  remaining_ = total_ops_;
  for (int mb = 0; mb < m_; ++mb) {
    const int dir = direction_of_micro_batch(mb);
    for (int vs = 0; vs < stages_in_direction(); ++vs) ++dev_[device_of(vs, dir)].f_total;
  }
  // Inputs of the first virtual stage are present from the start (added last first: the sets
  // keep their smallest at the back, so each lands there without moving the others).
  for (int mb = m_ - 1; mb >= 0; --mb) {
    const int dir = direction_of_micro_batch(mb);
    PipeOp f{PipeOpKind::kForward, mb, chunk_of(0, dir), !split_backward()};
    arrive(Handoff{device_of(0, dir), f, false});
  }
  if (schedule_ == ScheduleKind::kInterleaved) {
    // Megatron-LM schedules.py (interleaved): warm-up, steady 1F1B, cool-down.
    const int total = m_ * vpp_;
    for (int d = 0; d < pp_; ++d) {
      auto fwd = [&](int k) {
        return PipeOp{PipeOpKind::kForward, (k / (pp_ * vpp_)) * pp_ + k % pp_, (k / pp_) % vpp_, true};
      };
      auto bwd = [&](int k) {
        return PipeOp{PipeOpKind::kBackward, (k / (pp_ * vpp_)) * pp_ + k % pp_,
                      vpp_ - 1 - (k / pp_) % vpp_, true};
      };
      const int warmup = std::min(total, (pp_ - d - 1) * 2 + (vpp_ - 1) * pp_);
      auto& order = dev_[d].order;
      int f = 0, b = 0;
      for (; f < warmup; ++f) order.push_back(fwd(f));
      while (f < total) {
        order.push_back(fwd(f++));
        order.push_back(bwd(b++));
      }
      while (b < total) order.push_back(bwd(b++));
    }
  } else if (schedule_ == ScheduleKind::k1F1B) {
    // Megatron-LM schedules.py (non-interleaved): min(p-s-1, m) warm-up forwards, then one F one
    // B, then the cool-down backwards. A static order, not "a ready B first": with an uneven
    // stage (a straggler, a heavy last stage) the greedy rule batches B's and F's and leaves the
    // slow stage idle, which Megatron's order does not.
    for (int d = 0; d < pp_; ++d) {
      const int warmup = std::min(m_, pp_ - d - 1);
      auto& order = dev_[d].order;
      int f = 0, b = 0;
      for (; f < warmup; ++f) order.push_back(PipeOp{PipeOpKind::kForward, f, 0, true});
      while (f < m_) {
        order.push_back(PipeOp{PipeOpKind::kForward, f++, 0, true});
        order.push_back(PipeOp{PipeOpKind::kBackward, b++, 0, true});
      }
      while (b < m_) order.push_back(PipeOp{PipeOpKind::kBackward, b++, 0, true});
    }
  }
}

std::optional<PipeOp> PipelineRunner::pick(int device) {
  Device& d = dev_[device];
  if (static_order()) {
    if (d.next >= d.order.size()) return std::nullopt;
    const PipeOp want = d.order[d.next];
    PipeOp key = want;
    key.with_weight_grad = true;
    if (!d.arrived.erase(key)) return std::nullopt;
    ++d.next;
    return want;
  }
  auto take = [](PipeOpSet& s) { return s.take_smallest(); };
  // Micro-batches whose backward has not run yet hold their activations; zero-bubble schedules
  // defer W into idle time, holding only W's inputs meanwhile (the in-flight limit bounds B).
  const int in_flight = d.f_done - d.b_done;
  const int limit = in_flight_limit(device);
  if (schedule_ == ScheduleKind::kGpipe) {
    if (!d.ready_f.empty()) return take(d.ready_f);
    if (d.f_done == d.f_total && !d.ready_b.empty()) return take(d.ready_b);
    return std::nullopt;
  }
  // Deferred weight gradients keep W's inputs alive: a device may hold at most the peak that
  // the schedule's first stage holds anyway (p for ZB-H1 and DualPipe, 2p-1 for ZB-H2), so
  // deferring W never raises the peak activation memory above the schedule's.
  const int hold_limit = schedule_ == ScheduleKind::kZbH2 ? 2 * pp_ - 1 : pp_ + (schedule_ == ScheduleKind::kDualPipe);
  if (!d.ready_w.empty() && d.f_done - d.w_done >= hold_limit) return take(d.ready_w);
  if (!d.ready_b.empty()) return take(d.ready_b);
  if (schedule_ == ScheduleKind::kDualPipe) {
    // Each direction keeps its own 1F1B limit (p - s for its stage s; the two sum to p + 1):
    // one shared limit lets both directions fill a device with forwards whose backwards wait
    // on the other end, which deadlocks once m/2 exceeds it.
    // The smallest ready forward of a direction under its limit. Direction 0 holds the
    // micro-batches below (m+1)/2, so its forwards sort before direction 1's: the first of
    // direction 1 is found by its rank instead of a scan.
    const bool open[2] = {d.f_dir[0] - d.b_dir[0] < pp_ - device, d.f_dir[1] - d.b_dir[1] < device + 1};
    if (in_flight < limit && (open[0] || open[1])) {
      const std::size_t i = open[0] ? 0 : d.ready_f.rank(PipeOp{PipeOpKind::kForward, (m_ + 1) / 2, 0, false});
      if (i < d.ready_f.size() && open[d.ready_f.ascending(i).chunk]) {
        const PipeOp op = d.ready_f.ascending(i);
        d.ready_f.erase_ascending(i);
        return op;
      }
    }
  } else if (!d.ready_f.empty() && in_flight < limit) {
    return take(d.ready_f);
  }
  if (!d.ready_w.empty()) return take(d.ready_w);
  return std::nullopt;
}

std::vector<Handoff> PipelineRunner::finish(int device, const PipeOp& op) {
  Handoff out[kMaxHandoffs];
  const int n = finish(device, op, out);
  return std::vector<Handoff>(out, out + n);
}

int PipelineRunner::finish(int device, const PipeOp& op, Handoff out[kMaxHandoffs]) {
  Device& d = dev_[device];
  --remaining_;
  int n = 0;
  const int dir = schedule_ == ScheduleKind::kDualPipe ? op.chunk : 0;
  const int vs = virtual_stage(device, op.chunk);
  const int last = stages_in_direction() - 1;
  const bool split = split_backward();
  switch (op.kind) {
    case PipeOpKind::kForward: {
      ++d.f_done;
      ++d.f_dir[dir];
      if (vs < last) {
        const int nd = device_of(vs + 1, dir);
        out[n++] = Handoff{nd, PipeOp{PipeOpKind::kForward, op.micro_batch, chunk_of(vs + 1, dir), !split},
                       nd != device};
      } else {  // the loss: backward starts on the same device
        out[n++] = Handoff{device, PipeOp{PipeOpKind::kBackward, op.micro_batch, op.chunk, !split}, false};
      }
      break;
    }
    case PipeOpKind::kBackward: {
      ++d.b_done;
      ++d.b_dir[dir];
      if (!split) ++d.w_done;
      if (vs > 0) {
        const int nd = device_of(vs - 1, dir);
        out[n++] = Handoff{nd, PipeOp{PipeOpKind::kBackward, op.micro_batch, chunk_of(vs - 1, dir), !split},
                       nd != device};
      }
      if (split)
        out[n++] = Handoff{device, PipeOp{PipeOpKind::kBackwardWeight, op.micro_batch, op.chunk, false}, false};
      break;
    }
    case PipeOpKind::kBackwardWeight:
      ++d.w_done;
      break;
  }
  return n;
}

void PipelineRunner::arrive(const Handoff& h) {
  Device& d = dev_[h.device];
  if (static_order()) {
    PipeOp key = h.op;
    key.with_weight_grad = true;
    d.arrived.insert(key);
    return;
  }
  switch (h.op.kind) {
    case PipeOpKind::kForward: d.ready_f.insert(h.op); break;
    case PipeOpKind::kBackward: d.ready_b.insert(h.op); break;
    case PipeOpKind::kBackwardWeight: d.ready_w.insert(h.op); break;
  }
}

}  // namespace trainsim
