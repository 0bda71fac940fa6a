#include "kernels/gpt_model.hpp"

#include <cmath>
#include <stdexcept>

#include "kernels/byte_corpus.hpp"

namespace trainsim::kernels {

namespace {
constexpr float kLnEps = 1e-5f;

// Standard normal from a counter-based hash (Box-Muller), so any slice of a tensor can be
// generated without generating the rest: TP ranks get exactly their columns of the full tensor.
float hashed_normal(uint64_t seed, uint64_t tensor_id, uint64_t index) {
  uint64_t h1 = splitmix64(seed ^ splitmix64(tensor_id * 0x9e3779b97f4a7c15ull + index));
  uint64_t h2 = splitmix64(h1);
  double u1 = (double(h1 >> 11) + 1.0) / 9007199254740993.0;  // (0, 1]
  double u2 = double(h2 >> 11) / 9007199254740992.0;
  return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
}

uint64_t name_id(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : s) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}
}  // namespace

const float* GptStage::out(const MicroBatchActivations& a) { return a.x_out.data(); }

size_t GptStage::add_tensor(const std::string& name, int rows, int cols) {
  tensors_.push_back({name, n_params_, rows, cols});
  n_params_ += size_t(rows) * cols;
  return tensors_.back().offset;
}

GptStage::GptStage(Backend& be, const GptConfig& cfg, StagePosition pos, size_t pad_multiple)
    : be_(be), cfg_(cfg), pos_(pos) {
  const int h = cfg.hidden;
  if (h % cfg.heads || cfg.heads % pos.tp || (4 * h) % pos.tp || cfg.layers % pos.pp)
    throw std::invalid_argument("GptStage: heads must divide hidden, tp must divide heads, pp must divide layers");
  n_layers_ = cfg.layers / pos.pp;
  layer0_ = pos.pp_rank * n_layers_;
  hl_ = h / pos.tp;
  fl_ = 4 * h / pos.tp;
  heads_l_ = cfg.heads / pos.tp;
  head_dim_ = h / cfg.heads;
  if (first()) {
    wte_ = add_tensor("wte", cfg.vocab, h);
    wpe_ = add_tensor("wpe", cfg.seq, h);
  }
  for (int l = 0; l < n_layers_; ++l) {
    std::string p = "h" + std::to_string(layer0_ + l) + ".";
    LayerParams lp;
    lp.ln1_g = add_tensor(p + "ln1_g", 1, h);
    lp.ln1_b = add_tensor(p + "ln1_b", 1, h);
    lp.wq = add_tensor(p + "wq", h, hl_);
    lp.wk = add_tensor(p + "wk", h, hl_);
    lp.wv = add_tensor(p + "wv", h, hl_);
    lp.wo = add_tensor(p + "wo", hl_, h);
    lp.ln2_g = add_tensor(p + "ln2_g", 1, h);
    lp.ln2_b = add_tensor(p + "ln2_b", 1, h);
    lp.w1 = add_tensor(p + "w1", h, fl_);
    lp.w2 = add_tensor(p + "w2", fl_, h);
    layers_.push_back(lp);
  }
  if (last()) {
    lnf_g_ = add_tensor("lnf_g", 1, h);
    lnf_b_ = add_tensor("lnf_b", 1, h);
    wlm_ = add_tensor("wlm", h, cfg.vocab);
  }
  size_t padded = (n_params_ + pad_multiple - 1) / pad_multiple * pad_multiple;
  params_ = DeviceArray<float>(be, padded);
  grads_ = DeviceArray<float>(be, padded);
  grads_.zero();
  init_params();
}

GptStage::~GptStage() = default;

