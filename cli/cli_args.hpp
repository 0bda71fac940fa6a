// The subcommands' option tables: each command declares its options on a CLI11 App in one place
// (`declare(CLI::App&, Options&)`, see command_registry.hpp), and these helpers keep the common
// options (--set, --presets, --json, -j, --progress/--quiet) and the help layout the same
// everywhere. Every bad argument is a ScenarioError or a CLI11 parse error naming the option
// (exit 2).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace trainsim::cli {

// The one help layout: "usage: trainsim CMD ARGS [options]", the description, arguments, options
// (with their defaults), the command's notes, and the exit codes.
std::shared_ptr<CLI::Formatter> help_formatter();

// The exit-code line every help page ends with.
const char* exit_codes_help();

// Splits "a.b=c" into {"a.b", "c"}; throws ScenarioError("--set", ...) when malformed.
std::pair<std::string, std::string> parse_set(const std::string& text);
std::vector<std::pair<std::string, std::string>> parse_sets(const std::vector<std::string>& texts);

// Checks: a number that is finite and within [min, max] (CLI11's Range lets NaN through).
CLI::Validator finite_range(double min, double max);

// Common options, declared the same way by every command that has them.
CLI::Option* add_set_option(CLI::App& app, std::vector<std::string>& sets,
                            const std::string& what = "a scenario field");
CLI::Option* add_presets_option(CLI::App& app, std::vector<std::string>& dirs);
CLI::Option* add_json_flag(CLI::App& app, bool& json, const std::string& what);
CLI::Option* add_jobs_option(CLI::App& app, int& jobs, const std::string& what);

// Progress on stderr: auto (when stderr is a terminal), on (--progress) or off (--quiet).
enum class ProgressMode { kAuto, kOn, kOff };
void add_progress_options(CLI::App& app, ProgressMode& mode);

// Processor count of this machine (at least 1): the default of -j.
int hardware_jobs();

// --- Helpers for commands that still read their own argv (see command_registry.hpp) ---------
// Returns the value after option `argv[i]`, advancing i; throws when it is missing.
std::string option_value(int argc, char** argv, int& i);

// Parses an integer option value within [min, max].
long long parse_int_option(const std::string& option, const std::string& value, long long min,
                           long long max);

}  // namespace trainsim::cli
