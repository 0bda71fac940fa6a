// Plays one training step of a Workload on the SimGrid platform. The schedule's decision rules
// come from models' PipelineRunner; the op graph (models/workload/op_graph.hpp) says what each
// pass does; this file supplies time:
//   - each pass of each pipeline device plays its program op by op on the stage's representative
//     GPU (DP replica 0, CP rank 0, TP rank 0): compute ops are timers (symmetric ranks do
//     identical compute, so it is simulated once per stage), slowed by the collectives running
//     beside them (program_reduce.hpp's fluid rule); every collective of the program runs as
//     flows through the CollectiveEngine on the GPUs of its group, on its NCCL stream (FIFO per
//     stream), and the op that needs it waits for its completion;
//   - groups whose peers run the same collective at the same time on links it shares run too:
//     every data-parallel group of the stage for ZeRO-3 gathers and reduce-scatters, and the
//     other replicas' TP/CP/EP groups when they cross nodes (within a flow budget); groups that
//     share no link with the representative's (TP inside a node) stand for their peers;
//   - every activation / gradient hand-off between stages is a real transfer of
//     Workload::p2p_bytes from each TP rank of the sending stage to the same TP rank of the
//     receiving stage (Megatron's scatter-gather p2p);
//   - the ZeRO-0/1/2 gradient reduction of EVERY dp group of every stage runs at flow
//     granularity, bucketed as Megatron does (bucket = max(40M, 1M x dp) params), each bucket
//     started when the last micro-batch's weight-gradient pass has produced its layers.
// The optimizer step and offload are fixed costs after the last reduction (a global grad-norm
// all-reduce synchronises stages before the step). No SimGrid header here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "models/schedules/schedule_order.hpp"
#include "models/workload/workload.hpp"