// GPT-2 initialisation: N(0, 0.02) for weights, the residual projections (wo, w2) scaled by
// 1/sqrt(2L) (Radford et al. 2019); LayerNorm gamma 1, beta 0. The full (unsplit) tensor is
// defined element by element; a TP rank takes its column (column-parallel) or row
// (row-parallel) block of it.
void GptStage::init_params() {
  std::vector<float> host(params_.size(), 0.0f);
  const int h = cfg_.hidden;
  for (const auto& t : tensors_) {
    const std::string& n = t.name;
    bool is_ln = n.find("ln") != std::string::npos;
    bool gamma = n.size() >= 2 && n.compare(n.size() - 2, 2, "_g") == 0;
    if (is_ln) {
      for (int c = 0; c < t.cols; ++c) host[t.offset + c] = gamma ? 1.0f : 0.0f;
      continue;
    }
    bool col_parallel = n.find(".wq") != std::string::npos || n.find(".wk") != std::string::npos ||
                        n.find(".wv") != std::string::npos || n.find(".w1") != std::string::npos;
    bool row_parallel = n.find(".wo") != std::string::npos || n.find(".w2") != std::string::npos;
    float std_dev = cfg_.init_std * (row_parallel ? float(1.0 / std::sqrt(2.0 * cfg_.layers)) : 1.0f);
    int full_cols = col_parallel ? t.cols * pos_.tp : t.cols;
    int row0 = row_parallel ? pos_.tp_rank * t.rows : 0;
    int col0 = col_parallel ? pos_.tp_rank * t.cols : 0;
    uint64_t id = name_id(n);
    for (int r = 0; r < t.rows; ++r)
      for (int c = 0; c < t.cols; ++c) {
        uint64_t global = uint64_t(row0 + r) * full_cols + (col0 + c);
        host[t.offset + size_t(r) * t.cols + c] = std_dev * hashed_normal(cfg_.seed, id, global);
      }
  }
  (void)h;
  params_.upload(host);
}

std::unique_ptr<MicroBatchActivations> GptStage::forward(int mb, const int32_t* tokens,
                                                         const float* x_in, Communicator& tp) {
  auto a = std::make_unique<MicroBatchActivations>();
  a->mb = mb;
  const int S = cfg_.seq, h = cfg_.hidden, T = mb * S;
  const size_t Th = size_t(T) * h;
  float* P = params_.data();
  DeviceArray<float> x(be_, Th);
  if (first()) {
    a->tokens = DeviceArray<int32_t>(be_, T);
    be_.copy_device(a->tokens.data(), tokens, T * sizeof(int32_t));
    be_.embedding_fwd(T, S, h, tokens, P + wte_, P + wpe_, x.data());
  } else {
    be_.copy_device(x.data(), x_in, Th * sizeof(float));
  }
  for (int l = 0; l < n_layers_; ++l) {
    const auto& lp = layers_[l];
    MicroBatchActivations::Layer L;
    L.x_in = std::move(x);
    L.a1 = DeviceArray<float>(be_, Th);
    L.mean1 = DeviceArray<float>(be_, T);
    L.rstd1 = DeviceArray<float>(be_, T);
    be_.layernorm_fwd(T, h, L.x_in.data(), P + lp.ln1_g, P + lp.ln1_b, kLnEps, L.a1.data(), L.mean1.data(), L.rstd1.data());
    L.q = DeviceArray<float>(be_, size_t(T) * hl_);
    L.k = DeviceArray<float>(be_, size_t(T) * hl_);
    L.v = DeviceArray<float>(be_, size_t(T) * hl_);
    be_.gemm(DType::kF32, false, false, T, hl_, h, 1.0f, L.a1.data(), P + lp.wq, 0.0f, L.q.data());
    be_.gemm(DType::kF32, false, false, T, hl_, h, 1.0f, L.a1.data(), P + lp.wk, 0.0f, L.k.data());
    be_.gemm(DType::kF32, false, false, T, hl_, h, 1.0f, L.a1.data(), P + lp.wv, 0.0f, L.v.data());
    L.o = DeviceArray<float>(be_, size_t(T) * hl_);
    L.lse = DeviceArray<float>(be_, size_t(mb) * heads_l_ * S);
    be_.attention_fwd(mb, S, heads_l_, head_dim_, L.q.data(), L.k.data(), L.v.data(), L.o.data(), L.lse.data());
    // Row-parallel attention output: partial sums, all-reduced over TP.
    L.x_mid = DeviceArray<float>(be_, Th);
    be_.gemm(DType::kF32, false, false, T, h, hl_, 1.0f, L.o.data(), P + lp.wo, 0.0f, L.x_mid.data());
    if (tp.size() > 1) tp.all_reduce(L.x_mid.data(), L.x_mid.data(), Th, ReduceOp::kSum);
    be_.axpy(Th, 1.0f, L.x_in.data(), L.x_mid.data());
    L.a2 = DeviceArray<float>(be_, Th);
    L.mean2 = DeviceArray<float>(be_, T);
    L.rstd2 = DeviceArray<float>(be_, T);
    be_.layernorm_fwd(T, h, L.x_mid.data(), P + lp.ln2_g, P + lp.ln2_b, kLnEps, L.a2.data(), L.mean2.data(), L.rstd2.data());
    L.u = DeviceArray<float>(be_, size_t(T) * fl_);
    L.g = DeviceArray<float>(be_, size_t(T) * fl_);
    be_.gemm(DType::kF32, false, false, T, fl_, h, 1.0f, L.a2.data(), P + lp.w1, 0.0f, L.u.data());
    be_.gelu_fwd(size_t(T) * fl_, L.u.data(), L.g.data());
    x = DeviceArray<float>(be_, Th);
    be_.gemm(DType::kF32, false, false, T, h, fl_, 1.0f, L.g.data(), P + lp.w2, 0.0f, x.data());
    if (tp.size() > 1) tp.all_reduce(x.data(), x.data(), Th, ReduceOp::kSum);
    be_.axpy(Th, 1.0f, L.x_mid.data(), x.data());
    a->layers.push_back(std::move(L));
  }
  a->x_out = std::move(x);
  return a;
}

