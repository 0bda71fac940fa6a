#include "kernels/communicator.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "kernels/backend.hpp"
#if defined(TRAINSIM_HAVE_MPI)
#include "kernels/mpi_communicator.hpp"
#endif

namespace trainsim::kernels {
namespace {

void memcpy_copy(void*, void* dst, const void* src, size_t bytes) {
  if (dst != src) std::memmove(dst, src, bytes);
}

class SelfCommunicator final : public Communicator {
 public:
  SelfCommunicator(CopyFn copy, void* ctx) : copy_(copy ? copy : memcpy_copy), ctx_(ctx) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "self"; }
  void all_reduce(const float* send, float* recv, size_t count, ReduceOp) override {
    copy_(ctx_, recv, send, count * sizeof(float));
  }
  void all_reduce_f64(double*, size_t, ReduceOp) override {}
  void reduce_scatter(const float* send, float* recv, size_t n) override {
    copy_(ctx_, recv, send, n * sizeof(float));
  }
  void all_gather(const void* send, void* recv, size_t bytes) override { copy_(ctx_, recv, send, bytes); }
  void all_to_all(const void* send, void* recv, size_t bytes) override { copy_(ctx_, recv, send, bytes); }
  void send(const void*, size_t, int, int) override {
    throw std::logic_error("send on a group of one rank");
  }
  void recv(void*, size_t, int, int) override { throw std::logic_error("recv on a group of one rank"); }
  void wait_sends() override {}
  void barrier() override {}
  std::unique_ptr<Communicator> split(int, int) override {
    return std::make_unique<SelfCommunicator>(copy_, ctx_);
  }

 private:
  CopyFn copy_;
  void* ctx_;
};

}  // namespace

std::unique_ptr<Communicator> make_self_communicator(CopyFn copy, void* ctx) {
  return std::make_unique<SelfCommunicator>(copy, ctx);
}

std::unique_ptr<Communicator> make_self_communicator(Backend& be) {
  return make_self_communicator(
      [](void* ctx, void* dst, const void* src, size_t bytes) {
        if (dst != src) static_cast<Backend*>(ctx)->copy_device(dst, src, bytes);
      },
      &be);
}

bool mpi_compiled() {
#if defined(TRAINSIM_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

std::string mpiexec_path() {
#if defined(TRAINSIM_MPIEXEC)
  return TRAINSIM_MPIEXEC;
#else
  return "";
#endif
}

std::unique_ptr<Communicator> make_world_communicator() {
#if defined(TRAINSIM_HAVE_MPI)
  return make_mpi_world();
#else
  return make_self_communicator();
#endif
}

#if !defined(TRAINSIM_HAVE_MPI)
void relaunch_under_mpiexec(int, const std::vector<std::string>&, std::string* why) {
  if (why) *why = "trainsim was built without MPI";
}
#endif

void finalize_world() {
#if defined(TRAINSIM_HAVE_MPI)
  finalize_mpi();
#endif
}

}  // namespace trainsim::kernels
