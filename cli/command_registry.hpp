// Subcommands register themselves by name (CONVENTIONS.md #7): each *_command.cpp in cli/ holds
// one subcommand and a static CommandRegistrar, so adding a command touches no shared file.
//
// A command declares its options in one table, a function `declare(CLI::App&, Options&)` that
// binds every option to a field of its Options struct (cli_args.hpp has the common ones), and
// runs from the parsed struct: `int run(Options&)`. The dispatcher parses (`--opt value` and
// `--opt=value`), prints the one help layout for `trainsim CMD --help` and `trainsim help CMD`,
// and maps errors to exit codes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trainsim::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;      // an internal error: a bug
constexpr int kExitBadInput = 2;     // bad input, unreadable inputs, unwritable outputs
constexpr int kExitInfeasible = 3;   // a well-formed plan that cannot run
constexpr int kExitCheckFailed = 4;  // a check failed (accuracy gate, #wrong results)

// A command that reads its own argv (argv[0] is the command name) and returns the exit code.
// Used by commands that forward their arguments to another program; commands not yet moved to
// an option table use it too.
using CommandFn = std::function<int(int argc, char** argv)>;

struct Command {
  std::string summary;
  // Declares the command's options on `app` (bound to a fresh Options object) and returns the
  // function that runs the command with the parsed values. Empty for raw commands.
  std::function<std::function<int()>(CLI::App& app)> declare;
  CommandFn raw;
};

std::map<std::string, Command>& command_registry();

struct CommandRegistrar {
  // A raw command (parses its own argv).
  CommandRegistrar(const std::string& name, const std::string& summary, CommandFn fn) {
    command_registry()[name] = Command{summary, nullptr, std::move(fn)};
  }
  // A command with an option table.
  template <class Options>
  CommandRegistrar(const std::string& name, const std::string& summary,
                   void (*declare)(CLI::App&, Options&), int (*run)(Options&)) {
    command_registry()[name] = Command{
        summary,
        [declare, run](CLI::App& app) -> std::function<int()> {
          auto options = std::make_shared<Options>();
          declare(app, *options);
          return [options, run] { return run(*options); };
        },
        nullptr};
  }
};

// Runs the subcommand named by argv[1]: usage, `help [CMD]`, `completion bash`, --version,
// unknown commands, the mapping of ScenarioError to exit 2, and a failed write of stdout
// (exit 2). Shared by trainsim and trainsim-kernels.
int dispatch(int argc, char** argv, const char* title);

// Runs a registered command in this process with these arguments (args[0] is its name);
// messages name it `shown_as` when given (calibrate --from-torch-trace runs import-torch-trace).
int run_command(const std::vector<std::string>& args, const std::string& shown_as = "");

// argv[0] of this process, as dispatch received it.
const std::string& program_name();

// The arguments of the command running now (its name first), as given: for commands that
// relaunch themselves (under mpiexec).
const std::vector<std::string>& command_args();

}  // namespace trainsim::cli
