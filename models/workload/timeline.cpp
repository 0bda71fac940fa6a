#include "models/workload/timeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trainsim {
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
  PipelineRunner runner{ScheduleKind::k1F1B, 1, 1, 1};
  std::vector<Event> events;  // a min-heap on (time, seq)
  std::vector<double> free_at;
  std::vector<char> busy, changed;
  std::vector<int> asked;
};

// One playback. With a Timeline every op is recorded; without one only the makespan is kept,
// and a zero-delay input is delivered at once instead of as an event at the same instant (the
// same state at the next dispatch: dispatches wait for every event of their instant, and the
// ready sets do not depend on the order inputs came in).
double play(Player& pl, ScheduleKind schedule, int pp, int vpp, int micro_batches,
            const StageCosts* costs, std::size_t stages, double p2p_s, PlaybackObserver* observer,
            Timeline* t) {
  PipelineRunner& runner = pl.runner;
  runner.reset(schedule, pp, vpp, micro_batches);
  const int n = runner.devices();
  if (t) {
    t->busy_s.assign(n, 0.0);
    t->ops.reserve(static_cast<std::size_t>(runner.total_ops()));
  }
  const bool deliver_at_once = !t && !observer && p2p_s == 0.0;
  pl.free_at.assign(n, 0.0);
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
  auto cost = [&](int device, const PipeOp& op) {
    const StageCosts& c = costs[std::min<std::size_t>(device, stages - 1)];
    switch (op.kind) {
      case PipeOpKind::kForward: return c.forward_s;
      case PipeOpKind::kBackward:
        return op.with_weight_grad ? c.backward_s + c.backward_weight_s : c.backward_s;
      case PipeOpKind::kBackwardWeight: return c.backward_weight_s;
    }
    return 0.0;
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
        const double end = start + cost(d, *op);
        pl.busy[d] = 1;
        pl.free_at[d] = end;
        if (t) {
          t->busy_s[d] += end - start;
          t->ops.push_back({d, *op, start, end});
        }
        if (observer) observer->started(d, *op, start, end);
        push({end, seq++, true, d, *op});
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
          push({e.time + p2p_s, seq++, false, h.device, h.op});
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
  if (!runner.done())  // a schedule rule that stalls is a bug, not a result
    throw std::logic_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +
                           ": schedule stalled before every op ran");
  return makespan;
}

}  // namespace

Timeline play_schedule(ScheduleKind schedule, int pp, int vpp, int micro_batches,
                       const std::vector<StageCosts>& costs, double p2p_s,
                       PlaybackObserver* observer) {
  Player pl;
  Timeline t;
  t.makespan_s = play(pl, schedule, pp, vpp, micro_batches, costs.data(), costs.size(), p2p_s, observer, &t);
  const int n = static_cast<int>(t.busy_s.size());
  double idle = 0;
  for (int d = 0; d < n; ++d) idle += t.makespan_s > 0 ? 1.0 - t.busy_s[d] / t.makespan_s : 0.0;
  t.bubble_fraction = idle / n;
  return t;
}

double play_makespan_s(ScheduleKind schedule, int pp, int vpp, int micro_batches, const StageCosts* costs,
                       std::size_t stages, double p2p_s) {
  thread_local Player pl;
  return play(pl, schedule, pp, vpp, micro_batches, costs, stages, p2p_s, nullptr, nullptr);
}

}  // namespace trainsim