double GptStage::loss_and_head_backward(MicroBatchActivations& a, const int32_t* targets,
                                        float grad_scale, float* dx) {
  const int S = cfg_.seq, h = cfg_.hidden, V = cfg_.vocab, T = a.mb * S;
  float* P = params_.data();
  float* G = grads_.data();
  a.af = DeviceArray<float>(be_, size_t(T) * h);
  a.meanf = DeviceArray<float>(be_, T);
  a.rstdf = DeviceArray<float>(be_, T);
  be_.layernorm_fwd(T, h, a.x_out.data(), P + lnf_g_, P + lnf_b_, kLnEps, a.af.data(), a.meanf.data(), a.rstdf.data());
  DeviceArray<float> logits(be_, size_t(T) * V), losses(be_, T);
  be_.gemm(DType::kF32, false, false, T, V, h, 1.0f, a.af.data(), P + wlm_, 0.0f, logits.data());
  // dlogits overwrite logits in place
  be_.softmax_xent(T, V, logits.data(), targets, losses.data(), grad_scale != 0.0f ? logits.data() : nullptr, grad_scale);
  auto hl = losses.download();
  double loss = 0;
  for (float l : hl) loss += l;
  if (grad_scale == 0.0f) return loss;
  be_.gemm(DType::kF32, true, false, h, V, T, 1.0f, a.af.data(), logits.data(), 1.0f, G + wlm_);
  DeviceArray<float> daf(be_, size_t(T) * h);
  be_.gemm(DType::kF32, false, true, T, h, V, 1.0f, logits.data(), P + wlm_, 0.0f, daf.data());
  be_.layernorm_bwd(T, h, daf.data(), a.x_out.data(), P + lnf_g_, a.meanf.data(), a.rstdf.data(), dx, G + lnf_g_, G + lnf_b_);
  return loss;
}

