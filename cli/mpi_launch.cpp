#include "cli/mpi_launch.hpp"

#include <unistd.h>

#include <cstdlib>

namespace trainsim::cli {

bool allow_mpi_as_root() {
  if (geteuid() != 0) return false;
  bool set = false;
  for (const char* name : {"OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"}) {
    if (std::getenv(name)) continue;
    setenv(name, "1", 0);
    set = true;
  }
  return set;
}

const char* mpi_root_help() {
  return "MPI: trainsim starts mpiexec itself (with --oversubscribe). Run as root, it sets\n"
         "OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 for it, which Open MPI needs\n"
         "to start as root; when you launch mpirun yourself as root, export both first.";
}

bool mpi_refused_root(const std::string& log) {
  return log.find("allow-run-as-root") != std::string::npos ||
         log.find("OMPI_ALLOW_RUN_AS_ROOT") != std::string::npos ||
         log.find("running as root") != std::string::npos;
}

}  // namespace trainsim::cli
