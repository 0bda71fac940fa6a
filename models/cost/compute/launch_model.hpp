// Per-kernel overheads (docs/compute-model.md "Overheads"): the fixed GPU time of a kernel
// (a one-element kernel takes ~2 us of GPU time on H100, mem_h100_kernel_launch_overhead), and
// the host time to issue it (eager PyTorch: the CPU-side launch usually takes 5-20 us,
// host_eager_pytorch_launch). The GPU time is part of every op's compute_op_time_s; the host
// time is a separate stream of work: a pass whose kernels are shorter than the host needs to
// issue them is host-bound, so a step reduces max(sum of GPU times, sum of host times).
#pragma once

#include "models/core/specs.hpp"
#include "models/cost/compute/compute_op.hpp"

namespace trainsim {

double kernel_fixed_s(const GpuSpec& gpu);
double host_launch_s(const GpuSpec& gpu);

// Host (framework + driver) seconds to issue the op's kernels.
double host_issue_time_s(const GpuSpec& gpu, const ComputeOp& op);

constexpr double kDefaultKernelFixedS = 2e-6;
constexpr double kDefaultHostLaunchS = 5e-6;

}  // namespace trainsim
