// The workload of one training step (ARCHITECTURE.md: "the hinge of the design"), built once
// from the scenario by build_workload: the op graph of every pipeline device (op_graph.hpp:
// what each pass of each model chunk computes and communicates, for one micro-batch), what
// neighbouring stages send each other, how the data-parallel groups reduce gradients, and the
// fixed costs around them. The estimate tier reduces the programs in closed form
// (program_reduce.hpp, estimate.cpp); the simulate tier plays every op (sim/step_player.cpp). A
// parallelism feature is added once, in the layer programs, and both tiers see it.
#pragma once

#include <vector>

#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/schedules/pipeline_schedule.hpp"
#include "models/workload/layer_program.hpp"
#include "models/workload/op_graph.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/placement.hpp"

namespace trainsim {

// One pipeline device (all of its model chunks), per micro-batch, one GPU: its passes as the
// closed form reduces them, summed over the chunks a micro-batch visits (interleaving: all of
// the device's; DualPipe: one of its two directions' stages, so the mean of the two). Layers and
// parameters are what the device holds (DualPipe: both stages).
struct StageWork {
  int layers = 0;
  int moe_layers = 0;
  bool first = false;
  bool last = false;
  // Compute alone (recompute included in backward); backward = B + W.
  double forward_compute_s = 0;
  double backward_compute_s = 0;
  double backward_weight_s = 0;  // the W part, which zero-bubble schedules may defer
  // Communication the compute stream waited for inside the passes (and the compute slowed by
  // collectives beside it), forward + backward, by purpose.
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double zero3_comm_s = 0;  // ZeRO-3 parameter gathers (and gradient reduce-scatters) waited for
  // What the schedule plays per micro-batch: the reduced passes.
  double forward_s = 0;
  double backward_s = 0;  // B + W
  // Collectives the passes leave running (ZeRO-3 reduce-scatters): per micro-batch, their busy
  // time and how far the last one runs past the end of a backward pass.
  double async_busy_s = 0;
  double async_tail_s = 0;
  // Every collective of the passes, by purpose: its busy time per micro-batch on its stream (the
  // closed form, contention-free), waited for or not.
  double comm_busy_s[kCommPurposes] = {0, 0, 0, 0, 0};
  double dense_params = 0;   // parameters on this GPU outside the experts
  double expert_params = 0;  // routed-expert parameters on this GPU
  double dp_reduce_s = 0;    // closed-form gradient reduction of this stage (ZeRO-0/1/2, one step average)
  // Parameters whose gradients are final only as the stage's last backward ends, in one tensor:
  // the input embedding's (its weight gradient, a scatter-add, is the backward's last op, and a
  // gradient bucket never splits a parameter: Megatron-LM's param_and_grad_buffer).
  double params_final_at_end = 0;
  // Sum of the squared times of the compute ops of one micro-batch (forward and backward): the
  // spread of a replica's arrival at the gradient reduction (models/cost/arrival_wait.hpp).
  double compute_sq_s2 = 0;
  // A bidirectional schedule (DualPipe): each of the device's two stages' own passes, by
  // direction (the figures above are their mean).
  double direction_forward_s[2] = {0, 0};
  double direction_backward_s[2] = {0, 0};  // B + W
  double direction_backward_weight_s[2] = {0, 0};
  // What each direction's F and its backward (B and W) spend beyond their compute: a pair runs
  // the forward's and the whole backward's compute ops on one stream, so it saves at most the sum.
  double direction_forward_beyond_compute_s[2] = {0, 0};
  double direction_backward_beyond_compute_s[2] = {0, 0};
  // A schedule that overlaps a forward with a backward: the pair of the forward of direction f
  // and the backward (B) of direction b, reduced as one program (fb_overlap.hpp); -1: no pairs.
  double pair_s[2][2] = {{-1, -1}, {-1, -1}};
};

struct Workload {
  const PipelineSchedule* schedule = &default_pipeline_schedule();  // resolved once per plan
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, etp = 1, vpp = 1;
  int micro_batches = 1;
  std::vector<StageWork> stages;        // one per pipeline device
  std::vector<DeviceProgram> programs;  // the op graph, one per pipeline device
  bool split_backward = false;          // passes are F, B, W (zero-bubble, DualPipe) or F, B+W
  double overlap_slowdown = 0;          // sigma of program_reduce.hpp
  RankPlacement placement{1, 1, 1, 1};
  GroupShape group_shapes[kCommGroups];           // per CommGroup, as the layer programs were priced

  // Pipeline point-to-point: each TP rank sends 1/tp of the activation (scatter-gather).
  double p2p_bytes = 0;
  double p2p_s = 0;  // closed form, contention-free: the slowest boundary's
  // Per boundary (TransferDelays, timeline.hpp: d joins devices d and d + 1 mod p; 0 where no
  // chunk crosses it); empty without a pipeline.
  std::vector<double> p2p_boundary_s;
  TransferDelays p2p_delays() const {
    return TransferDelays(p2p_boundary_s.data(), static_cast<int>(p2p_boundary_s.size()));
  }

