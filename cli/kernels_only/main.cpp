// The measurement executable: `trainsim` in kernels-only builds (GPU machines without the
// models/sim/validate layers; kernels/CMakeLists.txt) and `trainsim-kernels` in the full build
// (cli/CMakeLists.txt; `trainsim calibrate|train` exec it). The same subcommand registry and
// dispatch as cli/main.cpp, holding only the measurement commands.
#include "cli/command_registry.hpp"

int main(int argc, char** argv) {
  return trainsim::cli::dispatch(argc, argv, "measurement tools (kernels-only build)");
}
