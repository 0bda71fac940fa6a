// The "kernels" block of a GPU preset (scenarios/gpus/*.json) and of a calibration file: the
// kernel-level parameters GpuKernelParams holds, each cited in the block's "sources" map
// (docs/compute-model.md lists them). One reader and one writer, shared by the scenario loader,
// the resolved-scenario writer and the calibration.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/core/specs.hpp"

namespace trainsim {

// Strict read (ScenarioError naming `path`.<field>); absent fields stay at their "not given"
// values. `base` supplies the values a partial block (a calibration) leaves out.
GpuKernelParams parse_gpu_kernel_params(const nlohmann::json& block, const std::string& path,
                                        const GpuKernelParams& base = {});
// The same block, as parse_gpu_kernel_params reads it (no "sources": a resolved scenario repeats
// values, the preset keeps their citations).
nlohmann::json to_json(const GpuKernelParams& params);

}  // namespace trainsim
