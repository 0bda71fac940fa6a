#include "kernels/op_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "kernels/numeric_formats.hpp"

namespace trainsim::kernels {

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

reference::Vec to_double(const std::vector<float>& v) { return reference::Vec(v.begin(), v.end()); }

size_t count_wrong(const std::vector<float>& got, const reference::Vec& ref, double atol,
                   double rtol, double* max_abs_error) {
  size_t wrong = 0;
  double mx = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double g = i < got.size() ? got[i] : NAN;
    double e = std::fabs(g - ref[i]);
    if (!(e <= atol + rtol * std::fabs(ref[i]))) ++wrong;  // NaN counts as wrong
    if (e > mx || std::isnan(e)) mx = std::isnan(e) ? INFINITY : e;
  }
  if (max_abs_error) *max_abs_error = mx;
  return wrong;
}

namespace {

template <typename T>
DeviceArray<T> upload(Backend& be, const std::vector<T>& h) {
  DeviceArray<T> d(be, h.size());
  d.upload(h);
  return d;
}

std::string shape_str(std::initializer_list<std::pair<const char*, long>> dims) {
  std::ostringstream os;
  bool first = true;
  for (auto& [k, v] : dims) { os << (first ? "" : " ") << k << "=" << v; first = false; }
  return os.str();
}

struct Checker {
  Backend& be;
  uint64_t seed;
  std::vector<OpCheckResult> out;

  void add(const std::string& op, const std::string& shape, const std::vector<float>& got,
           const reference::Vec& ref, double atol, double rtol) {
    OpCheckResult r{op, shape, ref.size(), 0, 0.0};
    r.wrong = count_wrong(got, ref, atol, rtol, &r.max_abs_error);
    out.push_back(r);
  }

  void gemm(DType t, bool ta, bool tb, int m, int n, int k) {
    auto a = random_floats(size_t(m) * k, ++seed), b = random_floats(size_t(k) * n, ++seed);
    // Round the inputs to the storage type so the reference sees what the backend sees.
    auto narrow = [&](std::vector<float>& v, std::vector<uint16_t>& h) {
      h.resize(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        h[i] = t == DType::kBF16 ? float_to_bf16(v[i]) : float_to_fp16(v[i]);
        v[i] = t == DType::kBF16 ? bf16_to_float(h[i]) : fp16_to_float(h[i]);
      }
    };
    std::vector<float> got;
    if (t == DType::kF32) {
      auto da = upload(be, a), db = upload(be, b);
      DeviceArray<float> dc(be, size_t(m) * n);
      be.gemm(t, ta, tb, m, n, k, 1.0f, da.data(), db.data(), 0.0f, dc.data());
      got = dc.download();
    } else {
      std::vector<uint16_t> ha, hb;
      narrow(a, ha);
      narrow(b, hb);
      auto da = upload(be, ha), db = upload(be, hb);
      DeviceArray<uint16_t> dc(be, size_t(m) * n);
      be.gemm(t, ta, tb, m, n, k, 1.0f, da.data(), db.data(), 0.0f, dc.data());
      auto hc = dc.download();
      got.resize(hc.size());
      for (size_t i = 0; i < hc.size(); ++i)
        got[i] = t == DType::kBF16 ? bf16_to_float(hc[i]) : fp16_to_float(hc[i]);
    }
    auto ref = reference::gemm(ta, tb, m, n, k, to_double(a), to_double(b));
    // Output rounding (bf16: 2^-8 relative, fp16: 2^-11) plus fp32 accumulation ~ sqrt(k) eps.
    double rtol = t == DType::kBF16 ? 8e-3 : (t == DType::kF16 ? 1e-3 : 1e-5);
    double atol = (t == DType::kF32 ? 1e-5 : 1e-3) * std::sqrt(double(k));
    std::string name = std::string("gemm_") + to_string(t) + "_" + (ta ? "t" : "n") + (tb ? "t" : "n");
    add(name, shape_str({{"m", m}, {"n", n}, {"k", k}}), got, ref, atol, rtol);
  }

