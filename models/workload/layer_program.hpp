// The ops of one transformer layer, the embedding and the output layer, per rank, per
// micro-batch, for each pass, as Megatron-LM / Megatron-Core run them: tensor parallel as
// Shoeybi et al. 2019 split the GEMMs (column-parallel QKV and fc1, row-parallel projections),
// sequence parallel as Korthikanti et al. 2022 (all-gather before, reduce-scatter after each
// row-/column-parallel pair), context parallel as ring attention over K/V blocks, MoE with a
// router, token permutation and all-to-all dispatch/combine (Megatron-Core's alltoall token
// dispatcher), ZeRO-3/FSDP as a parameter all-gather per layer prefetched one layer ahead and a
// gradient reduce-scatter after each layer's weight gradients.
#pragma once

#include <cstdint>

#include "models/core/specs.hpp"
#include "models/workload/op_graph.hpp"

namespace trainsim {

// The share of their isolated-benchmark throughput that tensor-core kernels (GEMMs, attention)
// sustain inside a training loop: clocks under sustained power with real data (benchmarks on
// random small-integer or zero inputs draw less power), caches and TLBs left cold by the
// neighbouring kernels, stream and allocator gaps. One value for every GPU and framework,
// fitted on the published runs (validate --published --fit-tensor-share, docs/compute-model.md
// "Training-loop share"); a GPU preset or a calibration may set its own.
constexpr double kDefaultTrainingTensorShare = 0.94;
double training_tensor_share(const GpuSpec& gpu);

// GPUs of one model differ in the tensor-core rate they sustain under the power limit
// (manufacturing variability meeting power management): Sinha et al., "Not All GPUs Are Created
// Equal" (SC'22), ran SGEMM and other benchmarks on over 90% of the GPUs of large clusters and
// report 8% performance variation on average between GPUs of one model, outliers aside; read
// as the range between box-plot whiskers (+-2.7 sigma of a normal spread), sigma = 8% / 5.4 =
// 1.5% (docs/compute-model.md "The slowest GPU sets the pace"). A synchronous job
// waits for its slowest GPU at every collective, so its tensor-core ops run at the pace of the
// slowest of its n GPUs: time x (1 + sigma x E[max of n standard normals]) (arrival_wait.hpp).
// Outliers (up to 1.5x slower in the same study) are left to the straggler model.
constexpr double kDefaultGpuSpeedSpread = 0.015;
// The GPU's speed_spread, else the default; 0 for a GPU on measured op rates (the measured
// device's own rates) unless it states one.
double gpu_speed_spread(const GpuSpec& gpu);
// The slowdown of the slowest of `gpus` GPUs against the fleet's mean (1 for one GPU).
double slowest_gpu_slowdown(const GpuSpec& gpu, int gpus);

// The SMs DeepEP's dispatch and combine kernels take from compute (both hops together): the
// DeepSeek-V3 report, sec. 3.2.2, "only 20 SMs are sufficient to fully utilize the bandwidths
// of IB and NVLink" (DeepEP's Buffer.set_num_sms sets it).
constexpr double kDeepEpSms = 20;

// ZeRO++'s qwZ: bytes a weight takes on the wire, int8 plus one fp32 scale per block of 512
// elements (ZeRO++ sec. 3.1 quantizes the weights block by block, each block with its own scale;
// the block size here is ours, its share of the bytes under 1%).
constexpr double kQwzBytesPerParam = 1 + 4.0 / 512;
// ZeRO++'s qgZ: bytes a gradient takes on the wire, int4. DeepSpeed's all_to_all_quant_reduce
// keeps one fp32 scale per quantization group, and makes as many groups as the larger of the
// tensor's two dimensions (thousands of elements a group): under 0.1% more, left out.
constexpr double kQgzBytesPerParam = 0.5;

// Layers of one model chunk: a contiguous range of the model's layers.
struct ChunkLayers {
  int begin = 0;
  int layers = 0;
  int moe_layers = 0;
  bool first = false;
  bool last = false;
};

// Everything the layer programs depend on; filled once per plan by build_workload.
struct LayerContext {
  const ModelSpec* model = nullptr;
  const GpuSpec* gpu = nullptr;
  FabricTerms fabric;
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;  // as NCCL_PROTO: auto or forced
  GroupShape shape[kCommGroups];  // per CommGroup: the (worst) group of that kind the placement makes
  int tp = 1, cp = 1, ep = 1, etp = 1, dp = 1;
  bool sp = false;
  double micro_batch = 1;
  Precision precision = Precision::kBf16;
  Recompute recompute = Recompute::kNone;
  RecomputeModules recompute_modules;  // what kSelective recomputes (plan.recompute_modules)
  bool flash_attention = true;
  AttentionKernel attention_kernel = AttentionKernel::kFlash2;
  bool overlap_tp = false;
  int zero_stage = 0;
  double zero3_prefetch_params = 0;  // plan.zero3_prefetch_params (0: a whole layer ahead)
  bool zero3_per_parameter = false;  // plan.zero3_collectives "parameter"
  bool zero_quantized_weights = false;  // plan.zero_quantized_weights (ZeRO++'s qwZ)
  bool zero_quantized_gradients = false;  // plan.zero_quantized_gradients (ZeRO++'s qgZ)
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;  // plan.moe_dispatcher
  bool grad_accumulation_fusion = false;
  bool autocast = false;  // plan.autocast under a 16-bit precision
  // The share of the benchmark tensor-core rate GEMMs and attention run at under the GPU's power
  // curve, for the step's mix (layer_power_share); 0: the GPU has no curve (training_tensor_share).
  double power_share = 0;
  // The slowest GPU of the job against the mean (slowest_gpu_slowdown): every tensor-core op's
  // time is multiplied by it.
  double slowest_gpu = 1;
  bool vocab_parallel = true;  // plan.vocab_parallel: embedding and output layer split over TP
  bool attention_relayout = true;  // plan.attention_relayout
  bool fused_loss = false;         // plan.fused_loss
  bool recompute_early_stop = false;  // plan.recompute_early_stop
  int micro_batches = 1;  // per pipeline per step
  double activation_bytes = 2;  // one element of an activation between layers
  double param_bytes = 2;       // one element of a 16-bit parameter copy
  double grad_bytes = 2;        // one element of a gradient as it is reduced
  // memo.hpp environment of (model, gpu, fabric): ops and collectives are priced once per
  // shape and reused; 0 prices every op afresh (the programs the simulate tier plays).
  uint32_t memo_env = 0;
};

// One layer's block for a pass (kForward; kBackward = input and weight gradients together;
// kBackwardInput; kBackwardWeight), priced: compute_s from compute_op_time_s, comm time_s from
// collective_cost on the group's shape.
OpBlock layer_block(const LayerContext& ctx, bool moe_layer, PassKind pass, int repeat);

// The tensor-core rate share under the GPU's power curve (models/cost/compute/power_model.hpp)
// at the busy share of one layer's forward and backward, the mix that fills the step; 0 for a
// GPU that keeps the constant training_tensor_share or runs on measured op rates.
double layer_power_share(const LayerContext& ctx, bool moe_layer);

// The parameters of a module of `module_params` that ZeRO-3 gathers ahead of its use under
// plan.zero3_prefetch_params = `bound_params`: all of them at 0 (FSDP's one unit ahead), else
// at most the bound (DeepSpeed's stage3_prefetch_bucket_size counts parameter elements).
double zero3_prefetched_params(double bound_params, double module_params);
// The largest parameter tensor of one layer on a rank, in elements (its dense part of
// dense_params and routed-expert part of expert_params split as the per-parameter ZeRO-3
// collectives split them), for plan.zero3_collectives "parameter": PyTorch runs a collective on
// a list of per-rank views through one flat buffer of the whole tensor (ProcessGroupNCCL's
// allgather and reduce_scatter of that time), which the memory model holds beside the views.
double largest_zero3_tensor_params(const ModelSpec& model, int ep, bool moe_layer, double dense_params,
                                   double expert_params);
OpBlock embedding_block(const LayerContext& ctx, PassKind pass);
OpBlock head_block(const LayerContext& ctx, PassKind pass);

}  // namespace trainsim