  // Data-parallel gradient reduction (ZeRO-0/1/2; ZeRO-3 reduce-scatters per layer in the programs).
  FabricTerms fabric;
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;  // plan.collective_protocol
  GroupShape dp_group;         // dense gradients: dp x cp ranks
  // plan.dp_shard: the dense states' shard group and a shard's replicas (the DP group and none
  // without one); ZeRO-1/2 reduce-scatter and all-gather over the first, all-reduce over the second.
  GroupShape dp_shard_group;
  GroupShape dp_replica_group;
  GroupShape expert_dp_group;  // expert gradients: the EDP ranks
  double grad_bytes_per_param = 2;
  double param_bytes_per_param = 2;
  // ZeRO-1/2 without compression: each reduction is a reduce-scatter of the gradients and an
  // all-gather of the updated parameters; otherwise one all-reduce of the gradients.
  bool dp_sharded = false;
  // The gradient reduction's wait for the last replica (arrival_wait.hpp), in dp_reduce_s; the
  // simulate tier delays the first bucket by it.
  double dp_arrival_wait_s = 0;
  // Compression and sync interval, averaged over the run: the bytes each reduction moves over
  // those of the uncompressed reduction of its kind (dp_sharded), and its time over the
  // uncompressed one's.
  double dp_wire_ratio = 1;
  double dp_time_ratio = 1;
  double dp_bucket_params = 40e6;
  bool overlap_dp = true;
  int zero_stage = 0;

  double optimizer_s = 0;
  double offload_s = 0;

  // Bytes each purpose moves in one step, summed over all GPUs (what the simulation should move
  // as flows), indexed by CommPurpose.
  double traffic_bytes[kCommPurposes] = {0, 0, 0, 0, 0};

  // Pairs WorkloadOptions::defer_pairs left unpriced (StageWork::pair_s -1 until price_pairs):
  // what pricing them reads. ctx points into the scenario build_workload was given.
  struct PendingPairs {
    bool pending = false;
    LayerContext ctx;
    uint32_t contexts[3] = {0, 0, 0};
    PassKind backward = PassKind::kBackward;
    double sigma = 0;
    std::vector<ChunkLayers> chunks;  // two per pipeline device
  } pending_pairs;
};

struct WorkloadOptions {
  // Keep the op graph (Workload::programs): the simulate tier, trace attribution, Chakra export
  // and the GUI's timeline read it. Without it the passes are priced and reduced through the
  // per-thread memo tables (memo.hpp) and only their costs are kept: the same functions, called
  // once per distinct pass; the estimate and sweeps need nothing more.
  bool keep_programs = true;
  // Return (false) as soon as the plan is known not to fit (memory, host memory), before any
  // pass is priced: plan searches reject cheapest first. The result then has no times.
  bool stop_when_infeasible = false;
  // Leave the pairs of a schedule that overlaps a forward with a backward (DualPipe) unpriced,
  // for price_pairs to price if the caller still needs them (the estimate's rank floor may
  // reject the plan first, from a bound that needs no pairs). Only without keep_programs.
  bool defer_pairs = false;
};

// What a playback of the schedule reads of a device: its passes per chunk. A stage's figures
// are per micro-batch; interleaving takes each micro-batch through the device's vpp chunks,
// DualPipe through one of its two (its direction's stage), whose mean the stage holds.
inline StageCosts stage_costs(const Workload& w, const StageWork& s) {
  if (w.schedule->bidirectional() && w.pp > 1) {
    StageCosts c{s.direction_forward_s[0], s.direction_backward_s[0] - s.direction_backward_weight_s[0],
                 s.direction_backward_weight_s[0], s.direction_forward_s[1],
                 s.direction_backward_s[1] - s.direction_backward_weight_s[1], s.direction_backward_weight_s[1]};
    for (int f = 0; f < 2; ++f)
      for (int b = 0; b < 2; ++b) c.pair_s[f][b] = s.pair_s[f][b];
    return c;
  }
  const int chunks = w.schedule->layer_chunks(w.vpp);
  return {s.forward_s / chunks, (s.backward_s - s.backward_weight_s) / chunks, s.backward_weight_s / chunks};
}

// Fills the workload and the parts of `result` that do not depend on how the step is played
// (FLOPs, memory per stage, bytes per group, feasibility). Returns false, with result.reason set,
// when the plan's structure does not allow it (or, with stop_when_infeasible, it does not fit).
// A workload it fills is reused plan after plan (estimate()): every field of Workload must be
// set here on the way to `true`, never left from the previous plan.
bool build_workload(const Scenario& scenario, Workload& workload, Result& result,
                    const WorkloadOptions& options = {});

// Prices the pairs build_workload deferred (WorkloadOptions::defer_pairs), as it would have;
// nothing when none are pending. Call it while the scenario it was built from lives.
void price_pairs(Workload& workload);

}  // namespace trainsim
