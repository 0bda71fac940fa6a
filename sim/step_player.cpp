#include "sim/step_player.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/collectives/gradient_reduction.hpp"
#include "sim/collective_engine.hpp"
#include "sim/collective_plan.hpp"
#include "sim/platform.hpp"

namespace trainsim::sim {

double collective_flows(CollectiveOp op, double ranks) {
  return op == CollectiveOp::kAllToAll ? ranks * (ranks - 1) : ranks;
}

std::array<double, kCommGroups> collective_scans_by_group(const Workload& w) {
  std::array<double, kCommGroups> scans{};
  for (const DeviceProgram& d : w.programs)
    for (const ChunkProgram& ch : d.chunks)
      for (const PassProgram& prog : ch.pass)
        for (const OpBlock& b : prog.blocks)
          for (const CommOp& c : b.comm) {
            const int k = static_cast<int>(c.group);
            scans[k] += b.repeat * collective_flow_scans(collective_flows(c.op, w.group_shapes[k].ranks));
          }
  return scans;
}

namespace {

// Devices choose their next op once every event of an instant is in (as models' timeline does):
// a flush timer this much later than the instant (completions and timers of one instant all run
// before it). 1e-12 s per decision is far below any op's duration.
constexpr double kDecisionDelayS = 1e-12;

bool carries_weight_grad(const PipeOp& op) {
  return op.kind == PipeOpKind::kBackwardWeight ||
         (op.kind == PipeOpKind::kBackward && op.with_weight_grad);
}

PassKind pass_of(const PipeOp& op, bool split) {
  switch (op.kind) {
    case PipeOpKind::kForward: return PassKind::kForward;
    case PipeOpKind::kBackward: return split ? PassKind::kBackwardInput : PassKind::kBackward;
    case PipeOpKind::kBackwardWeight: return PassKind::kBackwardWeight;
  }
  return PassKind::kForward;
}

struct Player;

// One pass of one chunk on one device, played op by op.
struct PassRun {
  int device = 0;
  int record = 0;  // index in StepTimeline::ops
  PipeOp op;
  // A schedule that overlaps a forward with a backward: the forward run beside `op` (a
  // backward) as one program (fb_overlap.hpp), and its record.
  std::optional<PipeOp> partner;
  int partner_record = -1;
  const PassProgram* program = nullptr;
  std::size_t block = 0;
  int rep = 0;
  int next_op = 0;  // the compute op to start next in this repetition
  bool computing = false;
  // Collectives each op of the current (and the next, for prefetches) repetition still waits for.
  std::vector<int> need, need_next;
  // When the compute stream began waiting, and for what (purpose of the last collective).
  double wait_since = -1;
  bool weight_pass_final = false;  // the chunk's last weight-gradient pass: buckets follow it
  double params_done = 0, params_total = 0;
};

// A collective queued or running on a device's stream.
struct CommJob {
  PassRun* run = nullptr;
  const CommOp* comm = nullptr;
  int target_rep = 0;  // the repetition whose op waits for it
  std::size_t block = 0;
};

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
  // A sharded reduction under plan.dp_shard: its shard groups and the shards' replica groups.
  std::vector<std::vector<std::vector<int>>> shard_groups, replica_groups;  // per stage
  // Groups of every kind per stage: [stage][CommGroup] -> groups (the representative first).
  std::vector<std::array<std::vector<std::vector<int>>, kCommGroups>> comm_groups;
  std::vector<std::array<bool, kCommGroups>> mirror_kind;  // play every group of the kind, not only the first
  std::vector<int> bucket_outstanding;
  bool mirror = false;
  int buckets_per_chunk = 8;
  int64_t ops_done = 0;
  int64_t next_progress = 0;
  uint64_t salt = 1;

  // Per device: streams, running pass, compute timer and concurrent collectives.
  struct Stream {
    std::deque<CommJob> queue;
    bool running = false;
  };
  struct Device {
    std::array<Stream, kCommStreams> streams;
    std::unique_ptr<PassRun> run;
    // Fluid compute timer: remaining work, its rate since `since`, generation of the live timer.
    double remaining = 0, since = 0, rate = 1;
    uint64_t gen = 0;
    // Concurrent collectives (other streams) by purpose, as SM shares (CommOp::sm_share).
    std::array<double, kCommPurposes> active{};
    double active_total = 0;
    int async_outstanding = 0;
  };
  std::vector<Device> dev;

