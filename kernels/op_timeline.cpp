#include "kernels/op_timeline.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <time.h>

namespace trainsim::kernels {

const char* to_string(OpPhase phase) {
  switch (phase) {
    case OpPhase::kForward: return "F";
    case OpPhase::kBackward: return "B";
    case OpPhase::kDataParallel: return "DP";
    case OpPhase::kOptimizer: return "OPT";
    case OpPhase::kOther: return "OTHER";
  }
  return "OTHER";
}

RecordingBackend::RecordingBackend(Backend& inner, OpTimeline& timeline)
    : inner_(inner), tl_(timeline), sync_(inner.name() != "cpu") {}

RecordingBackend::~RecordingBackend() = default;

void* RecordingBackend::raw_alloc(size_t bytes) {
  void* p = inner_.alloc_bytes(bytes);
  sizes_[p] = bytes;
  return p;
}

void RecordingBackend::raw_free(void* p) {
  auto it = sizes_.find(p);
  if (it == sizes_.end()) return;
  inner_.free_bytes(p, it->second);
  sizes_.erase(it);
}

template <typename F>
void RecordingBackend::timed(const char* op, double count, F&& f) {
  const double t0 = tl_.now_s();
  f();
  if (sync_) inner_.synchronize();
  tl_.record(op, "", t0, tl_.now_s(), count);
}

void RecordingBackend::copy_to_device(void* d, const void* s, size_t b) {
  timed("copy_to_device", double(b), [&] { inner_.copy_to_device(d, s, b); });
}
void RecordingBackend::copy_to_host(void* d, const void* s, size_t b) {
  timed("copy_to_host", double(b), [&] { inner_.copy_to_host(d, s, b); });
}
void RecordingBackend::copy_device(void* d, const void* s, size_t b) {
  timed("copy", double(b) / 4, [&] { inner_.copy_device(d, s, b); });
}
void RecordingBackend::fill_zero(void* p, size_t b) {
  timed("fill_zero", double(b) / 4, [&] { inner_.fill_zero(p, b); });
}
void RecordingBackend::gemm(DType type, bool ta, bool tb, int m, int n, int k, float alpha, const void* a,
                            const void* b, float beta, void* c) {
  // X^T dY (trans_a) is a weight gradient, dY W^T (trans_b) an input gradient; the forward GEMMs
  // transpose nothing (gpt_model.cpp).
  const char* op = ta ? "gemm_wgrad" : tb ? "gemm_dgrad" : "gemm";
  timed(op, 2.0 * m * n * k, [&] { inner_.gemm(type, ta, tb, m, n, k, alpha, a, b, beta, c); });
}
void RecordingBackend::convert(DType from, DType to, size_t n, const void* s, void* d) {
  timed("convert", double(n), [&] { inner_.convert(from, to, n, s, d); });
}
void RecordingBackend::axpy(size_t n, float alpha, const float* x, float* y) {
  timed("axpy", double(n), [&] { inner_.axpy(n, alpha, x, y); });
}
void RecordingBackend::scale(size_t n, float alpha, float* x) {
  timed("scale", double(n), [&] { inner_.scale(n, alpha, x); });
}
void RecordingBackend::layernorm_fwd(int rows, int cols, const float* x, const float* g, const float* b, float eps,
                                     float* y, float* mean, float* rstd) {
  timed("layernorm_fwd", double(rows) * cols, [&] { inner_.layernorm_fwd(rows, cols, x, g, b, eps, y, mean, rstd); });
}
void RecordingBackend::layernorm_bwd(int rows, int cols, const float* dy, const float* x, const float* g,
                                     const float* mean, const float* rstd, float* dx, float* dg, float* db) {
  timed("layernorm_bwd", double(rows) * cols,
        [&] { inner_.layernorm_bwd(rows, cols, dy, x, g, mean, rstd, dx, dg, db); });
}
void RecordingBackend::gelu_fwd(size_t n, const float* x, float* y) {
  timed("gelu_fwd", double(n), [&] { inner_.gelu_fwd(n, x, y); });
}
void RecordingBackend::gelu_bwd(size_t n, const float* x, const float* dy, float* dx) {
  timed("gelu_bwd", double(n), [&] { inner_.gelu_bwd(n, x, dy, dx); });
}
void RecordingBackend::swiglu_fwd(int rows, int f, const float* gu, float* out) {
  timed("swiglu_fwd", double(rows) * f, [&] { inner_.swiglu_fwd(rows, f, gu, out); });
}
void RecordingBackend::swiglu_bwd(int rows, int f, const float* gu, const float* dout, float* dgu) {
  timed("swiglu_bwd", double(rows) * f, [&] { inner_.swiglu_bwd(rows, f, gu, dout, dgu); });
}
void RecordingBackend::softmax_xent(int rows, int vocab, const float* logits, const int32_t* targets, float* losses,
                                    float* dlogits, float grad_scale) {
  timed("softmax_xent", double(rows) * vocab,
        [&] { inner_.softmax_xent(rows, vocab, logits, targets, losses, dlogits, grad_scale); });
}
void RecordingBackend::attention_fwd(int batch, int seq, int heads, int head_dim, const float* q, const float* k,
                                     const float* v, float* o, float* lse) {
  // Causal FLOPs 2 b h s^2 d, the calibration's convention.
  timed("attention_fwd", 2.0 * batch * heads * double(seq) * seq * head_dim,
        [&] { inner_.attention_fwd(batch, seq, heads, head_dim, q, k, v, o, lse); });
}
void RecordingBackend::attention_bwd(int batch, int seq, int heads, int head_dim, const float* q, const float* k,
                                     const float* v, const float* o, const float* lse, const float* dout, float* dq,
                                     float* dk, float* dv) {
  timed("attention_bwd", 5.0 * batch * heads * double(seq) * seq * head_dim,
        [&] { inner_.attention_bwd(batch, seq, heads, head_dim, q, k, v, o, lse, dout, dq, dk, dv); });
}
void RecordingBackend::adamw(size_t n, float* p, const float* g, float* m, float* v, float lr, float b1, float b2,
                             float eps, float wd, int step) {
  timed("adamw", double(n), [&] { inner_.adamw(n, p, g, m, v, lr, b1, b2, eps, wd, step); });
}
void RecordingBackend::embedding_fwd(int n_tokens, int seq, int hidden, const int32_t* tokens, const float* wte,
                                     const float* wpe, float* out) {
  timed("embedding_fwd", double(n_tokens) * hidden,
        [&] { inner_.embedding_fwd(n_tokens, seq, hidden, tokens, wte, wpe, out); });
}
void RecordingBackend::embedding_bwd(int n_tokens, int seq, int hidden, const int32_t* tokens, const float* dout,
                                     float* dwte, float* dwpe) {
  timed("embedding_bwd", double(n_tokens) * hidden,
        [&] { inner_.embedding_bwd(n_tokens, seq, hidden, tokens, dout, dwte, dwpe); });
}
void RecordingBackend::quantize(QuantFormat f, size_t n, size_t block, const float* x, void* payload) {
  timed("quantize", double(n), [&] { inner_.quantize(f, n, block, x, payload); });
}
void RecordingBackend::dequantize(QuantFormat f, size_t n, size_t block, const void* payload, float* y, bool acc) {
  timed("dequantize", double(n), [&] { inner_.dequantize(f, n, block, payload, y, acc); });
}
void RecordingBackend::sparsify_2of4(size_t n, const float* x, void* payload) {
  timed("sparsify_2of4", double(n), [&] { inner_.sparsify_2of4(n, x, payload); });
}
void RecordingBackend::densify_2of4(size_t n, const void* payload, float* y, bool acc) {
  timed("densify_2of4", double(n), [&] { inner_.densify_2of4(n, payload, y, acc); });
}
void RecordingBackend::top_k(size_t n, size_t k, const float* x, float* values, int32_t* indices) {
  timed("top_k", double(n), [&] { inner_.top_k(n, k, x, values, indices); });
}
void RecordingBackend::scatter_add(size_t k, const float* values, const int32_t* indices, float* y) {
  timed("scatter_add", double(k), [&] { inner_.scatter_add(k, values, indices, y); });
}

RecordingCommunicator::RecordingCommunicator(std::unique_ptr<Communicator> inner, Backend& be, OpTimeline& timeline,
                                             const char* group)
    : inner_(std::move(inner)), be_(be), tl_(timeline), group_(group), sync_(be.name() != "cpu") {}

template <typename F>
void RecordingCommunicator::timed(const char* op, double bytes, F&& f) {
  // On cuda the collective is enqueued on the device's stream: synchronise before (so the time
  // is not the previous kernels') and after (so it is the collective's, not its enqueue's).
  if (sync_) be_.synchronize();
  const uint64_t b0 = inner_->bytes_sent();
  const double t0 = tl_.now_s();
  f();
  if (sync_) be_.synchronize();
  const double t1 = tl_.now_s();
  seconds_ += t1 - t0;
  tl_.record(op, group_, t0, t1, bytes);
  count_bytes(double(inner_->bytes_sent() - b0));
}

void RecordingCommunicator::all_reduce(const float* s, float* r, size_t n, ReduceOp op) {
  timed("all_reduce", double(n) * 4, [&] { inner_->all_reduce(s, r, n, op); });
}
void RecordingCommunicator::all_reduce_f64(double* d, size_t n, ReduceOp op) {
  timed("all_reduce", double(n) * 8, [&] { inner_->all_reduce_f64(d, n, op); });
}
void RecordingCommunicator::reduce_scatter(const float* s, float* r, size_t n) {
  timed("reduce_scatter", double(n) * 4 * inner_->size(), [&] { inner_->reduce_scatter(s, r, n); });
}
void RecordingCommunicator::all_gather(const void* s, void* r, size_t b) {
  timed("all_gather", double(b) * inner_->size(), [&] { inner_->all_gather(s, r, b); });
}
void RecordingCommunicator::all_to_all(const void* s, void* r, size_t b) {
  timed("all_to_all", double(b) * inner_->size(), [&] { inner_->all_to_all(s, r, b); });
}
void RecordingCommunicator::send(const void* b, size_t n, int peer, int tag) {
  timed("send", double(n), [&] { inner_->send(b, n, peer, tag); });
}
void RecordingCommunicator::recv(void* b, size_t n, int peer, int tag) {
  timed("recv", double(n), [&] { inner_->recv(b, n, peer, tag); });
}
void RecordingCommunicator::wait_sends() {
  timed("wait_sends", 0, [&] { inner_->wait_sends(); });
}
void RecordingCommunicator::barrier() {
  timed("barrier", 0, [&] { inner_->barrier(); });
}
void RecordingCommunicator::idle_barrier() {
  timed("barrier", 0, [&] { inner_->idle_barrier(); });
}
std::unique_ptr<Communicator> RecordingCommunicator::split(int color, int key) {
  return std::make_unique<RecordingCommunicator>(inner_->split(color, key), be_, tl_, group_);
}

ThreadUsage thread_usage() {
  ThreadUsage u;
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) u.cpu_s = double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
#if defined(RUSAGE_THREAD)
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) == 0) u.involuntary_switches = ru.ru_nivcsw;
#endif
  return u;
}

int current_core() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

}  // namespace trainsim::kernels
