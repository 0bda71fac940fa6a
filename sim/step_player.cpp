#include "sim/step_player.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "models/cost/collectives/collective_cost.hpp"
#include "sim/collective_engine.hpp"
#include "sim/collective_plan.hpp"
#include "sim/platform.hpp"

namespace trainsim::sim {
namespace {

// Devices choose their next op once every event of an instant is in (as models' timeline does):
// a flush timer this much later than the instant (completions and timers of one instant all run
// before it). 1e-12 s per decision is far below any op's duration.
constexpr double kDecisionDelayS = 1e-12;

bool carries_weight_grad(const PipeOp& op) {
  return op.kind == PipeOpKind::kBackwardWeight ||
         (op.kind == PipeOpKind::kBackward && op.with_weight_grad);
}

struct Player {
  Platform& plat;
  const Workload& w;
  const RankPlacement& place;
  const StepOptions& opt;
  bool overlap_pp;
  CollectiveEngine engine;
  PipelineRunner runner;
  StepTimeline tl;
  int n = 1;
  bool dual = false;
  std::vector<bool> busy;
  std::vector<bool> dirty;
  bool flush_pending = false;
  std::vector<int> f_started, b_done, blocked_sends;
  std::vector<int> last_op;  // per device: index of its running op
  std::vector<std::vector<int>> wg_started, wg_expected;
  std::vector<int> final_chunks_started;
  std::vector<int> transfer_outstanding;
  std::map<std::tuple<int, int, int, int>, int> input_of;  // (device, kind, mb, chunk) -> transfer
  struct Queue {
    std::deque<int> ready;  // bucket indices
    bool running = false;
  };
  std::vector<Queue> queues;  // per (device, expert)
  std::vector<std::vector<std::vector<int>>> dense_groups, expert_groups;  // per stage
  std::vector<int> bucket_outstanding;
  bool mirror = false;
  int buckets_per_chunk = 8;
  int64_t ops_done = 0;
  int64_t next_progress = 0;
  uint64_t salt = 1;

  Player(Platform& p, const Workload& wl, const RankPlacement& pl, const StepOptions& o, bool opp)
      : plat(p), w(wl), place(pl), opt(o), overlap_pp(opp), engine(p),
        runner(wl.schedule, wl.pp, wl.vpp, wl.micro_batches) {
    n = runner.devices();
    dual = w.schedule == ScheduleKind::kDualPipe && n > 1;
    tl.chunks_per_device = w.schedule == ScheduleKind::kInterleaved ? std::max(1, w.vpp) : (dual ? 2 : 1);
    busy.assign(n, false);
    dirty.assign(n, false);
    f_started.assign(n, 0);
    b_done.assign(n, 0);
    blocked_sends.assign(n, 0);
    last_op.assign(n, -1);
    final_chunks_started.assign(n, 0);
    tl.busy_s.assign(n, 0);
    tl.compute_end_s.assign(n, 0);
    tl.dp_end_s.assign(n, 0);
    tl.max_in_flight.assign(n, 0);
    const int chunks = tl.chunks_per_device;
    const int m = w.micro_batches;
    wg_started.assign(n, std::vector<int>(chunks, 0));
    wg_expected.assign(n, std::vector<int>(chunks, m));
    if (dual)
      for (int d = 0; d < n; ++d) {
        wg_expected[d][0] = (m + 1) / 2;  // PipelineRunner: the first half runs direction 0
        wg_expected[d][1] = m - (m + 1) / 2;
      }
    queues.resize(2 * n);
    dense_groups.resize(n);
    expert_groups.resize(n);
    for (int s = 0; s < n; ++s) {
      if (w.dp_group.ranks > 1) dense_groups[s] = place.dp_groups(s);
      if (w.ep > 1 && w.expert_dp_group.ranks > 1) expert_groups[s] = place.expert_dp_groups(s, w.ep);
    }
    // Mirror flows: every hand-off is tp flows for the representative pipeline, and tp flows
    // per other (dp, cp) replica.
    const double handoffs = 2.0 * w.micro_batches * std::max(0, n * tl.chunks_per_device - 1);
    const double mirror_flows = handoffs * w.tp * (double(w.dp) * w.cp - 1);
    mirror = opt.mirror_replica_p2p && w.dp * w.cp > 1 && mirror_flows <= opt.max_mirror_flows;
    buckets_per_chunk = std::max(1, opt.max_buckets_per_chunk);
    if (w.overlap_dp && !dense_groups.front().empty()) {
      // Flows of one simulated bucket over every stage and chunk (dense groups; the planner's
      // algorithm for a bucket-sized reduction).
      PlanRequest req;
      req.op = reduction_op();
      req.algo = w.algo;
      req.bytes = w.dp_bucket_params * w.grad_bytes_per_param * w.dp_wire_ratio;
      req.group = dense_groups.front().front();
      const double per_level = static_cast<double>(make_plan(plat.topology(), req).transfer_count()) *
                               dense_groups.front().size() * n * tl.chunks_per_device *
                               (expert_groups.front().empty() ? 1 : 2);
      if (per_level > 0)
        buckets_per_chunk = std::clamp(static_cast<int>(opt.max_dp_flows / per_level), 2,
                                       buckets_per_chunk);
    }
    tl.buckets_per_chunk = buckets_per_chunk;
  }