  void layernorm(int rows, int cols) {
    auto x = random_floats(size_t(rows) * cols, ++seed, -2, 2), g = random_floats(cols, ++seed, 0.5, 1.5),
         bt = random_floats(cols, ++seed), dy = random_floats(size_t(rows) * cols, ++seed);
    const float eps = 1e-5f;
    auto dx_ = upload(be, x), dg = upload(be, g), db = upload(be, bt), ddy = upload(be, dy);
    DeviceArray<float> y(be, x.size()), mean(be, rows), rstd(be, rows), dxo(be, x.size()),
        dgam(be, cols), dbet(be, cols);
    dgam.zero();
    dbet.zero();
    be.layernorm_fwd(rows, cols, dx_.data(), dg.data(), db.data(), eps, y.data(), mean.data(), rstd.data());
    be.layernorm_bwd(rows, cols, ddy.data(), dx_.data(), dg.data(), mean.data(), rstd.data(),
                     dxo.data(), dgam.data(), dbet.data());
    reference::Vec ry, rdx, rdg, rdb;
    reference::layernorm_fwd(rows, cols, to_double(x), to_double(g), to_double(bt), eps, ry);
    reference::layernorm_bwd(rows, cols, to_double(dy), to_double(x), to_double(g), eps, rdx, rdg, rdb);
    auto sh = shape_str({{"rows", rows}, {"cols", cols}});
    add("layernorm_fwd", sh, y.download(), ry, 1e-5, 1e-4);
    add("layernorm_bwd_dx", sh, dxo.download(), rdx, 1e-4, 1e-4);
    add("layernorm_bwd_dgamma", sh, dgam.download(), rdg, 1e-4 * std::sqrt(rows), 1e-4);
    add("layernorm_bwd_dbeta", sh, dbet.download(), rdb, 1e-4 * std::sqrt(rows), 1e-4);
  }

  void activations(size_t n, int rows, int f) {
    auto x = random_floats(n, ++seed, -4, 4), dy = random_floats(n, ++seed);
    auto dx = upload(be, x), ddy = upload(be, dy);
    DeviceArray<float> y(be, n), g(be, n);
    be.gelu_fwd(n, dx.data(), y.data());
    be.gelu_bwd(n, dx.data(), ddy.data(), g.data());
    reference::Vec ry(n), rg(n);
    for (size_t i = 0; i < n; ++i) { ry[i] = reference::gelu(x[i]); rg[i] = reference::gelu_grad(x[i]) * dy[i]; }
    auto sh = shape_str({{"n", long(n)}});
    add("gelu_fwd", sh, y.download(), ry, 1e-5, 1e-5);
    add("gelu_bwd", sh, g.download(), rg, 1e-5, 1e-5);

    auto gu = random_floats(size_t(rows) * 2 * f, ++seed, -4, 4), dout = random_floats(size_t(rows) * f, ++seed);
    auto dgu = upload(be, gu), ddo = upload(be, dout);
    DeviceArray<float> out(be, size_t(rows) * f), dgrad(be, gu.size());
    be.swiglu_fwd(rows, f, dgu.data(), out.data());
    be.swiglu_bwd(rows, f, dgu.data(), ddo.data(), dgrad.data());
    reference::Vec ro, rd;
    reference::swiglu_fwd(rows, f, to_double(gu), ro);
    reference::swiglu_bwd(rows, f, to_double(gu), to_double(dout), rd);
    auto sh2 = shape_str({{"rows", rows}, {"f", f}});
    add("swiglu_fwd", sh2, out.download(), ro, 1e-5, 1e-5);
    add("swiglu_bwd", sh2, dgrad.download(), rd, 1e-5, 1e-5);
  }

  void xent(int rows, int vocab) {
    auto logits = random_floats(size_t(rows) * vocab, ++seed, -5, 5);
    std::vector<int32_t> tg(rows);
    std::mt19937 rng(seed);
    for (auto& t : tg) t = int32_t(rng() % vocab);
    auto dl = upload(be, logits);
    auto dt = upload(be, tg);
    DeviceArray<float> losses(be, rows), grad(be, logits.size());
    const float gs = 1.0f / rows;
    be.softmax_xent(rows, vocab, dl.data(), dt.data(), losses.data(), grad.data(), gs);
    reference::Vec rl, rg;
    reference::softmax_xent(rows, vocab, to_double(logits), tg, gs, rl, rg);
    auto sh = shape_str({{"rows", rows}, {"vocab", vocab}});
    add("softmax_xent_loss", sh, losses.download(), rl, 1e-5, 1e-5);
    add("softmax_xent_grad", sh, grad.download(), rg, 1e-7, 1e-4);
  }

