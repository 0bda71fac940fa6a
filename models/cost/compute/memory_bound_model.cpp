#include "models/cost/compute/memory_bound_model.hpp"

namespace trainsim {

double achieved_bandwidth_bytes_per_s(const GpuSpec& gpu) {
  const double share = gpu.kernel.memory_bandwidth_share > 0 ? gpu.kernel.memory_bandwidth_share
                                                              : kDefaultMemoryBandwidthShare;
  return gpu.hbm_bandwidth_bytes_per_s * share;
}

double memory_bound_time_s(const GpuSpec& gpu, double bytes) {
  const double bw = achieved_bandwidth_bytes_per_s(gpu);
  return bw > 0 ? bytes / bw : 0;
}

double norm_time_s(const GpuSpec& gpu, double bytes) {
  const double ratio = gpu.kernel.memory_norm_bandwidth_ratio > 0 ? gpu.kernel.memory_norm_bandwidth_ratio : 1.0;
  return memory_bound_time_s(gpu, bytes) / ratio;
}

double scatter_add_time_s(const GpuSpec& gpu, double bytes) {
  const double ratio = gpu.kernel.memory_scatter_add_ratio > 0 ? gpu.kernel.memory_scatter_add_ratio : 1.0;
  return memory_bound_time_s(gpu, bytes) / ratio;
}

double relayout_time_s(const GpuSpec& gpu, double bytes) {
  const double ratio = gpu.kernel.memory_relayout_ratio > 0 ? gpu.kernel.memory_relayout_ratio : 1.0;
  return memory_bound_time_s(gpu, bytes) / ratio;
}

double optimizer_time_s(const GpuSpec& gpu, double bytes) {
  const double ratio = gpu.kernel.memory_optimizer_ratio > 0 ? gpu.kernel.memory_optimizer_ratio : 1.0;
  return memory_bound_time_s(gpu, bytes) / ratio;
}

double optimizer_bytes_per_param(Precision precision, bool fp32_grads, double moment_bytes) {
  const double grad = fp32_grads ? 4 : 2;
  const double states = 4 + 2 * moment_bytes;  // fp32 weights (or master weights), m, v
  switch (precision) {
    case Precision::kFp32: return states + 4 + states;  // read p, g, m, v; write p, m, v
    case Precision::kFp16: return states + grad + states + 2 + grad;
    case Precision::kBf16:
    case Precision::kFp8: return states + grad + states + 2;
  }
  return 0;
}

}  // namespace trainsim
