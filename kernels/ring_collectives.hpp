// Collectives built by hand from send/recv, so that calibration can time a known algorithm
// rather than whatever the MPI library picks: the ring all-reduce (Patarasuk & Yuan 2009),
// a reduce-scatter and an all-gather of n-1 steps each, every step moving count/n elements to
// the right neighbour: time 2(n-1)·alpha + 2(n-1)/n·S/beta, the model the simulator plays.
#pragma once

#include <cstddef>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

// In-place sum over the group; count need not divide evenly.
void ring_all_reduce(Backend& be, Communicator& comm, float* data, size_t count);

}  // namespace trainsim::kernels
