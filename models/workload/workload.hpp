// The workload of one training step (ARCHITECTURE.md: "the hinge of the design"): what every
// pipeline device computes per micro-batch, what it sends to its neighbours, what its data-
// parallel group reduces, and the fixed costs around them. One generator (build_workload) turns
// a plan into this; the estimate tier reduces it in closed form (estimate.cpp) and the simulate
// tier plays it out in time (sim/step_simulator). A parallelism feature is added here once and
// both tiers see it.
#pragma once

#include <vector>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/schedules/pipeline_schedule.hpp"
#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

// One pipeline device (all of its model chunks), per micro-batch, one GPU.
struct StageWork {
  int layers = 0;
  int moe_layers = 0;
  bool first = false;
  bool last = false;
  // Compute alone (recompute included in backward); backward = B + W.
  double forward_compute_s = 0;
  double backward_compute_s = 0;
  double backward_weight_s = 0;  // the W part, which zero-bubble schedules may defer
  // Exposed communication inside the layers, forward + backward (closed form).
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  // What the schedule plays: F and B with their exposed in-layer communication folded in
  // proportionally; W has none.
  double forward_s = 0;
  double backward_s = 0;  // B + W
  double dense_params = 0;   // parameters on this GPU outside the experts
  double expert_params = 0;  // routed-expert parameters on this GPU
  double dp_reduce_s = 0;    // closed-form gradient reduction of this stage (one step average)
};

struct Workload {
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1;
  int micro_batches = 1;
  std::vector<StageWork> stages;  // one per pipeline device

  // Pipeline point-to-point: each TP rank sends 1/tp of the activation (scatter-gather).
  double p2p_bytes = 0;
  double p2p_s = 0;  // closed form, contention-free
  GroupShape pp_pair;

  // Data-parallel gradient reduction.
  FabricTerms fabric;
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  GroupShape dp_group;         // dense gradients: dp x cp ranks
  GroupShape expert_dp_group;  // expert gradients: dp x cp / ep ranks
  double grad_bytes_per_param = 2;
  double dp_wire_ratio = 1;  // compression and sync interval, averaged over the run
  double dp_bucket_params = 40e6;
  bool overlap_dp = true;
  double zero3_gather_s = 0;  // ZeRO-3 parameter all-gathers per step (closed form, exposed part)

  double optimizer_s = 0;
  double offload_s = 0;
  double largest_stage_params = 0;
};

// Fills the workload and the parts of `result` that do not depend on how the step is played
// (FLOPs, memory per stage, bytes per group, feasibility). Returns false, with result.reason set,
// when the plan's structure does not allow it.
bool build_workload(const Scenario& scenario, Workload& workload, Result& result);

}  // namespace trainsim
