#include "models/workload/timeline.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

namespace trainsim {

bool TransferDelays::none() const {
  if (!boundary_s) return uniform_s == 0.0;
  return std::all_of(boundary_s, boundary_s + boundaries, [](double s) { return s == 0.0; });
}

double stage_op_cost(const StageCosts& c, const PipeOp& op) {
  const bool reverse = op.chunk == 1 && c.reverse_forward_s >= 0;
  const double f = reverse ? c.reverse_forward_s : c.forward_s;
  const double b = reverse ? c.reverse_backward_s : c.backward_s;
  const double w = reverse ? c.reverse_backward_weight_s : c.backward_weight_s;
  switch (op.kind) {
    case PipeOpKind::kForward: return f;
    case PipeOpKind::kBackward: return op.with_weight_grad ? b + w : b;
    case PipeOpKind::kBackwardWeight: return w;
  }
  return 0.0;
}

namespace {

// Events: an op completing on a device, or an input arriving.
struct Event {
  double time;
  int64_t seq;
  bool completion;
  int device;
  PipeOp op;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

// The player's state, kept between playbacks of one thread (the makespan-only route allocates
// nothing once its buffers are large enough).
struct Player {
  PipelineRunner runner;
  std::vector<Event> events;  // a min-heap on (time, seq)
  std::vector<double> free_at;
  std::vector<char> busy, changed;
  std::vector<int> asked;
  // The static-order route: when each (virtual stage, micro-batch)'s F and B end, and each
  // device's place in its order.
  std::vector<double> f_end, b_end;
  std::vector<std::size_t> next;
  std::vector<std::vector<PipeOp>> fixed_orders;  // the fixed-delay route's, per device
  std::vector<PipeOp> running;  // the completions-only route: the op each busy device runs
  std::vector<std::optional<PipeOp>> partner;  // ... and the forward beside it, in a pair
  std::vector<std::pair<double, int>> ends;
  // Per device, its first op's start and its last op's end, kept where the schedule's steps
  // overlap (`spans`, set before a playback; step_span_s).
  bool spans = false;
  std::vector<double> first_at, last_at;
  void clear_spans(int n) {
    if (!spans) return;
    first_at.assign(static_cast<std::size_t>(n), -1.0);
    last_at.assign(static_cast<std::size_t>(n), 0.0);
  }
  void ran(int d, double start, double end) {
    if (!spans) return;
    if (first_at[d] < 0) first_at[d] = start;
    last_at[d] = std::max(last_at[d], end);
  }
};

// The pipeline's time per step: the makespan, or where the schedule's steps overlap
// (ScheduleTraits::steps_overlap) the longest device span, first op to last: back-to-back steps
// shifted by it keep every device's order and every input's arrival, and no device runs two
// steps at once.
double step_span_s(const Player& pl, double makespan) {
  if (!pl.spans) return makespan;
  double span = 0;
  for (std::size_t d = 0; d < pl.first_at.size(); ++d)
    if (pl.first_at[d] >= 0) span = std::max(span, pl.last_at[d] - pl.first_at[d]);
  return span;
}

// A backward `b` that carries its W and the forward `f` beside it, as one program: the pair's
// time; `saved` gets what it saves against the two alone.
double pair_cost(const StageCosts& c, const PipeOp& b, const PipeOp& f, double& saved) {
  const double pair = c.pair_s[f.chunk & 1][b.chunk & 1];  // F with B + W
  saved = stage_op_cost(c, b) + stage_op_cost(c, f) - pair;
  return pair;
}

// What device d runs for `op`, just picked: the op alone, or the pair of it (a backward, which
// then carries its W: pick_partner) and the forward the rule starts beside it where the costs
// pair ops (`partner`, then set). Returns the time; `saved` gets what the pair saved against its
// ops alone, the backward with its W (0 for an op alone).
double run_cost(PipelineRunner& runner, const StageCosts* costs, std::size_t stages, int device, PipeOp& op,
                std::optional<PipeOp>& partner, double& saved) {
  const StageCosts& c = costs[std::min<std::size_t>(device, stages - 1)];
  saved = 0;
  partner = c.pairs() ? runner.pick_partner(device, op) : std::nullopt;
  return partner ? pair_cost(c, op, *partner, saved) : stage_op_cost(c, op);
}

[[noreturn]] void stalled(int line) {  // a schedule rule that stalls is a bug, not a result
  throw std::logic_error(std::string(__FILE__) + ":" + std::to_string(line) +
                         ": schedule stalled before every op ran");
}

// The playback's makespan for a schedule whose devices run a fixed order (a static order),
// without events. In the event loop a device starts its next op at the instant it is asked
// after both its previous op has ended and that op's input has arrived, i.e. at
// max(free, ready), where ready is the producer's end (plus the transfer when the producer is another
// device); the loop's makespan is the largest end. Here every op is given that start directly,
// device by device as far as its inputs are known: the same sums and maxima of the same doubles,
// so the same makespan, bit for bit (Timeline tests compare the two).
template <class OrderOf>
double play_static_order(Player& pl, int micro_batches, const StageCosts* costs, std::size_t stages,
                         TransferDelays delays, double* pair_saved_s, OrderOf order_of) {
  PipelineRunner& runner = pl.runner;  // reset for this playback by the caller
  const int n = runner.devices();
  const int m = std::max(1, micro_batches);
  const int last = runner.virtual_stages() - 1;
  const std::size_t slots = static_cast<std::size_t>(last + 1) * static_cast<std::size_t>(m);
  pl.f_end.assign(slots, -1.0);  // -1: not run yet (ends are >= 0)
  pl.b_end.assign(slots, -1.0);
  pl.next.assign(static_cast<std::size_t>(n), 0);
  pl.free_at.assign(static_cast<std::size_t>(n), 0.0);
  pl.clear_spans(n);
  double* f_end = pl.f_end.data();
  double* b_end = pl.b_end.data();
  // The device before d in an op's direction (a forward's producer) and the one after it (a
  // backward's): the neighbours, wrapping round for interleaved chunks; reversed for the second
  // direction of a bidirectional schedule.
  const bool dual = runner.schedule().bidirectional();
  // When op, at slot `at` of virtual stage vs, has its input on device d (-1: its producer has
  // not run yet).
  const auto ready_at = [&](int d, const PipeOp& op, int vs, std::size_t at) -> double {
    const bool reverse = dual && op.chunk == 1;
    if (op.kind == PipeOpKind::kForward) {
      if (vs == 0) return 0;
      const double e = f_end[at - m];
      if (e < 0) return -1;
      const int from = reverse ? d + 1 : (d + n - 1) % n;
      return from != d ? e + delays.between(from, d, n) : e;
    }
    if (op.kind == PipeOpKind::kBackwardWeight) return b_end[at];  // its own B's inputs
    if (vs == last) return f_end[at];                               // the loss: this device's F
    const double e = b_end[at + m];
    if (e < 0) return -1;
    const int from = reverse ? d - 1 : (d + 1) % n;
    return from != d ? e + delays.between(from, d, n) : e;
  };
  const auto ended = [&](const PipeOp& op, std::size_t at, double end) {
    if (op.kind == PipeOpKind::kForward) f_end[at] = end;
    else if (op.kind == PipeOpKind::kBackward) b_end[at] = end;
  };
  // A backward that carries its W in a schedule that splits them (a static order's choice)
  // stands for both ops: total_ops() counts the W.
  const bool split = runner.schedule().splits_backward();
  const auto ops_in = [&](const PipeOp& op) {
    return 1 + (split && op.kind == PipeOpKind::kBackward && op.with_weight_grad ? 1 : 0);
  };
  double makespan = 0;
  int64_t left = runner.total_ops();
  while (left > 0) {
    int64_t ran = 0;
    for (int d = 0; d < n; ++d) {
      const std::vector<PipeOp>& order = order_of(d);
      std::size_t& i = pl.next[static_cast<std::size_t>(d)];
      double& free = pl.free_at[static_cast<std::size_t>(d)];
      const StageCosts& c = costs[std::min<std::size_t>(d, stages - 1)];
      for (; i < order.size(); ++i) {
        const PipeOp& op = order[i];
        const int vs = runner.virtual_stage(d, op.chunk);
        const std::size_t at = static_cast<std::size_t>(vs) * m + op.micro_batch;
        double ready = ready_at(d, op, vs, at);
        if (ready < 0) break;
        std::size_t f_at = 0;
        if (op.pairs_next) {  // the backward and the forward after it start once both inputs are in
          const PipeOp& f = order[i + 1];
          const int f_vs = runner.virtual_stage(d, f.chunk);
          f_at = static_cast<std::size_t>(f_vs) * m + f.micro_batch;
          const double f_ready = ready_at(d, f, f_vs, f_at);
          if (f_ready < 0) break;
          ready = std::max(ready, f_ready);
        }
        // Paired where the costs pair ops, as one program; otherwise the forward runs after.
        const PipeOp* partner = op.pairs_next && c.pairs() ? &order[i + 1] : nullptr;
        double saved = 0;
        const double start = std::max(free, ready);
        const double end = start + (partner ? pair_cost(c, op, *partner, saved) : stage_op_cost(c, op));
        if (pair_saved_s) pair_saved_s[d] += saved;
        pl.ran(d, start, end);
        free = end;
        ended(op, at, end);
        ran += ops_in(op);
        if (partner) {
          ended(*partner, f_at, end);
          ++i;
          ++ran;
        }
        makespan = std::max(makespan, end);
      }
    }
    if (ran == 0) stalled(__LINE__);
    left -= ran;
  }
  return makespan;
}

// The event loop for the makespan-only route with zero-delay transfers, on completions alone:
// every input is delivered when it is produced, so the only events are op ends, at most one per
// device, kept in a small heap of (end, device). Every device ending at the next instant is
// completed (in any order: ready sets and counters do not depend on it), then the devices those
// completions touched are asked (in any order: a pick reads and changes its own device only);
// an idle device starts at the instant it is asked. The same states at the same instants as
// play() with deliver_at_once, hence the same makespan, without the events' sequence numbers,
// the sort of the devices asked or the op copies of the full route.
double play_completions(Player& pl, const StageCosts* costs, std::size_t stages, double* pair_saved_s) {
  PipelineRunner& runner = pl.runner;  // reset for this playback by the caller
  const int n = runner.devices();
  pl.busy.assign(static_cast<std::size_t>(n), 0);
  pl.changed.assign(static_cast<std::size_t>(n), 1);
  pl.running.assign(static_cast<std::size_t>(n), PipeOp{});
  pl.partner.assign(static_cast<std::size_t>(n), std::nullopt);
  pl.ends.clear();
  pl.clear_spans(n);
  std::vector<int>& asked = pl.asked;
  asked.clear();
  for (int d = 0; d < n; ++d) asked.push_back(d);
  char* busy = pl.busy.data();
  char* changed = pl.changed.data();
  PipeOp* running = pl.running.data();
  std::vector<std::pair<double, int>>& ends = pl.ends;  // a min-heap of (end, device)
  const auto later = [](const std::pair<double, int>& a, const std::pair<double, int>& b) { return a.first > b.first; };
  const auto touch = [&](int d) {
    if (!changed[d]) asked.push_back(d);
    changed[d] = 1;
  };
  double now = 0, makespan = 0;
  for (;;) {
    // A pick changes only its own device, so the devices may be asked in any order.
    for (int d : asked) {
      changed[d] = 0;
      if (busy[d]) continue;
      if (auto op = runner.pick(d)) {
        busy[d] = 1;
        double saved = 0;
        const double cost = run_cost(runner, costs, stages, d, *op, pl.partner[d], saved);
        running[d] = *op;
        if (pair_saved_s) pair_saved_s[d] += saved;
        pl.ran(d, now, now + cost);
        ends.emplace_back(now + cost, d);  // idle since: starts now
        std::push_heap(ends.begin(), ends.end(), later);
      }
    }
    asked.clear();
    if (ends.empty()) break;
    now = ends.front().first;
    makespan = std::max(makespan, now);
    while (!ends.empty() && ends.front().first == now) {
      std::pop_heap(ends.begin(), ends.end(), later);
      const int d = ends.back().second;
      ends.pop_back();
      busy[d] = 0;
      touch(d);
      for (int k = 0; k < (pl.partner[d] ? 2 : 1); ++k) {
        Handoff out[PipelineRunner::kMaxHandoffs];
        const int handoffs = runner.finish(d, k == 0 ? running[d] : *pl.partner[d], out);
        for (int i = 0; i < handoffs; ++i) {
          runner.arrive(out[i]);
          touch(out[i].device);
        }
      }
    }
  }
  if (!runner.done()) stalled(__LINE__);
  return makespan;
}

// One playback. With a Timeline every op is recorded; without one only the makespan is kept,
// and a zero-delay input is delivered at once instead of as an event at the same instant (the
// same state at the next dispatch: dispatches wait for every event of their instant, and the
// ready sets do not depend on the order inputs came in).
double play(Player& pl, const PipelineSchedule& schedule, int pp, int vpp, int micro_batches,
            const StageCosts* costs, std::size_t stages, TransferDelays delays, PlaybackObserver* observer,
            Timeline* t, double* pair_saved_s) {
  PipelineRunner& runner = pl.runner;
  runner.reset(schedule, pp, vpp, micro_batches);
  const int n = runner.devices();
  if (t) {
    t->busy_s.assign(n, 0.0);
    t->pair_saved_s.assign(n, 0.0);
    t->ops.reserve(static_cast<std::size_t>(runner.total_ops()));
  }
  const bool deliver_at_once = !t && !observer && delays.none();
  pl.free_at.assign(n, 0.0);
  pl.clear_spans(n);
  pl.busy.assign(n, 0);
  pl.changed.assign(n, 1);
  std::vector<Event>& events = pl.events;
  events.clear();
  std::vector<int>& asked = pl.asked;
  asked.clear();
  for (int d = 0; d < n; ++d) asked.push_back(d);
  double makespan = 0;
  int64_t seq = 0;
  auto push = [&](const Event& e) {
    events.push_back(e);
    std::push_heap(events.begin(), events.end(), std::greater<>{});
  };
  // A device's pick depends on its own state only, which only its completions and arrivals
  // change: after a pick that found nothing, a device is not asked again until one of those.
  // Devices are asked in index order, as a sweep over all of them would.
  auto touch = [&](int d) {
    if (!pl.changed[d]) asked.push_back(d);
    pl.changed[d] = 1;
  };
  auto dispatch = [&](double now) {
    std::sort(asked.begin(), asked.end());
    for (int d : asked) {
      pl.changed[d] = 0;
      if (pl.busy[d]) continue;
      if (auto op = runner.pick(d)) {
        const double start = std::max(now, pl.free_at[d]);
        std::optional<PipeOp> f;
        double saved = 0;
        const double end = start + run_cost(runner, costs, stages, d, *op, f, saved);
        pl.ran(d, start, end);
        if (pair_saved_s) pair_saved_s[d] += saved;
        if (t) t->pair_saved_s[d] += saved;
        pl.busy[d] = 1;
        pl.free_at[d] = end;
        if (t) t->busy_s[d] += end - start;
        // The pair's two ops run over the same interval and finish together, the backward first.
        for (int k = 0; k < (f ? 2 : 1); ++k) {
          const PipeOp& o = k == 0 ? *op : *f;
          if (t) t->ops.push_back({d, o, start, end});
          if (observer) observer->started(d, o, start, end, k == 1 ? &*op : nullptr);
          push({end, seq++, true, d, o});
        }
      }
    }
    asked.clear();
  };
  dispatch(0.0);
  while (!events.empty()) {
    std::pop_heap(events.begin(), events.end(), std::greater<>{});
    const Event e = events.back();
    events.pop_back();
    if (e.completion) {
      pl.busy[e.device] = 0;
      touch(e.device);
      makespan = std::max(makespan, e.time);
      Handoff out[PipelineRunner::kMaxHandoffs];
      const int handoffs = runner.finish(e.device, e.op, out);
      for (int i = 0; i < handoffs; ++i) {
        const Handoff& h = out[i];
        if (observer) observer->handed_off(e.device, e.op, h, e.time);
        if (h.p2p && !deliver_at_once) {
          push({e.time + delays.between(e.device, h.device, n), seq++, false, h.device, h.op});
        } else {
          runner.arrive(h);
          touch(h.device);
        }
      }
    } else {
      const Handoff h{e.device, e.op, true};
      if (observer) observer->arrived(h, e.time);
      runner.arrive(h);
      touch(h.device);
    }
    // Dispatch once every event at this instant is in (events.front() is the earliest).
    if (events.empty() || events.front().time > e.time) dispatch(e.time);
  }
  if (!runner.done()) stalled(__LINE__);
  return makespan;
}

}  // namespace

Timeline play_schedule(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches,
                       const std::vector<StageCosts>& costs, TransferDelays delays,
                       PlaybackObserver* observer) {
  Player pl;
  pl.spans = schedule.steps_overlap();
  Timeline t;
  t.makespan_s = play(pl, schedule, pp, vpp, micro_batches, costs.data(), costs.size(), delays, observer, &t, nullptr);
  t.step_s = step_span_s(pl, t.makespan_s);
  const int n = static_cast<int>(t.busy_s.size());
  double idle = 0;
  for (int d = 0; d < n; ++d) idle += t.step_s > 0 ? 1.0 - t.busy_s[d] / t.step_s : 0.0;
  t.bubble_fraction = idle / n;
  return t;
}

double play_step_s(const PipelineSchedule& schedule, int pp, int vpp, int micro_batches, const StageCosts* costs,
                   std::size_t stages, TransferDelays delays, double* pair_saved_s) {
  thread_local Player pl;
  pl.runner.reset(schedule, pp, vpp, micro_batches);
  pl.spans = schedule.steps_overlap();
  double makespan = 0;
  if (pl.runner.has_static_order()) {
    makespan = play_static_order(pl, micro_batches, costs, stages, delays, pair_saved_s,
                                 [&](int d) -> const std::vector<PipeOp>& { return pl.runner.order_of(d); });
  } else if (schedule.has_fixed_delay_order()) {
    // The order the schedule's ready-op rule reduces to under fixed delays (its file says why).
    const int n = pl.runner.devices();
    if (pl.fixed_orders.size() < static_cast<std::size_t>(n)) pl.fixed_orders.resize(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) {
      pl.fixed_orders[d].clear();
      schedule.fixed_delay_order(n, schedule.layer_chunks(vpp), std::max(1, micro_batches), d, pl.fixed_orders[d]);
    }
    makespan = play_static_order(pl, micro_batches, costs, stages, delays, pair_saved_s,
                                 [&](int d) -> const std::vector<PipeOp>& { return pl.fixed_orders[d]; });
  } else if (delays.none()) {
    makespan = play_completions(pl, costs, stages, pair_saved_s);
  } else {
    makespan = play(pl, schedule, pp, vpp, micro_batches, costs, stages, delays, nullptr, nullptr, pair_saved_s);
  }
  return step_span_s(pl, makespan);
}

}  // namespace trainsim
