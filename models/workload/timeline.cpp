#include "models/workload/timeline.hpp"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <string>

namespace trainsim {

Timeline play_schedule(ScheduleKind schedule, int pp, int vpp, int micro_batches,
                       const std::vector<StageCosts>& costs, double p2p_s,
                       PlaybackObserver* observer) {
  PipelineRunner runner(schedule, pp, vpp, micro_batches);
  const int n = runner.devices();
  Timeline t;
  t.busy_s.assign(n, 0.0);
  t.ops.reserve(static_cast<std::size_t>(runner.total_ops()));
  std::vector<double> free_at(n, 0.0);
  std::vector<bool> busy(n, false);
  // Events: an op completing on a device, or an input arriving.
  struct Event {
    double time;
    int64_t seq;
    bool completion;
    int device;
    PipeOp op;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  int64_t seq = 0;
  auto cost = [&](int device, const PipeOp& op) {
    const StageCosts& c = costs[std::min<std::size_t>(device, costs.size() - 1)];
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
  std::vector<char> changed(n, 1);
  std::vector<int> asked;
  asked.reserve(n);
  for (int d = 0; d < n; ++d) asked.push_back(d);
  auto touch = [&](int d) {
    if (!changed[d]) asked.push_back(d);
    changed[d] = 1;
  };
  auto dispatch = [&](double now) {
    std::sort(asked.begin(), asked.end());
    for (int d : asked) {
      changed[d] = 0;
      if (busy[d]) continue;
      if (auto op = runner.pick(d)) {
        const double start = std::max(now, free_at[d]);
        const double end = start + cost(d, *op);
        busy[d] = true;
        free_at[d] = end;
        t.busy_s[d] += end - start;
        t.ops.push_back({d, *op, start, end});
        if (observer) observer->started(d, *op, start, end);
        events.push({end, seq++, true, d, *op});
      }
    }
    asked.clear();
  };
  dispatch(0.0);
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    if (e.completion) {
      busy[e.device] = false;
      touch(e.device);
      t.makespan_s = std::max(t.makespan_s, e.time);
      Handoff out[PipelineRunner::kMaxHandoffs];
      const int handoffs = runner.finish(e.device, e.op, out);
      for (int i = 0; i < handoffs; ++i) {
        const Handoff& h = out[i];
        if (observer) observer->handed_off(e.device, e.op, h, e.time);
        if (h.p2p) {
          events.push({e.time + p2p_s, seq++, false, h.device, h.op});
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
    // Dispatch once every event at this instant is in.
    if (events.empty() || events.top().time > e.time) dispatch(e.time);
  }
  if (!runner.done())  // a schedule rule that stalls is a bug, not a result
    throw std::logic_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +
                           ": schedule stalled before every op ran");
  double idle = 0;
  for (int d = 0; d < n; ++d) idle += t.makespan_s > 0 ? 1.0 - t.busy_s[d] / t.makespan_s : 0.0;
  t.bubble_fraction = idle / n;
  return t;
}

}  // namespace trainsim
