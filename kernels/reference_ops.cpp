#include "kernels/reference_ops.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::kernels::reference {

Vec gemm(bool trans_a, bool trans_b, int m, int n, int k, const Vec& a, const Vec& b) {
  Vec c(size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p)
        s += (trans_a ? a[size_t(p) * m + i] : a[size_t(i) * k + p]) *
             (trans_b ? b[size_t(j) * k + p] : b[size_t(p) * n + j]);
      c[size_t(i) * n + j] = s;
    }
  return c;
}

namespace {
void row_stats(const double* x, int cols, double eps, double& mean, double& rstd) {
  double s = 0.0, v = 0.0;
  for (int c = 0; c < cols; ++c) s += x[c];
  mean = s / cols;
  for (int c = 0; c < cols; ++c) v += (x[c] - mean) * (x[c] - mean);
  rstd = 1.0 / std::sqrt(v / cols + eps);
}
}  // namespace

void layernorm_fwd(int rows, int cols, const Vec& x, const Vec& gamma, const Vec& beta, double eps,
                   Vec& y) {
  y.assign(x.size(), 0.0);
  for (int r = 0; r < rows; ++r) {
    double mu, rs;
    row_stats(&x[size_t(r) * cols], cols, eps, mu, rs);
    for (int c = 0; c < cols; ++c)
      y[size_t(r) * cols + c] = (x[size_t(r) * cols + c] - mu) * rs * gamma[c] + beta[c];
  }
}

void layernorm_bwd(int rows, int cols, const Vec& dy, const Vec& x, const Vec& gamma, double eps,
                   Vec& dx, Vec& dgamma, Vec& dbeta) {
  dx.assign(x.size(), 0.0);
  dgamma.assign(cols, 0.0);
  dbeta.assign(cols, 0.0);
  for (int r = 0; r < rows; ++r) {
    const double* xr = &x[size_t(r) * cols];
    const double* dyr = &dy[size_t(r) * cols];
    double mu, rs;
    row_stats(xr, cols, eps, mu, rs);
    double mg = 0.0, mgx = 0.0;
    for (int c = 0; c < cols; ++c) {
      double xhat = (xr[c] - mu) * rs;
      mg += dyr[c] * gamma[c];
      mgx += dyr[c] * gamma[c] * xhat;
      dgamma[c] += dyr[c] * xhat;
      dbeta[c] += dyr[c];
    }
    mg /= cols;
    mgx /= cols;
    for (int c = 0; c < cols; ++c)
      dx[size_t(r) * cols + c] = rs * (dyr[c] * gamma[c] - mg - (xr[c] - mu) * rs * mgx);
  }
}

double gelu(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}
double gelu_grad(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  double t = std::tanh(c * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * c * (1.0 + 3.0 * 0.044715 * x * x) * (1.0 - t * t);
}

void swiglu_fwd(int rows, int f, const Vec& gu, Vec& out) {
  out.assign(size_t(rows) * f, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < f; ++j) {
      double g = gu[size_t(r) * 2 * f + j], u = gu[size_t(r) * 2 * f + f + j];
      out[size_t(r) * f + j] = g / (1.0 + std::exp(-g)) * u;
    }
}

void swiglu_bwd(int rows, int f, const Vec& gu, const Vec& dout, Vec& dgu) {
  dgu.assign(gu.size(), 0.0);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < f; ++j) {
      double g = gu[size_t(r) * 2 * f + j], u = gu[size_t(r) * 2 * f + f + j];
      double sig = 1.0 / (1.0 + std::exp(-g)), d = dout[size_t(r) * f + j];
      dgu[size_t(r) * 2 * f + j] = d * u * (sig + g * sig * (1.0 - sig));
      dgu[size_t(r) * 2 * f + f + j] = d * g * sig;
    }
}

void softmax_xent(int rows, int vocab, const Vec& logits, const std::vector<int32_t>& targets,
                  double grad_scale, Vec& losses, Vec& dlogits) {
  losses.assign(rows, 0.0);
  dlogits.assign(logits.size(), 0.0);
  for (int r = 0; r < rows; ++r) {
    const double* l = &logits[size_t(r) * vocab];
    double mx = *std::max_element(l, l + vocab), s = 0.0;
    for (int j = 0; j < vocab; ++j) s += std::exp(l[j] - mx);
    double lse = mx + std::log(s);
    losses[r] = lse - l[targets[r]];
    for (int j = 0; j < vocab; ++j)
      dlogits[size_t(r) * vocab + j] = (std::exp(l[j] - lse) - (j == targets[r])) * grad_scale;
  }
}

