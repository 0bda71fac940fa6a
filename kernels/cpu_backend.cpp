// cpu backend: OpenBLAS sgemm for GEMM, OpenMP-threaded loops for everything else.
// Narrow GEMM types are emulated: operands widened to fp32, sgemm, output rounded (RNE).
#include "kernels/cpu_backend.hpp"

#if defined(TRAINSIM_HAVE_OPENBLAS)
#include <cblas.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "kernels/numeric_formats.hpp"
#include "kernels/quant_codes.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace trainsim::kernels {
namespace {

constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)

std::string read_cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  return "unknown cpu";
}

void to_f32(DType t, size_t n, const void* src, float* dst) {
  if (t == DType::kF32) { std::memcpy(dst, src, n * 4); return; }
  const uint16_t* s = static_cast<const uint16_t*>(src);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) dst[i] = t == DType::kBF16 ? bf16_to_float(s[i]) : fp16_to_float(s[i]);
}

void from_f32(DType t, size_t n, const float* src, void* dst) {
  if (t == DType::kF32) { std::memcpy(dst, src, n * 4); return; }
  uint16_t* d = static_cast<uint16_t*>(dst);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) d[i] = t == DType::kBF16 ? float_to_bf16(src[i]) : float_to_fp16(src[i]);
}

// Row-major C = alpha op(A) op(B) + beta C. OpenBLAS when built with it; otherwise a plain
// threaded loop (GPU machines may lack BLAS: the cpu backend is then only a reference there).
void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, const float* b,
           float beta, float* c) {
#if defined(TRAINSIM_HAVE_OPENBLAS)
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, ta ? m : k, b, tb ? k : n, beta, c, n);
#else
#pragma omp parallel for schedule(static)
  for (int i = 0; i < m; ++i) {
    std::vector<float> row(n, 0.0f);
    for (int p = 0; p < k; ++p) {
      float av = ta ? a[size_t(p) * m + i] : a[size_t(i) * k + p];
      if (!tb) {
        const float* br = b + size_t(p) * n;
        for (int j = 0; j < n; ++j) row[j] += av * br[j];
      } else {
        for (int j = 0; j < n; ++j) row[j] += av * b[size_t(j) * k + p];
      }
    }
    float* cr = c + size_t(i) * n;
    for (int j = 0; j < n; ++j) cr[j] = alpha * row[j] + (beta == 0.0f ? 0.0f : beta * cr[j]);
  }
#endif
}

}  // namespace

CpuBackend::CpuBackend(const BackendOptions& opts) : cpu_model_(read_cpu_model()) {
  if (opts.threads > 0) {
#if defined(_OPENMP)
    omp_set_num_threads(opts.threads);
#endif
#if defined(TRAINSIM_HAVE_OPENBLAS)
    openblas_set_num_threads(opts.threads);
#endif
  }
}

