// Float64 reference implementations that every backend op is checked against before it is
// timed (CONVENTIONS.md #10, after CUTLASS's reference GEMM). Straightforward loops, no tricks.
#pragma once

#include <cstdint>
#include <vector>

namespace trainsim::kernels::reference {

using Vec = std::vector<double>;

// Row-major C = op(A) op(B) (A [m,k] or [k,m] when trans_a; B [k,n] or [n,k] when trans_b).
Vec gemm(bool trans_a, bool trans_b, int m, int n, int k, const Vec& a, const Vec& b);
void layernorm_fwd(int rows, int cols, const Vec& x, const Vec& gamma, const Vec& beta, double eps,
                   Vec& y);
// Backward of layernorm_fwd (eps as in forward): dx, dgamma, dbeta.
void layernorm_bwd(int rows, int cols, const Vec& dy, const Vec& x, const Vec& gamma, double eps,
                   Vec& dx, Vec& dgamma, Vec& dbeta);
double gelu(double x);
double gelu_grad(double x);
void swiglu_fwd(int rows, int f, const Vec& gate_up, Vec& out);
void swiglu_bwd(int rows, int f, const Vec& gate_up, const Vec& dout, Vec& dgate_up);
void softmax_xent(int rows, int vocab, const Vec& logits, const std::vector<int32_t>& targets,
                  double grad_scale, Vec& losses, Vec& dlogits);
// BSHD layout as Backend::attention_fwd; lse [b, h, s].
void attention_fwd(int batch, int seq, int heads, int d, const Vec& q, const Vec& k, const Vec& v,
                   Vec& o, Vec& lse);
void attention_bwd(int batch, int seq, int heads, int d, const Vec& q, const Vec& k, const Vec& v,
                   const Vec& dout, Vec& dq, Vec& dk, Vec& dv);
void adamw(Vec& param, const Vec& grad, Vec& m, Vec& v, double lr, double beta1, double beta2,
           double eps, double weight_decay, int step);

}  // namespace trainsim::kernels::reference
