// The four parts of a scenario (ARCHITECTURE.md "The data that flows through"), resolved:
// every quantity in SI base units, every preset expanded. Produced only by the scenario loader,
// which has already checked types and ranges; feasibility (does the plan fit, divide, run) is
// the estimate's job, not the loader's. The specs the estimate prices from compare by content
// (operator==): the estimate tier's memo tables (models/workload/memo.hpp) key on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainsim {

enum class Precision { kFp32, kFp16, kBf16, kFp8 };
enum class Recompute { kNone, kSelective, kFull };
enum class FfnActivation { kGelu, kSwiglu };

// What selective recomputation recomputes in the backward pass (Megatron-Core
// --recompute-modules, with --recompute-granularity selective): each module's outputs are not
// kept from the forward pass and are computed again from what is.
//   core_attn    the attention core (scores, softmax, dropout, context)
//   layernorm    the two pre-norms (and MLA's latent norms): their outputs are not kept
//   mla_up_proj  MLA's up-projections: Q, K and V are rebuilt from the kept latents
//   moe_act      the experts' activation function: its output is not kept
//   mlp          the dense MLP of non-MoE layers: only its input is kept
struct RecomputeModules {
  bool core_attn = true;
  bool layernorm = false;
  bool mla_up_proj = false;
  bool moe_act = false;
  bool mlp = false;
  uint8_t bits() const {
    return static_cast<uint8_t>(core_attn | layernorm << 1 | mla_up_proj << 2 | moe_act << 3 | mlp << 4);
  }
  bool operator==(const RecomputeModules& o) const { return bits() == o.bits(); }
};
// The modules' names in the order above, and the names of the set (a JSON list).
const std::vector<std::string>& recompute_module_names();
std::vector<std::string> to_strings(const RecomputeModules& modules);
// The module recompute_module_names()[index] names.
bool& recompute_module(RecomputeModules& modules, std::size_t index);
// The parts recomputed piece by piece: the modules under selective; none under none, and none
// under full, which recomputes the whole layer from its input.
RecomputeModules piecewise_recompute(Recompute mode, const RecomputeModules& modules);

const char* to_string(Precision p);
const char* to_string(Recompute r);
const char* to_string(FfnActivation a);

// Per-op rates measured at one training job's shapes (calibration "op_rates", kernels/README.md).
// On a CPU the elementwise ops (GELU's tanh ~20-40 ns/element) and naive attention are
// compute-bound, so the kernel model (GEMM shares, bytes at memory bandwidth) is far off;
// these rates replace it op by op. GEMM and attention rates are shares of peak_flop_per_s with
// the calibration's FLOP conventions; the rest are seconds per element (per parameter for AdamW).
// Measured time per gradient value of one compression method's two kernels
// (kernels/compressed_collectives.hpp): compressing a chunk, and decompressing one into an
// accumulator.
struct CompressionKernelRates {
  double compress_s_per_element = 0;
  double decompress_add_s_per_element = 0;
  bool operator==(const CompressionKernelRates&) const = default;
};

