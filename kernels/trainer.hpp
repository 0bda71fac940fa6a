// `trainsim train`: the small GPT of gpt_model.hpp trained on real ranks with tensor, pipeline
// (1F1B or GPipe) and data parallelism (ZeRO-1 optional), gradient accumulation over
// micro-batches, and gradient compression stages on the data-parallel reduction.
//
// Measurement: every step starts from a barrier of all ranks (so a rank's step time does not
// carry another rank's logging or the previous step's skew), and every rank records its own op
// timeline (op_timeline.hpp) and its thread's CPU time; with timeline_path set each rank writes
// them, one JSON line per step, to <timeline_path>.rank<R>.jsonl (format in kernels/README.md).
//
// Rank layout (Megatron's order, TP innermost): world rank = (dp_i * pp + pp_i) * tp + tp_i.
// Batch: every step consumes global_batch sequences; DP replica d takes the micro-batches
// d*m .. d*m+m-1 (m = global_batch / (dp * micro_batch)), so every parallel layout sees the same
// sequences and, for the same seed, follows the single-rank loss curve up to fp32 rounding.
// Reduced sync frequency: with sync_every K the DP reduction and the optimizer step happen every
// K-th step on the mean gradient of the K steps (replicas stay identical: ZeRO-1 compatible);
// this trades K-1 of every K gradient syncs for fewer, larger optimizer steps.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"
#include "kernels/compressed_collectives.hpp"
#include "kernels/gpt_model.hpp"

namespace trainsim::kernels {

struct CompressionStage {
  int start_step = 0;
  CompressionSpec spec;
  int sync_every = 1;
};

// "int8", or stages "2of4@0,int4@10,none:4@20" (method[:sync_every]@start_step; the first stage
// must start at 0). Throws std::invalid_argument naming the bad part.
std::vector<CompressionStage> parse_compression_schedule(const std::string& text, int default_sync_every,
                                                         size_t quant_block, double topk_ratio);

struct TrainConfig {
  GptConfig model;
  int tp = 1, pp = 1, dp = 1;
  int global_batch = 8;  // sequences per step
  int micro_batch = 2;   // sequences per micro-batch
  int steps = 10;
  int zero = 1;          // ZeRO stage: 0 (all-reduce) or 1 (sharded optimizer states)
  double lr = 3e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.0;
  int warmup_steps = 0;  // linear learning-rate warm-up
  std::vector<CompressionStage> compression;  // empty: none
  bool error_feedback = true;
  size_t corpus_bytes = 1 << 16;
  std::string corpus_file;  // empty: generated corpus
  std::string schedule = "1f1b";  // pipeline order: "1f1b" (PipeDream-Flush) or "gpipe"
  std::string timeline_path;      // per-rank op timelines: <path>.rank<R>.jsonl; empty: none
};

// The file rank `rank` writes its op timeline to.
std::string timeline_file(const std::string& prefix, int rank);

// "" when the config can run on world_size ranks, else a message naming the argument
// ("--tp 3 does not divide --heads 4").
std::string check_train_config(const TrainConfig& cfg, int world_size, const std::string& backend);

struct StepLog {
  int step = 0;
  double loss = 0.0;          // mean cross-entropy over the step's tokens (nats)
  double step_time_s = 0.0;   // max over ranks
  double peak_bytes = 0.0;    // max over ranks of the backend's peak allocation
  double bytes_tp = 0.0, bytes_pp = 0.0, bytes_dp = 0.0;  // sent this step, summed over ranks
  // Wall time inside each group's calls this step, max over ranks. pp includes waiting for
  // the neighbouring stage (transfer + pipeline bubble); tp/dp include waiting for the
  // slowest peer.
  double comm_time_tp_s = 0.0, comm_time_pp_s = 0.0, comm_time_dp_s = 0.0;
  // Max over ranks of the step's wall time outside pipeline send/recv/wait: the busiest rank's
  // busy time. step_time_s - busy_time_s is the pipeline idle (bubble + exposed transfers) of
  // the rank that set the step time.
  double busy_time_s = 0.0;
  double optimizer_time_s = 0.0;  // max over ranks: gradient scaling + AdamW (+ ZeRO-1 shard copy)
  // Min over ranks of the step's thread CPU time / wall time: 1 when no rank lost its core to
  // another process (MPI polls while it waits), lower when one did.
  double cpu_share = 1.0;
  std::string compression;    // active stage
  bool optimizer_step = true;
};

// Runs on every rank of `world`; on_step is called on every rank with the same, reduced figures.
// `world` is a host communicator (MPI or a group of one; on cuda the groups are then NCCL
// communicators bootstrapped over it) or, for one process driving several GPUs from threads,
// one of make_nccl_communicators()'s communicators, used directly.
std::vector<StepLog> train_gpt(Backend& be, Communicator& world, const TrainConfig& cfg,
                               const std::function<void(const StepLog&)>& on_step = {});

std::string step_log_json(const StepLog& log);
std::string train_config_json(const TrainConfig& cfg, const std::string& backend, int world_size);

}  // namespace trainsim::kernels