namespace {
size_t at(int b, int s, int h, int seq, int heads, int d) {
  return ((size_t(b) * seq + s) * heads + h) * d;
}
}  // namespace

void attention_fwd(int batch, int seq, int heads, int d, const Vec& q, const Vec& k, const Vec& v,
                   Vec& o, Vec& lse) {
  o.assign(q.size(), 0.0);
  lse.assign(size_t(batch) * heads * seq, 0.0);
  const double sc = 1.0 / std::sqrt(double(d));
  Vec p(seq);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < seq; ++i) {
        double mx = -INFINITY;
        for (int j = 0; j <= i; ++j) {
          double s = 0.0;
          for (int t = 0; t < d; ++t) s += q[at(b, i, h, seq, heads, d) + t] * k[at(b, j, h, seq, heads, d) + t];
          p[j] = s * sc;
          mx = std::max(mx, p[j]);
        }
        double sum = 0.0;
        for (int j = 0; j <= i; ++j) sum += std::exp(p[j] - mx);
        for (int j = 0; j <= i; ++j)
          for (int t = 0; t < d; ++t)
            o[at(b, i, h, seq, heads, d) + t] += std::exp(p[j] - mx) / sum * v[at(b, j, h, seq, heads, d) + t];
        lse[(size_t(b) * heads + h) * seq + i] = mx + std::log(sum);
      }
}

void attention_bwd(int batch, int seq, int heads, int d, const Vec& q, const Vec& k, const Vec& v,
                   const Vec& dout, Vec& dq, Vec& dk, Vec& dv) {
  dq.assign(q.size(), 0.0);
  dk.assign(q.size(), 0.0);
  dv.assign(q.size(), 0.0);
  const double sc = 1.0 / std::sqrt(double(d));
  Vec p(seq), dp(seq);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < seq; ++i) {
        size_t qi = at(b, i, h, seq, heads, d);
        double mx = -INFINITY;
        for (int j = 0; j <= i; ++j) {
          double s = 0.0, g = 0.0;
          for (int t = 0; t < d; ++t) {
            s += q[qi + t] * k[at(b, j, h, seq, heads, d) + t];
            g += dout[qi + t] * v[at(b, j, h, seq, heads, d) + t];
          }
          p[j] = s * sc;
          dp[j] = g;
          mx = std::max(mx, p[j]);
        }
        double sum = 0.0;
        for (int j = 0; j <= i; ++j) sum += std::exp(p[j] - mx);
        double dot = 0.0;  // sum_j P_ij dP_ij
        for (int j = 0; j <= i; ++j) { p[j] = std::exp(p[j] - mx) / sum; dot += p[j] * dp[j]; }
        for (int j = 0; j <= i; ++j) {
          size_t kj = at(b, j, h, seq, heads, d);
          double ds = p[j] * (dp[j] - dot) * sc;
          for (int t = 0; t < d; ++t) {
            dq[qi + t] += ds * k[kj + t];
            dk[kj + t] += ds * q[qi + t];
            dv[kj + t] += p[j] * dout[qi + t];
          }
        }
      }
}

void adamw(Vec& param, const Vec& grad, Vec& m, Vec& v, double lr, double beta1, double beta2,
           double eps, double weight_decay, int step) {
  double bc1 = 1.0 - std::pow(beta1, step), bc2 = 1.0 - std::pow(beta2, step);
  for (size_t i = 0; i < param.size(); ++i) {
    m[i] = beta1 * m[i] + (1.0 - beta1) * grad[i];
    v[i] = beta2 * v[i] + (1.0 - beta2) * grad[i] * grad[i];
    param[i] -= lr * (m[i] / bc1 / (std::sqrt(v[i] / bc2) + eps) + weight_decay * param[i]);
  }
}

}  // namespace trainsim::kernels::reference
