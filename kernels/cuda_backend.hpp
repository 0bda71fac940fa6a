// Entry points of the cuda backend (defined in cuda_backend.cu; only built with CUDA).
#pragma once

#include <memory>
#include <string>

#include "kernels/backend.hpp"

namespace trainsim::kernels {

// Throws std::runtime_error naming the CUDA error when no device can be used.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts);
// 0 when there is no usable device ("CUDA driver version is insufficient" included).
int cuda_device_count_impl(std::string* why);
// The CUDA stream a backend's ops run on (for NCCL, which must share it).
void* cuda_backend_stream(Backend& backend);

}  // namespace trainsim::kernels
