// Communicator over NCCL (device buffers, the backend's stream). Bootstrapped as nccl-tests
// does: rank 0's ncclUniqueId is shared over a host communicator (MPI), or, in one process
// driving several GPUs from threads, ncclCommInitAll. Only built with CUDA and NCCL.
// send/recv: NCCL matches point-to-point by order per peer, not by tag; a send() is held back
// and issued in one ncclGroup with the next recv() (or wait_sends()), so the post-send,
// then-receive pattern of 1F1B cannot deadlock on NCCL's blocking p2p.
#pragma once

#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

bool nccl_compiled();
// One NCCL rank per rank of `bootstrap` (host communicator), on `be`'s device and stream.
std::unique_ptr<Communicator> make_nccl_communicator(Backend& be, Communicator& bootstrap);
// One communicator per backend (one backend per GPU, all in this process): ncclCommInitAll.
// Collectives must then be called from one thread per communicator, concurrently.
std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(const std::vector<Backend*>& bes);

// One process driving GPUs 0 .. ranks-1 from threads: a cuda backend per GPU and their NCCL
// communicators (declared in that order, so the communicators are destroyed first).
struct ThreadedNcclWorld {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::unique_ptr<Communicator>> comms;
};
ThreadedNcclWorld make_threaded_nccl_world(int ranks, int threads_per_rank);

}  // namespace trainsim::kernels