struct OpRates {
  double peak_flop_per_s = 0;  // the peak the efficiencies refer to; 0 = no rates
  double gemm_forward_efficiency = 0;          // the layer's 6 forward GEMMs (A W)
  double gemm_backward_input_efficiency = 0;   // their input gradients (dY W^T)
  double gemm_backward_weight_efficiency = 0;  // their weight gradients (X^T dY)
  double lm_head_gemm_efficiency = 0;          // the 3 GEMMs of the LM head
  double attention_forward_efficiency = 0;     // causal FLOPs 2 b h s^2 d
  double attention_backward_efficiency = 0;    // 2.5 x forward
  double layernorm_fwd_s_per_element = 0, layernorm_bwd_s_per_element = 0;
  double gelu_fwd_s_per_element = 0, gelu_bwd_s_per_element = 0;
  double residual_add_s_per_element = 0;
  double softmax_xent_s_per_element = 0;  // per logit, loss and gradient
  double embedding_fwd_s_per_element = 0, embedding_bwd_s_per_element = 0;
  double copy_s_per_element = 0, fill_zero_s_per_element = 0;  // fp32 elements
  double adamw_s_per_param = 0;
  // Coefficient of variation of one op's time from call to call (the calibration's per-call
  // dispersion); the ranks of a group then reach each collective apart (arrival_wait.hpp).
  // 0: not measured, no wait modelled.
  double op_time_cv = 0;
  // Per compression method, by its plan name (int8, int4, fp8, 2:4, topk); absent methods are
  // priced as memory-bound kernels.
  std::vector<std::pair<std::string, CompressionKernelRates>> compression;
  const CompressionKernelRates* compression_rates(const std::string& method) const {
    for (const auto& [name, rates] : compression)
      if (name == method) return &rates;
    return nullptr;
  }
  bool present() const { return peak_flop_per_s > 0; }
  bool operator==(const OpRates&) const = default;
};

// Kernel-level parameters of one GPU generation, read from the preset's "kernels" block (each
// cited there) or written by `trainsim calibrate`; the compute model (models/cost/compute/,
// docs/compute-model.md) prices every compute op from them. Zero / empty = not given: the model
// falls back to its documented defaults.
struct AttentionPassParams {
  // Asymptotic share of the 16-bit dense peak, per head dimension ((head_dim, share) pairs,
  // ascending; interpolated in log2(head_dim), clamped outside).
  std::vector<std::pair<double, double>> share_by_head_dim;
  double overhead_blocks = 0;  // per-CTA fixed cost, in units of one KV block's work
  double causal_factor = 1;    // causal asymptote relative to non-causal
  bool present() const { return !share_by_head_dim.empty(); }
  bool operator==(const AttentionPassParams&) const = default;
};
struct AttentionKernelParams {
  AttentionPassParams forward, backward;
  bool present() const { return forward.present(); }
  bool operator==(const AttentionKernelParams&) const = default;
};
enum class GemmScheduler { kWaves, kStreamK };
struct GpuKernelParams {
  int sm_count = 0;
  // GEMM: sustained share of the dense peak per dtype (MAMF), candidate CTA tiles (M x N),
  // how tiles are spread over SMs, whether the C store overlaps the next tile's main loop,
  // the penalty of tiles with less operand reuse, and the rate factor for misaligned shapes.
  double gemm_share_16bit = 0, gemm_share_fp8 = 0, gemm_share_fp32 = 0;
  std::vector<std::pair<int, int>> gemm_tiles;
  GemmScheduler gemm_scheduler = GemmScheduler::kWaves;
  bool gemm_epilogue_overlap = true;
  double gemm_small_tile_penalty = 0;
  double gemm_misaligned_factor = 1;
  // Attention: FlashAttention-2 and the generation's native kernel (FlashAttention-3 on Hopper).
  double attention_block = 128;
  AttentionKernelParams flash2, flash3;
  // Memory-bound kernels: achieved share of hbm_bandwidth for large streaming kernels, and what
  // the norms' row-reduction kernels reach relative to that (0: as the streaming kernels).
  double memory_bandwidth_share = 0;
  double memory_norm_bandwidth_ratio = 0;
  // What a scatter-add into token order (atomics where rows collide) reaches relative to a
  // stream (0: as the streaming kernels).
  double memory_scatter_add_ratio = 0;
  // What a strided relayout copy (Q, K, V out of the fused QKV output into the attention
  // kernel's layout, their gradients concatenated back) reaches relative to a stream (0: as the
  // streaming kernels).
  double memory_relayout_ratio = 0;
  // What the fused Adam/AdamW step (multi-tensor apply over parameters, gradients and moments)
  // reaches relative to a stream (0: as the streaming kernels).
  double memory_optimizer_ratio = 0;
  // The board's power limit: the share of the kernel-benchmark tensor-core rate that GEMMs and
  // attention sustain against the share of time GEMMs keep the tensor cores busy ((busy share,
  // rate share) pairs, ascending in busy share; empty: the constant training_tensor_share). Busy
  // back to back, the clock falls to what the limit allows; between memory-bound kernels,
  // which draw less, it recovers (clock_h200_gemm_bf16_duty).
  std::vector<std::pair<double, double>> power_tensor_share;
  // Fixed GPU time per kernel and the host (framework) time to issue one.
  double kernel_fixed_s = 0;
  double host_launch_s = 0;
  bool present() const { return sm_count > 0; }
  bool operator==(const GpuKernelParams&) const = default;
};