void GptStage::backward(MicroBatchActivations& a, const float* dx_out, float* dx_in, Communicator& tp) {
  const int S = cfg_.seq, h = cfg_.hidden, T = a.mb * S;
  const size_t Th = size_t(T) * h;
  float* P = params_.data();
  float* G = grads_.data();
  DeviceArray<float> dx(be_, Th), tmp(be_, Th), dxl(be_, Th);
  be_.copy_device(dx.data(), dx_out, Th * sizeof(float));
  for (int l = n_layers_ - 1; l >= 0; --l) {
    auto& L = a.layers[l];
    const auto& lp = layers_[l];
    // MLP: x_out = x_mid + W2 gelu(W1 LN2(x_mid)); dx holds d x_out.
    {
      DeviceArray<float> dg(be_, size_t(T) * fl_), du(be_, size_t(T) * fl_);
      be_.gemm(DType::kF32, true, false, fl_, h, T, 1.0f, L.g.data(), dx.data(), 1.0f, G + lp.w2);
      be_.gemm(DType::kF32, false, true, T, fl_, h, 1.0f, dx.data(), P + lp.w2, 0.0f, dg.data());
      be_.gelu_bwd(size_t(T) * fl_, L.u.data(), dg.data(), du.data());
      be_.gemm(DType::kF32, true, false, h, fl_, T, 1.0f, L.a2.data(), du.data(), 1.0f, G + lp.w1);
      be_.gemm(DType::kF32, false, true, T, h, fl_, 1.0f, du.data(), P + lp.w1, 0.0f, tmp.data());
      if (tp.size() > 1) tp.all_reduce(tmp.data(), tmp.data(), Th, ReduceOp::kSum);  // column-parallel input grad
      be_.layernorm_bwd(T, h, tmp.data(), L.x_mid.data(), P + lp.ln2_g, L.mean2.data(), L.rstd2.data(), dxl.data(),
                        G + lp.ln2_g, G + lp.ln2_b);
      be_.axpy(Th, 1.0f, dxl.data(), dx.data());  // dx now d x_mid
    }
    // Attention: x_mid = x_in + Wo attn(Q, K, V of LN1(x_in)).
    {
      const size_t Thl = size_t(T) * hl_;
      DeviceArray<float> dO(be_, Thl), dq(be_, Thl), dk(be_, Thl), dv(be_, Thl);
      be_.gemm(DType::kF32, true, false, hl_, h, T, 1.0f, L.o.data(), dx.data(), 1.0f, G + lp.wo);
      be_.gemm(DType::kF32, false, true, T, hl_, h, 1.0f, dx.data(), P + lp.wo, 0.0f, dO.data());
      be_.attention_bwd(a.mb, S, heads_l_, head_dim_, L.q.data(), L.k.data(), L.v.data(), L.o.data(), L.lse.data(),
                        dO.data(), dq.data(), dk.data(), dv.data());
      be_.gemm(DType::kF32, true, false, h, hl_, T, 1.0f, L.a1.data(), dq.data(), 1.0f, G + lp.wq);
      be_.gemm(DType::kF32, true, false, h, hl_, T, 1.0f, L.a1.data(), dk.data(), 1.0f, G + lp.wk);
      be_.gemm(DType::kF32, true, false, h, hl_, T, 1.0f, L.a1.data(), dv.data(), 1.0f, G + lp.wv);
      be_.gemm(DType::kF32, false, true, T, h, hl_, 1.0f, dq.data(), P + lp.wq, 0.0f, tmp.data());
      be_.gemm(DType::kF32, false, true, T, h, hl_, 1.0f, dk.data(), P + lp.wk, 1.0f, tmp.data());
      be_.gemm(DType::kF32, false, true, T, h, hl_, 1.0f, dv.data(), P + lp.wv, 1.0f, tmp.data());
      if (tp.size() > 1) tp.all_reduce(tmp.data(), tmp.data(), Th, ReduceOp::kSum);
      be_.layernorm_bwd(T, h, tmp.data(), L.x_in.data(), P + lp.ln1_g, L.mean1.data(), L.rstd1.data(), dxl.data(),
                        G + lp.ln1_g, G + lp.ln1_b);
      be_.axpy(Th, 1.0f, dxl.data(), dx.data());  // dx now d x_in
    }
    L = MicroBatchActivations::Layer{};  // free this layer's activations early
  }
  if (first()) {
    be_.embedding_bwd(T, S, h, a.tokens.data(), dx.data(), G + wte_, G + wpe_);
  } else {
    be_.copy_device(dx_in, dx.data(), Th * sizeof(float));
  }
}

}  // namespace trainsim::kernels
