// The cpu backend (declaration; see cpu_backend.cpp).
#pragma once

#include <unordered_map>
#include <vector>

#include "kernels/backend.hpp"

namespace trainsim::kernels {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const BackendOptions& opts = {});
  ~CpuBackend() override;
  std::string name() const override { return "cpu"; }
  std::string device_name() const override;
  void copy_to_device(void* dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_device(void* dst, const void* src, size_t bytes) override;
  void fill_zero(void* p, size_t bytes) override;
  void synchronize() override {}
  void gemm(DType type, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
            const void* a, const void* b, float beta, void* c) override;
  void convert(DType from, DType to, size_t n, const void* src, void* dst) override;
  void axpy(size_t n, float alpha, const float* x, float* y) override;
  void scale(size_t n, float alpha, float* x) override;
  void layernorm_fwd(int rows, int cols, const float* x, const float* gamma, const float* beta,
                     float eps, float* y, float* mean, float* rstd) override;
  void layernorm_bwd(int rows, int cols, const float* dy, const float* x, const float* gamma,
                     const float* mean, const float* rstd, float* dx, float* dgamma,
                     float* dbeta) override;
  void gelu_fwd(size_t n, const float* x, float* y) override;
  void gelu_bwd(size_t n, const float* x, const float* dy, float* dx) override;
  void swiglu_fwd(int rows, int f, const float* gate_up, float* out) override;
  void swiglu_bwd(int rows, int f, const float* gate_up, const float* dout, float* dgate_up) override;
  void softmax_xent(int rows, int vocab, const float* logits, const int32_t* targets,
                    float* losses, float* dlogits, float grad_scale) override;
  void attention_fwd(int batch, int seq, int heads, int head_dim, const float* q, const float* k,
                     const float* v, float* o, float* lse) override;
  void attention_bwd(int batch, int seq, int heads, int head_dim, const float* q, const float* k,
                     const float* v, const float* o, const float* lse, const float* dout,
                     float* dq, float* dk, float* dv) override;
  void adamw(size_t n, float* param, const float* grad, float* m, float* v, float lr, float beta1,
             float beta2, float eps, float weight_decay, int step) override;
  void embedding_fwd(int n_tokens, int seq, int hidden, const int32_t* tokens, const float* wte,
                     const float* wpe, float* out) override;
  void embedding_bwd(int n_tokens, int seq, int hidden, const int32_t* tokens, const float* dout,
                     float* dwte, float* dwpe) override;
  void quantize(QuantFormat f, size_t n, size_t block, const float* x, void* payload) override;
  void dequantize(QuantFormat f, size_t n, size_t block, const void* payload, float* y,
                  bool accumulate) override;
  void sparsify_2of4(size_t n, const float* x, void* payload) override;
  void densify_2of4(size_t n, const void* payload, float* y, bool accumulate) override;
  void top_k(size_t n, size_t k, const float* x, float* values, int32_t* indices) override;
  void scatter_add(size_t k, const float* values, const int32_t* indices, float* y) override;

 private:
  void* raw_alloc(size_t bytes) override;
  void raw_free(void* p) override;
  std::string cpu_model_;
  std::unordered_map<void*, size_t> block_sizes_;               // live blocks
  std::unordered_map<size_t, std::vector<void*>> free_blocks_;  // freed, by size, for reuse
};

}  // namespace trainsim::kernels
