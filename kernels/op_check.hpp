// Correctness checks of every backend op against the float64 references (reference_ops.hpp),
// reported as nccl-tests reports its #wrong column: an element is wrong when
// |got - ref| > atol + rtol * |ref|. Calibration refuses to time an op with wrong > 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/reference_ops.hpp"

namespace trainsim::kernels {

struct OpCheckResult {
  std::string op;     // e.g. "gemm_bf16_nn", "attention_bwd"
  std::string shape;  // e.g. "m=64 n=48 k=80"
  size_t elements = 0;
  size_t wrong = 0;
  double max_abs_error = 0.0;
};

struct OpCheckOptions {
  uint64_t seed = 1;
  bool large = false;  // larger shapes (multi-tile paths on cuda); small ones run in milliseconds
};

// Runs every op once on `be` and checks it. Never throws for a wrong result; throws only when
// the backend itself fails (e.g. a CUDA error).
std::vector<OpCheckResult> check_ops(Backend& be, const OpCheckOptions& opts = {});

// Counts elements outside atol + rtol*|ref| and records the largest absolute error.
size_t count_wrong(const std::vector<float>& got, const reference::Vec& ref, double atol,
                   double rtol, double* max_abs_error);

// Deterministic uniform [lo, hi) floats (std::mt19937_64), the inputs of every check.
std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);
reference::Vec to_double(const std::vector<float>& v);

}  // namespace trainsim::kernels