std::string CpuBackend::device_name() const { return cpu_model_; }
// A caching allocator, as training frameworks keep one for device memory: the trainer frees and
// allocates the same buffers every micro-batch, and memory returned to the operating system would
// be faulted in again (a page fault and a zeroed page per 4 KiB) inside the next op that writes
// it, a cost no framework pays in steady state and no cost model prices. Freed blocks are kept by
// size and handed out again; the trainer's accounting (Backend::alloc) is unchanged.
void* CpuBackend::raw_alloc(size_t bytes) {
  const size_t size = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    block_sizes_[p] = size;
    return p;
  }
  void* p = std::aligned_alloc(64, size);
  if (!p) throw std::bad_alloc();
  block_sizes_[p] = size;
  return p;
}
void CpuBackend::raw_free(void* p) {
  if (!p) return;
  const auto it = block_sizes_.find(p);
  if (it == block_sizes_.end()) {
    std::free(p);
    return;
  }
  free_blocks_[it->second].push_back(p);
  block_sizes_.erase(it);
}
CpuBackend::~CpuBackend() {
  for (auto& [size, blocks] : free_blocks_)
    for (void* p : blocks) std::free(p);
}
void CpuBackend::copy_to_device(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::copy_to_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::copy_device(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::fill_zero(void* p, size_t bytes) { std::memset(p, 0, bytes); }

void CpuBackend::gemm(DType type, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                      const void* a, const void* b, float beta, void* c) {
  if (type == DType::kF32) {
    sgemm(trans_a, trans_b, m, n, k, alpha, static_cast<const float*>(a),
          static_cast<const float*>(b), beta, static_cast<float*>(c));
    return;
  }
  std::vector<float> fa(size_t(m) * k), fb(size_t(k) * n), fc(size_t(m) * n);
  to_f32(type, fa.size(), a, fa.data());
  to_f32(type, fb.size(), b, fb.data());
  if (beta != 0.0f) to_f32(type, fc.size(), c, fc.data());
  sgemm(trans_a, trans_b, m, n, k, alpha, fa.data(), fb.data(), beta, fc.data());
  from_f32(type, fc.size(), fc.data(), c);
}

void CpuBackend::convert(DType from, DType to, size_t n, const void* src, void* dst) {
  if (from == to) { std::memcpy(dst, src, n * dtype_bytes(from)); return; }
  if (from == DType::kF32) { from_f32(to, n, static_cast<const float*>(src), dst); return; }
  std::vector<float> tmp(n);
  to_f32(from, n, src, tmp.data());
  from_f32(to, n, tmp.data(), dst);
}

void CpuBackend::axpy(size_t n, float alpha, const float* x, float* y) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void CpuBackend::scale(size_t n, float alpha, float* x) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) x[i] *= alpha;
}

void CpuBackend::layernorm_fwd(int rows, int cols, const float* x, const float* gamma,
                               const float* beta, float eps, float* y, float* mean, float* rstd) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += xr[c];
    float mu = s / cols, var = 0.0f;
    for (int c = 0; c < cols; ++c) var += (xr[c] - mu) * (xr[c] - mu);
    float rs = 1.0f / std::sqrt(var / cols + eps);
    float* yr = y + size_t(r) * cols;
    for (int c = 0; c < cols; ++c) yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
    mean[r] = mu;
    rstd[r] = rs;
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma (standard LN backward).
void CpuBackend::layernorm_bwd(int rows, int cols, const float* dy, const float* x,
                               const float* gamma, const float* mean, const float* rstd, float* dx,
                               float* dgamma, float* dbeta) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * cols;
    const float* dyr = dy + size_t(r) * cols;
    float mg = 0.0f, mgx = 0.0f;
    for (int c = 0; c < cols; ++c) {
      float xhat = (xr[c] - mean[r]) * rstd[r];
      float g = dyr[c] * gamma[c];
      mg += g;
      mgx += g * xhat;
    }
    mg /= cols;
    mgx /= cols;
    float* dxr = dx + size_t(r) * cols;
    for (int c = 0; c < cols; ++c) {
      float xhat = (xr[c] - mean[r]) * rstd[r];
      dxr[c] = rstd[r] * (dyr[c] * gamma[c] - mg - xhat * mgx);
    }
  }
  // Parameter gradients: a column reduction, kept serial over rows for a fixed order.
#pragma omp parallel for schedule(static)
  for (int c = 0; c < cols; ++c) {
    float sg = 0.0f, sb = 0.0f;
    for (int r = 0; r < rows; ++r) {
      float xhat = (x[size_t(r) * cols + c] - mean[r]) * rstd[r];
      sg += dy[size_t(r) * cols + c] * xhat;
      sb += dy[size_t(r) * cols + c];
    }
    dgamma[c] += sg;
    dbeta[c] += sb;
  }
}

// GELU, tanh form, through the exact identity 0.5 (1 + tanh z) = sigmoid(2 z) (and
// 1 - tanh^2 z = 4 s (1 - s) with s = sigmoid(2 z)): one expf per element, whose cost does not
// depend on the value, where libm's tanhf takes value-dependent paths (twice as slow for |z| near
// 1 as near 0). A per-element rate then prices the op whatever the activations hold, as training
// moves them. The argument is clamped below expf's overflow (at 80, s = 1.8e-35: zero in the
// result to float precision).
namespace {
inline float gelu_sigmoid(float v) {
  const float z2 = 2.0f * kGeluC * (v + 0.044715f * v * v * v);
  return 1.0f / (1.0f + std::exp(std::min(-z2, 80.0f)));
}
}  // namespace

