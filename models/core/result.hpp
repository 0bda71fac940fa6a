// What a run predicts (ARCHITECTURE.md "Results"): units in every name. Both tiers fill the
// same struct; result_json.cpp writes the JSON contract of `trainsim run --json`.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

struct MemoryBreakdown {
  double params_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double other_bytes = 0;  // communication buffers, logits/loss workspace, framework reserve
  double total() const {
    return params_bytes + grads_bytes + optimizer_bytes + activations_bytes + other_bytes;
  }
};

struct StageMemory {
  int stage = 0;
  int layers = 0;
  double in_flight_micro_batches = 0;
  MemoryBreakdown breakdown;
  double total_bytes = 0;
};

// Where one step's time goes on the critical stage (seconds). Exposed parts only: what overlaps
// with compute is not counted here (see OverlappedComm).
struct TimeBreakdown {
  double compute_s = 0;
  double tp_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;
  double ep_comm_s = 0;
  double cp_comm_s = 0;
  double bubble_s = 0;
  double optimizer_s = 0;
  double offload_s = 0;
};

// The critical stage's collective time in a step that ran beside its compute, by purpose: each
// purpose's busy time on the NCCL streams (the collectives in its passes, and for DP the gradient
// buckets too) less what the breakdown counts exposed for it; pipeline transfers are not counted.
// Both tiers fill it with overlapped_comm (one definition).
struct OverlappedComm {
  double tp_s = 0;
  double cp_s = 0;
  double ep_s = 0;
  double dp_s = 0;
  double total_s() const { return tp_s + cp_s + ep_s + dp_s; }
};
// From the collectives' busy seconds per purpose and the exposed breakdown.
OverlappedComm overlapped_comm(const TimeBreakdown& exposed, double tp_busy_s, double cp_busy_s, double ep_busy_s,
                               double dp_busy_s);

struct Result {
  bool feasible = true;
  std::string reason;  // why not feasible; empty when feasible
  std::string fidelity = "estimate";
  std::vector<std::string> warnings;

  double step_time_s = 0;
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     // what the model needs (PaLM appendix B)
  double hardware_flops_per_step = 0;  // what runs, recompute included
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  // Mean over pipeline stages of the share of the pipeline's makespan (its first op's start to
  // its last op's end) the stage sits idle; 0 without pipeline parallelism. Both tiers.
  double bubble_fraction = 0;
  double exposed_comm_s = 0;
  OverlappedComm overlapped;  // overlapped_comm_s in the JSON: overlapped.total_s()
  TimeBreakdown breakdown;

  std::vector<StageMemory> per_stage;
  double peak_memory_bytes = 0;
  MemoryBreakdown peak_breakdown;  // of the stage with the peak
  double hbm_capacity_bytes = 0;

  // Communication volume per step per GPU (bytes sent), by group.
  double tp_bytes = 0, pp_bytes = 0, dp_bytes = 0, ep_bytes = 0, cp_bytes = 0;
  int micro_batches = 0;  // per pipeline per step
  int gpus = 0;
};

}  // namespace trainsim
