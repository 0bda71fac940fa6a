// The small GPT that `trainsim train` trains: pre-LayerNorm GPT-2 blocks (no biases in the
// linear layers), learned positions, GELU MLP of 4h, untied LM head, on any Backend.
// One GptStage is what one rank holds: the layers of its pipeline stage (Megatron's
// contiguous split), each split over tensor parallelism as Megatron-LM does it (Shoeybi et al.
// 2019, fig. 3): Q/K/V and MLP-up column-parallel, attention-out and MLP-down row-parallel, an
// all-reduce after each row-parallel layer in forward and after each column-parallel input
// gradient in backward. Embeddings, LayerNorms and the LM head are replicated over TP.
// All parameters of a stage live in one flat buffer (and the gradients in another of the same
// layout), so data parallelism, ZeRO-1 and compression work on one vector.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

struct GptConfig {
  int layers = 2;
  int hidden = 64;
  int heads = 4;
  int seq = 32;
  int vocab = 256;
  uint64_t seed = 1234;
  float init_std = 0.02f;
};

struct StagePosition {
  int tp = 1, tp_rank = 0;
  int pp = 1, pp_rank = 0;
};

// Everything one micro-batch keeps from forward for backward (freed after backward).
struct MicroBatchActivations {
  int mb = 0;
  DeviceArray<int32_t> tokens;  // first stage
  struct Layer {
    DeviceArray<float> x_in, a1, mean1, rstd1, q, k, v, o, lse, x_mid, a2, mean2, rstd2, u, g;
  };
  std::vector<Layer> layers;
  DeviceArray<float> x_out;              // stage output (last stage: before the final LN)
  DeviceArray<float> af, meanf, rstdf;   // last stage: final LN
};


class GptStage {
 public:
  // pad_multiple: the flat buffers are padded to a multiple of this (DP shards, quant blocks).
  GptStage(Backend& be, const GptConfig& cfg, StagePosition pos, size_t pad_multiple);
  ~GptStage();
  bool first() const { return pos_.pp_rank == 0; }
  bool last() const { return pos_.pp_rank == pos_.pp - 1; }
  size_t param_count() const { return n_params_; }   // unpadded, this rank
  size_t padded_count() const { return params_.size(); }
  float* params() { return params_.data(); }
  float* grads() { return grads_.data(); }
  const GptConfig& config() const { return cfg_; }
  int first_layer() const { return layer0_; }
  int layer_count() const { return n_layers_; }

  // Forward of `mb` sequences. First stage: tokens (device, mb*seq) in; otherwise x_in
  // (device, mb*seq*hidden). Returns the saved activations; out() is the stage output.
  std::unique_ptr<MicroBatchActivations> forward(int mb, const int32_t* tokens, const float* x_in,
                                                 Communicator& tp);
  static const float* out(const MicroBatchActivations& a);
  // Last stage: the summed cross-entropy over the micro-batch's tokens; with grad_scale != 0
  // also its gradient into dx (device, mb*seq*hidden) and into the head parameters.
  double loss_and_head_backward(MicroBatchActivations& a, const int32_t* targets, float grad_scale,
                                float* dx);
  // Backward through this stage's layers from dx_out; accumulates parameter gradients; writes
  // dx_in (unless first stage, where it ends in the embedding gradients).
  void backward(MicroBatchActivations& a, const float* dx_out, float* dx_in, Communicator& tp);

 private:
  struct Tensor {
    std::string name;
    size_t offset = 0;
    int rows = 0, cols = 0;
  };
  struct LayerParams {
    size_t ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, w2;
  };
  size_t add_tensor(const std::string& name, int rows, int cols);
  void init_params();

  Backend& be_;
  GptConfig cfg_;
  StagePosition pos_;
  int layer0_ = 0, n_layers_ = 0;
  int hl_ = 0, fl_ = 0, heads_l_ = 0, head_dim_ = 0;
  std::vector<Tensor> tensors_;
  std::vector<LayerParams> layers_;
  size_t wte_ = 0, wpe_ = 0, lnf_g_ = 0, lnf_b_ = 0, wlm_ = 0;
  size_t n_params_ = 0;
  DeviceArray<float> params_, grads_;
};

}  // namespace trainsim::kernels