struct GpuSpec {
  std::string name;
  double peak_flops_fp32 = 0;  // FLOP/s, dense (tensor-core TF32 is not used for fp32 training)
  double peak_flops_fp16 = 0;
  double peak_flops_bf16 = 0;
  double peak_flops_fp8 = 0;  // 0 = not supported
  double hbm_capacity_bytes = 0;
  double hbm_bandwidth_bytes_per_s = 0;
  // Share of the isolated-benchmark tensor-core rate a training loop sustains (0 = the fitted
  // default, models/workload/layer_program.hpp).
  double training_tensor_share = 0;
  // Spread of the sustained tensor-core rate from one GPU of a fleet to the next (standard
  // deviation over the mean; < 0 = the default, models/workload/layer_program.hpp). A
  // synchronous job runs at its slowest GPU's pace.
  double speed_spread = -1;
  // Measured per-op rates (a calibration file's op_rates); when present they replace the
  // kernel model op by op (models/cost/compute_cost.hpp).
  OpRates op_rates;
  // Kernel-level compute model parameters (models/cost/compute/).
  GpuKernelParams kernel;
  // CUDA compute capability (8.0 A100, 9.0 H100/H200, 10.0 B200): selects NCCL's tuning rows
  // and NVLink SHARP. 0 = derived from the name (models/cost/collectives/collective_cost.hpp).
  double compute_capability = 0;
  double peak_flops(Precision p) const;
  bool operator==(const GpuSpec&) const = default;
};

struct MoeSpec {
  int experts = 0;
  int top_k = 0;
  int64_t expert_ffn_hidden = 0;
  int shared_experts = 0;
  int dense_layers = 0;  // the first layers are dense (DeepSeek-V3: 3)
  // Group-limited routing (Hugging Face n_group / topk_group; DeepSeek-V3: 8 and 4): the experts
  // split into `groups` contiguous groups and a token's top_k come from `groups_per_token` of
  // them. 0: no limit.
  int groups = 0;
  int groups_per_token = 0;
  bool operator==(const MoeSpec&) const = default;
};

// Multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 sec. 2.1): queries and keys/values
// are projected down to low-rank latents, normalised, and projected up per head; each query/key
// head is a no-position part and a rotary part, the rotary key shared by all heads.
struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0: queries projected straight from the hidden state (V2-Lite)
  int64_t kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  bool operator==(const MlaSpec&) const = default;
};

struct ModelSpec {
  std::string name;
  int layers = 0;
  int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // == heads for MHA; fewer for GQA/MQA
  // Width of one attention head; 0: hidden / heads. Some models set it apart from the hidden
  // size (Qwen3, Gemma: heads x head_dim != hidden). MLA's widths are in `mla`.
  int head_dim = 0;
  int64_t ffn_hidden = 0;
  FfnActivation ffn_act = FfnActivation::kGelu;
  int64_t vocab = 0;
  int64_t seq_len = 0;
  bool tied_embeddings = false;
  // The attention and dense MLP linears carry biases (GPT-2/3, Megatron-LM's GPT, BLOOM, OPT);
  // false as LLaMA, Mistral, MPT, DeepSeek train. Their gradients are column sums of the output
  // gradients, a reduction kernel of their own in the backward (the bias add of the forward
  // rides in the GEMM's epilogue or a fused elementwise kernel).
  bool linear_bias = false;
  // Dropout probability of the attention scores, the residual branches and the embedding.
  // Above 0 each keeps a 1-byte mask for its backward pass (Korthikanti et al. 2022's
  // inventory); 0, as Llama, Mixtral and DeepSeek train, keeps none. Default: Megatron-LM's
  // GPT (hidden_dropout = attention_dropout = 0.1).
  double dropout = 0.1;
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  bool operator==(const ModelSpec&) const = default;
};

