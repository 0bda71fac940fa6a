// cuda backend: cuBLAS GEMM (cublasGemmEx, fp32 accumulate) and our own kernels for the rest,
// all on one stream. The element-wise number formats come from numeric_formats.hpp and
// quant_codes.hpp, shared with the cpu backend, so payloads are bit-identical across backends.
// Attention is tiled flash-style (Dao et al. 2022/2023): K/V (forward, dQ) or Q/dO (dK, dV)
// tiles staged in shared memory, online softmax in the forward, the saved log-sum-exp in the
// backward, so no s x s score matrix is ever stored.
#include "kernels/cuda_backend.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/numeric_formats.hpp"
#include "kernels/quant_codes.hpp"

namespace trainsim::kernels {
namespace {

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed at " + file + ":" + std::to_string(line) +
                             ": " + cudaGetErrorString(e));
}
void check_cublas(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed at " + file + ":" + std::to_string(line) +
                             ": cublas status " + std::to_string(int(s)));
}
#define CUDA_CHECK(x) check_cuda((x), #x, __FILE__, __LINE__)
#define CUBLAS_CHECK(x) check_cublas((x), #x, __FILE__, __LINE__)
#define KERNEL_CHECK() CUDA_CHECK(cudaGetLastError())

constexpr int kThreads = 256;
constexpr int kMaxHeadDim = 128;
constexpr int kAttnTile = 32;  // rows of K/V (or Q/dO) per shared-memory tile
constexpr float kGeluC = 0.7978845608028654f;

unsigned grid_for(size_t n) { return unsigned((n + kThreads - 1) / kThreads); }

// ---- reductions ----
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Block-wide sum/max; every thread gets the result. blockDim.x a multiple of 32, <= 1024.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float part[32];
  __shared__ float result;
  v = kMax ? warp_max(v) : warp_sum(v);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int nw = blockDim.x >> 5;
    float w = lane < nw ? part[lane] : (kMax ? -INFINITY : 0.0f);
    w = kMax ? warp_max(w) : warp_sum(w);
    if (lane == 0) result = w;
  }
  __syncthreads();
  float r = result;
  __syncthreads();
  return r;
}

// ---- element-wise ----
__global__ void k_convert(DType from, DType to, size_t n, const void* src, void* dst) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v = from == DType::kF32 ? static_cast<const float*>(src)[i]
            : from == DType::kBF16 ? bf16_to_float(static_cast<const uint16_t*>(src)[i])
                                   : fp16_to_float(static_cast<const uint16_t*>(src)[i]);
  if (to == DType::kF32) static_cast<float*>(dst)[i] = v;
  else static_cast<uint16_t*>(dst)[i] = to == DType::kBF16 ? float_to_bf16(v) : float_to_fp16(v);
}
__global__ void k_axpy(size_t n, float a, const float* x, float* y) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
__global__ void k_scale(size_t n, float a, float* x) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void k_gelu_fwd(size_t n, const float* x, float* y) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  y[i] = 0.5f * v * (1.0f + tanhf(kGeluC * (v + 0.044715f * v * v * v)));
}
__global__ void k_gelu_bwd(size_t n, const float* x, const float* dy, float* dx) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  float t = tanhf(kGeluC * (v + 0.044715f * v * v * v));
  float dt = kGeluC * (1.0f + 3.0f * 0.044715f * v * v) * (1.0f - t * t);
  dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * dt);
}
__global__ void k_swiglu_fwd(int rows, int f, const float* gu, float* out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= size_t(rows) * f) return;
  size_t r = i / f, j = i % f;
  float g = gu[r * 2 * f + j], u = gu[r * 2 * f + f + j];
  out[i] = g / (1.0f + expf(-g)) * u;
}
__global__ void k_swiglu_bwd(int rows, int f, const float* gu, const float* dout, float* dgu) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= size_t(rows) * f) return;
  size_t r = i / f, j = i % f;
  float g = gu[r * 2 * f + j], u = gu[r * 2 * f + f + j];
  float sig = 1.0f / (1.0f + expf(-g)), d = dout[i];
  dgu[r * 2 * f + j] = d * u * sig * (1.0f + g * (1.0f - sig));
  dgu[r * 2 * f + f + j] = d * g * sig;
}
__global__ void k_adamw(size_t n, float* p, const float* g, float* m, float* v, float lr, float b1,
                        float b2, float eps, float wd, float bc1, float bc2) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  m[i] = b1 * m[i] + (1.0f - b1) * g[i];
  v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
  float mhat = m[i] / bc1, vhat = v[i] / bc2;
  p[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p[i]);
}
__global__ void k_embedding_fwd(int n_tokens, int seq, int hidden, const int32_t* tok,
                                const float* wte, const float* wpe, float* out) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= size_t(n_tokens) * hidden) return;
  size_t t = i / hidden, c = i % hidden;
  out[i] = wte[size_t(tok[t]) * hidden + c] + wpe[(t % seq) * hidden + c];
}
__global__ void k_embedding_bwd(int n_tokens, int seq, int hidden, const int32_t* tok,
                                const float* dout, float* dwte, float* dwpe) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= size_t(n_tokens) * hidden) return;
  size_t t = i / hidden, c = i % hidden;
  atomicAdd(&dwte[size_t(tok[t]) * hidden + c], dout[i]);
  atomicAdd(&dwpe[(t % seq) * hidden + c], dout[i]);
}

