#include "models/cost/compute/power_model.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim {

bool follows_power_curve(const GpuSpec& gpu) {
  return !gpu.kernel.power_tensor_share.empty() && !(gpu.training_tensor_share > 0);
}

double power_tensor_share_at(const GpuKernelParams& k, double busy_share) {
  const auto& c = k.power_tensor_share;
  if (c.empty()) return 1;
  if (busy_share <= c.front().first) return c.front().second;
  if (busy_share >= c.back().first) return c.back().second;
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (busy_share <= c[i].first) {
      const double u = (busy_share - c[i - 1].first) / (c[i].first - c[i - 1].first);
      return c[i - 1].second + u * (c[i].second - c[i - 1].second);
    }
  }
  return c.back().second;
}

double power_limited_tensor_share(const GpuKernelParams& k, double tensor_s, double other_s) {
  // The map s -> curve(b(s)) is increasing (a faster tensor rate leaves the tensor cores a
  // smaller share, which the curve answers with a clock no lower): from the fully busy end it
  // climbs monotonically to the smallest fixed point.
  double s = power_tensor_share_at(k, 1.0);
  if (!(tensor_s > 0)) return s;
  for (int i = 0; i < 50; ++i) {
    const double busy = (tensor_s / s) / (tensor_s / s + std::max(0.0, other_s));
    const double next = power_tensor_share_at(k, busy);
    if (std::abs(next - s) < 1e-9) return next;
    s = next;
  }
  return s;
}

}  // namespace trainsim
