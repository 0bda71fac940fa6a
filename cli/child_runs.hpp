// Runs `trainsim run --fidelity simulate --json` for many scenarios in child processes, at most
// `jobs` at a time: only one SimGrid engine may exist per process (ARCHITECTURE.md).
//
// The children's files live in a folder trainsim-children-<pid>-XXXXXX (under `parent_dir`:
// a sweep's --out folder, else $TMPDIR or /tmp), removed on every exit of this process: a normal
// return, an exception, SIGINT, SIGTERM or SIGHUP (the children are stopped first). Children die
// with their parent (PR_SET_PDEATHSIG), and a folder a SIGKILLed parent left behind is removed by
// the next run that uses the same parent folder (its pid is no longer alive).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace trainsim::cli {

struct ChildRun {
  std::string scenario_json;  // written to a file in the folder for the child
  std::string output;         // the child's stdout
  std::string error;          // its stderr
  int exit_code = -1;
};

// self: path of this executable. on_done(i) is called as each child finishes.
void run_children(const std::string& self, std::vector<ChildRun>& runs, int jobs,
                  const std::vector<std::string>& extra_args,
                  const std::function<void(std::size_t)>& on_done, const std::string& parent_dir = "");

// Removes trainsim-children-<pid>-* folders in `parent_dir` whose process is gone; returns how
// many it removed.
int reap_stale_children_folders(const std::string& parent_dir);

// Path of the running executable (/proc/self/exe), or argv0.
std::string self_executable(const char* argv0);

}  // namespace trainsim::cli
