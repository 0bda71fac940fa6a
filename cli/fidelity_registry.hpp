// Fidelity tiers by name (CONVENTIONS.md #7), each registered by its own file: "estimate" from
// estimate_fidelity.cpp, "simulate" from simulate_command.cpp when the SimGrid layer is built.
// A new tier is one file with a FidelityRegistrar line; `trainsim run --fidelity NAME` offers it.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_args.hpp"
#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim::cli {

struct FidelityOptions {
  std::string trace_path;  // write a Chrome/Perfetto trace here when not empty
  ProgressMode progress = ProgressMode::kOff;  // progress of the step on stderr (progress.hpp)
};

// Fills `result` (and extra JSON keys, e.g. hottest links, in `extra`).
using FidelityFn =
    std::function<void(const Scenario&, const FidelityOptions&, Result& result, nlohmann::json& extra)>;

std::map<std::string, FidelityFn>& fidelity_registry();

struct FidelityRegistrar {
  FidelityRegistrar(const std::string& name, FidelityFn fn) { fidelity_registry()[name] = std::move(fn); }
};

}  // namespace trainsim::cli