  Player(Platform& p, const Workload& wl, const RankPlacement& pl, const StepOptions& o, bool opp)
      : plat(p), w(wl), place(pl), opt(o), overlap_pp(opp), engine(p),
        runner(*wl.schedule, wl.pp, wl.vpp, wl.micro_batches) {
    n = runner.devices();
    dual = w.schedule->bidirectional() && n > 1;
    tl.chunks_per_device = w.schedule->chunks_per_device(n, w.vpp);
    busy.assign(n, false);
    dirty.assign(n, false);
    f_started.assign(n, 0);
    b_done.assign(n, 0);
    blocked_sends.assign(n, 0);
    final_chunks_started.assign(n, 0);
    tl.busy_s.assign(n, 0);
    tl.compute_end_s.assign(n, 0);
    tl.dp_end_s.assign(n, 0);
    tl.max_in_flight.assign(n, 0);
    tl.exposed_s.assign(n, {});
    tl.busy_s_by_purpose.assign(n, {});
    tl.contention_free_s_by_purpose.assign(n, {});
    tl.compute_work_s.assign(n, 0);
    tl.async_end_s.assign(n, 0);
    dev.resize(n);
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
    shard_groups.resize(n);
    replica_groups.resize(n);
    comm_groups.resize(n);
    mirror_kind.resize(n);
    // Expert weights are reduced over their own data-parallel groups whenever the model has
    // experts, with or without expert parallelism (ep 1 replicates every expert like a dense
    // weight, but in its own buffer).
    const bool experts = std::any_of(w.stages.begin(), w.stages.end(), [](const StageWork& sw) { return sw.expert_params > 0; });
    for (int s = 0; s < n; ++s) {
      if (w.dp_group.ranks > 1) dense_groups[s] = place.dp_groups(s);
      if (experts && w.expert_dp_group.ranks > 1) expert_groups[s] = place.expert_dp_groups(s);
      if (w.dp_sharded && w.zero_stage < 3 && w.dp_replica_group.ranks > 1) {
        shard_groups[s] = place.dp_shard_groups(s);
        replica_groups[s] = place.dp_replicate_groups(s);
      }
    }
    plan_groups();
    // Mirror flows: every hand-off is tp flows for the representative pipeline, and tp flows
    // per other (dp, cp) replica.
    const double handoffs = 2.0 * w.micro_batches * std::max(0, n * tl.chunks_per_device - 1);
    const double mirror_flows = handoffs * w.tp * (double(w.dp) * w.cp - 1);
    mirror = opt.mirror_replica_p2p && w.dp * w.cp > 1 && mirror_flows <= opt.max_mirror_flows;
    buckets_per_chunk = std::max(1, opt.max_buckets_per_chunk);
    if (w.overlap_dp && w.zero_stage < 3 && !dense_groups.front().empty()) {
      // Flows of one simulated bucket over every stage and chunk (dense groups; the planner's
      // algorithm for a bucket-sized reduction).
      PlanRequest req;
      req.op = CollectiveOp::kAllReduce;
      req.algo = w.algo;
      req.protocol = w.protocol;
      req.bytes = w.dp_bucket_params * w.grad_bytes_per_param * w.dp_wire_ratio;
      req.group = dense_groups.front().front();
      const double per_level = static_cast<double>(make_plan(plat.topology(), req).transfer_count()) *
                               dense_groups.front().size() * n * tl.chunks_per_device *
                               (expert_groups.front().empty() ? 1 : 2);
      if (per_level > 0)
        buckets_per_chunk = std::clamp(static_cast<int>(opt.max_dp_flows / per_level), 2, buckets_per_chunk);
    }
    tl.buckets_per_chunk = buckets_per_chunk;
  }

  // Which groups each kind of collective plays on, per stage: data-parallel kinds always every
  // group (their flows share the NICs); TP/CP/EP every group when one crosses nodes and the step
  // stays within the flow budget, otherwise the representative's alone.
  void plan_groups() {
    double mirrored_scans = 0;
    const std::array<double, kCommGroups> group_scans = collective_scans_by_group(w);
    for (int s = 0; s < n; ++s) {
      auto& g = comm_groups[s];
      g[static_cast<int>(CommGroup::kTp)] = place.tp_groups(s);
      g[static_cast<int>(CommGroup::kCp)] = place.cp_groups(s);
      g[static_cast<int>(CommGroup::kEp)] = place.ep_groups(s);
      g[static_cast<int>(CommGroup::kDp)] = place.dp_groups(s);
      g[static_cast<int>(CommGroup::kExpertDp)] = place.expert_dp_groups(s);
      g[static_cast<int>(CommGroup::kDpShard)] = place.dp_shard_groups(s);
      g[static_cast<int>(CommGroup::kDpReplicate)] = place.dp_replicate_groups(s);
      g[static_cast<int>(CommGroup::kDpSecondary)] = place.dp_secondary_groups(s);
      if (w.group_shapes[static_cast<int>(CommGroup::kEpInter)].ranks > 1 ||
          w.group_shapes[static_cast<int>(CommGroup::kEpIntra)].ranks > 1) {
        g[static_cast<int>(CommGroup::kEpInter)] = place.ep_hop_groups(s, true);
        g[static_cast<int>(CommGroup::kEpIntra)] = place.ep_hop_groups(s, false);
      }
      if (place.qgz()) {
        g[static_cast<int>(CommGroup::kDpShardInter)] = place.dp_shard_hop_groups(s, true);
        g[static_cast<int>(CommGroup::kDpShardIntra)] = place.dp_shard_hop_groups(s, false);
      }
      for (int k = 0; k < kCommGroups; ++k) {
        const bool dp_kind = data_parallel_kind(static_cast<CommGroup>(k));
        const bool crosses = !g[k].empty() && w.group_shapes[k].nodes > 1;
        mirror_kind[s][k] = dp_kind || crosses;
        // Mirrored, a stage's groups of this kind run each collective together: their flows are
        // in flight at once.
        const double groups = static_cast<double>(g[k].size());
        if (!dp_kind && crosses) mirrored_scans += group_scans[k] / n * w.micro_batches * groups * groups;
      }
    }
    if (mirrored_scans > opt.max_mirror_collective_scans)
      for (int s = 0; s < n; ++s)
        for (int k : {static_cast<int>(CommGroup::kTp), static_cast<int>(CommGroup::kCp), static_cast<int>(CommGroup::kEp),
                      static_cast<int>(CommGroup::kEpInter), static_cast<int>(CommGroup::kEpIntra)})
          mirror_kind[s][k] = false;
  }