  void attention(int b, int s, int h, int d) {
    size_t n = size_t(b) * s * h * d;
    auto q = random_floats(n, ++seed), k = random_floats(n, ++seed), v = random_floats(n, ++seed),
         dout = random_floats(n, ++seed);
    auto dq_ = upload(be, q), dk_ = upload(be, k), dv_ = upload(be, v), ddo = upload(be, dout);
    DeviceArray<float> o(be, n), lse(be, size_t(b) * h * s), gq(be, n), gk(be, n), gv(be, n);
    be.attention_fwd(b, s, h, d, dq_.data(), dk_.data(), dv_.data(), o.data(), lse.data());
    be.attention_bwd(b, s, h, d, dq_.data(), dk_.data(), dv_.data(), o.data(), lse.data(),
                     ddo.data(), gq.data(), gk.data(), gv.data());
    reference::Vec ro, rl, rq, rk, rv;
    reference::attention_fwd(b, s, h, d, to_double(q), to_double(k), to_double(v), ro, rl);
    reference::attention_bwd(b, s, h, d, to_double(q), to_double(k), to_double(v), to_double(dout), rq, rk, rv);
    auto sh = shape_str({{"batch", b}, {"seq", s}, {"heads", h}, {"head_dim", d}});
    add("attention_fwd_o", sh, o.download(), ro, 1e-5, 1e-4);
    add("attention_fwd_lse", sh, lse.download(), rl, 1e-5, 1e-5);
    add("attention_bwd_dq", sh, gq.download(), rq, 1e-4, 1e-3);
    add("attention_bwd_dk", sh, gk.download(), rk, 1e-4, 1e-3);
    add("attention_bwd_dv", sh, gv.download(), rv, 1e-4, 1e-3);
  }

  void adamw(size_t n) {
    auto p = random_floats(n, ++seed), g = random_floats(n, ++seed), m = random_floats(n, ++seed, -0.1f, 0.1f),
         v = random_floats(n, ++seed, 0.0f, 0.01f);
    auto dp = upload(be, p), dg = upload(be, g), dm = upload(be, m), dv = upload(be, v);
    const int step = 3;
    be.adamw(n, dp.data(), dg.data(), dm.data(), dv.data(), 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, step);
    auto rp = to_double(p), rm = to_double(m), rv = to_double(v);
    reference::adamw(rp, to_double(g), rm, rv, 1e-3, 0.9, 0.95, 1e-8, 0.1, step);
    auto sh = shape_str({{"n", long(n)}});
    add("adamw_param", sh, dp.download(), rp, 1e-6, 1e-5);
    add("adamw_m", sh, dm.download(), rm, 1e-7, 1e-5);
    add("adamw_v", sh, dv.download(), rv, 1e-8, 1e-5);
  }