namespace trainsim::sim {

class Platform;

struct StepOptions {
  // Megatron buckets beyond this many per model chunk are merged into fewer simulated buckets
  // (consecutive ones, each paying its members' latencies; the last, exposed bucket stays
  // exact). Keeps 16k-GPU steps fast: 32 took the 1,024-GPU GPT-3 step of bench_step from
  // 1.4 s to 2.3 s of wall time, the flows of more buckets in flight beside the pipeline's.
  int max_buckets_per_chunk = 16;
  // ... and fewer (down to 2) when the whole step's reduction flows would exceed this budget
  // (each completion scans every comm in flight in SimGrid 3.32: cost ~ flows x concurrency).
  double max_dp_flows = 3e5;
  // Also start the p2p flows of the other DP/CP replicas' pipelines (background load that shares
  // switch links; their completions are not waited for). Off: only the representative pipeline.
  bool mirror_replica_p2p = true;
  // Above this many p2p flows per step the mirror is dropped (SimGrid 3.32's comm list cost
  // grows with the square of comms in flight; see ARCHITECTURE.md).
  double max_mirror_flows = 2e5;
  bool overlap_pp = true;  // plan.overlap.pp: off, a sender waits for its p2p sends
  // Other replicas' in-layer collectives (TP/CP/EP groups that cross nodes) are played as flows
  // while the step's in-layer collectives cost at most this many scans with them (collective_
  // flow_scans: about 3e7 a second here); beyond it the representative group stands for its peers.
  double max_mirror_collective_scans = 2e8;
  // Relative compute speed per pipeline device (stragglers; empty = all 1): the
  // compute part of the device's F/B/W timers is divided by it, the in-layer communication
  // folded into F/B is not (models/straggler.hpp). Per device, so DualPipe's two virtual stages
  // on a slow device both slow down.
  std::vector<double> device_speed;
  std::function<void(double fraction)> progress;  // called every ~5% of pipeline ops
};

// Flows one collective over `ranks` ranks starts as the step player plays it, to the order the
// budgets need: an all-to-all one per ordered pair of ranks (direct), the others one per rank
// (ring edges, tree links).
double collective_flows(CollectiveOp op, double ranks);
// What a collective of `flows` concurrent flows costs the engine: SimGrid 3.32 scans every comm
// in flight at each completion, so about flows^2 scans (measured: an EP16 all-to-all step of
// 1.2e9 scans played in 42 s on a 2-core VM, an EP8 one of 4e6 in 0.5 s).
inline double collective_flow_scans(double flows) { return flows * flows; }
// Per kind of group (CommGroup): the scans of one group's collectives in one micro-batch's
// passes, over every device's programs.
std::array<double, kCommGroups> collective_scans_by_group(const Workload& w);

struct StepOpRecord {
  int stage = 0;
  PipeOp op;
  double start_s = 0;
  double end_s = 0;   // compute done
  double free_s = 0;  // device free again (later than end_s when sends block: overlap.pp off)
  int input_transfer = -1;  // index in StepTimeline::transfers of the p2p input it waited for
};

struct StepTransferRecord {
  int src_stage = 0;
  int dst_stage = 0;
  PipeOp op;  // the op the transfer feeds on dst_stage
  double start_s = 0;
  double end_s = 0;  // all TP ranks' flows arrived
};

struct StepBucketRecord {
  int stage = 0;
  bool expert = false;
  int chunk = 0;
  double params = 0;
  double bytes = 0;         // per rank, the gradients' reduction
  double gather_bytes = 0;  // per rank, the parameters' all-gather of a sharded (ZeRO-1/2) bucket
  double replica_bytes = 0;  // per rank, the shard's all-reduce across its replicas (plan.dp_shard)
  double ready_s = 0;
  double start_s = 0;
  double end_s = 0;
  double closed_form_s = 0;  // contention-free time of one group's collective (alpha-beta)
  // What its collectives take beyond its flows, waited after them: the latency of the Megatron
  // buckets merged into it beyond the first (each its own collective), and a compressed
  // reduction's kernels; zeroed once waited.
  double wait_after_flows_s = 0;
  // Merged buckets: how long its flows were over before its last member's gradients were
  // final (waiting, not moving bytes; not busy).
  double waiting_s = 0;
  double busy_s() const { return end_s - start_s - waiting_s; }
  int groups = 0;
};

// One in-pass collective that crossed the network (its groups span nodes), as played.
struct StepCommRecord {
  int stage = 0;
  CommPurpose purpose = CommPurpose::kTp;
  double start_s = 0;
  double end_s = 0;
  double contention_free_s = 0;  // its closed form
};

struct StepTimeline {
  std::vector<StepOpRecord> ops;  // in start order
  std::vector<StepTransferRecord> transfers;
  std::vector<StepBucketRecord> buckets;
  std::vector<StepCommRecord> network_comms;
  // In-pass collectives of the representative devices, totals per stage and purpose: seconds the
  // compute stream waited for them (and lost to their slowdown) and their busy time.
  std::vector<std::array<double, kCommPurposes>> exposed_s;  // per stage
  std::vector<std::array<double, kCommPurposes>> busy_s_by_purpose;
  std::vector<std::array<double, kCommPurposes>> contention_free_s_by_purpose;  // their closed forms
  std::vector<double> compute_work_s;  // per stage: compute ops' work (unslowed)
  std::vector<double> async_end_s;     // per stage: the last collective the passes left running
  // Bytes moved per purpose, summed over all GPUs: by flows, plus the peers the representative
  // groups stand for.
  std::array<double, kCommPurposes> traffic_bytes{};
  std::array<double, kCommPurposes> traffic_bytes_as_flows{};
  std::size_t collectives_started = 0;
  std::size_t mirror_collectives = 0;
  std::vector<double> busy_s;         // per stage: compute op time
  std::vector<double> compute_end_s;  // per stage: last op free
  std::vector<double> dp_end_s;       // per stage: last bucket done (>= compute_end_s)
  // Per stage, where its step begins: 0, or where the schedule's steps overlap
  // (ScheduleTraits::steps_overlap) its first op's start, the fill before it running beside the
  // previous step. The spans below are measured from it.
  std::vector<double> origin_s;
  std::vector<int> max_in_flight;     // per stage: forwards started minus backwards done (chunk ops)
  int chunks_per_device = 1;
  int buckets_per_chunk = 0;  // simulated buckets per model chunk at most (after merging)
  double pipeline_end_s = 0;     // max over stages of compute_end_s - origin_s
  double optimizer_start_s = 0;  // max over stages of dp_end_s - origin_s
  double step_end_s = 0;         // + optimizer + offload: the step time
  std::size_t transfers_started = 0;
  std::size_t mirror_flows = 0;
};

// Plays the step on `platform` (whose cluster holds placement.gpus() GPUs) and returns the
// timeline. Runs the platform to completion.
StepTimeline play_step(Platform& platform, const Workload& workload, const RankPlacement& placement,
                       const StepOptions& options = {});

// Several jobs' steps at once on one platform (`trainsim share`): each job's placement maps its
// ranks to its own GPUs (RankPlacement::set_gpu_map); all start at the current time and their
// flows contend where they share links. Runs the platform to completion; one timeline per job.
struct StepJob {
  const Workload* workload = nullptr;
  const RankPlacement* placement = nullptr;
  StepOptions options;
};
std::vector<StepTimeline> play_steps(Platform& platform, const std::vector<StepJob>& jobs);

}  // namespace trainsim::sim
