// `trainsim` for kernels-only builds (GPU machines without the models/sim/validate layers):
// the same subcommand registry as cli/main.cpp, holding only the measurement commands.
// Built by kernels/CMakeLists.txt under -DTRAINSIM_KERNELS_ONLY=ON; cli/CMakeLists.txt globs
// only cli/*.cpp, so the full build never sees this second main.
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <string>

#include "cli/command_registry.hpp"

namespace trainsim::cli {
std::map<std::string, Command>& command_registry() {
  static std::map<std::string, Command> registry;
  return registry;
}
}  // namespace trainsim::cli

int main(int argc, char** argv) {
  using namespace trainsim::cli;
  auto& registry = command_registry();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::printf("trainsim %s (kernels-only build)\n\nusage: trainsim <command> [options]\n\ncommands:\n",
                TRAINSIM_VERSION);
    for (const auto& [name, cmd] : registry) std::printf("  %-14s %s\n", name.c_str(), cmd.summary.c_str());
    return argc < 2 ? kExitBadInput : kExitOk;
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim %s: internal error: %s\n", argv[1], e.what());
    return kExitFailure;
  }
}