// ---- row-wise ----
__global__ void k_layernorm_fwd(int cols, const float* x, const float* gamma, const float* beta,
                                float eps, float* y, float* mean, float* rstd) {
  const float* xr = x + size_t(blockIdx.x) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  float mu = block_reduce<false>(s) / cols;
  float v = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) v += (xr[c] - mu) * (xr[c] - mu);
  float rs = rsqrtf(block_reduce<false>(v) / cols + eps);
  float* yr = y + size_t(blockIdx.x) * cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
  if (threadIdx.x == 0) { mean[blockIdx.x] = mu; rstd[blockIdx.x] = rs; }
}
__global__ void k_layernorm_bwd_dx(int cols, const float* dy, const float* x, const float* gamma,
                                   const float* mean, const float* rstd, float* dx) {
  size_t off = size_t(blockIdx.x) * cols;
  float mu = mean[blockIdx.x], rs = rstd[blockIdx.x];
  float mg = 0.0f, mgx = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    float g = dy[off + c] * gamma[c];
    mg += g;
    mgx += g * (x[off + c] - mu) * rs;
  }
  mg = block_reduce<false>(mg) / cols;
  mgx = block_reduce<false>(mgx) / cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    dx[off + c] = rs * (dy[off + c] * gamma[c] - mg - (x[off + c] - mu) * rs * mgx);
}
__global__ void k_layernorm_bwd_params(int rows, int cols, const float* dy, const float* x,
                                       const float* mean, const float* rstd, float* dgamma,
                                       float* dbeta) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float sg = 0.0f, sb = 0.0f;
  for (int r = 0; r < rows; ++r) {
    float d = dy[size_t(r) * cols + c];
    sg += d * (x[size_t(r) * cols + c] - mean[r]) * rstd[r];
    sb += d;
  }
  dgamma[c] += sg;
  dbeta[c] += sb;
}
__global__ void k_softmax_xent(int vocab, const float* logits, const int32_t* targets,
                               float* losses, float* dlogits, float grad_scale) {
  const float* lr = logits + size_t(blockIdx.x) * vocab;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < vocab; j += blockDim.x) mx = fmaxf(mx, lr[j]);
  mx = block_reduce<true>(mx);
  float s = 0.0f;
  for (int j = threadIdx.x; j < vocab; j += blockDim.x) s += expf(lr[j] - mx);
  float lse = mx + logf(block_reduce<false>(s));
  int t = targets[blockIdx.x];
  if (threadIdx.x == 0) losses[blockIdx.x] = lse - lr[t];
  __syncthreads();  // the loss read lr[t] before an in-place dlogits overwrites it
  if (dlogits) {
    float* dr = dlogits + size_t(blockIdx.x) * vocab;
    for (int j = threadIdx.x; j < vocab; j += blockDim.x)
      dr[j] = (expf(lr[j] - lse) - (j == t ? 1.0f : 0.0f)) * grad_scale;
  }
}

