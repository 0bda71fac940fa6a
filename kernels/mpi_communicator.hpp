// Communicator over MPI (cpu buffers); only built when CMake finds MPI.
#pragma once

#include <memory>

#include "kernels/communicator.hpp"

namespace trainsim::kernels {

std::unique_ptr<Communicator> make_mpi_world();  // MPI_Init on first call
void finalize_mpi();                             // MPI_Finalize if make_mpi_world initialised it

}  // namespace trainsim::kernels
