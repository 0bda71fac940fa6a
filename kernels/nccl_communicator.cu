#include "kernels/nccl_communicator.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cuda_backend.hpp"

namespace trainsim::kernels {
namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

struct PendingSend {
  const void* buf;
  size_t bytes;
  int peer;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, Backend& be)
      : comm_(comm), be_(be), stream_(static_cast<cudaStream_t>(cuda_backend_stream(be))) {
    check_nccl(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
    check_nccl(ncclCommCount(comm_, &size_), "ncclCommCount");
  }
  ~NcclCommunicator() override { ncclCommDestroy(comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }

  void all_reduce(const float* send, float* recv, size_t count, ReduceOp op) override {
    check_nccl(ncclAllReduce(send, recv, count, ncclFloat, op == ReduceOp::kSum ? ncclSum : ncclMax, comm_, stream_),
               "ncclAllReduce");
    count_bytes(2.0 * (size_ - 1) / size_ * count * sizeof(float));
  }
  void all_reduce_f64(double* data, size_t count, ReduceOp op) override {
    DeviceArray<double> d(be_, count);
    be_.copy_to_device(d.data(), data, count * sizeof(double));
    check_nccl(ncclAllReduce(d.data(), d.data(), count, ncclDouble, op == ReduceOp::kSum ? ncclSum : ncclMax,
                             comm_, stream_), "ncclAllReduce");
    be_.copy_to_host(data, d.data(), count * sizeof(double));
  }
  void reduce_scatter(const float* send, float* recv, size_t recv_count) override {
    check_nccl(ncclReduceScatter(send, recv, recv_count, ncclFloat, ncclSum, comm_, stream_), "ncclReduceScatter");
    count_bytes(double(size_ - 1) * recv_count * sizeof(float));
  }
  void all_gather(const void* send, void* recv, size_t bytes) override {
    check_nccl(ncclAllGather(send, recv, bytes, ncclUint8, comm_, stream_), "ncclAllGather");
    count_bytes(double(size_ - 1) * bytes);
  }
  void all_to_all(const void* send, void* recv, size_t bytes) override {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (int p = 0; p < size_; ++p) {
      check_nccl(ncclSend(static_cast<const char*>(send) + p * bytes, bytes, ncclUint8, p, comm_, stream_), "ncclSend");
      check_nccl(ncclRecv(static_cast<char*>(recv) + p * bytes, bytes, ncclUint8, p, comm_, stream_), "ncclRecv");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    count_bytes(double(size_ - 1) * bytes);
  }
  void send(const void* buf, size_t bytes, int peer, int) override {
    pending_.push_back({buf, bytes, peer});
    count_bytes(double(bytes));
  }
  void recv(void* buf, size_t bytes, int peer, int) override {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    flush_sends();
    check_nccl(ncclRecv(buf, bytes, ncclUint8, peer, comm_, stream_), "ncclRecv");
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }
  void wait_sends() override {
    if (pending_.empty()) return;
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    flush_sends();
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    be_.synchronize();
  }
  void barrier() override {
    double x = 0;
    all_reduce_f64(&x, 1, ReduceOp::kSum);
  }
  std::unique_ptr<Communicator> split(int color, int key) override {
    ncclComm_t sub;
    check_nccl(ncclCommSplit(comm_, color, key, &sub, nullptr), "ncclCommSplit");
    return std::make_unique<NcclCommunicator>(sub, be_);
  }

 private:
  void flush_sends() {
    for (const auto& s : pending_)
      check_nccl(ncclSend(s.buf, s.bytes, ncclUint8, s.peer, comm_, stream_), "ncclSend");
    pending_.clear();
  }
  ncclComm_t comm_;
  Backend& be_;
  cudaStream_t stream_;
  int rank_ = 0, size_ = 1;
  std::vector<PendingSend> pending_;
};

}  // namespace

bool nccl_compiled() { return true; }

std::unique_ptr<Communicator> make_nccl_communicator(Backend& be, Communicator& bootstrap) {
  if (be.name() != "cuda") throw std::invalid_argument("NCCL needs the cuda backend");
  ncclUniqueId id;
  if (bootstrap.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  std::vector<ncclUniqueId> all(bootstrap.size());
  bootstrap.all_gather(&id, all.data(), sizeof(id));
  ncclComm_t comm;
  check_nccl(ncclCommInitRank(&comm, bootstrap.size(), all[0], bootstrap.rank()), "ncclCommInitRank");
  return std::make_unique<NcclCommunicator>(comm, be);
}

std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(const std::vector<Backend*>& bes) {
  std::vector<int> devs;
  for (size_t i = 0; i < bes.size(); ++i) devs.push_back(int(i));
  std::vector<ncclComm_t> comms(bes.size());
  check_nccl(ncclCommInitAll(comms.data(), int(bes.size()), devs.data()), "ncclCommInitAll");
  std::vector<std::unique_ptr<Communicator>> out;
  for (size_t i = 0; i < bes.size(); ++i) out.push_back(std::make_unique<NcclCommunicator>(comms[i], *bes[i]));
  return out;
}

ThreadedNcclWorld make_threaded_nccl_world(int ranks, int threads_per_rank) {
  ThreadedNcclWorld world;
  std::vector<Backend*> raw;
  for (int i = 0; i < ranks; ++i) {
    BackendOptions opts;
    opts.threads = threads_per_rank;
    opts.device = i;
    world.backends.push_back(make_backend("cuda", opts));
    raw.push_back(world.backends.back().get());
  }
  world.comms = make_nccl_communicators(raw);
  return world;
}

}  // namespace trainsim::kernels