struct IntraNodeSpec {
  double bandwidth_bytes_per_s = 0;  // per GPU, both directions together (NVLink "600 GB/s")
  double latency_s = 0;
  double efficiency = 0.8;  // share of line rate a bus-bandwidth-bound collective sustains
  std::string fabric = "nvswitch";  // "nvswitch", "nvlink" (direct links) or "pcie"
  int nvls = -1;  // NVLink SHARP: 1 yes, 0 no, -1 = from the GPU generation (Hopper+ NVSwitch)
};

struct NetworkSpec {
  std::string topology;  // registry key, see topology names in cluster_topologies()
  double nic_bandwidth_bytes_per_s = 0;  // per NIC, one direction
  int nics_per_node = 0;
  double latency_s = 0;
  double oversubscription = 1.0;  // >= 1; leaf-to-spine taper of a fat-tree
  double efficiency = 0.85;
  bool collnet = false;  // in-network reduction (InfiniBand SHARP) for NCCL's CollNet algorithms
  std::string routing = "adaptive";  // "adaptive" (least-loaded), "ecmp" (flow hash), "dmodk"
  // Shape parameters for the topology builders (0 / empty = the builder's default).
  int switch_radix = 0;
  int fat_tree_tiers = 0;
  std::vector<int> torus_dims;
  int dragonfly_nodes_per_router = 0;
};

// One collective as a calibration measured it on this cluster's communicator, inside one node:
// the op by the calibration's name ("all_reduce", "reduce_scatter", "all_gather", "all_to_all",
// "send_recv"), the group size, and (bytes as nccl-tests counts them, seconds) ascending in bytes.
struct MeasuredCollective {
  std::string op;
  int ranks = 0;
  std::vector<std::pair<double, double>> bytes_seconds;
  bool operator==(const MeasuredCollective&) const = default;
};

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int nodes = 0;
  int gpus_per_node = 0;
  IntraNodeSpec intra_node;
  NetworkSpec network;
  double pcie_bandwidth_bytes_per_s = 0;
  double host_memory_bytes = 0;
  // From `trainsim calibrate` (apply_calibration): these ops on groups of these sizes inside a
  // node are priced from what the communicator measured, not from NCCL's tuning model.
  std::vector<MeasuredCollective> measured_collectives;
  int total_gpus() const { return nodes * gpus_per_node; }
};

struct CompressionStage {
  int64_t from_step = 0;
  std::string method = "none";  // registry key: none, int8, int4, fp8, 2:4, topk, powersgd
  double topk_ratio = 0.01;     // topk: share of values kept
  int powersgd_rank = 4;
  bool error_feedback = true;
  int sync_interval = 1;  // synchronise gradients every N steps in this stage
};

// plan.precision_stages: the training precision from a step on (steps before the first stage
// run plan.precision), as plan.compression switches methods by step. A run with stages is the
// step-weighted mix of its precisions' steps (models/estimate/precision_schedule.hpp).
struct PrecisionStage {
  int64_t from_step = 0;
  Precision precision = Precision::kBf16;
};

struct OffloadSpec {
  bool optimizer = false;
  bool params = false;
  bool activations = false;
};

struct OverlapSpec {
  bool dp = true;
  bool tp = false;
  bool pp = true;
};