  const ChunkProgram& chunk(int d, int c) const {
    const auto& chunks = w.programs[d].chunks;
    return chunks[std::min<std::size_t>(c, chunks.size() - 1)];
  }
  // What device d plays for `op` alone. A backward that carries its W in a schedule that splits
  // them (a static order's choice: DualPipe's reference runs some backwards whole) plays B's
  // program and then W's, as the estimate adds their times (stage_op_cost); only the W blocks
  // count the chunk's gradients final.
  const PassProgram& program_of(int d, const PipeOp& op) {
    if (!(w.split_backward && op.kind == PipeOpKind::kBackward && op.with_weight_grad))
      return chunk(d, op.chunk).program(pass_of(op, w.split_backward));
    const std::size_t k = 2 * static_cast<std::size_t>(d) + (op.chunk & 1);
    if (whole_backward.size() <= k) whole_backward.resize(k + 1);
    if (!whole_backward[k]) {
      const ChunkProgram& ch = chunk(d, op.chunk);
      auto whole = std::make_unique<PassProgram>(ch.program(PassKind::kBackwardInput));
      for (OpBlock& b : whole->blocks) b.dense_params = b.expert_params = 0;
      const auto& weight = ch.program(PassKind::kBackwardWeight).blocks;
      whole->blocks.insert(whole->blocks.end(), weight.begin(), weight.end());
      whole_backward[k] = std::move(whole);
    }
    return *whole_backward[k];
  }
  std::vector<std::unique_ptr<PassProgram>> whole_backward;  // [2 device + chunk], on first use
  double speed(int d) const {
    return d < static_cast<int>(opt.device_speed.size()) && opt.device_speed[d] > 0 ? opt.device_speed[d] : 1.0;
  }

  void request_dispatch(int d) {
    dirty[d] = true;
    if (flush_pending) return;
    flush_pending = true;
    plat.after(kDecisionDelayS, [this] {
      flush_pending = false;
      for (int dev_i = 0; dev_i < n; ++dev_i)
        if (dirty[dev_i]) {
          dirty[dev_i] = false;
          dispatch(dev_i);
        }
    });
  }

  // A record of `op` starting now on device d; returns its index.
  int record_start(int d, const PipeOp& op) {
    const double now = plat.now_s();
    const int idx = static_cast<int>(tl.ops.size());
    StepOpRecord rec;
    rec.stage = d;
    rec.op = op;
    rec.start_s = rec.end_s = rec.free_s = now;
    auto it = input_of.find({d, static_cast<int>(op.kind), op.micro_batch, op.chunk});
    if (it != input_of.end()) {
      rec.input_transfer = it->second;
      input_of.erase(it);
    }
    tl.ops.push_back(rec);
    if (op.kind == PipeOpKind::kForward) {
      ++f_started[d];
      tl.max_in_flight[d] = std::max(tl.max_in_flight[d], f_started[d] - b_done[d]);
    }
    return idx;
  }

  void dispatch(int d) {
    if (busy[d]) return;
    auto op = runner.pick(d);
    if (!op) return;
    busy[d] = true;
    const int idx = record_start(d, *op);
    auto run = std::make_unique<PassRun>();
    run->device = d;
    run->record = idx;
    run->op = *op;
    if (!w.programs[d].paired.empty()) {
      run->partner = runner.pick_partner(d, run->op);  // a paired backward carries its W
      if (run->partner) {
        run->partner_record = record_start(d, *run->partner);
        run->program = &w.programs[d].pair(run->partner->chunk, op->chunk);
      }
    }
    if (!run->partner) run->program = &program_of(d, run->op);
    if (carries_weight_grad(run->op) && ++wg_started[d][op->chunk] == wg_expected[d][op->chunk]) {
      run->weight_pass_final = true;
      for (const OpBlock& b : run->program->blocks) run->params_total += (b.dense_params + b.expert_params) * b.repeat;
      ++final_chunks_started[d];
    }
    dev[d].run = std::move(run);
    start_block(*dev[d].run);
  }

  // ---- playing a pass ----

