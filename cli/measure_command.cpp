// `trainsim calibrate` and `trainsim train` run in the measurement executable trainsim-kernels
// (beside this one): see cli/CMakeLists.txt for why they are a separate process. exec keeps the
// PID and environment, so `mpirun -np 8 trainsim train ...` launches real MPI ranks.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/child_runs.hpp"
#include "cli/command_registry.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim::cli {
namespace {

// `calibrate --from-nccl-tests LOG...` and `calibrate --from-torch-trace TRACE` read files a user
// already has: they run here (import-nccl-tests, import-torch-trace), not in trainsim-kernels.
int run_in_process(const std::string& command, int argc, char** argv) {
  if (!command_registry().count(command))
    throw ScenarioError(argv[0], command + " is not built into this trainsim");
  std::vector<std::string> args = {command};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return run_command(args, argv[0]);
}

int forward(int argc, char** argv) {
  if (std::string(argv[0]) == "calibrate") {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--from-nccl-tests") return run_in_process("import-nccl-tests", argc, argv);
      if (a == "--from-torch-trace") return run_in_process("import-torch-trace", argc, argv);
    }
  }
  namespace fs = std::filesystem;
  const fs::path self = self_executable("trainsim");
  const fs::path tool = self.parent_path() / "trainsim-kernels";
  std::error_code ec;
  if (!fs::exists(tool, ec))
    throw ScenarioError(argv[0], "the measurement tools are not built here (" + tool.string() +
                                     " is missing): build with kernels/ enabled");
  std::vector<std::string> args = {tool.string()};
  for (int i = 0; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  execv(tool.c_str(), cargs.data());
  throw ScenarioError(argv[0], "cannot run " + tool.string() + ": " + std::strerror(errno));
}

const CommandRegistrar kCalibrate("calibrate", "measure ops and collectives; write a calibration file", forward);
const CommandRegistrar kTrain("train", "train a small GPT for real (TP/PP/DP, ZeRO-1, compression)", forward);

}  // namespace
}  // namespace trainsim::cli