// kAllToAll: Megatron-Core's alltoall dispatcher, every (token, expert) copy sent to its expert's
// GPU over the EP group. kDeepEp: DeepEP's kernels (DeepSeek-V3 report sec. 3.2.2): a token
// crosses the network once per target node, to the GPU of the same in-node index, which forwards
// it over NVLink to the GPUs of its experts (once per GPU); the combine runs the same routes
// back, reducing per GPU and per node before sending.
enum class MoeDispatcher : uint8_t { kAllToAll, kDeepEp };
const char* to_string(MoeDispatcher d);

struct ParallelPlan {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  // MoE parallel folding (Megatron-Core): expert tensor parallel degree; EP x expert_tp ranks
  // of each stage's TP x CP x DP block hold one copy of the experts.
  int expert_tp = 1;
  bool dp_from_gpus = false;  // dp was not given; the loader derived it from the GPU count
  bool sp = false;
  int vpp = 1;
  std::string schedule = "1f1b";  // registry key, see pipeline_schedule.hpp
  int64_t micro_batch = 1;
  int64_t global_batch = 1;
  int zero_stage = 0;
  Recompute recompute = Recompute::kNone;
  RecomputeModules recompute_modules;  // plan.recompute "selective" only
  // Under recompute "full": the recomputation stops once the backward has every activation it
  // needs, before each dense layer's last GEMM (the MLP's down projection, whose output no
  // backward op reads) and its residual add, as PyTorch's non-reentrant checkpoint does
  // (torch.utils.checkpoint with use_reentrant=False, FSDP's checkpoint_wrapper); false: the
  // whole layer again, as Megatron's reentrant recomputation does.
  bool recompute_early_stop = false;
  OffloadSpec offload;
  Precision precision = Precision::kBf16;
  std::vector<PrecisionStage> precision_stages;  // empty: plan.precision every step
  std::vector<CompressionStage> compression;
  int sync_interval = 1;
  OverlapSpec overlap;
  std::string collective_algorithm = "auto";  // registry key (collective_algorithm.hpp)
  std::string collective_protocol = "auto";   // LL, LL128, Simple (as NCCL_PROTO) or auto
  std::string placement = "tp-cp-dp-pp";  // rank order, innermost first (Megatron's default)
  std::vector<int> layers_per_stage;      // optional, pp*vpp entries summing to model.layers
  bool flash_attention = true;  // fused attention keeps no s x s score matrix in memory
  // When flash_attention: flash2 | flash3 (Hopper) | flash1 (FlashAttention v1) | triton (Triton FA)
  std::string attention_kernel = "flash2";
  // The weight-gradient GEMM accumulates into the fp32 gradient buffer itself (Megatron-Core
  // --gradient-accumulation-fusion); otherwise a memory-bound pass adds each micro-batch in.
  bool grad_accumulation_fusion = false;
  // PyTorch autocast over fp32 weights (torch.autocast in a DDP or single-GPU loop), under a
  // 16-bit precision: the weights, their gradients and the residual stream stay fp32; every
  // micro-batch casts the weights to 16 bits, the norms run in fp32 and their outputs are cast
  // for the next GEMM. false: the 16-bit weights Megatron and FSDP's mixed precision compute
  // with (fp32 master weights in the optimizer only).
  bool autocast = false;
  // The element type of the gradient buffer the data-parallel reduction moves and the optimizer
  // reads. fp32 for bf16 and fp8 training: Megatron accumulates and all-reduces bf16 models'
  // gradients in fp32 (arguments.py sets accumulate_allreduce_grads_in_fp32 under --bf16 unless
  // --grad-reduce-in-bf16), FSDP's MixedPrecision(reduce_dtype=float32), DDP over autocast's
  // fp32 weights. 16 bits where the gradients are reduced as computed: fp16 training with loss
  // scaling (Megatron and DeepSpeed fp16), FSDP with reduce_dtype = param_dtype. Unset ("auto"):
  // fp16 under fp16 without autocast, else fp32 (grad_reduce_precision(), models/cost/memory.hpp).
  std::optional<Precision> grad_reduce;
  // Adam's first and second moments: fp32, or bf16 as DeepSeek-V3 keeps them (arXiv:2412.19437
  // sec. 3.3.3, "Low-Precision Optimizer States"; the fp32 master weights stay).
  Precision adam_moments = Precision::kFp32;
  // The embedding and the output layer split over the TP ranks by vocabulary (Megatron's
  // VocabParallelEmbedding and vocab-parallel cross-entropy); false: every TP rank holds them whole
  // and computes the logits and the loss itself, with no TP collective (simpler TP codes do).
  bool vocab_parallel = true;
  // The framework hands Q, K and V to the attention kernel as copies out of the fused QKV
  // output (PyTorch split/chunk or view + permute before scaled_dot_product_attention or
  // flash_attn_func: Hugging Face, nanoGPT-style and Composer models) and the autograd of the
  // split concatenates their gradients back; false: the kernel reads the fused buffer and writes
  // its gradient in place (FlashAttention's qkvpacked interface, Megatron-Core with
  // TransformerEngine's SplitAlongDim).
  bool attention_relayout = true;
  // The softmax cross-entropy runs as one fused kernel per pass that reads the 16-bit logits
  // and writes their gradient in their place (flash-attn's and Apex's xentropy, Liger's,
  // Megatron-Core's --cross-entropy-loss-fusion, llm-foundry's default loss_fn
  // fused_crossentropy): no fp32 copy of the logits; false: PyTorch's fp32 log_softmax and its
  // backward, or Megatron's unfused vocab-parallel loss (layer_program.cpp, loss bytes).
  bool fused_loss = false;
  // ZeRO-3 / FSDP: the most parameter elements gathered ahead of their use. 0: a whole module
  // (layer) ahead, as PyTorch FSDP prefetches one wrapped unit. A positive bound is DeepSpeed's
  // stage3_prefetch_bucket_size (its default 5e7): of a layer with more parameters, only that
  // many are gathered behind the previous layer's compute and the rest when the layer starts.
  double zero3_prefetch_params = 0;
  // ZeRO-3: what one gather and one gradient reduce-scatter covers. false: a module's
  // parameters at once (PyTorch FSDP's flat parameter, DeepSpeed since it coalesces them). true:
  // each parameter tensor on its own, through a collective on a list of one view per rank
  // (DeepSpeed's 2020-21 partition_parameters.py), which PyTorch's NCCL group runs as one
  // collective plus a copy kernel per rank (plan.zero3_collectives "parameter").
  bool zero3_per_parameter = false;
  // ZeRO-3 / FSDP sharding over part of the DP group: the parameters, gradients and optimizer
  // states are sharded over dp_shard consecutive DP ranks and replicated dp / dp_shard times
  // (PyTorch FSDP's HYBRID_SHARD, shard within a node by default; torchtitan's dp_shard x
  // dp_replicate; DeepSpeed MiCS). Each layer's parameters are gathered over the shard group
  // only, and its gradients reduce-scattered there and then all-reduced across the replicas.
  // 0: the whole DP group (FULL_SHARD).
  int dp_shard = 0;
  // ZeRO++ (Wang et al., "ZeRO++: Extremely Efficient Collective Communication for Giant Model
  // Training", arXiv:2306.10209; DeepSpeed's zero_hpz_partition_size and zero_quantized_weights),
  // ZeRO-3 only. hpZ: after a layer's forward gather each GPU keeps a secondary copy of its
  // parameters sharded over `zero_hpz_partition_size` consecutive DP ranks (a node), and the
  // backward gathers from that copy within the partition; 0 or 1: off. qwZ: the forward gathers
  // move the weights block-quantized to int8 (one fp32 scale per kQwzBlock elements), quantized on
  // the owner and dequantized after the gather. qgZ: each layer's gradient reduce-scatter becomes
  // a two-hop all-to-all of int4-quantized gradients (the shard group's members on one node,
  // then across the nodes), each hop followed by a dequantize-and-reduce.
  int zero_hpz_partition_size = 0;
  bool zero_quantized_weights = false;
  bool zero_quantized_gradients = false;
  bool zero_plus_plus() const {
    return zero_hpz_partition_size > 1 || zero_quantized_weights || zero_quantized_gradients;
  }
  // Under fp8: the linears' inputs kept for the backward in fp8 with 1 x 128 tile scales, the
  // attention output projection's in E5M6 (DeepSeek-V3's framework, arXiv:2412.19437 sec. 3.3.2);
  // false: 16-bit, or TransformerEngine's fp8 copy and its transpose, the same 2 bytes.
  bool fp8_activation_cache = false;
  // How MoE tokens reach their experts' GPUs (plan.moe_dispatcher).
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
};