  void start_block(PassRun& r) {
    if (r.block >= r.program->blocks.size()) return pass_done(r);
    r.rep = 0;
    const OpBlock& b = r.program->blocks[r.block];
    r.need.assign(b.compute.size() + 1, 0);
    r.need_next.assign(b.compute.size() + 1, 0);
    start_rep(r, true);
  }

  void start_rep(PassRun& r, bool first) {
    const OpBlock& b = r.program->blocks[r.block];
    if (!first) {
      r.need = r.need_next;
      std::fill(r.need_next.begin(), r.need_next.end(), 0);
    }
    r.next_op = 0;
    for (const CommOp& c : b.comm) {
      if (c.prefetch) {
        if (first) issue(r, c, r.rep);
        if (r.rep + 1 < b.repeat) issue(r, c, r.rep + 1);
      } else if (c.after < 0) {
        issue(r, c, r.rep);
      }
    }
    advance(r);
  }

  // Starts the next compute op if its inputs are in; ends the repetition (and the block) when
  // every op ran and nothing it waits for is outstanding.
  void advance(PassRun& r) {
    if (r.computing) return;
    const OpBlock& b = r.program->blocks[r.block];
    const int nops = static_cast<int>(b.compute.size());
    const int i = r.next_op;
    if (r.need[i] > 0) {
      if (r.wait_since < 0) r.wait_since = plat.now_s();
      return;
    }
    r.wait_since = -1;
    if (i < nops) {
      r.computing = true;
      const double work = b.compute_s[i] / speed(r.device);
      tl.compute_work_s[r.device] += work;
      start_compute(r.device, work);
      return;
    }
    // The repetition is over: its layer's gradients are final in the last weight pass.
    if (r.weight_pass_final) {
      r.params_done += b.dense_params + b.expert_params;
      layer_gradients_final(r);
    }
    if (++r.rep < b.repeat) return start_rep(r, false);
    ++r.block;
    start_block(r);
  }

  void compute_finished(int d) {
    PassRun& r = *dev[d].run;
    r.computing = false;
    const OpBlock& b = r.program->blocks[r.block];
    const int i = r.next_op++;
    for (const CommOp& c : b.comm)
      if (!c.prefetch && c.after == i) issue(r, c, r.rep);
    advance(r);
  }

  // The fluid compute timer of a device: work at 1 / (1 + sigma k) while collectives of other
  // streams with SM shares summing to k run on it (program_reduce.hpp).
  double current_rate(int d) const { return 1.0 / (1.0 + w.overlap_slowdown * dev[d].active_total); }
  void start_compute(int d, double work) {
    Device& v = dev[d];
    v.remaining = work;
    v.since = plat.now_s();
    v.rate = current_rate(d);
    arm(d);
  }
  void arm(int d) {
    Device& v = dev[d];
    const uint64_t gen = ++v.gen;
    plat.after(v.remaining / v.rate, [this, d, gen] {
      Device& x = dev[d];
      if (x.gen != gen) return;  // the rate changed: a newer timer stands
      account(d);
      compute_finished(d);
    });
  }
  // Charges the time since the last change: work done, and the slowdown to the purposes beside it.
  void account(int d) {
    Device& v = dev[d];
    const double now = plat.now_s();
    const double elapsed = now - v.since;
    if (elapsed > 0 && v.active_total > 0) {
      const double extra = elapsed * (1 - v.rate);
      for (int k = 0; k < kCommPurposes; ++k)
        tl.exposed_s[d][k] += extra * v.active[k] / v.active_total;
    }
    v.remaining = std::max(0.0, v.remaining - elapsed * v.rate);
    v.since = now;
  }
  void rate_changed(int d) {
    Device& v = dev[d];
    if (!v.run || !v.run->computing) return;
    account(d);
    v.rate = current_rate(d);
    arm(d);
  }

  // ---- collectives of the programs ----

  void issue(PassRun& r, const CommOp& c, int target_rep) {
    Device& v = dev[r.device];
    if (c.waited_by >= 0) {
      auto& need = target_rep == r.rep ? r.need : r.need_next;
      ++need[std::min<std::size_t>(c.waited_by, need.size() - 1)];
    } else {
      ++v.async_outstanding;
    }
    Stream& st = v.streams[static_cast<int>(c.stream)];
    st.queue.push_back(CommJob{&r, &c, target_rep, r.block});
    if (!st.running) start_stream(r.device, static_cast<int>(c.stream));
  }