// ---- attention (BSHD; one thread per query row (fwd, dQ) or key row (dK, dV)) ----
__device__ __forceinline__ size_t bshd(int b, int s, int h, int seq, int heads, int d) {
  return ((size_t(b) * seq + s) * heads + h) * d;
}

__global__ void k_attention_fwd(int seq, int heads, int d, float sc, const float* q,
                                const float* k, const float* v, float* o, float* lse) {
  __shared__ float ks[kAttnTile][kMaxHeadDim], vs[kAttnTile][kMaxHeadDim];
  int bh = blockIdx.y, b = bh / heads, h = bh % heads;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool active = i < seq;
  float qi[kMaxHeadDim], acc[kMaxHeadDim];
  float m = -INFINITY, l = 0.0f;
  if (active)
    for (int t = 0; t < d; ++t) { qi[t] = q[bshd(b, i, h, seq, heads, d) + t] * sc; acc[t] = 0.0f; }
  int last_row = min(seq - 1, int(blockIdx.x * blockDim.x + blockDim.x - 1));
  for (int j0 = 0; j0 <= last_row; j0 += kAttnTile) {
    __syncthreads();
    for (int e = threadIdx.x; e < kAttnTile * d; e += blockDim.x) {
      int jj = e / d, t = e % d, j = j0 + jj;
      ks[jj][t] = j < seq ? k[bshd(b, j, h, seq, heads, d) + t] : 0.0f;
      vs[jj][t] = j < seq ? v[bshd(b, j, h, seq, heads, d) + t] : 0.0f;
    }
    __syncthreads();
    if (!active) continue;
    for (int jj = 0; jj < kAttnTile && j0 + jj <= i; ++jj) {
      float s = 0.0f;
      for (int t = 0; t < d; ++t) s += qi[t] * ks[jj][t];
      float m_new = fmaxf(m, s);
      float corr = expf(m - m_new), p = expf(s - m_new);  // online softmax (Milakov & Gimelshein)
      l = l * corr + p;
      for (int t = 0; t < d; ++t) acc[t] = acc[t] * corr + p * vs[jj][t];
      m = m_new;
    }
  }
  if (!active) return;
  for (int t = 0; t < d; ++t) o[bshd(b, i, h, seq, heads, d) + t] = acc[t] / l;
  lse[size_t(bh) * seq + i] = m + logf(l);
}

// delta_i = rowsum(dO_i * O_i) (FlashAttention-2 backward, line 4)
__global__ void k_attention_delta(int batch, int seq, int heads, int d, const float* o,
                                  const float* dout, float* delta) {
  size_t r = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // r = (b*heads + h)*seq + i
  if (r >= size_t(batch) * heads * seq) return;
  int i = int(r % seq), bh = int(r / seq), b = bh / heads, h = bh % heads;
  size_t off = bshd(b, i, h, seq, heads, d);
  float s = 0.0f;
  for (int t = 0; t < d; ++t) s += o[off + t] * dout[off + t];
  delta[r] = s;
}

