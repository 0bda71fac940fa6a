#include "cli/cli_args.hpp"

#include <cerrno>
#include <cstdlib>

#include "models/core/scenario_error.hpp"

namespace trainsim::cli {

std::pair<std::string, std::string> parse_set(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ScenarioError("--set", "expected path=value (e.g. plan.tp=4), got \"" + text + "\"");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string option_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw ScenarioError(argv[i], "needs a value");
  return argv[++i];
}

long long parse_int_option(const std::string& option, const std::string& value, long long min,
                           long long max) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < min || v > max)
    throw ScenarioError(option, "expected an integer between " + std::to_string(min) + " and " +
                                    std::to_string(max) + ", got \"" + value + "\"");
  return v;
}

}  // namespace trainsim::cli
