#include "cli/command_registry.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

#include "models/core/scenario_error.hpp"

namespace trainsim::cli {

std::map<std::string, Command>& command_registry() {
  static std::map<std::string, Command> registry;
  return registry;
}

int dispatch(int argc, char** argv, const char* title) {
  auto& registry = command_registry();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::printf("trainsim %s - %s\n\nusage: trainsim <command> [options]   (trainsim <command> --help for details)\n\ncommands:\n",
                TRAINSIM_VERSION, title);
    for (const auto& [name, cmd] : registry) std::printf("  %-14s %s\n", name.c_str(), cmd.summary.c_str());
    std::printf("\nexit codes: 0 ok, 1 internal error, 2 bad input, 3 plan infeasible\n");
    return argc < 2 ? kExitBadInput : kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("trainsim %s\n", TRAINSIM_VERSION);
    return kExitOk;
  }
  auto it = registry.find(argv[1]);
  if (it == registry.end()) {
    std::fprintf(stderr, "trainsim: unknown command \"%s\"; expected one of:", argv[1]);
    for (const auto& [name, cmd] : registry) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return kExitBadInput;
  }
  try {
    return it->second.run(argc - 1, argv + 1);
  } catch (const ScenarioError& e) {
    std::fprintf(stderr, "trainsim %s: error: %s\n", argv[1], e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim %s: internal error: %s\n", argv[1], e.what());
    return kExitFailure;
  }
}

}  // namespace trainsim::cli