  void start_stream(int d, int s) {
    Stream& st = dev[d].streams[s];
    if (st.queue.empty()) {
      st.running = false;
      return;
    }
    st.running = true;
    const CommJob job = st.queue.front();
    st.queue.pop_front();
    const CommOp& c = *job.comm;
    const int k = static_cast<int>(c.group);
    const auto& groups = comm_groups[d][k];
    const int played = mirror_kind[d][k] ? static_cast<int>(groups.size()) : 1;
    const bool beside = c.stream != CommStream::kInline;
    if (beside) {
      dev[d].active[static_cast<int>(c.purpose)] += c.sm_share;
      dev[d].active_total += c.sm_share;
      rate_changed(d);
    }
    const double start = plat.now_s();
    const int rec = static_cast<int>(tl_comm_records_.size());
    tl_comm_records_.push_back(0);
    tl_comm_records_[rec] = played;
    ++tl.collectives_started;
    tl.mirror_collectives += played - 1;
    // Traffic: what the played groups send, plus the peers the representative stands for.
    // (The groups of a kind partition the stage's ranks.)
    const double per_group = c.wire_bytes * static_cast<double>(groups.front().size());
    tl.traffic_bytes_as_flows[static_cast<int>(c.purpose)] += per_group * played;
    tl.traffic_bytes[static_cast<int>(c.purpose)] += per_group * static_cast<double>(groups.size());
    // The group's members reach it apart (CommOp::arrival_wait_s): the flows start when the
    // last one does. The framework's own kernels on the stream (CommOp::local_s) take their
    // time on it as well.
    if (const double delay_s = c.arrival_wait_s + c.local_s; delay_s > 0) {
      plat.after(delay_s, [this, d, s, job, rec, start, beside, played] {
        start_flows(d, s, job, rec, start, beside, played);
      });
    } else {
      start_flows(d, s, job, rec, start, beside, played);
    }
  }

  void start_flows(int d, int s, const CommJob& job, int rec, double start, bool beside, int played) {
    const CommOp& c = *job.comm;
    const auto& groups = comm_groups[d][static_cast<int>(c.group)];
    for (int g = 0; g < played; ++g) {
      PlanRequest req;
      req.op = c.op;
      req.algo = c.algo;
      req.protocol = c.protocol;
      req.bytes = c.bytes;
      req.group = groups[g];
      req.granularity = Granularity::kFlow;
      engine.start(req, [this, d, s, job, rec, start, beside](const CollectiveResult&) {
        if (--tl_comm_records_[rec] > 0) return;
        const CommOp& done = *job.comm;
        tl.busy_s_by_purpose[d][static_cast<int>(done.purpose)] += plat.now_s() - start;
        tl.contention_free_s_by_purpose[d][static_cast<int>(done.purpose)] += done.time_s;
        if (w.group_shapes[static_cast<int>(done.group)].nodes > 1)
          tl.network_comms.push_back({d, done.purpose, start, plat.now_s(), done.time_s});
        if (beside) {
          // Shares are sums of a few exact binary fractions (1, 0.625): back to 0 exactly.
          dev[d].active[static_cast<int>(done.purpose)] -= done.sm_share;
          dev[d].active_total -= done.sm_share;
          rate_changed(d);
        }
        comm_done(d, job);
        start_stream(d, s);
      });
    }
  }

  void comm_done(int d, const CommJob& job) {
    Device& v = dev[d];
    const CommOp& c = *job.comm;
    if (c.waited_by < 0) {
      tl.async_end_s[d] = std::max(tl.async_end_s[d], plat.now_s());
      --v.async_outstanding;
      return;
    }
    PassRun& r = *job.run;
    // The run may have moved on to another block only after everything it waited for arrived.
    if (job.block != r.block) return;
    auto& need = job.target_rep == r.rep ? r.need : r.need_next;
    const std::size_t i = std::min<std::size_t>(c.waited_by, need.size() - 1);
    --need[i];
    if (job.target_rep == r.rep && static_cast<int>(i) == r.next_op && need[i] == 0 && r.wait_since >= 0) {
      tl.exposed_s[d][static_cast<int>(c.purpose)] += plat.now_s() - r.wait_since;
      r.wait_since = -1;
    }
    if (job.target_rep == r.rep) advance(r);
  }

  // ---- the pass ends ----

  void pass_done(PassRun& r) {
    const int d = r.device;
    const int idx = r.record;
    const double now = plat.now_s();
    tl.ops[idx].end_s = tl.ops[idx].free_s = now;
    tl.busy_s[d] += now - tl.ops[idx].start_s;
    if (r.partner) tl.ops[r.partner_record].end_s = tl.ops[r.partner_record].free_s = now;
    if (r.weight_pass_final && (!w.overlap_dp || w.zero_stage >= 3))
      whole_buffer_reduction(d, r.op.chunk, now);
    // The run stays until the device's next pass replaces it: collectives it left running refer
    // to their ops, not to the run. A pair's two ops finish together, the backward first.
    compute_done(d, idx, r.op);
    if (r.partner) compute_done(d, r.partner_record, *r.partner);
  }

