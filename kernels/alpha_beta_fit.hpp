// Fit of the alpha-beta (Hockney) model t(S) = alpha + beta * S to measured (bytes, seconds).
#pragma once

#include <vector>

namespace trainsim::kernels {

struct AlphaBetaFit {
  double alpha_s = 0.0;          // latency: time of an empty collective
  double beta_s_per_byte = 0.0;  // inverse bandwidth
  double max_rel_error = 0.0;    // worst |fit - t| / t over the samples
};

// Weighted least squares minimising the sum of squared *relative* errors ((fit - t) / t)^2, so
// 8-byte latencies weigh as much as 1 GiB transfers. alpha and beta are clamped to >= 0 (if the
// unconstrained optimum is negative, the one-parameter fit with that term at 0 is used).
AlphaBetaFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& time_s);

}  // namespace trainsim::kernels
