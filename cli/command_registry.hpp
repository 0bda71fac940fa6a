// Subcommands register themselves by name (CONVENTIONS.md #7): each *_command.cpp in cli/ holds
// one subcommand and a static CommandRegistrar, so adding a command touches no shared file.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace trainsim::cli {

// argv[0] is the subcommand name; returns the process exit code
// (0 ok, 1 internal failure, 2 bad input, 3 infeasible plan).
using CommandFn = std::function<int(int argc, char** argv)>;

struct Command {
  std::string summary;
  CommandFn run;
};

std::map<std::string, Command>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(const std::string& name, const std::string& summary, CommandFn fn) {
    command_registry()[name] = Command{summary, std::move(fn)};
  }
};

// Runs the subcommand named by argv[1] (usage, --version, unknown commands, and the mapping of
// ScenarioError to exit 2 included). Shared by trainsim and trainsim-kernels.
int dispatch(int argc, char** argv, const char* title);

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInfeasible = 3;

}  // namespace trainsim::cli