// "selective (layernorm, mla_up_proj)" where the modules are not the default core_attn; else the
// mode's name.
std::string recompute_label(const ParallelPlan& plan);

// training.faults: what goes wrong over a long run, and the checkpoint policy that
// bounds the loss. MTBFs are per component (0 = that component never fails). A failure of a GPU,
// a node, a NIC link or a leaf switch stops the job (it restarts from the last checkpoint on
// spares); a spine/core switch-to-switch link or upper switch fails over to the surviving paths
// (bandwidth lost, not the job).
struct StragglerSpec {
  double fraction = 0;        // share of GPUs that run slow
  double speed_factor = 1.0;  // their compute rate relative to nominal, (0, 1]
  // Thermal form (optional): a GPU throttles to speed_factor when its temperature exceeds
  // throttle_threshold_c; temperatures ~ Normal(mean_c, stddev_c) across GPUs. When given, the
  // loader sets fraction = P(T > threshold).
  double temperature_mean_c = 0;
  double temperature_stddev_c = 0;
  double throttle_threshold_c = 0;
  bool thermal = false;
  int forced_stage = -1;  // >= 0: the straggler sits on this pipeline stage (simulate/rebalance)
};

struct LinkDegradationSpec {
  double fraction = 0;            // share of switch-to-switch links running degraded
  double bandwidth_factor = 1.0;  // their bandwidth relative to nominal, (0, 1]
};

