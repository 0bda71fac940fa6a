// The trainer's own op timeline: every backend op and every collective one rank runs in a step,
// with its start and end (seconds from the step's aligned start), the pass it belongs to and
// its micro-batch, so `validate --backend cpu` compares each component of the step with the
// prediction's like with like (compute op classes, each collective with its group, pipeline
// send/recv/wait, the optimizer) instead of inferring them from step totals.
//
// RecordingBackend wraps a Backend and times each op call; RecordingCommunicator wraps a
// group's communicator and times each call under the group's name. On a synchronous backend
// (cpu) the wall time of a call is the op's time. On cuda the recorder synchronises the device
// after each op (as CUDA_LAUNCH_BLOCKING does), so every op's time is its kernel's plus one
// launch latency; the step time of a recorded step includes those launch latencies too.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

// Where in the step an op ran.
enum class OpPhase : uint8_t { kForward, kBackward, kDataParallel, kOptimizer, kOther };
const char* to_string(OpPhase phase);  // "F", "B", "DP", "OPT", "OTHER"

struct OpEvent {
  const char* op = "";     // backend op or collective name (a string literal)
  const char* group = "";  // "" for compute; "tp", "pp", "dp", "world" for communication
  OpPhase phase = OpPhase::kOther;
  int micro_batch = -1;
  double t0_s = 0, t1_s = 0;  // from the step's start
  double count = 0;           // elements (compute) or bytes (communication) of the call
};

class OpTimeline {
 public:
  using Clock = std::chrono::steady_clock;
  void begin_step() {
    events_.clear();
    start_ = Clock::now();
  }
  void set_phase(OpPhase phase, int micro_batch = -1) {
    phase_ = phase;
    micro_batch_ = micro_batch;
  }
  double now_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  void record(const char* op, const char* group, double t0_s, double t1_s, double count) {
    if (enabled_) events_.push_back({op, group, phase_, micro_batch_, t0_s, t1_s, count});
  }
  void set_enabled(bool on) { enabled_ = on; }
  const std::vector<OpEvent>& events() const { return events_; }

 private:
  std::vector<OpEvent> events_;
  Clock::time_point start_ = Clock::now();
  OpPhase phase_ = OpPhase::kOther;
  int micro_batch_ = -1;
  bool enabled_ = true;
};

class RecordingBackend final : public Backend {
 public:
  RecordingBackend(Backend& inner, OpTimeline& timeline);
  ~RecordingBackend() override;
  Backend& inner() { return inner_; }
  std::string name() const override { return inner_.name(); }
  std::string device_name() const override { return inner_.device_name(); }
  void copy_to_device(void* d, const void* s, size_t b) override;
  void copy_to_host(void* d, const void* s, size_t b) override;
  void copy_device(void* d, const void* s, size_t b) override;
  void fill_zero(void* p, size_t b) override;
  void synchronize() override { inner_.synchronize(); }
  void bind_thread() override { inner_.bind_thread(); }
  void gemm(DType type, bool ta, bool tb, int m, int n, int k, float alpha, const void* a, const void* b,
            float beta, void* c) override;
  void convert(DType from, DType to, size_t n, const void* s, void* d) override;
  void axpy(size_t n, float alpha, const float* x, float* y) override;
  void scale(size_t n, float alpha, float* x) override;
  void layernorm_fwd(int rows, int cols, const float* x, const float* g, const float* b, float eps, float* y,
                     float* mean, float* rstd) override;
  void layernorm_bwd(int rows, int cols, const float* dy, const float* x, const float* g, const float* mean,
                     const float* rstd, float* dx, float* dg, float* db) override;
  void gelu_fwd(size_t n, const float* x, float* y) override;
  void gelu_bwd(size_t n, const float* x, const float* dy, float* dx) override;
  void swiglu_fwd(int rows, int f, const float* gu, float* out) override;
  void swiglu_bwd(int rows, int f, const float* gu, const float* dout, float* dgu) override;
  void softmax_xent(int rows, int vocab, const float* logits, const int32_t* targets, float* losses, float* dlogits,
                    float grad_scale) override;
  void attention_fwd(int batch, int seq, int heads, int head_dim, const float* q, const float* k, const float* v,
                     float* o, float* lse) override;
  void attention_bwd(int batch, int seq, int heads, int head_dim, const float* q, const float* k, const float* v,
                     const float* o, const float* lse, const float* dout, float* dq, float* dk, float* dv) override;
  void adamw(size_t n, float* p, const float* g, float* m, float* v, float lr, float b1, float b2, float eps,
             float wd, int step) override;
  void embedding_fwd(int n_tokens, int seq, int hidden, const int32_t* tokens, const float* wte, const float* wpe,
                     float* out) override;
  void embedding_bwd(int n_tokens, int seq, int hidden, const int32_t* tokens, const float* dout, float* dwte,
                     float* dwpe) override;
  void quantize(QuantFormat f, size_t n, size_t block, const float* x, void* payload) override;
  void dequantize(QuantFormat f, size_t n, size_t block, const void* payload, float* y, bool acc) override;
  void sparsify_2of4(size_t n, const float* x, void* payload) override;
  void densify_2of4(size_t n, const void* payload, float* y, bool acc) override;
  void top_k(size_t n, size_t k, const float* x, float* values, int32_t* indices) override;
  void scatter_add(size_t k, const float* values, const int32_t* indices, float* y) override;

 private:
  void* raw_alloc(size_t bytes) override;
  void raw_free(void* p) override;
  template <typename F>
  void timed(const char* op, double count, F&& f);
  Backend& inner_;
  OpTimeline& tl_;
  bool sync_;
  std::unordered_map<void*, size_t> sizes_;  // the inner backend frees by size
};

// A group's communicator whose calls are recorded under `group` ("tp", "pp", "dp") and whose
// wall time inside calls is summed (seconds()) for the step log.
class RecordingCommunicator final : public Communicator {
 public:
  RecordingCommunicator(std::unique_ptr<Communicator> inner, Backend& be, OpTimeline& timeline, const char* group);
  double seconds() const { return seconds_; }
  void reset_seconds() { seconds_ = 0; }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string name() const override { return inner_->name(); }
  void all_reduce(const float* s, float* r, size_t n, ReduceOp op) override;
  void all_reduce_f64(double* d, size_t n, ReduceOp op) override;
  void reduce_scatter(const float* s, float* r, size_t n) override;
  void all_gather(const void* s, void* r, size_t b) override;
  void all_to_all(const void* s, void* r, size_t b) override;
  void send(const void* b, size_t n, int peer, int tag) override;
  void recv(void* b, size_t n, int peer, int tag) override;
  void wait_sends() override;
  void barrier() override;
  void idle_barrier() override;
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  template <typename F>
  void timed(const char* op, double bytes, F&& f);
  std::unique_ptr<Communicator> inner_;
  Backend& be_;
  OpTimeline& tl_;
  const char* group_;
  bool sync_;
  double seconds_ = 0;
};

// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID) and its involuntary context switches
// (getrusage RUSAGE_THREAD): with one rank per core and MPI polling while it waits, a step's CPU
// time equals its wall time unless another process took the core.
struct ThreadUsage {
  double cpu_s = 0;
  long involuntary_switches = 0;
};
ThreadUsage thread_usage();

// The core the calling thread runs on now (sched_getcpu), -1 when unknown.
int current_core();

}  // namespace trainsim::kernels