  void compute_done(int d, int idx, const PipeOp& op) {
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
    // overlap.pp off: the sender waits for its sends (a pair's, for both ops' sends).
    blocked_sends[d] += blocking;
    if (blocked_sends[d] == 0) busy[d] = false;
    for (int dv : local) request_dispatch(dv);
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
    tl.traffic_bytes_as_flows[static_cast<int>(CommPurpose::kPp)] += w.p2p_bytes * w.tp * (mirror ? double(w.dp) * w.cp : 1.0);
    tl.traffic_bytes[static_cast<int>(CommPurpose::kPp)] += w.p2p_bytes * w.tp * double(w.dp) * w.cp;
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
          plat.start_transfer(place.gpu(t, c, r, src), place.gpu(t, c, r, h.device), w.p2p_bytes, [] {}, salt++);
          ++tl.mirror_flows;
        }
      }
  }

  // ---- ZeRO-0/1/2 gradient buckets ----

  // The last weight-gradient pass of (device, chunk) finished a layer: Megatron launches each
  // bucket's reduction when it is full (buckets fill in backward order).
  void layer_gradients_final(PassRun& r) {
    if (!w.overlap_dp || w.zero_stage >= 3 || r.params_total <= 0) return;
    const int d = r.device;
    for (int kind = 0; kind < 2; ++kind) {
      const bool expert = kind == 1;
      if ((expert ? expert_groups[d] : dense_groups[d]).empty()) continue;
      const double params = chunk_params(d, r.op.chunk, expert);
      const double fraction = r.params_done / r.params_total;
      bucket_progress(d, expert, r.op.chunk, params, fraction);
    }
  }

  double chunk_params(int d, int c, bool expert) const {
    const ChunkProgram& ch = chunk(d, c);
    return expert ? ch.expert_params : ch.dense_params;
  }

  // Buckets of a chunk are ready as `fraction` of its gradients are final: the first nb-1
  // Megatron buckets merged into at most K-1 groups of consecutive buckets, the last bucket
  // exact. A group starts when its first member is final, as that member's collective would,
  // and is over no earlier than its last member's own collective after that member is final
  // (the bytes of the members between move as the group's flows).
  std::map<std::tuple<int, int, int>, double> bucket_issued;  // (device, expert, chunk) -> params issued
  struct GroupFinality {
    double final_at = 0;      // the chunk's final parameters that make the last member final
    double last_member_s = 0;  // that member's own collective, contention-free
    bool final = true;
    bool flows_done = false;
    double flows_done_s = 0;
  };
  std::vector<GroupFinality> finality;  // per bucket
  std::map<std::tuple<int, int, int>, std::vector<int>> awaiting_final;
  void bucket_progress(int d, bool expert, int chunk_i, double params, double fraction) {
    if (params <= 0) return;
    const double size = std::max(1.0, w.dp_bucket_params);
    const int nb = static_cast<int>(std::ceil(params / size - 1e-9));
    const int k = buckets_per_chunk;
    std::vector<double> ends;
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
    const std::tuple<int, int, int> key{d, expert, chunk_i};
    double& issued = bucket_issued[key];
    const double have = fraction * params * (1 + 1e-12);
    std::vector<int>& waiting = awaiting_final[key];
    for (double e : ends) {
      if (e <= issued + 1e-9) continue;
      if (std::min(e, issued + size) > have) break;
      const int bi = add_bucket(d, expert, chunk_i, e - issued, plat.now_s(), std::max(1.0, (e - issued) / size));
      if (e > have) {
        GroupFinality& f = finality[static_cast<std::size_t>(bi)];
        f.final = false;
        f.final_at = e;
        f.last_member_s = bucket_closed_form_s(d, expert, std::min(size, e - issued));
        waiting.push_back(bi);
      }
      issued = e;
    }
    // Groups whose last member this progress made final.
    for (auto it = waiting.begin(); it != waiting.end();) {
      GroupFinality& f = finality[static_cast<std::size_t>(*it)];
      if (f.final_at > have) {
        ++it;
        continue;
      }
      f.final = true;
      if (f.flows_done) {
        const int bi = *it;
        tl.buckets[static_cast<std::size_t>(bi)].waiting_s += plat.now_s() - f.flows_done_s;
        plat.after(f.last_member_s, [this, d, expert, bi] { bucket_done(d, expert, bi); });
      }
      it = waiting.erase(it);
    }
  }

  // No overlap (or ZeRO-3's own reduce-scatters in the programs): one reduction of the whole
  // gradient buffer after the backward pass, ZeRO-0/1/2 only.
  void whole_buffer_reduction(int d, int chunk_i, double at) {
    if (w.zero_stage >= 3) return;
    if (final_chunks_started[d] != tl.chunks_per_device) return;
    for (int kind = 0; kind < 2; ++kind) {
      const bool expert = kind == 1;
      if ((expert ? expert_groups[d] : dense_groups[d]).empty()) continue;
      double params = 0;
      for (int c = 0; c < tl.chunks_per_device; ++c) params += chunk_params(d, c, expert);
      add_bucket(d, expert, chunk_i, params, at);
    }
  }

  // The contention-free time of one group's uncompressed reduction of `n` parameters of stage d
  // (alpha-beta).
  double reduction_s(int d, bool expert, double n) const {
    const auto& groups = sharded_groups(d, expert);
    GradientReduction r;
    r.sharded = w.dp_sharded;
    r.grad_bytes_per_param = w.grad_bytes_per_param;
    r.param_bytes_per_param = w.param_bytes_per_param;
    r.group = group_shape(plat.topology(), groups.front());
    if (w.dp_sharded && !expert && !replica_groups[d].empty())
      r.replicas = group_shape(plat.topology(), replica_groups[d].front());
    return gradient_reduction_s(r, n, [&](CollectiveOp op, double bytes, const GroupShape& g) {
      return collective_cost(op, w.algo, w.protocol, bytes, g, w.fabric).time_s;
    });
  }
  // The flows of a bucket of `n` parameters, alone: the reduction at the run's average bytes.
  double bucket_flows_s(int d, bool expert, double n) const { return reduction_s(d, expert, n * w.dp_wire_ratio); }
  // What the estimate prices a Megatron bucket of `n` parameters at: the reduction at the run's
  // average time (compression kernels, sync interval).
  double bucket_closed_form_s(int d, bool expert, double n) const { return w.dp_time_ratio * reduction_s(d, expert, n); }

  // `megatron_buckets`: how many of Megatron's buckets this one stands for (merged beyond
  // max_buckets_per_chunk): each is its own collective and pays its own latency, which the
  // merged flows pay once; the difference is waited after them.
  int add_bucket(int d, bool expert, int chunk_i, double params, double ready_s, double megatron_buckets = 1) {
    StepBucketRecord b;
    b.stage = d;
    b.expert = expert;
    b.chunk = chunk_i;
    b.params = params;
    b.bytes = params * w.grad_bytes_per_param * w.dp_wire_ratio;
    b.ready_s = ready_s + w.dp_arrival_wait_s;  // the replicas reach it apart (workload.hpp)
    const auto& groups = sharded_groups(d, expert);
    b.groups = static_cast<int>(groups.size());
    const int members = static_cast<int>(groups.front().size());
    const bool replicated = w.dp_sharded && !expert && !replica_groups[d].empty();
    // The flows carry the bytes; what the bucket's collectives take beyond them (the latency of
    // each Megatron bucket merged into it, compression kernels) is waited after them.
    const double flows_s = bucket_flows_s(d, expert, params);
    double priced_s = bucket_closed_form_s(d, expert, params);
    if (megatron_buckets > 1) {
      const double whole = std::floor(megatron_buckets), rest = megatron_buckets - whole;
      const double each = params / megatron_buckets;
      priced_s = whole * bucket_closed_form_s(d, expert, each) +
                 (rest > 1e-9 ? bucket_closed_form_s(d, expert, rest * each) : 0.0);
    }
    b.wait_after_flows_s = std::max(0.0, priced_s - flows_s);
    b.closed_form_s = std::max(flows_s, priced_s);
    double wire = 0;
    if (w.dp_sharded) {
      // Reduce-scatter of the gradients, then all-gather of the updated parameters (workload.hpp);
      // under a dp_shard, the shard all-reduced across its replicas between the two. The
      // parameters are gathered as often as the gradients are reduced (plan.sync_interval):
      // the same average over the run.
      b.gather_bytes = params * w.param_bytes_per_param * w.dp_wire_ratio;
      wire = (b.bytes * bus_bandwidth_factor(CollectiveOp::kReduceScatter, members) +
              b.gather_bytes * bus_bandwidth_factor(CollectiveOp::kAllGather, members)) *
             members * groups.size();
      if (replicated) {
        const auto& replicas = replica_groups[d];
        const int copies = static_cast<int>(replicas.front().size());
        b.replica_bytes = b.bytes / members;
        wire += b.replica_bytes * bus_bandwidth_factor(CollectiveOp::kAllReduce, copies) * copies * replicas.size();
      }
    } else {
      wire = b.bytes * bus_bandwidth_factor(CollectiveOp::kAllReduce, members) * members * groups.size();
    }
    const int bi = static_cast<int>(tl.buckets.size());
    tl.buckets.push_back(b);
    bucket_outstanding.push_back(0);
    finality.emplace_back();
    tl.traffic_bytes_as_flows[static_cast<int>(CommPurpose::kDp)] += wire;
    tl.traffic_bytes[static_cast<int>(CommPurpose::kDp)] += wire;
    plat.after(std::max(0.0, b.ready_s - plat.now_s()), [this, d, expert, bi] {
      Queue& q = queues[2 * d + expert];
      q.ready.push_back(bi);
      if (!q.running) start_next(d, expert);
    });
    return bi;
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
    tl.buckets[bi].start_s = plat.now_s();
    // By value: the bucket records grow while the step plays.
    const double bytes = tl.buckets[bi].bytes, gather_bytes = tl.buckets[bi].gather_bytes,
                 replica_bytes = tl.buckets[bi].replica_bytes;
    if (w.dp_sharded) {
      const auto& groups = sharded_groups(d, expert);
      auto gather = [this, d, expert, bi, gather_bytes, &groups] {
        play_bucket(groups, bi, CollectiveOp::kAllGather, gather_bytes, [this, d, expert, bi] { bucket_done(d, expert, bi); });
      };
      play_bucket(groups, bi, CollectiveOp::kReduceScatter, bytes, [this, d, bi, replica_bytes, gather] {
        if (replica_bytes > 0) play_bucket(replica_groups[d], bi, CollectiveOp::kAllReduce, replica_bytes, gather);
        else gather();
      });
    } else {
      play_bucket(expert ? expert_groups[d] : dense_groups[d], bi, CollectiveOp::kAllReduce, bytes,
                  [this, d, expert, bi] { bucket_done(d, expert, bi); });
    }
  }

  // The groups a sharded (ZeRO-1/2) reduction of stage d reduce-scatters and gathers over.
  const std::vector<std::vector<int>>& sharded_groups(int d, bool expert) const {
    if (expert) return expert_groups[d];
    return shard_groups[d].empty() ? dense_groups[d] : shard_groups[d];
  }

  // One collective of bucket `bi` on every group of `groups`; `then` runs when the last is over.
  void play_bucket(const std::vector<std::vector<int>>& groups, int bi, CollectiveOp op, double bytes,
                   std::function<void()> then) {
    bucket_outstanding[bi] = static_cast<int>(groups.size());
    auto shared_then = std::make_shared<std::function<void()>>(std::move(then));
    for (const auto& g : groups) {
      PlanRequest req;
      req.op = op;
      req.algo = w.algo;
      req.protocol = w.protocol;
      req.bytes = bytes;
      req.group = g;
      req.granularity = Granularity::kFlow;
      engine.start(req, [this, bi, shared_then](const CollectiveResult&) {
        if (--bucket_outstanding[bi] > 0) return;
        (*shared_then)();
      });
    }
  }

  void bucket_done(int d, bool expert, int bi) {
    if (const double wait = tl.buckets[bi].wait_after_flows_s; wait > 0) {
      tl.buckets[bi].wait_after_flows_s = 0;
      plat.after(wait, [this, d, expert, bi] { bucket_done(d, expert, bi); });
      return;
    }
    GroupFinality& f = finality[static_cast<std::size_t>(bi)];
    if (!f.final) {
      // The last member is not final yet: the stream waits for it (bucket_progress resumes).
      f.flows_done = true;
      f.flows_done_s = plat.now_s();
      return;
    }
    tl.buckets[bi].end_s = plat.now_s();
    start_next(d, expert);
  }

  std::vector<int> tl_comm_records_;  // outstanding groups of each started collective
};

}  // namespace

