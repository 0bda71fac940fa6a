// The op interface shared by the cpu and cuda backends (ARCHITECTURE.md "Measurement").
// Every pointer is in the backend's memory (host memory for cpu, device memory for cuda);
// sizes are element counts unless named *_bytes. Tensors are row-major and contiguous.
// Attention tensors use the [batch, seq, heads, head_dim] ("BSHD") layout so that the
// per-head slices of a [tokens, hidden] projection feed it without a transpose.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/dtype.hpp"

namespace trainsim::kernels {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;         // "cpu" or "cuda"
  virtual std::string device_name() const = 0;  // CPU model / GPU name

  // --- memory (alloc tracks current and peak bytes for the trainer's memory log) ---
  void* alloc_bytes(size_t bytes);
  void free_bytes(void* p, size_t bytes);
  size_t current_bytes() const { return current_bytes_; }
  size_t peak_bytes() const { return peak_bytes_; }
  void reset_peak() { peak_bytes_ = current_bytes_; }
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void fill_zero(void* p, size_t bytes) = 0;
  virtual void synchronize() = 0;
  // Makes this backend's device current in the calling thread (CUDA's current device is
  // per thread); call first in a thread that did not create the backend.
  virtual void bind_thread() {}

  // --- dense math ---
  // C[m,n] = alpha * op(A) * op(B) + beta * C; A is [m,k] ([k,m] if trans_a), B is [k,n]
  // ([n,k] if trans_b); all three stored in `type`, accumulation in fp32.
  virtual void gemm(DType type, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                    const void* a, const void* b, float beta, void* c) = 0;
  virtual void convert(DType from, DType to, size_t n, const void* src, void* dst) = 0;
  virtual void axpy(size_t n, float alpha, const float* x, float* y) = 0;  // y += alpha x
  virtual void scale(size_t n, float alpha, float* x) = 0;

  // --- transformer ops ---
  // y = (x - mean) * rstd * gamma + beta per row; mean/rstd [rows] are saved for backward.
  virtual void layernorm_fwd(int rows, int cols, const float* x, const float* gamma,
                             const float* beta, float eps, float* y, float* mean, float* rstd) = 0;
  // dx is overwritten; dgamma and dbeta are accumulated (+=).
  virtual void layernorm_bwd(int rows, int cols, const float* dy, const float* x,
                             const float* gamma, const float* mean, const float* rstd, float* dx,
                             float* dgamma, float* dbeta) = 0;
  // GELU, tanh form (Hendrycks & Gimpel): 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
  virtual void gelu_fwd(size_t n, const float* x, float* y) = 0;
  virtual void gelu_bwd(size_t n, const float* x, const float* dy, float* dx) = 0;
  // SwiGLU (Shazeer 2020): gate_up is [rows, 2f] = [gate | up]; out[rows,f] = silu(gate) * up.
  virtual void swiglu_fwd(int rows, int f, const float* gate_up, float* out) = 0;
  virtual void swiglu_bwd(int rows, int f, const float* gate_up, const float* dout,
                          float* dgate_up) = 0;
  // Per row: loss = logsumexp(logits) - logits[target]; if dlogits != nullptr it receives
  // (softmax - onehot) * grad_scale. targets are int32.
  virtual void softmax_xent(int rows, int vocab, const float* logits, const int32_t* targets,
                            float* losses, float* dlogits, float grad_scale) = 0;
  // Causal self-attention, softmax(q k^T / sqrt(d)) v, q/k/v/o [b, s, h, d]; lse [b, h, s].
  virtual void attention_fwd(int batch, int seq, int heads, int head_dim, const float* q,
                             const float* k, const float* v, float* o, float* lse) = 0;
  // FlashAttention-2 backward (Dao 2023, alg. 2): dq, dk, dv are overwritten.
  virtual void attention_bwd(int batch, int seq, int heads, int head_dim, const float* q,
                             const float* k, const float* v, const float* o, const float* lse,
                             const float* dout, float* dq, float* dk, float* dv) = 0;
  // AdamW (Loshchilov & Hutter 2019) with bias correction; `step` counts from 1.
  virtual void adamw(size_t n, float* param, const float* grad, float* m, float* v, float lr,
                     float beta1, float beta2, float eps, float weight_decay, int step) = 0;
  // out[t, :] = wte[tokens[t], :] + wpe[t % seq, :]
  virtual void embedding_fwd(int n_tokens, int seq, int hidden, const int32_t* tokens,
                             const float* wte, const float* wpe, float* out) = 0;
  // dwte[tokens[t]] += dout[t]; dwpe[t % seq] += dout[t]
  virtual void embedding_bwd(int n_tokens, int seq, int hidden, const int32_t* tokens,
                             const float* dout, float* dwte, float* dwpe) = 0;