__global__ void k_attention_bwd_dq(int seq, int heads, int d, float sc, const float* q,
                                   const float* k, const float* v, const float* lse,
                                   const float* delta, const float* dout, float* dq) {
  __shared__ float ks[kAttnTile][kMaxHeadDim], vs[kAttnTile][kMaxHeadDim];
  int bh = blockIdx.y, b = bh / heads, h = bh % heads;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool active = i < seq;
  float qi[kMaxHeadDim], doi[kMaxHeadDim], acc[kMaxHeadDim];
  float li = 0.0f, di = 0.0f;
  if (active) {
    size_t off = bshd(b, i, h, seq, heads, d);
    for (int t = 0; t < d; ++t) { qi[t] = q[off + t]; doi[t] = dout[off + t]; acc[t] = 0.0f; }
    li = lse[size_t(bh) * seq + i];
    di = delta[size_t(bh) * seq + i];
  }
  int last_row = min(seq - 1, int(blockIdx.x * blockDim.x + blockDim.x - 1));
  for (int j0 = 0; j0 <= last_row; j0 += kAttnTile) {
    __syncthreads();
    for (int e = threadIdx.x; e < kAttnTile * d; e += blockDim.x) {
      int jj = e / d, t = e % d, j = j0 + jj;
      ks[jj][t] = j < seq ? k[bshd(b, j, h, seq, heads, d) + t] : 0.0f;
      vs[jj][t] = j < seq ? v[bshd(b, j, h, seq, heads, d) + t] : 0.0f;
    }
    __syncthreads();
    if (!active) continue;
    for (int jj = 0; jj < kAttnTile && j0 + jj <= i; ++jj) {
      float s = 0.0f, dp = 0.0f;
      for (int t = 0; t < d; ++t) { s += qi[t] * ks[jj][t]; dp += doi[t] * vs[jj][t]; }
      float ds = expf(s * sc - li) * (dp - di) * sc;
      for (int t = 0; t < d; ++t) acc[t] += ds * ks[jj][t];
    }
  }
  if (!active) return;
  for (int t = 0; t < d; ++t) dq[bshd(b, i, h, seq, heads, d) + t] = acc[t];
}

__global__ void k_attention_bwd_dkdv(int seq, int heads, int d, float sc, const float* q,
                                     const float* k, const float* v, const float* lse,
                                     const float* delta, const float* dout, float* dk, float* dv) {
  __shared__ float qs[kAttnTile][kMaxHeadDim], dos[kAttnTile][kMaxHeadDim];
  __shared__ float ls[kAttnTile], ds_[kAttnTile];
  int bh = blockIdx.y, b = bh / heads, h = bh % heads;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  bool active = j < seq;
  float kj[kMaxHeadDim], vj[kMaxHeadDim], adk[kMaxHeadDim], adv[kMaxHeadDim];
  if (active) {
    size_t off = bshd(b, j, h, seq, heads, d);
    for (int t = 0; t < d; ++t) { kj[t] = k[off + t]; vj[t] = v[off + t]; adk[t] = 0.0f; adv[t] = 0.0f; }
  }
  int first_row = blockIdx.x * blockDim.x;  // queries i >= j only (causal)
  for (int i0 = first_row - first_row % kAttnTile; i0 < seq; i0 += kAttnTile) {
    __syncthreads();
    for (int e = threadIdx.x; e < kAttnTile * d; e += blockDim.x) {
      int ii = e / d, t = e % d, i = i0 + ii;
      qs[ii][t] = i < seq ? q[bshd(b, i, h, seq, heads, d) + t] : 0.0f;
      dos[ii][t] = i < seq ? dout[bshd(b, i, h, seq, heads, d) + t] : 0.0f;
    }
    for (int ii = threadIdx.x; ii < kAttnTile; ii += blockDim.x) {
      int i = i0 + ii;
      ls[ii] = i < seq ? lse[size_t(bh) * seq + i] : 0.0f;
      ds_[ii] = i < seq ? delta[size_t(bh) * seq + i] : 0.0f;
    }
    __syncthreads();
    if (!active) continue;
    for (int ii = 0; ii < kAttnTile; ++ii) {
      int i = i0 + ii;
      if (i < j || i >= seq) continue;
      float s = 0.0f, dp = 0.0f;
      for (int t = 0; t < d; ++t) { s += qs[ii][t] * kj[t]; dp += dos[ii][t] * vj[t]; }
      float p = expf(s * sc - ls[ii]);
      float dsv = p * (dp - ds_[ii]) * sc;
      for (int t = 0; t < d; ++t) { adv[t] += p * dos[ii][t]; adk[t] += dsv * qs[ii][t]; }
    }
  }
  if (!active) return;
  size_t off = bshd(b, j, h, seq, heads, d);
  for (int t = 0; t < d; ++t) { dk[off + t] = adk[t]; dv[off + t] = adv[t]; }
}

