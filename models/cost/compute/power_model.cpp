#include "models/cost/compute/power_model.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/piecewise.hpp"

namespace trainsim {

bool follows_power_curve(const GpuSpec& gpu) {
  return !gpu.kernel.power_tensor_share.empty() && !(gpu.training_tensor_share > 0);
}

double power_tensor_share_at(const GpuKernelParams& k, double busy_share) {
  if (k.power_tensor_share.empty()) return 1;
  return piecewise_linear(k.power_tensor_share, busy_share, [](double b) { return b; });
}

double power_limited_tensor_share(const GpuKernelParams& k, double gemm_s, double attention_s, double other_s) {
  // The map s -> curve(b(s)) is increasing (a faster tensor rate leaves the tensor cores a
  // smaller share, which the curve answers with a clock no lower): from the fully busy end it
  // climbs monotonically to the smallest fixed point.
  double s = power_tensor_share_at(k, 1.0);
  if (!(gemm_s > 0)) return s;
  for (int i = 0; i < 50; ++i) {
    const double busy = (gemm_s / s) / ((gemm_s + std::max(0.0, attention_s)) / s + std::max(0.0, other_s));
    const double next = power_tensor_share_at(k, busy);
    if (std::abs(next - s) < 1e-9) return next;
    s = next;
  }
  return s;
}

}  // namespace trainsim