  // --- compression ---
  // Per-block absmax quantization into the payload layout of dtype.hpp.
  virtual void quantize(QuantFormat f, size_t n, size_t block, const float* x, void* payload) = 0;
  // y = dequant(payload), or y += dequant(payload) when accumulate.
  virtual void dequantize(QuantFormat f, size_t n, size_t block, const void* payload, float* y,
                          bool accumulate) = 0;
  // Keep the two largest magnitudes of every group of four (n % 4 == 0; ties keep the lower
  // index) into the packed 2:4 layout of dtype.hpp.
  virtual void sparsify_2of4(size_t n, const float* x, void* payload) = 0;
  virtual void densify_2of4(size_t n, const void* payload, float* y, bool accumulate) = 0;
  // The k largest magnitudes: values[k] and int32 indices[k]. Order: ascending index on cpu,
  // unspecified on cuda (callers needing an order sort on the host). Ties at the k-th
  // magnitude are broken arbitrarily.
  virtual void top_k(size_t n, size_t k, const float* x, float* values, int32_t* indices) = 0;
  // y[indices[i]] += values[i] (indices distinct).
  virtual void scatter_add(size_t k, const float* values, const int32_t* indices, float* y) = 0;

 private:
  virtual void* raw_alloc(size_t bytes) = 0;
  virtual void raw_free(void* p) = 0;
  size_t current_bytes_ = 0;
  size_t peak_bytes_ = 0;
};

struct BackendOptions {
  int threads = 0;  // cpu: OpenMP + OpenBLAS threads (0 = library default)
  int device = 0;   // cuda: device ordinal
};

// "cpu" or "cuda"; throws std::invalid_argument for an unknown name and std::runtime_error when
// the backend cannot start (cuda without a device: see cuda_available()).
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts = {});
std::vector<std::string> backend_names();  // the backends compiled in
bool cuda_compiled();
// Number of CUDA devices, 0 if none or the driver is missing/too old; `why` gets the reason.
int cuda_device_count(std::string* why = nullptr);

// A typed allocation owned by a backend (RAII).
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(Backend& be, size_t n) : be_(&be), n_(n) {
    ptr_ = static_cast<T*>(be.alloc_bytes(n * sizeof(T)));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept { swap(o); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) { reset(); swap(o); }
    return *this;
  }
  ~DeviceArray() { reset(); }
  void reset() {
    if (ptr_) be_->free_bytes(ptr_, n_ * sizeof(T));
    ptr_ = nullptr;
    n_ = 0;
  }
  T* data() const { return ptr_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }
  void upload(const std::vector<T>& h) { be_->copy_to_device(ptr_, h.data(), std::min(h.size(), n_) * sizeof(T)); }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    if (n_) be_->copy_to_host(h.data(), ptr_, n_ * sizeof(T));
    return h;
  }
  void zero() { if (n_) be_->fill_zero(ptr_, bytes()); }

 private:
  void swap(DeviceArray& o) {
    std::swap(be_, o.be_);
    std::swap(ptr_, o.ptr_);
    std::swap(n_, o.n_);
  }
  Backend* be_ = nullptr;
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

}  // namespace trainsim::kernels
