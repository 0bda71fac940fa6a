#include "models/schedules/schedule_order.hpp"

#include <algorithm>
#include <cassert>
#include <map>
#include <stdexcept>
#include <tuple>

namespace trainsim {

const char* to_string(PipeOpKind kind) {
  switch (kind) {
    case PipeOpKind::kForward: return "F";
    case PipeOpKind::kBackward: return "B";
    case PipeOpKind::kBackwardWeight: return "W";
  }
  return "?";
}

int PipelineRunner::stages_in_direction() const { return dual_ ? pp_ : pp_ * vpp_; }

int PipelineRunner::direction_of_micro_batch(int mb) const { return dual_ && mb >= (m_ + 1) / 2 ? 1 : 0; }

// One direction: virtual stage = device, or chunk c of device d is virtual stage c*p + d
// (virtual stages). Bidirectional: the reverse direction runs virtual stage k on device p-1-k.
int PipelineRunner::device_of(int vs, int direction) const {
  if (dual_) return direction == 0 ? vs : pp_ - 1 - vs;
  return vs % pp_;
}
int PipelineRunner::chunk_of(int vs, int direction) const {
  if (dual_) return direction;
  return vs / pp_;
}
int PipelineRunner::virtual_stage(int device, int chunk) const {
  if (dual_) return chunk == 0 ? device : pp_ - 1 - device;
  return chunk * pp_ + device;
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

std::vector<PipeOp>::const_iterator PipeOpSet::find(const PipeOp& op) const {
  auto greater = [](const PipeOp& a, const PipeOp& b) { return b < a; };
  auto it = std::lower_bound(v_.begin(), v_.end(), op, greater);
  return it != v_.end() && !(*it < op) ? it : v_.end();
}

bool PipeOpSet::contains(const PipeOp& op) const { return find(op) != v_.end(); }

bool PipeOpSet::erase(const PipeOp& op) {
  const auto it = find(op);
  if (it == v_.end()) return false;
  v_.erase(it);
  return true;
}

PipelineRunner::PipelineRunner(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches) {
  reset(schedule, pp, vpp, micro_batches);
}

void PipelineRunner::reset(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches) {
  reset(schedule, pp, vpp, micro_batches, false);
}

void PipelineRunner::rule_orders(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches,
                                 std::vector<std::vector<PipeOp>>& orders) {
  PipelineRunner r;
  r.reset(schedule, pp, vpp, micro_batches, true);
  const int n = r.devices();
  orders.assign(static_cast<std::size_t>(n), {});
  // Per device, the end and the op it runs (end -1: idle); ops ending together finish together.
  std::vector<std::pair<int64_t, PipeOp>> running(static_cast<std::size_t>(n), {-1, PipeOp{}});
  int64_t now = 0;
  Handoff out[kMaxHandoffs];
  while (!r.done()) {
    for (int d = 0; d < n; ++d) {
      if (running[d].first >= 0) continue;
      if (auto op = r.pick(d)) {
        orders[d].push_back(*op);
        running[d] = {now + 1, *op};
      }
    }
    int next = -1;
    for (int d = 0; d < n; ++d)
      if (running[d].first >= 0 && (next < 0 || running[d].first < running[next].first)) next = d;
    if (next < 0) throw std::logic_error("PipelineRunner::rule_orders: the schedule's rule stalled");
    now = running[next].first;
    for (int d = 0; d < n; ++d) {
      if (running[d].first != now) continue;
      const PipeOp op = running[d].second;
      running[d].first = -1;
      const int k = r.finish(d, op, out);
      for (int i = 0; i < k; ++i) r.arrive(out[i]);
    }
  }
}

void PipelineRunner::reset(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches, bool rule) {
  schedule_ = &schedule;
  const bool fixed = !rule && schedule.rule_order_fixed();
  static_ = !rule && (schedule.has_static_order(std::max(1, pp), std::max(1, micro_batches)) || fixed);
  split_ = schedule.splits_backward();
  dual_ = schedule.bidirectional();
  pp_ = std::max(1, pp);
  // A bidirectional schedule runs two directions per device.
  vpp_ = dual_ ? 2 : schedule.layer_chunks(vpp);
  m_ = std::max(1, micro_batches);
  if (dev_.size() < static_cast<std::size_t>(pp_)) dev_.resize(static_cast<std::size_t>(pp_));
  for (int d = 0; d < pp_; ++d) {
    PipeDevice& dv = dev_[d];
    dv.ready_f.clear();
    dv.ready_b.clear();
    dv.ready_w.clear();
    dv.arrived.clear();
    dv.order.clear();
    dv.f_done = dv.b_done = dv.w_done = dv.f_total = 0;
    dv.f_dir[0] = dv.f_dir[1] = dv.b_dir[0] = dv.b_dir[1] = 0;
    dv.next = 0;
    dv.in_flight_limit = schedule.in_flight_limit(pp_, vpp_, m_, d);
    dv.weight_hold_limit = schedule.weight_hold_limit(pp_);
  }
  const int ops_per_pass = split_ ? 3 : 2;
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
    PipeOp f{PipeOpKind::kForward, mb, chunk_of(0, dir), !split_};
    arrive(Handoff{device_of(0, dir), f, false});
  }
  if (fixed) {
    // Plan searches play the same few shapes many times: the orders are kept per shape. The
    // runner rule_orders plays is a static one only while it is constructed, and a static
    // order does not use this map, so the entry stays valid while the orders are written.
    struct Key {
      const PipelineSchedule* schedule;
      int pp, vpp, m;
      bool operator<(const Key& o) const {
        return std::tie(schedule, pp, vpp, m) < std::tie(o.schedule, o.pp, o.vpp, o.m);
      }
    };
    thread_local std::map<Key, std::vector<std::vector<PipeOp>>> kept;
    if (kept.size() > 256) kept.clear();
    auto [it, added] = kept.try_emplace(Key{&schedule, pp_, vpp, m_});
    if (added) rule_orders(schedule, pp_, vpp, m_, it->second);
    for (int d = 0; d < pp_; ++d) dev_[d].order = it->second[d];
  } else if (static_) {
    for (int d = 0; d < pp_; ++d) schedule.static_order(pp_, vpp_, m_, d, dev_[d].order);
  }
}

std::optional<PipeOp> PipelineRunner::pick(int device) {
  PipeDevice& d = dev_[device];
  if (static_) {
    if (d.next >= d.order.size()) return std::nullopt;
    const PipeOp want = d.order[d.next];
    PipeOp key = want;
    key.with_weight_grad = true;
    if (want.pairs_next) {  // the pair starts once both inputs are in
      PipeOp partner = d.order[d.next + 1];
      partner.with_weight_grad = true;
      if (!d.arrived.contains(partner)) return std::nullopt;
    }
    if (!d.arrived.erase(key)) return std::nullopt;
    ++d.next;
    return want;
  }
  return schedule_->pick(d, device, pp_, m_);
}

std::optional<PipeOp> PipelineRunner::pick_partner(int device, PipeOp& first) {
  if (first.kind != PipeOpKind::kBackward || !schedule_->overlaps_forward_backward()) return std::nullopt;
  if (static_) {  // the order names the pair: the op after `first`, whose input pick() saw in
    if (!first.pairs_next) return std::nullopt;
    PipeDevice& d = dev_[device];
    const PipeOp partner = d.order[d.next++];
    PipeOp key = partner;
    key.with_weight_grad = true;
    d.arrived.erase(key);
    return partner;
  }
  std::optional<PipeOp> partner = schedule_->forward_beside(dev_[device], device, pp_, m_);
  if (partner) first.with_weight_grad = true;
  return partner;
}

std::vector<Handoff> PipelineRunner::finish(int device, const PipeOp& op) {
  Handoff out[kMaxHandoffs];
  const int n = finish(device, op, out);
  return std::vector<Handoff>(out, out + n);
}

int PipelineRunner::finish(int device, const PipeOp& op, Handoff out[kMaxHandoffs]) {
  PipeDevice& d = dev_[device];
  --remaining_;
  int n = 0;
  const int dir = dual_ ? op.chunk : 0;
  const int vs = virtual_stage(device, op.chunk);
  const int last = stages_in_direction() - 1;
  const bool split = split_;
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
      const bool with_w = !split || op.with_weight_grad;  // B + W, or a paired B (pick_partner)
      if (with_w) ++d.w_done;
      if (split && with_w) --remaining_;  // the W it carried will not run on its own
      if (vs > 0) {
        const int nd = device_of(vs - 1, dir);
        out[n++] = Handoff{nd, PipeOp{PipeOpKind::kBackward, op.micro_batch, chunk_of(vs - 1, dir), !split},
                       nd != device};
      }
      if (!with_w)
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
  PipeDevice& d = dev_[h.device];
  if (static_) {
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
