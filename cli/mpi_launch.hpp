// What mpiexec needs from trainsim when trainsim launches it (calibrate --ranks N, train with
// several ranks, validate --backend cpu). Open MPI refuses to start as root unless both
// OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set (its mpirun man page,
// "--allow-run-as-root"); containers and CI machines often run as root, so trainsim sets them
// for the mpiexec it starts. Ranks beyond the core count need --oversubscribe, which the
// launchers pass already.
#pragma once

#include <string>

namespace trainsim::cli {

// When this process runs as root, sets the two variables above (if unset) in this process's
// environment, which the mpiexec it execs inherits. Returns true when it set them.
bool allow_mpi_as_root();

// The help text that says so, for the --help of the commands that launch mpiexec.
const char* mpi_root_help();

// True when an mpiexec log says it refused to run as root (the launch failed for that reason).
bool mpi_refused_root(const std::string& log);

}  // namespace trainsim::cli