  void embedding(int n_tokens, int seq, int hidden, int vocab) {
    auto wte = random_floats(size_t(vocab) * hidden, ++seed), wpe = random_floats(size_t(seq) * hidden, ++seed),
         dout = random_floats(size_t(n_tokens) * hidden, ++seed);
    std::vector<int32_t> tok(n_tokens);
    std::mt19937 rng(seed);
    for (auto& t : tok) t = int32_t(rng() % vocab);
    auto dwte = upload(be, wte), dwpe = upload(be, wpe), ddo = upload(be, dout);
    auto dt = upload(be, tok);
    DeviceArray<float> out(be, dout.size()), gte(be, wte.size()), gpe(be, wpe.size());
    gte.zero();
    gpe.zero();
    be.embedding_fwd(n_tokens, seq, hidden, dt.data(), dwte.data(), dwpe.data(), out.data());
    be.embedding_bwd(n_tokens, seq, hidden, dt.data(), ddo.data(), gte.data(), gpe.data());
    reference::Vec ro(dout.size()), rte(wte.size(), 0.0), rpe(wpe.size(), 0.0);
    for (int t = 0; t < n_tokens; ++t)
      for (int c = 0; c < hidden; ++c) {
        ro[size_t(t) * hidden + c] = double(wte[size_t(tok[t]) * hidden + c]) + wpe[size_t(t % seq) * hidden + c];
        rte[size_t(tok[t]) * hidden + c] += dout[size_t(t) * hidden + c];
        rpe[size_t(t % seq) * hidden + c] += dout[size_t(t) * hidden + c];
      }
    auto sh = shape_str({{"tokens", n_tokens}, {"seq", seq}, {"hidden", hidden}, {"vocab", vocab}});
    add("embedding_fwd", sh, out.download(), ro, 1e-6, 1e-6);
    add("embedding_bwd_wte", sh, gte.download(), rte, 1e-5, 1e-5);
    add("embedding_bwd_wpe", sh, gpe.download(), rpe, 1e-5, 1e-5);
  }

  void convert(size_t n) {
    auto x = random_floats(n, ++seed, -100, 100);
    auto dx = upload(be, x);
    for (DType t : {DType::kBF16, DType::kF16}) {
      DeviceArray<uint16_t> h(be, n);
      DeviceArray<float> back(be, n);
      be.convert(DType::kF32, t, n, dx.data(), h.data());
      be.convert(t, DType::kF32, n, h.data(), back.data());
      reference::Vec ref(n);
      for (size_t i = 0; i < n; ++i) ref[i] = t == DType::kBF16 ? round_bf16(x[i]) : round_fp16(x[i]);
      add(std::string("convert_f32_") + to_string(t), shape_str({{"n", long(n)}}), back.download(), ref, 0, 0);
    }
  }

  // Quantization: the bound is the format's rounding error, half a code step after scaling.
  void quantize(QuantFormat f, size_t n, size_t block) {
    auto x = random_floats(n, ++seed, -3, 3);
    for (size_t i = 0; i < n; i += 97) x[i] *= 1e-3f;  // small values exercise fp8 subnormals
    auto dx = upload(be, x);
    DeviceArray<uint8_t> payload(be, quant_payload_bytes(f, n, block));
    DeviceArray<float> y(be, n);
    be.quantize(f, n, block, dx.data(), payload.data());
    be.dequantize(f, n, block, payload.data(), y.data(), false);
    auto got = y.download();
    OpCheckResult r{std::string("quantize_") + to_string(f), shape_str({{"n", long(n)}, {"block", long(block)}}), n, 0, 0.0};
    const double qmax = quant_max(f);
    for (size_t b0 = 0; b0 < n; b0 += block) {
      size_t b1 = std::min(n, b0 + block);
      double amax = 0.0;
      for (size_t i = b0; i < b1; ++i) amax = std::max(amax, std::fabs(double(x[i])));
      double sc = amax / qmax;
      for (size_t i = b0; i < b1; ++i) {
        // Integer codes: half a step, plus the float32 roundings of the scale (amax / qmax), of
        // x / scale and of code x scale, each at most half an ulp of a value up to amax: a value
        // within that of a half-step tie may round either way (one in ~10^6 of random inputs).
        double bound = f == QuantFormat::kFp8E4M3
                           ? std::max(std::fabs(double(x[i])) * 0.0625, sc * std::ldexp(1.0, -10))
                           : 0.5 * sc + 2.0 * std::ldexp(amax, -23);
        double e = std::fabs(got[i] - double(x[i]));
        r.max_abs_error = std::max(r.max_abs_error, e);
        if (!(e <= bound * (1 + 1e-5) + 1e-12)) ++r.wrong;
      }
    }
    out.push_back(r);
  }