void CpuBackend::gelu_fwd(size_t n, const float* x, float* y) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v * gelu_sigmoid(v);
  }
}

void CpuBackend::gelu_bwd(size_t n, const float* x, const float* dy, float* dx) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float s = gelu_sigmoid(v);
    const float dz = kGeluC * (1.0f + 3.0f * 0.044715f * v * v);
    // d/dv [v s(2z)] = s + v * 2 z' s (1 - s)
    dx[i] = dy[i] * (s + 2.0f * v * dz * s * (1.0f - s));
  }
}

void CpuBackend::swiglu_fwd(int rows, int f, const float* gate_up, float* out) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < f; ++j) {
      float g = gate_up[size_t(r) * 2 * f + j], u = gate_up[size_t(r) * 2 * f + f + j];
      out[size_t(r) * f + j] = g / (1.0f + std::exp(-g)) * u;
    }
}

void CpuBackend::swiglu_bwd(int rows, int f, const float* gate_up, const float* dout,
                            float* dgate_up) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < f; ++j) {
      float g = gate_up[size_t(r) * 2 * f + j], u = gate_up[size_t(r) * 2 * f + f + j];
      float sig = 1.0f / (1.0f + std::exp(-g));
      float d = dout[size_t(r) * f + j];
      dgate_up[size_t(r) * 2 * f + j] = d * u * sig * (1.0f + g * (1.0f - sig));
      dgate_up[size_t(r) * 2 * f + f + j] = d * g * sig;
    }
}

void CpuBackend::softmax_xent(int rows, int vocab, const float* logits, const int32_t* targets,
                              float* losses, float* dlogits, float grad_scale) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* lr = logits + size_t(r) * vocab;
    float mx = *std::max_element(lr, lr + vocab);
    float s = 0.0f;
    for (int j = 0; j < vocab; ++j) s += std::exp(lr[j] - mx);
    float lse = mx + std::log(s);
    losses[r] = lse - lr[targets[r]];
    if (dlogits) {
      float* dr = dlogits + size_t(r) * vocab;
      for (int j = 0; j < vocab; ++j)
        dr[j] = (std::exp(lr[j] - lse) - (j == targets[r] ? 1.0f : 0.0f)) * grad_scale;
    }
  }
}

// Naive causal attention: materialises one row of scores at a time.
void CpuBackend::attention_fwd(int batch, int seq, int heads, int head_dim, const float* q,
                               const float* k, const float* v, float* o, float* lse) {
  const float sc = 1.0f / std::sqrt(float(head_dim));
  const size_t row = size_t(heads) * head_dim;
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h) {
      std::vector<float> p(seq);
      for (int i = 0; i < seq; ++i) {
        const float* qi = q + (size_t(b) * seq + i) * row + size_t(h) * head_dim;
        float mx = -INFINITY;
        for (int j = 0; j <= i; ++j) {
          const float* kj = k + (size_t(b) * seq + j) * row + size_t(h) * head_dim;
          float s = 0.0f;
          for (int d = 0; d < head_dim; ++d) s += qi[d] * kj[d];
          p[j] = s * sc;
          mx = std::max(mx, p[j]);
        }
        float sum = 0.0f;
        for (int j = 0; j <= i; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
        float* oi = o + (size_t(b) * seq + i) * row + size_t(h) * head_dim;
        for (int d = 0; d < head_dim; ++d) oi[d] = 0.0f;
        for (int j = 0; j <= i; ++j) {
          const float* vj = v + (size_t(b) * seq + j) * row + size_t(h) * head_dim;
          float w = p[j] / sum;
          for (int d = 0; d < head_dim; ++d) oi[d] += w * vj[d];
        }
        lse[(size_t(b) * heads + h) * seq + i] = mx + std::log(sum);
      }
    }
}

