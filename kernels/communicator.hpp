// Collectives over a group of ranks, one interface for MPI (cpu buffers), NCCL (device
// buffers) and a single rank. Sizes follow nccl-tests: all_reduce `count` elements in and out;
// reduce_scatter size()*recv_count in, recv_count out; all_gather/all_to_all per-rank bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trainsim::kernels {

enum class ReduceOp { kSum, kMax };

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "self", "mpi", "nccl"

  // send == recv is allowed (in place).
  virtual void all_reduce(const float* send, float* recv, size_t count, ReduceOp op) = 0;
  virtual void all_reduce_f64(double* data, size_t count, ReduceOp op) = 0;  // host buffers, any comm
  virtual void reduce_scatter(const float* send, float* recv, size_t recv_count) = 0;
  virtual void all_gather(const void* send, void* recv, size_t bytes_per_rank) = 0;
  virtual void all_to_all(const void* send, void* recv, size_t bytes_per_rank) = 0;
  // send() may return before the receiver posts its recv; `buf` must stay valid until
  // wait_sends(). recv() blocks until the data is there. Matching is by (peer, tag).
  virtual void send(const void* buf, size_t bytes, int peer, int tag) = 0;
  virtual void recv(void* buf, size_t bytes, int peer, int tag) = 0;
  virtual void wait_sends() = 0;
  virtual void barrier() = 0;
  // A barrier that sleeps instead of spinning while it waits (MPI: Ibarrier + test + 1 ms
  // sleeps), so ranks waiting for rank 0 to finish timing do not steal its cores.
  virtual void idle_barrier() { barrier(); }
  // MPI_Comm_split semantics: ranks with the same color form a group, ordered by key.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // Bytes this rank put on the wire, counted as the ring algorithms move them: all-reduce
  // 2(n-1)/n S, reduce-scatter/all-gather/all-to-all (n-1)/n S (S as nccl-tests counts it),
  // send S. Not what the MPI library chose internally.
  uint64_t bytes_sent() const { return bytes_sent_; }
  void reset_bytes_sent() { bytes_sent_ = 0; }

 protected:
  void count_bytes(double bytes) { bytes_sent_ += static_cast<uint64_t>(bytes + 0.5); }

 private:
  uint64_t bytes_sent_ = 0;
};

// A group of one (copies, no communication) for the given memory: "host" or "device" buffers
// are both plain pointers here; the copy goes through `copy` (memcpy for host).
using CopyFn = void (*)(void* ctx, void* dst, const void* src, size_t bytes);
std::unique_ptr<Communicator> make_self_communicator(CopyFn copy = nullptr, void* ctx = nullptr);

class Backend;
// A group of one over `be`'s memory (copies with be.copy_device): use it for device buffers.
std::unique_ptr<Communicator> make_self_communicator(Backend& be);

// The process's world: MPI_COMM_WORLD when built with MPI (initialising MPI on first use),
// otherwise a group of one. finalize_world() calls MPI_Finalize if this module initialised MPI.
std::unique_ptr<Communicator> make_world_communicator();
void finalize_world();
bool mpi_compiled();
// True when this process was started by mpirun/srun (looks at the launcher's environment).
bool launched_by_mpi();
// The mpiexec found at configure time ("" without MPI).
std::string mpiexec_path();
// Replaces this process by `mpiexec -np ranks [--oversubscribe] /proc/self/exe args...`
// (--oversubscribe with Open MPI, so more ranks than cores work). Returns only on failure,
// with the reason in *why.
void relaunch_under_mpiexec(int ranks, const std::vector<std::string>& args, std::string* why);

}  // namespace trainsim::kernels
