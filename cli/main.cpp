// trainsim: one executable, subcommands registered by the *_command.cpp files beside this one.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/command_registry.hpp"
#include "cli/fidelity_registry.hpp"
#include "models/scenario_error.hpp"

namespace trainsim::cli {
std::map<std::string, Command>& command_registry() {
  static std::map<std::string, Command> registry;
  return registry;
}
std::map<std::string, FidelityFn>& fidelity_registry() {
  static std::map<std::string, FidelityFn> registry;
  return registry;
}
}  // namespace trainsim::cli

namespace {
void print_usage() {
  std::printf(
      "trainsim %s - predict and validate large-model training plans\n\n"
      "usage: trainsim <command> [options]   (trainsim <command> --help for details)\n\ncommands:\n",
      TRAINSIM_VERSION);
  for (const auto& [name, cmd] : trainsim::cli::command_registry())
    std::printf("  %-14s %s\n", name.c_str(), cmd.summary.c_str());
  std::printf("\nexit codes: 0 ok, 1 internal error, 2 bad input, 3 plan infeasible\n");
}
}  // namespace

int main(int argc, char** argv) {
  using namespace trainsim::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    print_usage();
    return argc < 2 ? kExitBadInput : kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("trainsim %s\n", TRAINSIM_VERSION);
    return kExitOk;
  }
  auto& registry = command_registry();
  auto it = registry.find(argv[1]);
  if (it == registry.end()) {
    std::fprintf(stderr, "trainsim: unknown command \"%s\"; expected one of:", argv[1]);
    for (const auto& [name, cmd] : registry) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return kExitBadInput;
  }
  try {
    return it->second.run(argc - 1, argv + 1);
  } catch (const trainsim::ScenarioError& e) {
    std::fprintf(stderr, "trainsim %s: error: %s\n", argv[1], e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim %s: internal error: %s\n", argv[1], e.what());
    return kExitFailure;
  }
}