// ---- compression ----
// One CUDA block per quantization block: absmax, then codes (int4: one thread per byte).
__global__ void k_quantize(QuantFormat f, size_t n, size_t block, float qmax, const float* x,
                           float* scales, uint8_t* codes) {
  size_t lo = size_t(blockIdx.x) * block, hi = min(n, lo + block);
  float amax = 0.0f;
  for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) amax = fmaxf(amax, fabsf(x[i]));
  amax = block_reduce<true>(amax);
  float s = block_scale(amax, qmax);
  if (threadIdx.x == 0) scales[blockIdx.x] = s;
  if (f == QuantFormat::kInt4) {
    for (size_t i = lo + 2 * threadIdx.x; i < hi; i += 2 * blockDim.x) {
      uint8_t c0 = encode_code(f, x[i], s);
      uint8_t c1 = i + 1 < hi ? encode_code(f, x[i + 1], s) : 0;
      codes[i / 2] = uint8_t(c0 | (c1 << 4));
    }
  } else {
    for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) codes[i] = encode_code(f, x[i], s);
  }
}
__global__ void k_dequantize(QuantFormat f, size_t n, size_t block, const float* scales,
                             const uint8_t* codes, float* y, bool accumulate) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  uint8_t c = f == QuantFormat::kInt4 ? ((codes[i / 2] >> ((i & 1) * 4)) & 0xf) : codes[i];
  float v = decode_code(f, c, scales[i / block]);
  y[i] = accumulate ? y[i] + v : v;
}
__global__ void k_sparsify24(size_t groups, const float* x, float* vals, uint8_t* idx) {
  size_t g = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (g >= groups) return;
  const float* xg = x + g * 4;
  int a = 0;
  for (int j = 1; j < 4; ++j) if (fabsf(xg[j]) > fabsf(xg[a])) a = j;
  int b = a == 0 ? 1 : 0;
  for (int j = 0; j < 4; ++j) if (j != a && fabsf(xg[j]) > fabsf(xg[b])) b = j;
  int lo = min(a, b), hi = max(a, b);
  vals[g * 2] = xg[lo];
  vals[g * 2 + 1] = xg[hi];
  idx[g] = uint8_t(lo | (hi << 2));
}
__global__ void k_densify24(size_t groups, const float* vals, const uint8_t* idx, float* y,
                            bool accumulate) {
  size_t g = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (g >= groups) return;
  float out[4] = {0, 0, 0, 0};
  out[idx[g] & 3] = vals[g * 2];
  out[(idx[g] >> 2) & 3] = vals[g * 2 + 1];
  for (int j = 0; j < 4; ++j) y[g * 4 + j] = accumulate ? y[g * 4 + j] + out[j] : out[j];
}
// Top-k by bisection on the bit pattern of |x| (order-preserving for non-negative floats).
__global__ void k_count_ge(size_t n, const float* x, uint32_t thr, unsigned long long* count) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  bool hit = i < n && (__float_as_uint(x[i]) & 0x7fffffffu) >= thr;
  unsigned ballot = __ballot_sync(0xffffffffu, hit);
  if ((threadIdx.x & 31) == 0 && ballot) atomicAdd(count, (unsigned long long)__popc(ballot));
}
__global__ void k_select(size_t n, size_t k, const float* x, uint32_t thr, unsigned long long n_gt,
                         unsigned long long* pos, float* vals, int32_t* idx) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  uint32_t key = __float_as_uint(x[i]) & 0x7fffffffu;
  unsigned long long slot;
  if (key > thr) {
    slot = atomicAdd(&pos[0], 1ull);
  } else if (key == thr) {
    slot = n_gt + atomicAdd(&pos[1], 1ull);
    if (slot >= k) return;
  } else {
    return;
  }
  vals[slot] = x[i];
  idx[slot] = int32_t(i);
}
__global__ void k_scatter_add(size_t k, const float* vals, const int32_t* idx, float* y) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < k) y[idx[i]] += vals[i];
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const BackendOptions& opts) : device_(opts.device) {
    CUDA_CHECK(cudaSetDevice(device_));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    device_name_ = prop.name;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&blas_));
    CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    CUDA_CHECK(cudaMalloc(&counters_, 4 * sizeof(unsigned long long)));
  }
  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    cudaFree(counters_);
    cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
  }
  std::string name() const override { return "cuda"; }
  std::string device_name() const override { return device_name_; }
  cudaStream_t stream() const { return stream_; }

  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    synchronize();
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }
  void copy_device(void* dst, const void* src, size_t bytes) override {
    if (dst != src && bytes) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  void fill_zero(void* p, size_t bytes) override {
    if (bytes) CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_));
  }
  void synchronize() override { CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  void bind_thread() override { CUDA_CHECK(cudaSetDevice(device_)); }

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  void gemm(DType type, bool ta, bool tb, int m, int n, int k, float alpha, const void* a,
            const void* b, float beta, void* c) override {
    cudaDataType_t dt = type == DType::kF32 ? CUDA_R_32F : type == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
    CUBLAS_CHECK(cublasGemmEx(blas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                              n, m, k, &alpha, b, dt, tb ? k : n, a, dt, ta ? m : k, &beta, c, dt, n,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  void convert(DType from, DType to, size_t n, const void* src, void* dst) override {
    if (!n) return;
    k_convert<<<grid_for(n), kThreads, 0, stream_>>>(from, to, n, src, dst);
    KERNEL_CHECK();
  }
  void axpy(size_t n, float alpha, const float* x, float* y) override {
    if (!n) return;
    k_axpy<<<grid_for(n), kThreads, 0, stream_>>>(n, alpha, x, y);
    KERNEL_CHECK();
  }
  void scale(size_t n, float alpha, float* x) override {
    if (!n) return;
    k_scale<<<grid_for(n), kThreads, 0, stream_>>>(n, alpha, x);
    KERNEL_CHECK();
  }
  void layernorm_fwd(int rows, int cols, const float* x, const float* gamma, const float* beta,
                     float eps, float* y, float* mean, float* rstd) override {
    k_layernorm_fwd<<<rows, kThreads, 0, stream_>>>(cols, x, gamma, beta, eps, y, mean, rstd);
    KERNEL_CHECK();
  }
  void layernorm_bwd(int rows, int cols, const float* dy, const float* x, const float* gamma,
                     const float* mean, const float* rstd, float* dx, float* dgamma,
                     float* dbeta) override {
    k_layernorm_bwd_dx<<<rows, kThreads, 0, stream_>>>(cols, dy, x, gamma, mean, rstd, dx);
    KERNEL_CHECK();
    k_layernorm_bwd_params<<<grid_for(cols), kThreads, 0, stream_>>>(rows, cols, dy, x, mean, rstd, dgamma, dbeta);
    KERNEL_CHECK();
  }
  void gelu_fwd(size_t n, const float* x, float* y) override {
    k_gelu_fwd<<<grid_for(n), kThreads, 0, stream_>>>(n, x, y);
    KERNEL_CHECK();
  }
  void gelu_bwd(size_t n, const float* x, const float* dy, float* dx) override {
    k_gelu_bwd<<<grid_for(n), kThreads, 0, stream_>>>(n, x, dy, dx);
    KERNEL_CHECK();
  }
  void swiglu_fwd(int rows, int f, const float* gu, float* out) override {
    k_swiglu_fwd<<<grid_for(size_t(rows) * f), kThreads, 0, stream_>>>(rows, f, gu, out);
    KERNEL_CHECK();
  }
  void swiglu_bwd(int rows, int f, const float* gu, const float* dout, float* dgu) override {
    k_swiglu_bwd<<<grid_for(size_t(rows) * f), kThreads, 0, stream_>>>(rows, f, gu, dout, dgu);
    KERNEL_CHECK();
  }
  void softmax_xent(int rows, int vocab, const float* logits, const int32_t* targets,
                    float* losses, float* dlogits, float grad_scale) override {
    k_softmax_xent<<<rows, kThreads, 0, stream_>>>(vocab, logits, targets, losses, dlogits, grad_scale);
    KERNEL_CHECK();
  }
  void attention_fwd(int batch, int seq, int heads, int d, const float* q, const float* k,
                     const float* v, float* o, float* lse) override {
    check_head_dim(d);
    dim3 grid((seq + kAttnRows - 1) / kAttnRows, batch * heads);
    k_attention_fwd<<<grid, kAttnRows, 0, stream_>>>(seq, heads, d, 1.0f / sqrtf(float(d)), q, k, v, o, lse);
    KERNEL_CHECK();
  }
  void attention_bwd(int batch, int seq, int heads, int d, const float* q, const float* k,
                     const float* v, const float* o, const float* lse, const float* dout,
                     float* dq, float* dk, float* dv) override {
    check_head_dim(d);
    size_t rows = size_t(batch) * heads * seq;
    float* delta = static_cast<float*>(alloc_bytes(rows * sizeof(float)));
    k_attention_delta<<<grid_for(rows), kThreads, 0, stream_>>>(batch, seq, heads, d, o, dout, delta);
    KERNEL_CHECK();
    dim3 grid((seq + kAttnRows - 1) / kAttnRows, batch * heads);
    float sc = 1.0f / sqrtf(float(d));
    k_attention_bwd_dq<<<grid, kAttnRows, 0, stream_>>>(seq, heads, d, sc, q, k, v, lse, delta, dout, dq);
    KERNEL_CHECK();
    k_attention_bwd_dkdv<<<grid, kAttnRows, 0, stream_>>>(seq, heads, d, sc, q, k, v, lse, delta, dout, dk, dv);
    KERNEL_CHECK();
    free_bytes(delta, rows * sizeof(float));
  }
  void adamw(size_t n, float* p, const float* g, float* m, float* v, float lr, float b1, float b2,
             float eps, float wd, int step) override {
    float bc1 = 1.0f - powf(b1, float(step)), bc2 = 1.0f - powf(b2, float(step));
    k_adamw<<<grid_for(n), kThreads, 0, stream_>>>(n, p, g, m, v, lr, b1, b2, eps, wd, bc1, bc2);
    KERNEL_CHECK();
  }
  void embedding_fwd(int n_tokens, int seq, int hidden, const int32_t* tok, const float* wte,
                     const float* wpe, float* out) override {
    k_embedding_fwd<<<grid_for(size_t(n_tokens) * hidden), kThreads, 0, stream_>>>(n_tokens, seq, hidden, tok, wte, wpe, out);
    KERNEL_CHECK();
  }
  void embedding_bwd(int n_tokens, int seq, int hidden, const int32_t* tok, const float* dout,
                     float* dwte, float* dwpe) override {
    k_embedding_bwd<<<grid_for(size_t(n_tokens) * hidden), kThreads, 0, stream_>>>(n_tokens, seq, hidden, tok, dout, dwte, dwpe);
    KERNEL_CHECK();
  }
  void quantize(QuantFormat f, size_t n, size_t block, const float* x, void* payload) override {
    if (block == 0 || (f == QuantFormat::kInt4 && block % 2))
      throw std::invalid_argument("quantize: block must be > 0 (and even for int4)");
    size_t nb = quant_blocks(n, block);
    if (!nb) return;
    float* scales = static_cast<float*>(payload);
    uint8_t* codes = static_cast<uint8_t*>(payload) + nb * sizeof(float);
    k_quantize<<<unsigned(nb), 128, 0, stream_>>>(f, n, block, quant_max(f), x, scales, codes);
    KERNEL_CHECK();
  }
  void dequantize(QuantFormat f, size_t n, size_t block, const void* payload, float* y,
                  bool accumulate) override {
    if (!n) return;
    size_t nb = quant_blocks(n, block);
    const float* scales = static_cast<const float*>(payload);
    const uint8_t* codes = static_cast<const uint8_t*>(payload) + nb * sizeof(float);
    k_dequantize<<<grid_for(n), kThreads, 0, stream_>>>(f, n, block, scales, codes, y, accumulate);
    KERNEL_CHECK();
  }
  void sparsify_2of4(size_t n, const float* x, void* payload) override {
    if (n < 4) return;
    float* vals = static_cast<float*>(payload);
    uint8_t* idx = static_cast<uint8_t*>(payload) + n / 2 * sizeof(float);
    k_sparsify24<<<grid_for(n / 4), kThreads, 0, stream_>>>(n / 4, x, vals, idx);
    KERNEL_CHECK();
  }
  void densify_2of4(size_t n, const void* payload, float* y, bool accumulate) override {
    if (n < 4) return;
    const float* vals = static_cast<const float*>(payload);
    const uint8_t* idx = static_cast<const uint8_t*>(payload) + n / 2 * sizeof(float);
    k_densify24<<<grid_for(n / 4), kThreads, 0, stream_>>>(n / 4, vals, idx, y, accumulate);
    KERNEL_CHECK();
  }
  void top_k(size_t n, size_t k, const float* x, float* vals, int32_t* idx) override {
    k = std::min(k, n);
    if (!k) return;
    // Largest threshold T with count(|x| >= T) >= k, one bit at a time from the top.
    uint32_t thr = 0;
    unsigned long long cnt = 0;
    for (int bit = 30; bit >= 0; --bit) {
      uint32_t cand = thr | (1u << bit);
      CUDA_CHECK(cudaMemsetAsync(counters_, 0, sizeof(unsigned long long), stream_));
      k_count_ge<<<grid_for(n), kThreads, 0, stream_>>>(n, x, cand, counters_);
      KERNEL_CHECK();
      CUDA_CHECK(cudaMemcpyAsync(&cnt, counters_, sizeof(cnt), cudaMemcpyDeviceToHost, stream_));
      synchronize();
      if (cnt >= k) thr = cand;
    }
    // n_gt = count(|x| > T) = count(|x| >= T + 1)
    CUDA_CHECK(cudaMemsetAsync(counters_, 0, 3 * sizeof(unsigned long long), stream_));
    k_count_ge<<<grid_for(n), kThreads, 0, stream_>>>(n, x, thr + 1, counters_ + 2);
    KERNEL_CHECK();
    unsigned long long n_gt = 0;
    CUDA_CHECK(cudaMemcpyAsync(&n_gt, counters_ + 2, sizeof(n_gt), cudaMemcpyDeviceToHost, stream_));
    synchronize();
    k_select<<<grid_for(n), kThreads, 0, stream_>>>(n, k, x, thr, n_gt, counters_, vals, idx);
    KERNEL_CHECK();
  }
  void scatter_add(size_t k, const float* vals, const int32_t* idx, float* y) override {
    if (!k) return;
    k_scatter_add<<<grid_for(k), kThreads, 0, stream_>>>(k, vals, idx, y);
    KERNEL_CHECK();
  }

 private:
  static constexpr int kAttnRows = 64;  // query (or key) rows per CUDA block
  static void check_head_dim(int d) {
    if (d <= 0 || d > kMaxHeadDim)
      throw std::invalid_argument("cuda attention: head_dim must be in 1.." + std::to_string(kMaxHeadDim));
  }
  void* raw_alloc(size_t bytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocAsync(&p, std::max<size_t>(bytes, 256), stream_));
    return p;
  }
  void raw_free(void* p) override { CUDA_CHECK(cudaFreeAsync(p, stream_)); }

  int device_;
  std::string device_name_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  unsigned long long* counters_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts) {
  std::string why;
  if (cuda_device_count_impl(&why) == 0) throw std::runtime_error("no CUDA device: " + why);
  return std::make_unique<CudaBackend>(opts);
}

int cuda_device_count_impl(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky-free error state
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA devices";
  return n;
}

void* cuda_backend_stream(Backend& backend) {
  auto* cb = dynamic_cast<CudaBackend*>(&backend);
  return cb ? static_cast<void*>(cb->stream()) : nullptr;
}

}  // namespace trainsim::kernels
