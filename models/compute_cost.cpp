#include "models/compute_cost.hpp"

namespace trainsim {

double gemm_efficiency(const GpuSpec& gpu, double width) {
  const double eff_max =
      gpu.gemm_efficiency_max > 0 ? gpu.gemm_efficiency_max : kDefaultGemmEfficiencyMax;
  const double w_half = gpu.gemm_efficiency_max > 0 ? gpu.gemm_half_width : kDefaultGemmHalfWidth;
  if (width <= 0) return eff_max;
  return eff_max * width / (width + w_half);
}

double elementwise_bytes_per_hidden(const GpuSpec& gpu) {
  return gpu.elementwise_bytes_per_hidden > 0 ? gpu.elementwise_bytes_per_hidden
                                              : kDefaultElementwiseBytesPerHidden;
}

}  // namespace trainsim
