// Small shared argument helpers for the subcommands: every bad argument is a ScenarioError that
// names the option (exit 2).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace trainsim::cli {

// Splits "a.b=c" into {"a.b", "c"}; throws ScenarioError("--set", ...) when malformed.
std::pair<std::string, std::string> parse_set(const std::string& text);

// Returns the value after option `argv[i]`, advancing i; throws when it is missing.
std::string option_value(int argc, char** argv, int& i);

// Parses a positive integer option value.
long long parse_int_option(const std::string& option, const std::string& value, long long min,
                           long long max);

}  // namespace trainsim::cli
