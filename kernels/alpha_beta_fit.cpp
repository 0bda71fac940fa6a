#include "kernels/alpha_beta_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainsim::kernels {

AlphaBetaFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& time_s) {
  if (bytes.size() != time_s.size() || bytes.empty())
    throw std::invalid_argument("fit_alpha_beta: need matching, non-empty samples");
  // Normal equations of min sum w_i (alpha + beta x_i - t_i)^2 with w_i = 1 / t_i^2.
  double s1 = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    double w = 1.0 / (time_s[i] * time_s[i]);
    s1 += w;
    sx += w * bytes[i];
    sxx += w * bytes[i] * bytes[i];
    st += w * time_s[i];
    sxt += w * bytes[i] * time_s[i];
  }
  AlphaBetaFit f;
  double det = s1 * sxx - sx * sx;
  if (std::fabs(det) > 1e-300 * std::max(1.0, s1 * sxx)) {
    f.alpha_s = (sxx * st - sx * sxt) / det;
    f.beta_s_per_byte = (s1 * sxt - sx * st) / det;
  }
  if (f.alpha_s < 0 || !(std::fabs(det) > 0)) {  // beta only
    f.alpha_s = 0;
    f.beta_s_per_byte = sxx > 0 ? sxt / sxx : 0;
  }
  if (f.beta_s_per_byte < 0) {  // alpha only
    f.beta_s_per_byte = 0;
    f.alpha_s = st / s1;
  }
  for (size_t i = 0; i < bytes.size(); ++i)
    f.max_rel_error = std::max(f.max_rel_error,
                               std::fabs(f.alpha_s + f.beta_s_per_byte * bytes[i] - time_s[i]) / time_s[i]);
  return f;
}

}  // namespace trainsim::kernels