struct CheckpointSpec {
  double interval_s = 0;  // 0 = Young/Daly optimum (reported either way)
  double size_bytes = 0;  // 0 = derived from the model states (weights + optimizer)
  double write_bandwidth_bytes_per_s = 0;  // aggregate to storage; 0 = 1 GB/s per node
  bool async = false;      // only the copy to host memory blocks training (PCIe)
  double restart_s = 300;  // detect + reschedule + load the checkpoint
  double rewarm_s = 60;    // first steps slow again after a restart (allocator, NCCL init)
};

struct FaultSpec {
  bool enabled = false;  // training.faults present
  double gpu_mtbf_s = 0;
  double node_mtbf_s = 0;    // node failures other than its GPUs (host, PSU, memory)
  double link_mtbf_s = 0;    // per network link (NIC and switch-to-switch)
  double switch_mtbf_s = 0;  // per network switch
  StragglerSpec stragglers;
  LinkDegradationSpec link_degradation;
  std::vector<std::string> failed_links;  // topology link names down for the whole run (simulate)
  int failed_switch_links = 0;  // and this many switch-to-switch links, picked with `seed`
  CheckpointSpec checkpoint;
  double horizon_s = 30 * 86400.0;  // length of the run the goodput simulation plays
  int spare_nodes = -1;    // -1 = unlimited; otherwise a failure with none left waits repair_s
  double repair_s = 86400;
  int trials = 200;        // Monte Carlo runs of the horizon
  uint64_t seed = 1;
  bool rebalance = false;  // move layers off a slow stage (dynamic repartitioning)
};

struct TrainingSpec {
  int64_t steps = 1;
  double tokens = 0;  // optional total token budget
  FaultSpec faults;
};

struct Scenario {
  int schema_version = 1;
  std::string name;
  std::string description;
  ModelSpec model;
  ClusterSpec cluster;
  ParallelPlan plan;
  TrainingSpec training;
};

}  // namespace trainsim