  const StageWork& work_of(int d, const PipeOp& op) const {
    if (dual) return w.stages[runner.virtual_stage(d, op.chunk)];
    return w.stages[d];
  }
  double chunk_div() const {
    return w.schedule == ScheduleKind::kInterleaved ? std::max(1, w.vpp) : 1;
  }
  // Per-chunk durations: the device's F/B/W (all chunks) divided by its chunk count
  // (interleaved); DualPipe chunks are whole stages (virtual_stage's layers).
  double cost(int d, const PipeOp& op) const {
    const StageWork& s = work_of(d, op);
    const double div = chunk_div();
    const double sp = d < static_cast<int>(opt.device_speed.size()) ? opt.device_speed[d] : 1.0;
    if (sp != 1.0 && sp > 0) {
      // A slow device: compute / speed, in-layer communication (folded into F/B) unchanged.
      const double f_comm = s.forward_s - s.forward_compute_s;
      const double b_comm = s.backward_s - s.backward_compute_s;
      switch (op.kind) {
        case PipeOpKind::kForward: return (s.forward_compute_s / sp + f_comm) / div;
        case PipeOpKind::kBackward:
          return ((op.with_weight_grad ? s.backward_compute_s
                                       : s.backward_compute_s - s.backward_weight_s) / sp +
                  b_comm) / div;
        case PipeOpKind::kBackwardWeight: return s.backward_weight_s / sp / div;
      }
    }
    switch (op.kind) {
      case PipeOpKind::kForward: return s.forward_s / div;
      case PipeOpKind::kBackward:
        return (op.with_weight_grad ? s.backward_s : s.backward_s - s.backward_weight_s) / div;
      case PipeOpKind::kBackwardWeight: return s.backward_weight_s / div;
    }
    return 0;
  }
  double chunk_params(int d, int chunk, bool expert) const {
    if (dual) {
      const StageWork& s = w.stages[runner.virtual_stage(d, chunk)];
      return expert ? s.expert_params : s.dense_params;
    }
    const StageWork& s = w.stages[d];
    return (expert ? s.expert_params : s.dense_params) / chunk_div();
  }

  void request_dispatch(int d) {
    dirty[d] = true;
    if (flush_pending) return;
    flush_pending = true;
    plat.after(kDecisionDelayS, [this] {
      flush_pending = false;
      for (int dev = 0; dev < n; ++dev)
        if (dirty[dev]) {
          dirty[dev] = false;
          dispatch(dev);
        }
    });
  }

  void dispatch(int d) {
    if (busy[d]) return;
    auto op = runner.pick(d);
    if (!op) return;
    busy[d] = true;
    const double now = plat.now_s();
    const double dur = cost(d, *op);
    const int idx = static_cast<int>(tl.ops.size());
    StepOpRecord rec;
    rec.stage = d;
    rec.op = *op;
    rec.start_s = now;
    rec.end_s = rec.free_s = now + dur;
    auto it = input_of.find({d, static_cast<int>(op->kind), op->micro_batch, op->chunk});
    if (it != input_of.end()) {
      rec.input_transfer = it->second;
      input_of.erase(it);
    }
    tl.ops.push_back(rec);
    tl.busy_s[d] += dur;
    if (op->kind == PipeOpKind::kForward) {
      ++f_started[d];
      tl.max_in_flight[d] = std::max(tl.max_in_flight[d], f_started[d] - b_done[d]);
    }
    if (carries_weight_grad(*op) && ++wg_started[d][op->chunk] == wg_expected[d][op->chunk])
      gradients_final(d, op->chunk, now, dur);
    plat.after(dur, [this, d, idx] { compute_done(d, idx); });
  }

  void compute_done(int d, int idx) {
    const PipeOp op = tl.ops[idx].op;
    if (op.kind == PipeOpKind::kBackward) ++b_done[d];
    ++ops_done;
    if (opt.progress && ops_done >= next_progress) {
      opt.progress(static_cast<double>(ops_done) / runner.total_ops());
      next_progress += std::max<int64_t>(1, runner.total_ops() / 20);
    }
    int blocking = 0;
    std::vector<int> local;
    for (const Handoff& h : runner.finish(d, op)) {
      if (!h.p2p) {
        runner.arrive(h);
        local.push_back(h.device);
      } else {
        start_p2p(d, h, overlap_pp ? -1 : idx);
        if (!overlap_pp) ++blocking;
      }
    }
    if (blocking > 0) {
      blocked_sends[d] = blocking;  // overlap.pp off: the sender waits for its sends
    } else {
      busy[d] = false;
    }
    for (int dev : local) request_dispatch(dev);
    request_dispatch(d);
  }

