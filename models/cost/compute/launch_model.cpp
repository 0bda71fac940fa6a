#include "models/cost/compute/launch_model.hpp"

namespace trainsim {

double kernel_fixed_s(const GpuSpec& gpu) {
  return gpu.kernel.kernel_fixed_s > 0 ? gpu.kernel.kernel_fixed_s : kDefaultKernelFixedS;
}

double host_launch_s(const GpuSpec& gpu) {
  return gpu.kernel.host_launch_s > 0 ? gpu.kernel.host_launch_s : kDefaultHostLaunchS;
}

double host_issue_time_s(const GpuSpec& gpu, const ComputeOp& op) {
  return op.kernels * host_launch_s(gpu);
}

}  // namespace trainsim