// dP = dO V^T, dS = P * (dP - rowsum(dO * O)), dQ = dS K * scale, dK = dS^T Q * scale, dV = P^T dO.
void CpuBackend::attention_bwd(int batch, int seq, int heads, int head_dim, const float* q,
                               const float* k, const float* v, const float* o, const float* lse,
                               const float* dout, float* dq, float* dk, float* dv) {
  const float sc = 1.0f / std::sqrt(float(head_dim));
  const size_t row = size_t(heads) * head_dim;
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h) {
      auto at = [&](const float* t, int s) { return t + (size_t(b) * seq + s) * row + size_t(h) * head_dim; };
      auto atw = [&](float* t, int s) { return t + (size_t(b) * seq + s) * row + size_t(h) * head_dim; };
      for (int s = 0; s < seq; ++s)
        for (int d = 0; d < head_dim; ++d) atw(dq, s)[d] = atw(dk, s)[d] = atw(dv, s)[d] = 0.0f;
      for (int i = 0; i < seq; ++i) {
        const float* qi = at(q, i);
        const float* doi = at(dout, i);
        float di = 0.0f;
        for (int d = 0; d < head_dim; ++d) di += doi[d] * at(o, i)[d];
        float l = lse[(size_t(b) * heads + h) * seq + i];
        for (int j = 0; j <= i; ++j) {
          const float* kj = at(k, j);
          const float* vj = at(v, j);
          float s = 0.0f, dp = 0.0f;
          for (int d = 0; d < head_dim; ++d) { s += qi[d] * kj[d]; dp += doi[d] * vj[d]; }
          float p = std::exp(s * sc - l);
          float ds = p * (dp - di) * sc;
          float* dqi = atw(dq, i);
          float* dkj = atw(dk, j);
          float* dvj = atw(dv, j);
          for (int d = 0; d < head_dim; ++d) {
            dqi[d] += ds * kj[d];
            dkj[d] += ds * qi[d];
            dvj[d] += p * doi[d];
          }
        }
      }
    }
}

void CpuBackend::adamw(size_t n, float* param, const float* grad, float* m, float* v, float lr,
                       float beta1, float beta2, float eps, float weight_decay, int step) {
  const float bc1 = 1.0f - std::pow(beta1, float(step)), bc2 = 1.0f - std::pow(beta2, float(step));
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (1.0f - beta1) * grad[i];
    v[i] = beta2 * v[i] + (1.0f - beta2) * grad[i] * grad[i];
    float mhat = m[i] / bc1, vhat = v[i] / bc2;
    param[i] -= lr * (mhat / (std::sqrt(vhat) + eps) + weight_decay * param[i]);
  }
}

void CpuBackend::embedding_fwd(int n_tokens, int seq, int hidden, const int32_t* tokens,
                               const float* wte, const float* wpe, float* out) {
#pragma omp parallel for schedule(static)
  for (int t = 0; t < n_tokens; ++t)
    for (int c = 0; c < hidden; ++c)
      out[size_t(t) * hidden + c] = wte[size_t(tokens[t]) * hidden + c] + wpe[size_t(t % seq) * hidden + c];
}

void CpuBackend::embedding_bwd(int n_tokens, int seq, int hidden, const int32_t* tokens,
                               const float* dout, float* dwte, float* dwpe) {
  // Serial over tokens: scatter-add into shared rows, in a fixed order.
  for (int t = 0; t < n_tokens; ++t)
    for (int c = 0; c < hidden; ++c) {
      dwte[size_t(tokens[t]) * hidden + c] += dout[size_t(t) * hidden + c];
      dwpe[size_t(t % seq) * hidden + c] += dout[size_t(t) * hidden + c];
    }
}