  void start_p2p(int src, const Handoff& h, int blocking_op) {
    const int t_idx = static_cast<int>(tl.transfers.size());
    StepTransferRecord rec;
    rec.src_stage = src;
    rec.dst_stage = h.device;
    rec.op = h.op;
    rec.start_s = plat.now_s();
    tl.transfers.push_back(rec);
    transfer_outstanding.push_back(w.tp);
    for (int t = 0; t < w.tp; ++t) {
      plat.start_transfer(
          place.gpu(t, 0, 0, src), place.gpu(t, 0, 0, h.device), w.p2p_bytes,
          [this, t_idx, h, src, blocking_op] {
            if (--transfer_outstanding[t_idx] > 0) return;
            tl.transfers[t_idx].end_s = plat.now_s();
            input_of[{h.device, static_cast<int>(h.op.kind), h.op.micro_batch, h.op.chunk}] = t_idx;
            runner.arrive(h);
            if (blocking_op >= 0 && --blocked_sends[src] == 0) {
              tl.ops[blocking_op].free_s = plat.now_s();
              busy[src] = false;
              request_dispatch(src);
            }
            request_dispatch(h.device);
          },
          salt++);
    }
    if (!mirror) return;
    for (int r = 0; r < w.dp; ++r)
      for (int c = 0; c < w.cp; ++c) {
        if (r == 0 && c == 0) continue;
        for (int t = 0; t < w.tp; ++t) {
          plat.start_transfer(place.gpu(t, c, r, src), place.gpu(t, c, r, h.device), w.p2p_bytes,
                              [] {}, salt++);
          ++tl.mirror_flows;
        }
      }
  }

  // The last weight-gradient op of (device, chunk) starts now and lasts dur: its gradients are
  // final as it progresses; Megatron launches each bucket's reduction when it is full.
  void gradients_final(int d, int chunk, double start, double dur) {
    ++final_chunks_started[d];
    for (int kind = 0; kind < 2; ++kind) {
      const bool expert = kind == 1;
      const auto& groups = expert ? expert_groups[d] : dense_groups[d];
      if (groups.empty()) continue;
      if (w.overlap_dp) {
        const double params = chunk_params(d, chunk, expert);
        add_buckets(d, expert, chunk, params, start, dur);
      } else if (final_chunks_started[d] == tl.chunks_per_device) {
        // No overlap: one reduction of the whole gradient buffer after the backward pass.
        double params = 0;
        for (int c = 0; c < tl.chunks_per_device; ++c) params += chunk_params(d, c, expert);
        add_bucket(d, expert, chunk, params, start + dur);
      }
    }
  }

  void add_buckets(int d, bool expert, int chunk, double params, double start, double dur) {
    if (params <= 0) return;
    const double size = std::max(1.0, w.dp_bucket_params);
    const int nb = static_cast<int>(std::ceil(params / size - 1e-9));
    // Simulated buckets: the first nb-1 Megatron buckets merged into at most K-1 groups of
    // consecutive buckets (each ready when its last member is), the last bucket exact.
    const int k = buckets_per_chunk;
    std::vector<double> ends;  // cumulative params at the end of each simulated bucket
    if (nb <= k) {
      for (int j = 1; j < nb; ++j) ends.push_back(j * size);
    } else {
      const int groups = k - 1;
      for (int g = 1; g <= groups; ++g) {
        const int upto = static_cast<int>(std::llround(double(nb - 1) * g / groups));
        if (upto > 0 && (ends.empty() || ends.back() < upto * size)) ends.push_back(upto * size);
      }
    }
    ends.push_back(params);
    double prev = 0;
    for (double e : ends) {
      if (e <= prev) continue;
      // Backward produces gradients at a steady rate through the op (bucket j is full when
      // the pass has covered its share of the parameters).
      add_bucket(d, expert, chunk, e - prev, start + dur * e / params);
      prev = e;
    }
  }

  void add_bucket(int d, bool expert, int chunk, double params, double ready_s) {
    StepBucketRecord b;
    b.stage = d;
    b.expert = expert;
    b.chunk = chunk;
    b.params = params;
    b.bytes = params * w.grad_bytes_per_param * w.dp_wire_ratio;
    b.ready_s = ready_s;
    const auto& groups = expert ? expert_groups[d] : dense_groups[d];
    b.groups = static_cast<int>(groups.size());
    b.closed_form_s = collective_cost(reduction_op(), w.algo, b.bytes,
                                      group_shape(plat.topology(), groups.front()), w.fabric)
                          .time_s;
    const int bi = static_cast<int>(tl.buckets.size());
    tl.buckets.push_back(b);
    bucket_outstanding.push_back(0);
    plat.after(ready_s - plat.now_s(), [this, d, expert, bi] {
      Queue& q = queues[2 * d + expert];
      q.ready.push_back(bi);
      if (!q.running) start_next(d, expert);
    });
  }

