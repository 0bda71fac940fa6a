// trainsim: one executable, subcommands registered by the *_command.cpp files beside this one.
#include "cli/command_registry.hpp"
#include "cli/fidelity_registry.hpp"

namespace trainsim::cli {
std::map<std::string, FidelityFn>& fidelity_registry() {
  static std::map<std::string, FidelityFn> registry;
  return registry;
}
}  // namespace trainsim::cli

int main(int argc, char** argv) {
  return trainsim::cli::dispatch(argc, argv, "predict and validate large-model training plans");
}
