// `trainsim calibrate`: op and collective microbenchmarks, every one checked before it is
// timed, written as a calibration JSON (format in kernels/README.md).
#pragma once

#include <algorithm>

#include <cstddef>
#include <array>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

// One rank's share of the `train` job (gpt_model.hpp, trainer.hpp) whose ops `calibrate
// --model-shape` times at exactly the shapes the trainer runs them (the "op_rates" section).
struct ModelOpShape {
  int layers = 0;  // 0: no op_rates section
  int hidden = 64, heads = 4, seq = 32, vocab = 256;
  int micro_batch = 2;
  int tp = 1, pp = 1, dp = 1, zero = 1;
  int micro_batches = 4;  // per replica per step (the trainer's default)
  // Micro-batches whose activations are alive at once on the stage that holds the most: 1F1B
  // min(m, pp), GPipe m. 0: min(m, pp), 1F1B.
  int in_flight = 0;
  int micro_batches_in_flight() const { return in_flight > 0 ? in_flight : std::min(micro_batches, pp); }
};

// "layers=4,hidden=128,heads=4,seq=64,vocab=256,micro_batch=2,micro_batches=4,tp=1,pp=2,dp=1,zero=1,in_flight=2"
// (any subset; the rest keep their defaults). Throws std::invalid_argument naming the bad part.
ModelOpShape parse_model_op_shape(const std::string& text);

struct CalibrationOptions {
  bool quick = false;            // fewer shapes and sizes (CI)
  bool check_only = false;       // op/collective checks only, no timing sweep
  bool large_checks = false;     // also the large op-check shapes
  size_t max_collective_bytes = 0;  // 0: backend default (cpu 16 MiB, cuda 1 GiB)
  double min_time_per_point_s = 0.02;  // repeat a measurement until this much time has passed
  std::string tool_version = "0.0.0";
  // GEMM shapes of the model at hand ({m, n, k}, label "model"), timed in every dtype.
  std::vector<std::array<int, 3>> model_gemm_shapes;
  // The train job's per-rank ops, timed on every rank at once (as training runs them).
  ModelOpShape model_shape;
};

struct CalibrationOutcome {
  std::string json;     // the calibration file (complete on rank 0; empty elsewhere)
  size_t wrong = 0;     // total wrong elements over all checks (all ranks)
  std::string summary;  // human-readable table, nccl-tests style (rank 0)
};

// "" when the options are within the calibration's ranges (buffers a GPU holds, a minute per
// point at most), else a message naming the argument. run_calibration throws
// std::invalid_argument with it; the command should check first and exit 2.
std::string check_calibration_options(const CalibrationOptions& opts);

// Runs on every rank of `comm` (collectives need all of them); comm may be a group of one.
CalibrationOutcome run_calibration(Backend& be, Communicator& comm, const CalibrationOptions& opts);

}  // namespace trainsim::kernels