void CpuBackend::quantize(QuantFormat f, size_t n, size_t block, const float* x, void* payload) {
  if (block == 0 || (f == QuantFormat::kInt4 && block % 2))
    throw std::invalid_argument("quantize: block must be > 0 (and even for int4)");
  const size_t nb = quant_blocks(n, block);
  float* scales = static_cast<float*>(payload);
  uint8_t* codes = static_cast<uint8_t*>(payload) + nb * sizeof(float);
  const float qmax = quant_max(f);
  if (f == QuantFormat::kInt4) std::memset(codes, 0, quant_code_bytes(f, n));
#pragma omp parallel for schedule(static)
  for (size_t blk = 0; blk < nb; ++blk) {
    size_t lo = blk * block, hi = std::min(n, lo + block);
    float amax = 0.0f;
    for (size_t i = lo; i < hi; ++i) amax = std::max(amax, std::fabs(x[i]));
    float s = block_scale(amax, qmax);
    scales[blk] = s;
    for (size_t i = lo; i < hi; ++i) {
      uint8_t c = encode_code(f, x[i], s);
      if (f == QuantFormat::kInt4) {
        // block is even, so two blocks (two threads) never share a byte
        codes[i / 2] |= static_cast<uint8_t>((i & 1) ? (c << 4) : c);
      } else {
        codes[i] = c;
      }
    }
  }
}

void CpuBackend::dequantize(QuantFormat f, size_t n, size_t block, const void* payload, float* y,
                            bool accumulate) {
  const size_t nb = quant_blocks(n, block);
  const float* scales = static_cast<const float*>(payload);
  const uint8_t* codes = static_cast<const uint8_t*>(payload) + nb * sizeof(float);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    uint8_t c = f == QuantFormat::kInt4 ? ((codes[i / 2] >> ((i & 1) * 4)) & 0xf) : codes[i];
    float val = decode_code(f, c, scales[i / block]);
    y[i] = accumulate ? y[i] + val : val;
  }
}

void CpuBackend::sparsify_2of4(size_t n, const float* x, void* payload) {
  float* vals = static_cast<float*>(payload);
  uint8_t* idx = static_cast<uint8_t*>(payload) + n / 2 * sizeof(float);
#pragma omp parallel for schedule(static)
  for (size_t g = 0; g < n / 4; ++g) {
    const float* xg = x + g * 4;
    // first = argmax |x|, second = argmax of the rest; strict > keeps the lower index on ties
    int a = 0;
    for (int j = 1; j < 4; ++j) if (std::fabs(xg[j]) > std::fabs(xg[a])) a = j;
    int b = a == 0 ? 1 : 0;
    for (int j = 0; j < 4; ++j) if (j != a && std::fabs(xg[j]) > std::fabs(xg[b])) b = j;
    int lo = std::min(a, b), hi = std::max(a, b);
    vals[g * 2] = xg[lo];
    vals[g * 2 + 1] = xg[hi];
    idx[g] = static_cast<uint8_t>(lo | (hi << 2));
  }
}

void CpuBackend::densify_2of4(size_t n, const void* payload, float* y, bool accumulate) {
  const float* vals = static_cast<const float*>(payload);
  const uint8_t* idx = static_cast<const uint8_t*>(payload) + n / 2 * sizeof(float);
#pragma omp parallel for schedule(static)
  for (size_t g = 0; g < n / 4; ++g) {
    float out[4] = {0, 0, 0, 0};
    out[idx[g] & 3] = vals[g * 2];
    out[(idx[g] >> 2) & 3] = vals[g * 2 + 1];
    for (int j = 0; j < 4; ++j) y[g * 4 + j] = accumulate ? y[g * 4 + j] + out[j] : out[j];
  }
}

void CpuBackend::top_k(size_t n, size_t k, const float* x, float* values, int32_t* indices) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  k = std::min(k, n);
  std::nth_element(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    float fa = std::fabs(x[a]), fb = std::fabs(x[b]);
    return fa > fb || (fa == fb && a < b);
  });
  std::sort(order.begin(), order.begin() + k);
  for (size_t i = 0; i < k; ++i) {
    indices[i] = order[i];
    values[i] = x[order[i]];
  }
}

void CpuBackend::scatter_add(size_t k, const float* values, const int32_t* indices, float* y) {
  for (size_t i = 0; i < k; ++i) y[indices[i]] += values[i];
}

}  // namespace trainsim::kernels