namespace {

StepTimeline finish_timeline(Player& p, Platform& platform, const Workload& workload, double t0) {
  if (!p.runner.done())
    throw std::logic_error("play_step: the schedule stalled with ops left (dependency bug)");
  StepTimeline& tl = p.tl;
  const bool overlap = workload.schedule->steps_overlap();
  tl.origin_s.assign(static_cast<std::size_t>(p.n), overlap ? -1.0 : 0.0);
  for (auto& op : tl.ops) {
    op.start_s -= t0;
    op.end_s -= t0;
    op.free_s -= t0;
    tl.compute_end_s[op.stage] = std::max(tl.compute_end_s[op.stage], op.free_s);
    double& origin = tl.origin_s[op.stage];
    if (origin < 0 || (overlap && op.start_s < origin)) origin = op.start_s;
  }
  for (double& o : tl.origin_s) o = std::max(0.0, o);
  for (int d = 0; d < p.n; ++d)
    tl.pipeline_end_s = std::max(tl.pipeline_end_s, tl.compute_end_s[d] - tl.origin_s[d]);
  for (auto& t : tl.transfers) {
    t.start_s -= t0;
    t.end_s -= t0;
  }
  for (auto& b : tl.buckets) {
    b.ready_s -= t0;
    b.start_s -= t0;
    b.end_s -= t0;
  }
  for (auto& c : tl.network_comms) {
    c.start_s -= t0;
    c.end_s -= t0;
  }
  for (double& a : tl.async_end_s) a = a > 0 ? a - t0 : 0;
  // A stage's reduction is over when its last bucket (and its passes' last reduce-scatter) is,
  // never before its last op.
  for (int d = 0; d < p.n; ++d) tl.dp_end_s[d] = std::max(tl.compute_end_s[d], tl.async_end_s[d]);
  for (const auto& b : tl.buckets) tl.dp_end_s[b.stage] = std::max(tl.dp_end_s[b.stage], b.end_s);
  for (int d = 0; d < p.n; ++d)
    tl.optimizer_start_s = std::max(tl.optimizer_start_s, tl.dp_end_s[d] - tl.origin_s[d]);
  tl.step_end_s = tl.optimizer_start_s + workload.optimizer_s + workload.offload_s;
  tl.transfers_started = platform.transfers_started();
  return std::move(tl);
}

void check_fits(const Platform& platform, const RankPlacement& placement) {
  int highest = -1;
  for (int g : placement.all_gpus()) highest = std::max(highest, g);
  if (highest >= platform.topology().gpu_count())
    throw std::logic_error("play_step: the plan needs GPU " + std::to_string(highest) +
                           " but the platform has " + std::to_string(platform.topology().gpu_count()));
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
    players.push_back(std::make_unique<Player>(platform, *j.workload, *j.placement, j.options, j.options.overlap_pp));
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
