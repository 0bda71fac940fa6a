#include "kernels/mpi_communicator.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

namespace trainsim::kernels {
namespace {

bool g_we_initialised = false;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw std::runtime_error(std::string(what) + ": " + std::string(msg, len));
  }
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    wait_sends_nothrow();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned_ && !finalized) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

  void all_reduce(const float* send, float* recv, size_t count, ReduceOp op) override {
    const void* s = send == recv ? MPI_IN_PLACE : send;
    check(MPI_Allreduce(s, recv, int(count), MPI_FLOAT, op == ReduceOp::kSum ? MPI_SUM : MPI_MAX, comm_),
          "MPI_Allreduce");
    count_bytes(2.0 * (size_ - 1) / size_ * count * sizeof(float));
  }
  void all_reduce_f64(double* data, size_t count, ReduceOp op) override {
    check(MPI_Allreduce(MPI_IN_PLACE, data, int(count), MPI_DOUBLE, op == ReduceOp::kSum ? MPI_SUM : MPI_MAX, comm_),
          "MPI_Allreduce");
  }
  void reduce_scatter(const float* send, float* recv, size_t recv_count) override {
    check(MPI_Reduce_scatter_block(send, recv, int(recv_count), MPI_FLOAT, MPI_SUM, comm_),
          "MPI_Reduce_scatter_block");
    count_bytes(double(size_ - 1) * recv_count * sizeof(float));
  }
  void all_gather(const void* send, void* recv, size_t bytes) override {
    check(MPI_Allgather(send, int(bytes), MPI_BYTE, recv, int(bytes), MPI_BYTE, comm_), "MPI_Allgather");
    count_bytes(double(size_ - 1) * bytes);
  }
  void all_to_all(const void* send, void* recv, size_t bytes) override {
    check(MPI_Alltoall(send, int(bytes), MPI_BYTE, recv, int(bytes), MPI_BYTE, comm_), "MPI_Alltoall");
    count_bytes(double(size_ - 1) * bytes);
  }
  void send(const void* buf, size_t bytes, int peer, int tag) override {
    MPI_Request req;
    check(MPI_Isend(buf, int(bytes), MPI_BYTE, peer, tag, comm_, &req), "MPI_Isend");
    pending_.push_back(req);
    count_bytes(double(bytes));
  }
  void recv(void* buf, size_t bytes, int peer, int tag) override {
    check(MPI_Recv(buf, int(bytes), MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
  }
  void wait_sends() override {
    if (pending_.empty()) return;
    check(MPI_Waitall(int(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    pending_.clear();
  }
  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }
  void idle_barrier() override {
    MPI_Request req;
    check(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
    int done = 0;
    while (!done) {
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::unique_ptr<Communicator> split(int color, int key) override {
    MPI_Comm sub;
    check(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
    return std::make_unique<MpiCommunicator>(sub, true);
  }

 private:
  void wait_sends_nothrow() {
    if (!pending_.empty()) MPI_Waitall(int(pending_.size()), pending_.data(), MPI_STATUSES_IGNORE);
    pending_.clear();
  }
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0, size_ = 1;
  std::vector<MPI_Request> pending_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_world() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    g_we_initialised = true;
  }
  MPI_Comm dup;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
  return std::make_unique<MpiCommunicator>(dup, true);
}

void finalize_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (g_we_initialised && !finalized) MPI_Finalize();
  g_we_initialised = false;
}

void relaunch_under_mpiexec(int ranks, const std::vector<std::string>& args, std::string* why) {
  std::string mpiexec = mpiexec_path();
  if (mpiexec.empty()) mpiexec = "mpiexec";
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) {
    if (why) *why = "cannot find this executable (/proc/self/exe)";
    return;
  }
  exe[len] = 0;
  std::vector<std::string> argv{mpiexec, "-np", std::to_string(ranks)};
#if defined(OPEN_MPI)
  argv.push_back("--oversubscribe");
#endif
  argv.push_back(exe);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());
  if (why) *why = mpiexec + ": " + std::strerror(errno);
}

}  // namespace trainsim::kernels