  void sparse24(size_t n) {
    auto x = random_floats(n, ++seed);
    auto dx = upload(be, x);
    DeviceArray<uint8_t> payload(be, sparse24_payload_bytes(n));
    DeviceArray<float> y(be, n);
    be.sparsify_2of4(n, dx.data(), payload.data());
    be.densify_2of4(n, payload.data(), y.data(), false);
    auto got = y.download();
    OpCheckResult r{"sparsify_2of4", shape_str({{"n", long(n)}}), n, 0, 0.0};
    for (size_t g = 0; g < n / 4; ++g) {
      // Reference: keep exactly the two largest magnitudes (ties: lower index), values exact.
      int order[4] = {0, 1, 2, 3};
      std::stable_sort(order, order + 4, [&](int a, int b) { return std::fabs(x[g * 4 + a]) > std::fabs(x[g * 4 + b]); });
      for (int j = 0; j < 4; ++j) {
        bool kept = j == order[0] || j == order[1];
        double ref = kept ? x[g * 4 + j] : 0.0;
        if (got[g * 4 + j] != ref) ++r.wrong;
        r.max_abs_error = std::max(r.max_abs_error, std::fabs(got[g * 4 + j] - ref));
      }
    }
    out.push_back(r);
  }

  void topk(size_t n, size_t k) {
    auto x = random_floats(n, ++seed);
    auto dx = upload(be, x);
    DeviceArray<float> vals(be, k), y(be, n);
    DeviceArray<int32_t> idx(be, k);
    be.top_k(n, k, dx.data(), vals.data(), idx.data());
    y.zero();
    be.scatter_add(k, vals.data(), idx.data(), y.data());
    auto gi = idx.download();
    auto gy = y.download();
    std::vector<double> mags(n);
    for (size_t i = 0; i < n; ++i) mags[i] = std::fabs(double(x[i]));
    std::nth_element(mags.begin(), mags.begin() + (k - 1), mags.end(), std::greater<>());
    double kth = mags[k - 1];
    OpCheckResult r{"top_k", shape_str({{"n", long(n)}, {"k", long(k)}}), n, 0, 0.0};
    std::vector<char> seen(n, 0);
    for (size_t i = 0; i < k; ++i) {
      int32_t j = gi[i];
      if (j < 0 || size_t(j) >= n || seen[j] || std::fabs(x[j]) < kth) { ++r.wrong; continue; }
      seen[j] = 1;
    }
    for (size_t i = 0; i < n; ++i) {  // y = x on the selected set, 0 elsewhere
      double ref = seen[i] ? x[i] : 0.0;
      if (gy[i] != ref) ++r.wrong;
      r.max_abs_error = std::max(r.max_abs_error, std::fabs(gy[i] - ref));
    }
    out.push_back(r);
  }
};

}  // namespace

std::vector<OpCheckResult> check_ops(Backend& be, const OpCheckOptions& opts) {
  Checker c{be, opts.seed, {}};
  const bool L = opts.large;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) c.gemm(t, false, false, L ? 256 : 37, L ? 384 : 45, L ? 512 : 67);
  c.gemm(DType::kF32, true, false, 33, 29, 41);
  c.gemm(DType::kF32, false, true, 33, 29, 41);
  c.gemm(DType::kBF16, true, true, 24, 40, 72);
  c.layernorm(L ? 512 : 13, L ? 1024 : 96);
  c.activations(L ? (1 << 20) + 3 : 1001, L ? 256 : 7, L ? 1024 : 24);
  c.xent(L ? 512 : 9, L ? 50304 : 259);
  c.attention(2, L ? 300 : 37, L ? 4 : 3, L ? 64 : 16);
  if (L) c.attention(1, 129, 2, 128);
  c.adamw(L ? (1 << 20) + 5 : 1003);
  c.embedding(L ? 1024 : 24, L ? 256 : 8, L ? 512 : 32, L ? 1000 : 50);
  c.convert(L ? (1 << 20) : 999);
  for (QuantFormat f : {QuantFormat::kInt8, QuantFormat::kInt4, QuantFormat::kFp8E4M3}) {
    c.quantize(f, L ? (1 << 22) + 6 : 1000, 64);
    c.quantize(f, L ? 1000006 : 130, 128);
  }
  c.sparse24(L ? (1 << 22) : 1024);
  c.topk(L ? (1 << 20) : 1000, L ? 1000 : 17);
  return c.out;
}

}  // namespace trainsim::kernels