  CollectiveOp reduction_op() const {
    // ZeRO-3 reduce-scatters gradients (its parameter gathers are in zero3_gather_s); ZeRO-0/1/2
    // move an all-reduce's bytes (REFERENCE.md "ZeRO-1/2: same as all-reduce").
    return opt.zero_stage >= 3 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
  }

  void start_next(int d, bool expert) {
    Queue& q = queues[2 * d + expert];
    if (q.ready.empty()) {
      q.running = false;
      return;
    }
    q.running = true;
    const int bi = q.ready.front();
    q.ready.pop_front();
    StepBucketRecord& b = tl.buckets[bi];
    b.start_s = plat.now_s();
    const auto& groups = expert ? expert_groups[d] : dense_groups[d];
    bucket_outstanding[bi] = static_cast<int>(groups.size());
    for (const auto& g : groups) {
      PlanRequest req;
      req.op = reduction_op();
      req.algo = w.algo;
      req.bytes = b.bytes;
      req.group = g;
      req.granularity = Granularity::kFlow;
      engine.start(req, [this, d, expert, bi](const CollectiveResult&) {
        if (--bucket_outstanding[bi] > 0) return;
        tl.buckets[bi].end_s = plat.now_s();
        start_next(d, expert);
      });
    }
  }
};

}  // namespace

namespace {

StepTimeline finish_timeline(Player& p, Platform& platform, const Workload& workload, double t0) {
  if (!p.runner.done())
    throw std::logic_error("play_step: the schedule stalled with ops left (dependency bug)");
  StepTimeline& tl = p.tl;
  for (auto& op : tl.ops) {
    op.start_s -= t0;
    op.end_s -= t0;
    op.free_s -= t0;
    tl.compute_end_s[op.stage] = std::max(tl.compute_end_s[op.stage], op.free_s);
    tl.pipeline_end_s = std::max(tl.pipeline_end_s, op.free_s);
  }
  for (auto& t : tl.transfers) {
    t.start_s -= t0;
    t.end_s -= t0;
  }
  for (auto& b : tl.buckets) {
    b.ready_s -= t0;
    b.start_s -= t0;
    b.end_s -= t0;
  }
  // A stage's reduction is over when its last bucket is, never before its last op.
  for (int d = 0; d < p.n; ++d) tl.dp_end_s[d] = tl.compute_end_s[d];
  for (const auto& b : tl.buckets) tl.dp_end_s[b.stage] = std::max(tl.dp_end_s[b.stage], b.end_s);
  for (int d = 0; d < p.n; ++d) tl.optimizer_start_s = std::max(tl.optimizer_start_s, tl.dp_end_s[d]);
  tl.step_end_s =
      tl.optimizer_start_s + workload.zero3_gather_s + workload.optimizer_s + workload.offload_s;
  tl.transfers_started = platform.transfers_started();
  return std::move(tl);
}

void check_fits(const Platform& platform, const RankPlacement& placement) {
  int highest = -1;
  for (int g : placement.all_gpus()) highest = std::max(highest, g);
  if (highest >= platform.topology().gpu_count())
    throw std::logic_error("play_step: the plan needs GPU " + std::to_string(highest) +
                           " but the platform has " +
                           std::to_string(platform.topology().gpu_count()));
}

}  // namespace

StepTimeline play_step(Platform& platform, const Workload& workload, const RankPlacement& placement,
                       const StepOptions& options) {
  StepJob job;
  job.workload = &workload;
  job.placement = &placement;
  job.options = options;
  return std::move(play_steps(platform, {job}).front());
}

std::vector<StepTimeline> play_steps(Platform& platform, const std::vector<StepJob>& jobs) {
  std::vector<std::unique_ptr<Player>> players;
  for (const StepJob& j : jobs) {
    check_fits(platform, *j.placement);
    players.push_back(
        std::make_unique<Player>(platform, *j.workload, *j.placement, j.options, j.options.overlap_pp));
  }
  const double t0 = platform.now_s();
  for (auto& p : players)
    for (int d = 0; d < p->n; ++d) p->dispatch(d);
  platform.run();
  std::vector<StepTimeline> out;
  for (std::size_t i = 0; i < players.size(); ++i)
    out.push_back(finish_timeline(*players[i], platform, *jobs[i].workload, t0));
  return out;
}

}  // namespace trainsim::sim
