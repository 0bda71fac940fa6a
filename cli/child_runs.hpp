// Runs `trainsim run --fidelity simulate --json` for many scenarios in child processes, at most
// `jobs` at a time: only one SimGrid engine may exist per process (ARCHITECTURE.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace trainsim::cli {

struct ChildRun {
  std::string scenario_json;  // written to a temporary file for the child
  std::string output;         // the child's stdout
  std::string error;          // its stderr
  int exit_code = -1;
};

// self: path of this executable. on_done(i) is called as each child finishes.
void run_children(const std::string& self, std::vector<ChildRun>& runs, int jobs,
                  const std::vector<std::string>& extra_args,
                  const std::function<void(std::size_t)>& on_done);

// Path of the running executable (/proc/self/exe), or argv0.
std::string self_executable(const char* argv0);

}  // namespace trainsim::cli
