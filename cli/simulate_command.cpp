// Registers the simulate tier (ARCHITECTURE.md tier 2) with `trainsim run --fidelity simulate`:
// one SimGrid step simulation per process (sim/step_simulation.hpp). Built only with sim/.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/fidelity_registry.hpp"
#include "cli/output_file.hpp"
#include "cli/progress.hpp"
#include "models/core/scenario_error.hpp"
#include "sim/step_simulation.hpp"

namespace trainsim::cli {
namespace {

// The simulation writes its trace to a private file; the copy to the user's path is the
// checked write (a full disk or /dev/full is an error, not a silently short file).
class TraceFile {
 public:
  TraceFile() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/trainsim-trace-XXXXXX";
    const int fd = mkstemp(path_.data());
    if (fd < 0) throw ScenarioError("--trace", "cannot create a temporary file for the trace in " + path_);
    ::close(fd);
  }
  ~TraceFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void simulate(const Scenario& scenario, const FidelityOptions& options, Result& result, nlohmann::json& extra) {
  sim::SimulateOptions so;
  Progress progress("simulate", "", 1.0, options.progress);
  so.step.progress = [&progress](double fraction) { progress.update(fraction); };
  if (options.trace_path.empty()) {
    result = sim::simulate_step(scenario, so, extra);
    progress.finish();
    return;
  }
  const TraceFile trace;
  so.trace_path = trace.path();
  result = sim::simulate_step(scenario, so, extra);
  progress.finish();
  if (!extra.contains("trace")) {
    // No step was played (the estimate answered, with the reason in the warnings): no trace.
    // Said, not an error: the answer stands (the GUI asks every simulate run for a trace).
    result.warnings.push_back("--trace: not written: the simulate tier played no step");
    return;
  }
  std::ifstream in(trace.path(), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  write_output_file(options.trace_path, text.str(), "--trace");
  extra["trace"] = options.trace_path;
}

const FidelityRegistrar kReg("simulate", simulate);

}  // namespace
}  // namespace trainsim::cli
