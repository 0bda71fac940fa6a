#include "models/workload/layer_program.hpp"

#include <algorithm>
#include <initializer_list>
#include <utility>
#include <vector>

#include "models/cost/arrival_wait.hpp"
#include "models/cost/compute/launch_model.hpp"
#include "models/cost/compute/memory_bound_model.hpp"
#include "models/cost/compute/power_model.hpp"
#include "models/cost/compute/precision.hpp"
#include "models/cost/flops.hpp"
#include "models/cost/moe_routing.hpp"
#include "models/workload/program_reduce.hpp"
#include "models/workload/memo.hpp"

namespace trainsim {

double training_tensor_share(const GpuSpec& gpu) {
  return gpu.training_tensor_share > 0 ? gpu.training_tensor_share : kDefaultTrainingTensorShare;
}

double gpu_speed_spread(const GpuSpec& gpu) {
  if (gpu.speed_spread >= 0) return gpu.speed_spread;
  // Measured op rates are the measured device's (the cpu backend's ranks share one machine):
  // no fleet spread unless the scenario states one.
  return gpu.op_rates.present() ? 0.0 : kDefaultGpuSpeedSpread;
}

double slowest_gpu_slowdown(const GpuSpec& gpu, int gpus) {
  return 1 + gpu_speed_spread(gpu) * expected_max_of_normals(gpus);
}

namespace {

const GroupShape& shape_of(const LayerContext& c, CommGroup g) { return c.shape[static_cast<int>(g)]; }

bool tensor_op(const ComputeOp& op) { return op.kind == ComputeKind::kGemm || op.kind == ComputeKind::kAttention; }

// A compute op's price: its time in the training loop (training_tensor_share applied; a GPU that
// follows its power curve gets it per block, BlockBuilder::finish) and the host's time to issue it.
struct OpPrice {
  double time_s;
  double host_s;
};

OpPrice price_op(const GpuSpec& gpu, const ComputeOp& op) {
  double t = compute_op_time_s(gpu, op);
  // Tensor-core kernels in a training loop sustain a share of their isolated-benchmark rate
  // (training_tensor_share); measured op rates were taken in the loop already.
  if (tensor_op(op) && !gpu.op_rates.present() && !follows_power_curve(gpu)) t /= training_tensor_share(gpu);
  return {t, host_issue_time_s(gpu, op)};
}

// Every field of a ComputeOp, without padding (memo.hpp keys are compared as bytes).
struct OpKey {
  uint32_t env;
  uint8_t kind, role, pass, precision, causal, kernel, pad[2];
  double gemm[4];
  double attention[7];
  double flop, bytes, elements;
  int64_t kernels;
};

OpPrice memo_price_op(uint32_t env, const GpuSpec& gpu, const ComputeOp& op) {
  if (env == 0) return price_op(gpu, op);
  // 8192 slots of ~130 bytes: every distinct op shape of a large plan search.
  thread_local memo::Table<OpKey, OpPrice, 8192> table;
  OpKey k;
  memo::zero(k);
  k.env = env;
  k.kind = static_cast<uint8_t>(op.kind);
  k.role = static_cast<uint8_t>(op.role);
  k.pass = static_cast<uint8_t>(op.pass);
  k.precision = static_cast<uint8_t>(op.precision);
  k.causal = op.attention.causal;
  k.kernel = static_cast<uint8_t>(op.attention.kernel);
  const GemmShape& g = op.gemm;
  const AttentionShape& a = op.attention;
  k.gemm[0] = g.m, k.gemm[1] = g.n, k.gemm[2] = g.k, k.gemm[3] = g.groups;
  k.attention[0] = a.batch, k.attention[1] = a.heads, k.attention[2] = a.kv_heads;
  k.attention[3] = a.seq_q, k.attention[4] = a.seq_kv, k.attention[5] = a.head_dim;
  k.attention[6] = a.head_dim_v;
  k.flop = op.flop;
  k.bytes = op.bytes;
  k.elements = op.elements;
  k.kernels = op.kernels;
  return table.get(k, [&] { return price_op(gpu, op); });
}

// Appends ops to one block and wires each collective to the compute ops around it.
class BlockBuilder {
  static constexpr std::size_t kReservedOps = 32;

 public:
  BlockBuilder(const LayerContext& ctx, const char* name, int repeat) : ctx_(ctx) {
    b_.name = name;
    b_.repeat = std::max(1, repeat);
    // A layer's pass has a few dozen ops and collectives: one allocation each, not a doubling.
    b_.compute.reserve(kReservedOps);
    b_.compute_s.reserve(kReservedOps);
    b_.comm.reserve(kReservedOps / 2);
  }

  int gemm(OpRole role, Pass pass, double m, double n, double k, double groups = 1) {
    ComputeOp op;
    op.kind = ComputeKind::kGemm;
    op.role = role;
    op.pass = pass;
    op.precision = gemm_precision(role, ctx_.precision);
    op.gemm = GemmShape{m, n, k, groups};
    op.flop = op.gemm.flop();
    op.elements = m * n * groups;
    // An fp8 GEMM's operands are quantised first (cast, transpose, amax): memory-bound ops of
    // their own on the compute stream.
    for (const ComputeOp& extra : precision_extra_ops(op)) add(extra);
    return add(op);
  }

  int attention(Pass pass) {
    const ModelSpec& md = *ctx_.model;
    ComputeOp op;
    op.kind = ComputeKind::kAttention;
    op.role = OpRole::kAttention;
    op.pass = pass;
    op.precision = non_gemm_precision(ctx_.precision);
    AttentionShape& a = op.attention;
    a.batch = ctx_.micro_batch;
    a.heads = static_cast<double>(md.heads) / ctx_.tp;
    a.kv_heads = std::max(1.0, kv_head_count(md) / ctx_.tp);
    // Context parallel: this rank's s/cp queries attend to all s keys (load-balanced causal
    // split), which is 1/cp of the causal work.
    a.seq_q = static_cast<double>(md.seq_len) / ctx_.cp;
    a.seq_kv = static_cast<double>(md.seq_len);
    const HeadDims hd = head_dims(md);
    a.head_dim = hd.qk;
    a.head_dim_v = hd.v;
    a.causal = true;
    a.kernel = ctx_.flash_attention ? ctx_.attention_kernel : AttentionKernel::kUnfused;
    const bool bwd = pass == Pass::kBackwardInput || pass == Pass::kBackwardWeight;
    op.flop = a.forward_flop() * (bwd ? 2.5 : 1.0);
    op.elements = a.batch * a.heads * a.seq_q * a.value_dim();
    return add(op);
  }

  int mem(OpRole role, Pass pass, double bytes, double elements, int kernels = 1) {
    ComputeOp op;
    op.kind = role == OpRole::kOptimizer ? ComputeKind::kOptimizer : ComputeKind::kMemoryBound;
    op.role = role;
    op.pass = pass;
    op.precision = non_gemm_precision(ctx_.precision);
    op.bytes = bytes;
    op.elements = elements;
    op.kernels = kernels;
    return add(op);
  }

  // On the compute stream: issued after the last op, the next op waits for it.
  void inline_comm(CollectiveOp op, CommPurpose purpose, CommGroup group, double bytes, double sm_share = 1) {
    const int i = comm(op, purpose, group, CommStream::kInline, bytes, static_cast<int>(b_.compute.size()) - 1);
    if (i >= 0) {
      b_.comm[i].sm_share = sm_share;
      wait_next_.push_back(i);
    }
  }
  // Overlapped with the next compute op (TransformerEngine's userbuffers overlap, CP's ring
  // exchange with attention): issued before it, the op after it waits.
  void overlapped_comm(CollectiveOp op, CommPurpose purpose, CommGroup group, double bytes) {
    const int i = comm(op, purpose, group, CommStream::kTensor, bytes, static_cast<int>(b_.compute.size()) - 1);
    if (i >= 0) wait_after_next_.push_back(i);
  }
  // On `stream` beside the compute stream, issued after the last op, the next op waits for it:
  // with an inline_comm before it, the two run at once and the next op waits for both.
  void concurrent_comm(CollectiveOp op, CommPurpose purpose, CommGroup group, CommStream stream, double bytes,
                       double sm_share = 1) {
    const int i = comm(op, purpose, group, stream, bytes, static_cast<int>(b_.compute.size()) - 1);
    if (i >= 0) {
      b_.comm[i].sm_share = sm_share;
      wait_next_.push_back(i);
    }
  }
  // A TP collective of the layer: inline, or overlapped with the next GEMM when the plan
  // overlaps TP communication.
  void tp_comm(CollectiveOp op, double bytes) {
    if (ctx_.overlap_tp) overlapped_comm(op, CommPurpose::kTp, CommGroup::kTp, bytes);
    else inline_comm(op, CommPurpose::kTp, CommGroup::kTp, bytes);
  }
  // Not waited by any op of the pass: it must end before the optimizer (gradient reductions).
  int async_comm(CollectiveOp op, CommPurpose purpose, CommGroup group, CommStream stream, double bytes) {
    return comm(op, purpose, group, stream, bytes, static_cast<int>(b_.compute.size()) - 1);
  }
  // ZeRO-3 parameter gathers. prefetch_gather: one repetition ahead; gather_now: when the
  // repetition starts (what the framework's prefetch buffer could not hold). The block's first
  // op waits for both. Collectives issued at a repetition's start go in block order, so a block
  // lists its gather_now before its prefetch_gather: the layer's own parameters come before the
  // next layer's on the gather stream.
  int gather_now(CommGroup group, double bytes) {
    const int i = comm(CollectiveOp::kAllGather, CommPurpose::kDp, group, CommStream::kSharded, bytes, -1);
    if (i >= 0) b_.comm[i].waited_by = 0;
    return i;
  }
  int prefetch_gather(CommGroup group, double bytes) {
    const int i = comm(CollectiveOp::kAllGather, CommPurpose::kDp, group, CommStream::kSharded, bytes, -1);
    if (i >= 0) {
      b_.comm[i].prefetch = true;
      b_.comm[i].waited_by = 0;
    }
    return i;
  }

  // A collective on a list of one tensor view per rank (plan.zero3_collectives "parameter"):
  // PyTorch's NCCL process group runs it on a flat buffer and copies between that buffer and
  // each view, one copy_ per rank (ProcessGroupNCCL::allgather after ncclAllGather,
  // reduce_scatter's flatten before ncclReduceScatter), and DeepSpeed's gather first zeroes the
  // whole tensor (torch.zeros). The copies run on the collective's stream, each at least a
  // kernel's fixed time (launch.kernel), moving the tensor once more in all; the training
  // thread issues every kernel (launch.host), which stretches the block where it outlasts its
  // GPU time (finish).
  void add_list_copies(int comm_index, int extra_kernels, double extra_bytes) {
    if (comm_index < 0) return;
    CommOp& c = b_.comm[static_cast<std::size_t>(comm_index)];
    const int ranks = shape_of(ctx_, c.group).ranks;
    const GpuSpec& gpu = *ctx_.gpu;
    c.local_s = ranks * kernel_fixed_s(gpu) + memory_bound_time_s(gpu, 2 * c.bytes + extra_bytes);
    c.time_s += c.local_s;
    host_s_ += (ranks + extra_kernels) * host_launch_s(gpu);
  }

  void params(double dense, double experts) {
    b_.dense_params = dense;
    b_.expert_params = experts;
  }

  OpBlock finish() {
    // Collectives still waiting for "the next op" are waited by the end of the repetition.
    const int end = static_cast<int>(b_.compute.size());
    for (int i : wait_next_) b_.comm[i].waited_by = end;
    for (int i : wait_after_next_) b_.comm[i].waited_by = end;
    wait_next_.clear();
    wait_after_next_.clear();
    apply_power_limit();
    // The host issues the kernels ahead of the GPU; where issuing them takes longer than
    // running them (small models, eager frameworks), the stream runs at the host's pace.
    double gpu_s = 0;
    for (double t : b_.compute_s) gpu_s += t;
    if (gpu_s > 0 && host_s_ > gpu_s)
      for (double& t : b_.compute_s) t *= host_s_ / gpu_s;
    add_arrival_waits();
    return std::move(b_);
  }

  // Under the board's power limit the tensor-core ops run at the share the step's mix allows
  // (LayerContext::power_share): the power controller averages over much longer than a block,
  // so a block of GEMMs alone (a zero-bubble W pass) runs at the clock of the whole mix. The
  // job's slowest GPU sets the pace of them all (LayerContext::slowest_gpu).
  void apply_power_limit() {
    const double factor = ctx_.slowest_gpu / (ctx_.power_share > 0 ? ctx_.power_share : 1.0);
    if (factor == 1) return;
    for (std::size_t i = 0; i < b_.compute.size(); ++i)
      if (tensor_op(b_.compute[i])) b_.compute_s[i] *= factor;
  }

  // Each collective issued after an op waits for the group's last member: the segment is the
  // ops since the group's previous collective in the block, or, for its first, since its last
  // one in the previous repetition (the block repeats layer after layer; a single collective's
  // segment is the whole block).
  void add_arrival_waits() {
    const double cv = ctx_.gpu->op_rates.op_time_cv;
    if (!(cv > 0)) return;
    const int n = static_cast<int>(b_.compute_s.size());
    auto synchronising = [&](const CommOp& o) { return !o.prefetch && o.after >= 0 && o.after < n; };
    for (std::size_t k = 0; k < b_.comm.size(); ++k) {
      CommOp& c = b_.comm[k];
      if (!synchronising(c)) continue;
      int prev = -1;  // the latest `after` of the group before c's, else the group's last
      int last = -1;
      bool second = false;  // a collective of the group after the same op found its members together
      for (std::size_t j = 0; j < b_.comm.size(); ++j) {
        const CommOp& o = b_.comm[j];
        if (o.group != c.group || !synchronising(o)) continue;
        if (o.after < c.after) prev = std::max(prev, o.after);
        last = std::max(last, o.after);
        second |= j < k && o.after == c.after;
      }
      if (second) continue;
      double sum_sq = 0;
      auto add_ops = [&](int from, int to) {  // ops (from, to]
        for (int i = from + 1; i <= to; ++i) sum_sq += b_.compute_s[i] * b_.compute_s[i];
      };
      if (prev >= 0) {
        add_ops(prev, c.after);
      } else {
        add_ops(last, n - 1);  // the previous repetition's tail (the whole block when c is alone)
        add_ops(-1, c.after);
      }
      c.arrival_wait_s = arrival_wait_s(cv, sum_sq, shape_of(ctx_, c.group).ranks);
      c.time_s += c.arrival_wait_s;
    }
  }

 private:
  int add(ComputeOp op) {
    const int idx = static_cast<int>(b_.compute.size());
    const OpPrice price = memo_price_op(ctx_.memo_env, *ctx_.gpu, op);
    b_.compute_s.push_back(price.time_s);
    host_s_ += price.host_s;
    b_.compute.push_back(op);
    for (int i : wait_next_) b_.comm[i].waited_by = idx;
    wait_next_.swap(wait_after_next_);  // both keep their buffers
    wait_after_next_.clear();
    return idx;
  }

  int comm(CollectiveOp op, CommPurpose purpose, CommGroup group, CommStream stream, double bytes, int after) {
    const GroupShape& g = shape_of(ctx_, group);
    if (g.ranks <= 1 || bytes <= 0) return -1;
    CommOp c;
    c.op = op;
    c.purpose = purpose;
    c.group = group;
    c.stream = stream;
    c.bytes = bytes;
    c.after = after;
    const CollectiveCost cost =
        memo::collective_cost(ctx_.memo_env, op, ctx_.algo, ctx_.protocol, bytes, g, ctx_.fabric);
    c.time_s = cost.time_s;
    c.algo = cost.algo;
    c.protocol = cost.protocol;
    c.wire_bytes = bytes * (op == CollectiveOp::kSendRecv ? 1.0 : bus_bandwidth_factor(op, g.ranks));
    b_.comm.push_back(c);
    return static_cast<int>(b_.comm.size()) - 1;
  }

  const LayerContext& ctx_;
  OpBlock b_;
  std::vector<int> wait_next_, wait_after_next_;
  double host_s_ = 0;
};

struct Dims {
  double T = 0;     // tokens of the micro-batch on this rank (b s / cp)
  double Te = 0;    // tokens elementwise ops touch (T / tp with sequence parallel)
  double h = 0;     // hidden
  double qkv_n = 0; // QKV output columns per rank: (a + 2g) d / tp
  double attn_k = 0;  // attention output projection input per rank: a d_v / tp
  double kv_n = 0;    // K and V columns per rank (what context parallelism passes around)
  // MLA: the latents' widths (the query's is the hidden size when it has no latent), the
  // up-projections' columns per rank, and what a TP group gathers per token.
  double q_rank = 0, kv_rank = 0, q_up_n = 0, kv_up_n = 0, latent = 0;
  double normed_latents = 0;  // what the latent RMSNorms normalise: the query's latent (if any) + kv's
  double up_n = 0;  // fc1 (or gate+up) columns per rank
  double f = 0;     // ffn per rank (fc2 input)
  double A = 2;     // activation element bytes
  double R = 2;     // residual-stream element bytes: fp32 under autocast, else A
};

Dims dims(const LayerContext& c) {
  const ModelSpec& m = *c.model;
  Dims d;
  d.h = static_cast<double>(m.hidden);
  d.T = c.micro_batch * static_cast<double>(m.seq_len) / c.cp;
  d.Te = c.sp ? d.T / c.tp : d.T;
  d.qkv_n = (query_width(m) + key_value_width(m)) / c.tp;
  d.attn_k = context_width(m) / c.tp;
  d.kv_n = key_value_width(m) / c.tp;
  if (m.mla) {
    const MlaSpec& l = *m.mla;
    d.q_rank = l.q_lora_rank > 0 ? static_cast<double>(l.q_lora_rank) : d.h;
    d.kv_rank = static_cast<double>(l.kv_lora_rank);
    d.q_up_n = query_width(m) / c.tp;
    d.kv_up_n = mla_up_kv_width(m) / c.tp;
    d.latent = mla_gathered_width(m);
    d.normed_latents = (l.q_lora_rank > 0 ? d.q_rank : 0) + d.kv_rank;
  }
  d.f = static_cast<double>(m.ffn_hidden) / c.tp;
  d.up_n = (m.ffn_act == FfnActivation::kSwiglu ? 2.0 : 1.0) * d.f;
  d.A = c.activation_bytes;
  d.R = c.autocast ? 4 : d.A;
  return d;
}

// Memory-bound traffic per element (16-bit activations unless fp32 training), forward and
// backward: a norm reads x and writes y; its backward reads x and dy and writes dx, then reduces
// the weight (and bias) gradients over the tokens in a second pass that reads x and dy again
// (PyTorch's layer_norm_backward and Apex's fused LayerNorm run the two as separate kernels:
// layer_norm_grad_input + GammaBetaBackward in the H200 traces of data/measured; one fused
// pass would save 2 of the 5); a residual add reads two and writes one; GELU reads and writes
// one per element (SwiGLU reads two, writes one; backward reads gate, up, dy and writes both
// gradients). Under autocast the residual stream and the norms are fp32 (R bytes), a residual
// add reads the fp32 stream and the 16-bit branch, and a norm's output is cast to 16 bits for
// the GEMM after it (read R, write A), its gradient back (read A, write R), a copy kernel of its
// own (norm_op): the H200 autocast steps' mixed-dtype adds, fp32 LayerNorm kernels and cast
// copies (data/measured).
double norm_bytes(const Dims& d, bool bwd) { return (bwd ? 5 : 2) * d.R; }
double residual_bytes(const Dims& d, bool bwd) { return bwd ? 2 * d.R : 2 * d.R + d.A; }
double activation_bytes(const Dims& d, bool swiglu, bool bwd) {
  return (swiglu ? (bwd ? 5 : 3) : (bwd ? 3 : 2)) * d.A;
}

// A norm over `cols` features of each token: its kernel, and under autocast (fp32 stream, 16-bit
// GEMM inputs) the cast of its output for the GEMM after it, or of that GEMM's input gradient
// back to fp32 before the norm's backward.
void norm_op(BlockBuilder& b, const Dims& d, Pass pass, double cols) {
  const bool bwd = pass == Pass::kBackwardInput;
  const double n = d.Te * cols;
  const bool cast = d.R != d.A;
  if (cast && bwd) b.mem(OpRole::kCast, pass, (d.A + d.R) * n, n);
  b.mem(OpRole::kNorm, pass, norm_bytes(d, bwd) * n, n);
  if (cast && !bwd) b.mem(OpRole::kCast, pass, (d.R + d.A) * n, n);
}


// Cross-entropy traffic per logit (fp32 inside), as PyTorch's kernels move it: forward A + 4
// (cast) and log_softmax's 3 x 4 + 4 (rows of a 50k vocabulary exceed shared memory, so it
// reads them three times: max, sum of exponentials, output) and writes 4; backward 4 (the dense
// gradient of the log-probabilities, zero-filled then scattered), log_softmax_backward's 3 x 4
// + 4 (a pass summing the gradient, one reading it with the output and writing) and 4 + A (cast
// back). The H200 profiles (gpt-125m and gpt-1.3b bf16, data/measured/h200-2026-12-04b/-04c):
// log_softmax 3.7 ps and its backward 4.1-4.2 ps per logit, 16-17 bytes at 0.9 of 4.8 TB/s.
// Megatron's unfused vocab-parallel loss moves about as much (a cast, max, subtract, exp and
// sum, normalise, then scale its saved softmax and cast back: 38 + 14 bytes).
// The casts (the logits to fp32, their gradient back: A + 4 each) are ops of their own, copies
// as a calibration's copy rate prices them; 16-bit logits only (fp32 logits need none). The loss
// kernels themselves move 16 bytes a logit forward and 20 backward.
constexpr double kLossForwardBytes = 16, kLossBackwardBytes = 20;
double loss_cast_bytes(double A) { return A + 4; }
bool loss_casts(const LayerContext& c, double A) { return !c.fused_loss && A < 4; }
// A fused softmax cross-entropy kernel (plan.fused_loss; Apex's and flash-attn's xentropy) reads
// a row of 16-bit logits twice, once for its maximum and once for the sum of exponentials, and
// writes a loss and a log-sum-exp per token; its backward reads the row and writes the gradient
// in its place: 2A forward, 2A backward, one kernel each.
double fused_loss_forward_bytes(double A) { return 2 * A; }
double fused_loss_backward_bytes(double A) { return 2 * A; }
// The loss's kernels per pass besides its cast: one fused, else log_softmax (or its backward)
// and the gather or scatter of the targets' entries.
int loss_kernels(const LayerContext& c) { return c.fused_loss ? 1 : 2; }
OpRole loss_role(const LayerContext& c) { return c.fused_loss ? OpRole::kFusedSoftmaxXent : OpRole::kSoftmaxXent; }

// The forward ops of the attention half of a layer (norm, QKV, attention, projection, residual),
// as the forward or as the recompute pass.
// MLA's projections up to Q, K and V (Megatron-Core's MLA): the down-projections run whole on
// every TP rank, on its own tokens (Te), their latents normalised and gathered over the TP group
// (sequence parallel), then the up-projections split by heads. Queries without a latent are
// projected from the gathered hidden state.
void mla_projections_forward(BlockBuilder& b, const LayerContext& c, const Dims& d, Pass pass) {
  const bool q_latent = c.model->mla->q_lora_rank > 0;
  const double rope = c.model->mla->qk_rope_head_dim;
  if (q_latent) b.gemm(OpRole::kQkv, pass, d.Te, d.q_rank, d.h);
  b.gemm(OpRole::kQkv, pass, d.Te, d.kv_rank + rope, d.h);
  norm_op(b, d, pass, d.normed_latents);
  if (c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.latent * d.A);
  b.gemm(OpRole::kQkv, pass, d.T, d.q_up_n, d.q_rank);
  b.gemm(OpRole::kQkv, pass, d.T, d.kv_up_n, d.kv_rank);
}

// plan.attention_relayout: the forward copies Q, K and V out of the fused QKV output into the
// attention kernel's layout, and the backward concatenates their gradients into the QKV output's
// gradient; each reads and writes the T x qkv_n elements once (the H200 profiles' copy_ of the
// [b, s, 3, heads, head_dim] view and cat of the three gradients, data/measured).
void qkv_relayout(BlockBuilder& b, const LayerContext& c, const Dims& d, Pass pass) {
  if (c.attention_relayout) b.mem(OpRole::kRelayout, pass, 2 * d.T * d.qkv_n * d.A, d.T * d.qkv_n);
}

void attention_forward(BlockBuilder& b, const LayerContext& c, const Dims& d, Pass pass) {
  norm_op(b, d, pass, d.h);
  if (c.model->mla) {
    mla_projections_forward(b, c, d, pass);
  } else {
    if (c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.h * d.A);
    b.gemm(OpRole::kQkv, pass, d.T, d.qkv_n, d.h);
    qkv_relayout(b, c, d, pass);
  }
  // Ring attention: cp-1 K/V blocks pass around the CP ring while the blocks compute.
  if (c.cp > 1)
    b.overlapped_comm(CollectiveOp::kSendRecv, CommPurpose::kCp, CommGroup::kCp, (c.cp - 1) * d.T * d.kv_n * d.A);
  b.attention(pass);
  b.gemm(OpRole::kAttnOut, pass, d.T, d.h, d.attn_k);
  b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.h * d.A);
  b.mem(OpRole::kResidual, pass, residual_bytes(d, false) * d.Te * d.h, d.Te * d.h);
}

// The MLP's up projection and activation, from the normed input.
void dense_mlp_up_forward(BlockBuilder& b, const LayerContext& c, const Dims& d, Pass pass) {
  const bool swiglu = c.model->ffn_act == FfnActivation::kSwiglu;
  if (c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.h * d.A);
  b.gemm(OpRole::kMlpUp, pass, d.T, d.up_n, d.h);
  b.mem(OpRole::kActivation, pass, activation_bytes(d, swiglu, false) * d.T * d.f, d.T * d.f);
}

// The MLP between its norm and its residual add: what recomputing the MLP runs again.
void dense_mlp_core_forward(BlockBuilder& b, const LayerContext& c, const Dims& d, Pass pass) {
  dense_mlp_up_forward(b, c, d, pass);
  b.gemm(OpRole::kMlpDown, pass, d.T, d.h, d.f);
  b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.h * d.A);
}

// plan.recompute_early_stop: the MLP recomputed up to its activation, whose output the down
// projection's weight gradient reads; the down projection's own output, and so its TP reduction
// and the residual add after it, no backward op reads. (A MoE layer's combine weights the
// expert outputs by the router's probabilities, whose gradient reads them: it runs whole.)
void dense_mlp_recompute_until_last_gemm(BlockBuilder& b, const LayerContext& c, const Dims& d) {
  norm_op(b, d, Pass::kRecompute, d.h);
  dense_mlp_up_forward(b, c, d, Pass::kRecompute);
}

void dense_mlp_forward(BlockBuilder& b, const LayerContext& c, const Dims& d, Pass pass) {
  norm_op(b, d, pass, d.h);
  dense_mlp_core_forward(b, c, d, pass);
  b.mem(OpRole::kResidual, pass, residual_bytes(d, false) * d.Te * d.h, d.Te * d.h);
}

// MoE feed-forward (Megatron-Core, alltoall dispatcher): router on this rank's tokens, permute,
// all-to-all dispatch over EP, grouped expert GEMMs (E/ep local experts, ffn split over ETP),
// all-to-all combine, unpermute; shared experts as a dense MLP beside them.
struct MoeDims {
  double tokens = 0;     // tokens this rank routes (T / tp: the dispatcher needs SP with TP)
  double copies = 0;     // token copies it sends: tokens x top_k
  double local_experts = 1;
  double m_per_expert = 0;  // rows of each local expert's GEMM
  double f_e = 0;        // expert ffn per ETP rank
  double up_n = 0;
  double shared_f = 0;   // shared experts' ffn per TP rank
  // DeepEP: the distinct nodes and GPUs of the EP group a token's experts sit on.
  double nodes_per_token = 1;
  double gpus_per_token = 1;
};

MoeDims moe_dims(const LayerContext& c, const Dims& d) {
  const MoeSpec& e = *c.model->moe;
  MoeDims m;
  m.tokens = d.T / c.tp;
  m.copies = m.tokens * e.top_k;
  m.local_experts = static_cast<double>(e.experts) / c.ep;
  // Balanced routing: a stage's T cp dp tokens make T cp dp top_k copies over E experts, each
  // expert's share split over its EDP replicas: T top_k etp ep / (E tp) rows per local expert.
  m.m_per_expert = d.T * e.top_k * c.etp * c.ep / (static_cast<double>(e.experts) * c.tp);
  m.f_e = static_cast<double>(e.expert_ffn_hidden) / c.etp;
  m.up_n = (c.model->ffn_act == FfnActivation::kSwiglu ? 2.0 : 1.0) * m.f_e;
  m.shared_f = static_cast<double>(e.expert_ffn_hidden) * e.shared_experts / c.tp;
  if (c.moe_dispatcher == MoeDispatcher::kDeepEp) {
    const ExpertRouting routing{e.experts, e.top_k, e.groups, e.groups_per_token};
    m.nodes_per_token = expected_places_per_token(routing, shape_of(c, CommGroup::kEp).nodes);
    m.gpus_per_token = expected_places_per_token(routing, c.ep);
  }
  return m;
}

// One EP exchange of this rank's tokens (dispatch or combine, forward or backward). Megatron's
// alltoall dispatcher sends every (token, expert) copy over the EP group. DeepEP sends a token
// once per target node over the network hop while the NVLink hop fans it out once per target
// GPU; its kernels pipeline the two (DeepSeek-V3 report sec. 3.2.2), so both run at once and the
// experts wait for both. The combine takes the same routes back. One DeepEP kernel drives both
// hops on a fixed budget of SMs (kDeepEpSms), which the hops that move anything share.
void ep_exchange(BlockBuilder& b, const LayerContext& c, const Dims& d, const MoeDims& m) {
  if (c.moe_dispatcher != MoeDispatcher::kDeepEp) {
    b.inline_comm(CollectiveOp::kAllToAll, CommPurpose::kEp, CommGroup::kEp, m.copies * d.h * d.A);
    return;
  }
  const double token_bytes = m.tokens * d.h * d.A;
  const bool inter = shape_of(c, CommGroup::kEpInter).ranks > 1, intra = shape_of(c, CommGroup::kEpIntra).ranks > 1;
  const double sm_share = kDeepEpSms / kOverlapChannels / std::max(1, int{inter} + int{intra});
  b.inline_comm(CollectiveOp::kAllToAll, CommPurpose::kEp, CommGroup::kEpInter, token_bytes * m.nodes_per_token,
                sm_share);
  b.concurrent_comm(CollectiveOp::kAllToAll, CommPurpose::kEp, CommGroup::kEpIntra, CommStream::kEpForward,
                    token_bytes * m.gpus_per_token, sm_share);
}

// The permutes that add rows into token order (the forward's combine; the backward's gradient
// of the dispatch permute): scatter-adds with atomics where rows collide (Megatron-Core's
// unpermute runs scatter_add_, a gather's gradient is index_add_), except under DeepEP, whose
// combine kernel reduces each token's copies in place.
OpRole scatter_role(const LayerContext& c) {
  return c.moe_dispatcher == MoeDispatcher::kDeepEp ? OpRole::kPermute : OpRole::kScatterAdd;
}

void moe_mlp_forward(BlockBuilder& b, const LayerContext& c, const Dims& d, Pass pass) {
  const bool swiglu = c.model->ffn_act == FfnActivation::kSwiglu;
  const MoeSpec& e = *c.model->moe;
  const MoeDims m = moe_dims(c, d);
  norm_op(b, d, pass, d.h);
  b.gemm(OpRole::kRouter, pass, m.tokens, static_cast<double>(e.experts), d.h);
  b.mem(OpRole::kPermute, pass, 2 * d.A * m.copies * d.h, m.copies * d.h, 2);
  ep_exchange(b, c, d, m);
  if (c.etp > 1) b.inline_comm(CollectiveOp::kAllGather, CommPurpose::kTp, CommGroup::kTp, m.copies * d.h * d.A * c.etp);
  b.gemm(OpRole::kExpertUp, pass, m.m_per_expert, m.up_n, d.h, m.local_experts);
  b.mem(OpRole::kActivation, pass, activation_bytes(d, swiglu, false) * m.m_per_expert * m.local_experts * m.f_e,
        m.m_per_expert * m.local_experts * m.f_e);
  b.gemm(OpRole::kExpertDown, pass, m.m_per_expert, d.h, m.f_e, m.local_experts);
  if (c.etp > 1) b.inline_comm(CollectiveOp::kReduceScatter, CommPurpose::kTp, CommGroup::kTp, m.copies * d.h * d.A * c.etp);
  ep_exchange(b, c, d, m);
  b.mem(scatter_role(c), pass, 2 * d.A * m.copies * d.h, m.copies * d.h, 2);
  if (m.shared_f > 0) {
    const double shared_up = (swiglu ? 2.0 : 1.0) * m.shared_f;
    b.gemm(OpRole::kMlpUp, pass, d.T, shared_up, d.h);
    b.mem(OpRole::kActivation, pass, activation_bytes(d, swiglu, false) * d.T * m.shared_f, d.T * m.shared_f);
    b.gemm(OpRole::kMlpDown, pass, d.T, d.h, m.shared_f);
  }
  if (c.tp > 1 && c.sp) b.tp_comm(CollectiveOp::kReduceScatter, d.T * d.h * d.A);
  else if (c.tp > 1) b.tp_comm(CollectiveOp::kAllReduce, d.T * d.h * d.A);
  b.mem(OpRole::kResidual, pass, residual_bytes(d, false) * d.Te * d.h, d.Te * d.h);
}

// dgrad (and wgrad when the pass carries both) of a linear Y[T, N] = X[T, K] W[K, N].
void linear_backward(BlockBuilder& b, OpRole role, PassKind pass, double T, double N, double K, double groups = 1) {
  if (pass != PassKind::kBackwardWeight) b.gemm(role, Pass::kBackwardInput, T, K, N, groups);
  if (pass != PassKind::kBackwardInput) b.gemm(role, Pass::kBackwardWeight, K, N, T, groups);
}

bool has_input_grad(PassKind p) { return p == PassKind::kBackward || p == PassKind::kBackwardInput; }

// A biased linear's bias gradient with its weight gradient: the output gradient [rows, cols]
// summed over the rows (model.linear_bias).
void bias_gradient(BlockBuilder& b, const LayerContext& c, const Dims& d, PassKind pass, double rows, double cols) {
  if (!c.model->linear_bias || pass == PassKind::kBackwardInput) return;
  b.mem(OpRole::kBiasGrad, Pass::kBackwardWeight, d.A * rows * cols, rows * cols);
}

void dense_mlp_backward(BlockBuilder& b, const LayerContext& c, const Dims& d, PassKind pass) {
  const bool swiglu = c.model->ffn_act == FfnActivation::kSwiglu;
  const bool dx = has_input_grad(pass);
  if (dx) {
    b.mem(OpRole::kResidual, Pass::kBackwardInput, residual_bytes(d, true) * d.Te * d.h, d.Te * d.h);
    if (c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.h * d.A);
  }
  linear_backward(b, OpRole::kMlpDown, pass, d.T, d.h, d.f);
  bias_gradient(b, c, d, pass, d.Te, d.h);
  if (dx) b.mem(OpRole::kActivation, Pass::kBackwardInput, activation_bytes(d, swiglu, true) * d.T * d.f, d.T * d.f);
  // Sequence parallel keeps fc1's input sharded: its weight gradient needs it gathered again.
  if (c.sp && pass != PassKind::kBackwardInput)
    b.overlapped_comm(CollectiveOp::kAllGather, CommPurpose::kTp, CommGroup::kTp, d.T * d.h * d.A);
  linear_backward(b, OpRole::kMlpUp, pass, d.T, d.up_n, d.h);
  bias_gradient(b, c, d, pass, d.T, d.up_n);
  if (dx) {
    b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.h * d.A);
    norm_op(b, d, Pass::kBackwardInput, d.h);
  }
}

void moe_mlp_backward(BlockBuilder& b, const LayerContext& c, const Dims& d, PassKind pass) {
  const bool swiglu = c.model->ffn_act == FfnActivation::kSwiglu;
  const MoeSpec& e = *c.model->moe;
  const MoeDims m = moe_dims(c, d);
  const bool dx = has_input_grad(pass);
  if (dx) {
    b.mem(OpRole::kResidual, Pass::kBackwardInput, residual_bytes(d, true) * d.Te * d.h, d.Te * d.h);
    if (c.tp > 1 && c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.h * d.A);
  }
  if (m.shared_f > 0) {
    const double shared_up = (swiglu ? 2.0 : 1.0) * m.shared_f;
    linear_backward(b, OpRole::kMlpDown, pass, d.T, d.h, m.shared_f);
    if (dx) b.mem(OpRole::kActivation, Pass::kBackwardInput, activation_bytes(d, swiglu, true) * d.T * m.shared_f, d.T * m.shared_f);
    linear_backward(b, OpRole::kMlpUp, pass, d.T, shared_up, d.h);
  }
  if (dx) {
    b.mem(OpRole::kPermute, Pass::kBackwardInput, 2 * d.A * m.copies * d.h, m.copies * d.h, 2);
    ep_exchange(b, c, d, m);
  }
  linear_backward(b, OpRole::kExpertDown, pass, m.m_per_expert, d.h, m.f_e, m.local_experts);
  if (dx)
    b.mem(OpRole::kActivation, Pass::kBackwardInput,
          activation_bytes(d, swiglu, true) * m.m_per_expert * m.local_experts * m.f_e,
          m.m_per_expert * m.local_experts * m.f_e);
  linear_backward(b, OpRole::kExpertUp, pass, m.m_per_expert, m.up_n, d.h, m.local_experts);
  if (dx) {
    ep_exchange(b, c, d, m);
    b.mem(scatter_role(c), Pass::kBackwardInput, 2 * d.A * m.copies * d.h, m.copies * d.h, 2);
  }
  linear_backward(b, OpRole::kRouter, pass, m.tokens, static_cast<double>(e.experts), d.h);
  if (dx) {
    if (c.tp > 1) b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.h * d.A);
    norm_op(b, d, Pass::kBackwardInput, d.h);
  }
}

void mla_projections_backward(BlockBuilder& b, const LayerContext& c, const Dims& d, PassKind pass) {
  const bool dx = has_input_grad(pass);
  const bool q_latent = c.model->mla->q_lora_rank > 0;
  const double rope = c.model->mla->qk_rope_head_dim;
  if (c.sp && pass != PassKind::kBackwardInput)
    b.overlapped_comm(CollectiveOp::kAllGather, CommPurpose::kTp, CommGroup::kTp, d.T * d.latent * d.A);
  linear_backward(b, OpRole::kQkv, pass, d.T, d.kv_up_n, d.kv_rank);
  linear_backward(b, OpRole::kQkv, pass, d.T, d.q_up_n, d.q_rank);
  if (dx) {
    b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.latent * d.A);
    norm_op(b, d, Pass::kBackwardInput, d.normed_latents);
  }
  linear_backward(b, OpRole::kQkv, pass, d.Te, d.kv_rank + rope, d.h);
  if (q_latent) linear_backward(b, OpRole::kQkv, pass, d.Te, d.q_rank, d.h);
}

void attention_backward(BlockBuilder& b, const LayerContext& c, const Dims& d, PassKind pass) {
  const bool dx = has_input_grad(pass);
  if (dx) {
    b.mem(OpRole::kResidual, Pass::kBackwardInput, residual_bytes(d, true) * d.Te * d.h, d.Te * d.h);
    if (c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.h * d.A);
  }
  linear_backward(b, OpRole::kAttnOut, pass, d.T, d.h, d.attn_k);
  if (!c.model->mla) bias_gradient(b, c, d, pass, d.Te, d.h);
  if (dx) {
    // K, V and their gradients travel the ring in the backward pass: twice the forward bytes.
    if (c.cp > 1)
      b.overlapped_comm(CollectiveOp::kSendRecv, CommPurpose::kCp, CommGroup::kCp, 2 * (c.cp - 1) * d.T * d.kv_n * d.A);
    b.attention(Pass::kBackwardInput);
  }
  if (c.model->mla) {
    mla_projections_backward(b, c, d, pass);
  } else {
    if (dx) qkv_relayout(b, c, d, Pass::kBackwardInput);
    if (c.sp && pass != PassKind::kBackwardInput)
      b.overlapped_comm(CollectiveOp::kAllGather, CommPurpose::kTp, CommGroup::kTp, d.T * d.h * d.A);
    linear_backward(b, OpRole::kQkv, pass, d.T, d.qkv_n, d.h);
    bias_gradient(b, c, d, pass, d.T, d.qkv_n);
    if (dx) b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.h * d.A);
  }
  if (dx) norm_op(b, d, Pass::kBackwardInput, d.h);
}

// Parameters of one layer on one rank: dense part (TP-split), experts (EP x ETP-split).
struct RankLayerParams {
  double dense = 0;
  double experts = 0;
};
RankLayerParams rank_layer_params(const LayerContext& c, bool moe) {
  const LayerParams lp = layer_params(*c.model, moe);
  RankLayerParams r;
  r.dense = lp.dense_per_tp_rank(c.tp);
  r.experts = lp.experts / (static_cast<double>(c.ep) * c.etp);
  return r;
}

// The share of a module's parameters gathered ahead of its use (zero3_prefetched_params).
// DeepSpeed fetches whole parameters; the model takes the buffer's share of the module's bytes.
double prefetch_share(const LayerContext& c, double module_params) {
  if (module_params <= 0) return 1;
  return zero3_prefetched_params(c.zero3_prefetch_params, module_params) / module_params;
}

// One parameter group of a module (dense, routed experts): the group it is gathered over, its
// elements and the bytes one takes on the wire.
struct GatherPart {
  CommGroup group;
  double params, bytes_per_param;
};

// The parameter tensors of a module, for frameworks that gather and reduce-scatter each on its
// own (plan.zero3_collectives "parameter"): its vectors (norm weights and biases) at
// `vector_params` elements each, and its weight matrices as equal shares of the rest; a routed
// expert part is its experts' matrices alone. The collectives' count and the sizes that set
// their protocol are what this changes; the bytes stay the module's.
struct ModuleTensors {
  int matrices = 1;
  int vectors = 0;
  double vector_params = 0;
  int expert_matrices = 0;
};

// One tensor's elements: what `tensors` splits `params` (one part of a module) into.
std::vector<double> tensor_sizes(const ModuleTensors& t, double params, bool experts) {
  std::vector<double> out;
  if (params <= 0) return out;
  const int matrices = std::max(1, experts ? t.expert_matrices : t.matrices);
  const double vectors = experts ? 0.0 : t.vectors * t.vector_params;
  if (vectors >= params) return {params};
  for (int i = 0; !experts && i < t.vectors; ++i) out.push_back(t.vector_params);
  for (int i = 0; i < matrices; ++i) out.push_back((params - vectors) / matrices);
  return out;
}

// A transformer layer's tensors on one rank (Megatron's layer: one fused QKV matrix): the
// attention's QKV and output projections (MLA: its down- and up-projections), the dense MLP's
// up (and gate) and down projections, or a MoE layer's router and shared experts; a norm weight
// per norm (and its bias with linear biases, a LayerNorm's), a bias per dense matrix.
ModuleTensors layer_tensors(const ModelSpec& m, int ep, bool moe_layer) {
  const int mlp = m.ffn_act == FfnActivation::kSwiglu ? 3 : 2;
  ModuleTensors t;
  int attention = 2, norms = 2;
  if (m.mla) {
    attention = m.mla->q_lora_rank > 0 ? 5 : 4;
    norms += m.mla->q_lora_rank > 0 ? 2 : 1;
  }
  t.matrices = attention + (moe_layer ? 1 + m.moe->shared_experts * mlp : mlp);
  t.vectors = norms * (m.linear_bias ? 2 : 1) + (m.linear_bias ? t.matrices : 0);
  t.vector_params = static_cast<double>(m.hidden);
  // Bounded to keep a layer's op list small: 4096 matrices, more than any published MoE model
  // holds on one rank (DeepSeek-V3's 256 experts at EP 1: 768).
  if (moe_layer)
    t.expert_matrices = static_cast<int>(std::min<double>(4096, mlp * static_cast<double>(m.moe->experts) / std::max(1, ep)));
  return t;
}
ModuleTensors layer_tensors(const LayerContext& c, bool moe_layer) { return layer_tensors(*c.model, c.ep, moe_layer); }

// A module's ZeRO-3 gathers: the part its prefetch buffer holds one repetition ahead, the rest
// at its start. Gathered tensor by tensor, the buffer holds whole tensors, in order (DeepSpeed
// fetches whole parameters).
void gathers(BlockBuilder& b, const LayerContext& c, std::initializer_list<GatherPart> parts,
             const ModuleTensors& tensors) {
  double total = 0;
  for (const GatherPart& g : parts) total += g.params;
  const double ahead = prefetch_share(c, total);
  if (!c.zero3_per_parameter) {
    for (const GatherPart& g : parts) b.gather_now(g.group, (1 - ahead) * g.params * g.bytes_per_param);
    for (const GatherPart& g : parts) b.prefetch_gather(g.group, ahead * g.params * g.bytes_per_param);
    return;
  }
  double budget = ahead * total * (1 + 1e-12);
  std::vector<std::pair<const GatherPart*, double>> now, early;
  for (const GatherPart& g : parts)
    for (double n : tensor_sizes(tensors, g.params, g.group == CommGroup::kExpertDp)) {
      const bool fits = n <= budget;
      if (fits) budget -= n;
      (fits ? early : now).emplace_back(&g, n);
    }
  // Each gather zeroes its whole tensor and copies this rank's shard into it (two kernels).
  for (const auto& [g, n] : now)
    b.add_list_copies(b.gather_now(g->group, n * g->bytes_per_param), 2, n * g->bytes_per_param);
  for (const auto& [g, n] : early)
    b.add_list_copies(b.prefetch_gather(g->group, n * g->bytes_per_param), 2, n * g->bytes_per_param);
}

// ZeRO-3's gathers of a module's parameters for a pass. The forward gathers the dense part over
// the shard group, with ZeRO++'s qwZ as int8 blocks (quantized on the owner, read 2 write 1 of
// its shard; dequantized after, read 1 write 2 of the module) and, with hpZ, keeps the
// secondary partition's slice (a copy of 1/hpz of the module); the backward gathers it over the
// secondary partition where hpZ keeps one, else over the shard group again. Expert parameters
// are gathered over their expert-DP group as they are.
void zero3_gathers(BlockBuilder& b, const LayerContext& c, Pass pass, const ModuleTensors& tensors, double dense,
                   double experts = 0) {
  if (c.zero_stage < 3) return;
  const int hpz = shape_of(c, CommGroup::kDpSecondary).ranks;
  if (pass == Pass::kForward) {
    double dense_bytes = c.param_bytes;
    if (c.zero_quantized_weights && dense > 0) {
      const int shard = std::max(1, shape_of(c, CommGroup::kDpShard).ranks);
      b.mem(OpRole::kCast, Pass::kForward, (c.param_bytes + kQwzBytesPerParam) * dense / shard, dense / shard);
      b.mem(OpRole::kCast, Pass::kForward, (kQwzBytesPerParam + c.param_bytes) * dense, dense);
      dense_bytes = kQwzBytesPerParam;
    }
    if (hpz > 1 && dense > 0) b.mem(OpRole::kOther, Pass::kForward, 2 * c.param_bytes * dense / hpz, dense / hpz);
    gathers(b, c, {{CommGroup::kDpShard, dense, dense_bytes}, {CommGroup::kExpertDp, experts, c.param_bytes}}, tensors);
    return;
  }
  gathers(b, c,
          {{hpz > 1 ? CommGroup::kDpSecondary : CommGroup::kDpShard, dense, c.param_bytes},
           {CommGroup::kExpertDp, experts, c.param_bytes}},
          tensors);
}

// ZeRO++'s qgZ (arXiv:2306.10209 sec. 3.3; DeepSpeed's all_to_all_quant_reduce): the gradients
// quantized to int4 (read A, write 1/2 a parameter), exchanged all-to-all among the shard
// group's g members on this node, dequantized and reduced to the 1/g that this node's GPU at
// this in-node index collects and quantized again (read the P/2 received, write P/2g), exchanged
// all-to-all among the members at this in-node index on the group's other nodes, then
// dequantized and summed into the shard (read P/2g, write A P/g, the per-node chunks read and
// summed: about 2 A P/g). Across the nodes each GPU sends 1/g of the module at 4 bits where a
// ring reduce-scatter of A-byte gradients sends nearly all of it: a quarter of the cross-node
// volume of 16-bit gradients, over g (the paper's 4x less gradient traffic across nodes).
// DeepSpeed runs these kernels and both hops on its reduce stream, beside the backward: here the
// kernels take their time on the compute stream (they share its HBM bandwidth either way) and the
// two hops follow each other on the sharded stream.
void quantized_gradient_exchange(BlockBuilder& b, const LayerContext& c, double params) {
  const int g = std::max(1, shape_of(c, CommGroup::kDpShardIntra).ranks);
  const double A = c.grad_bytes, q = kQgzBytesPerParam;
  b.mem(OpRole::kCast, Pass::kBackwardWeight, (A + q) * params, params);
  b.mem(OpRole::kCast, Pass::kBackwardWeight, q * params + q * params / g, params);
  b.mem(OpRole::kCast, Pass::kBackwardWeight, (q + 2 * A) * params / g, params / g);
  b.async_comm(CollectiveOp::kAllToAll, CommPurpose::kDp, CommGroup::kDpShardIntra, CommStream::kSharded, q * params);
  b.async_comm(CollectiveOp::kAllToAll, CommPurpose::kDp, CommGroup::kDpShardInter, CommStream::kSharded,
               q * params / g);
}

// A module's ZeRO-3 gradient reduction: the dense gradients reduce-scattered over the shard
// group, and under plan.dp_shard the shard then all-reduced across its replicas (FSDP's
// HYBRID_SHARD post-backward: reduce-scatter, then all-reduce of the shard); expert gradients
// over their expert-DP group. The reduce-scatters share the gathers' stream (CommStream::kSharded,
// one process group): the next module's gather waits for them. The replicas' all-reduce runs on
// its group's own stream (kGradients); the op graph issues a collective after compute ops, not
// after another collective, so it may start up to its reduce-scatter's time early.
void zero3_reduce_scatters(BlockBuilder& b, const LayerContext& c, const ModuleTensors& tensors, double dense_params,
                           double expert_params) {
  if (c.zero_stage < 3) return;
  // Tensor by tensor (plan.zero3_collectives "parameter"), each from a list of one view per rank
  // (BlockBuilder::add_list_copies), unless qgZ exchanges the gradients.
  const bool each = c.zero3_per_parameter && !c.zero_quantized_gradients;
  auto reduce_scatter = [&](CommGroup group, double params, bool experts) {
    if (!each) {
      b.async_comm(CollectiveOp::kReduceScatter, CommPurpose::kDp, group, CommStream::kSharded, params * c.grad_bytes);
      return;
    }
    for (double n : tensor_sizes(tensors, params, experts)) {
      const int i =
          b.async_comm(CollectiveOp::kReduceScatter, CommPurpose::kDp, group, CommStream::kSharded, n * c.grad_bytes);
      b.add_list_copies(i, 0, 0);
    }
  };
  auto replica_all_reduce = [&] {
    const int shard_ranks = std::max(1, shape_of(c, CommGroup::kDpShard).ranks);
    b.async_comm(CollectiveOp::kAllReduce, CommPurpose::kDp, CommGroup::kDpReplicate, CommStream::kGradients,
                 dense_params / shard_ranks * c.grad_bytes);
  };
  if (c.zero_quantized_gradients && dense_params > 0) quantized_gradient_exchange(b, c, dense_params);
  else reduce_scatter(CommGroup::kDpShard, dense_params, false);
  // Module-wise the shard's all-reduce across replicas follows the dense reduce-scatter; tensor
  // by tensor it follows the experts' too (the order the stream plays them in).
  if (!each) replica_all_reduce();
  reduce_scatter(CommGroup::kExpertDp, expert_params, true);
  if (each) replica_all_reduce();
}

// Every micro-batch after the first adds its weight gradients into the gradient buffer the
// optimizer reads (Megatron's main_grad, the accumulated .grad of DDP and FSDP): read the
// gradient as computed (the weights' element), read and write the accumulator
// (plan.grad_reduce): 2 + 2 x 4 = 10 bytes per parameter for bf16 with fp32 gradients, 6 for
// fp16 gradients; ZeRO-3 adds only its shard, after the reduce-scatter. A program is one
// micro-batch's, so it carries (m-1)/m of the pass. Gradient-accumulation fusion (the
// weight-gradient GEMM accumulating straight into main_grad, Megatron-Core's default) removes it.
void gradient_accumulation(BlockBuilder& b, const LayerContext& c, double params) {
  if (c.grad_accumulation_fusion || params <= 0 || c.micro_batches <= 1) return;
  const double shard = c.zero_stage >= 3 ? params / std::max(1, shape_of(c, CommGroup::kDpShard).ranks) : params;
  const double share = (c.micro_batches - 1.0) / c.micro_batches;
  b.mem(OpRole::kGradAccum, Pass::kBackwardWeight, (c.param_bytes + 2 * c.grad_bytes) * shard * share, shard * share);
}

// Autocast casts each fp32 weight to 16 bits in every forward (read 4, write A; its cache lives
// for one autocast region, so a recompute casts again) and the 16-bit weight gradient back to
// fp32 for the accumulated .grad (read A, write 4): the cast copies of the H200 autocast steps.
void weight_casts(BlockBuilder& b, const LayerContext& c, Pass pass, double params) {
  if (!c.autocast || params <= 0) return;
  b.mem(OpRole::kCast, pass, (4 + c.activation_bytes) * params, params);
}

}  // namespace

double largest_zero3_tensor_params(const ModelSpec& model, int ep, bool moe_layer, double dense_params,
                                   double expert_params) {
  const ModuleTensors t = layer_tensors(model, ep, moe_layer);
  double largest = 0;
  for (double n : tensor_sizes(t, dense_params, false)) largest = std::max(largest, n);
  for (double n : tensor_sizes(t, expert_params, true)) largest = std::max(largest, n);
  return largest;
}

double zero3_prefetched_params(double bound_params, double module_params) {
  return bound_params > 0 ? std::min(module_params, bound_params) : module_params;
}

// Selective recomputation at the start of a layer's backward (plan.recompute_modules): the
// pre-norms and MLA's latent norms (layernorm), MLA's up-projections from the kept latents
// (mla_up_proj; the query's where it has a latent), the attention core (core_attn), the routed
// experts' activation (moe_act) and a dense layer's MLP from its input (mlp).
void selective_recompute(BlockBuilder& b, const LayerContext& c, const Dims& d, bool moe_layer) {
  const RecomputeModules& rc = c.recompute_modules;
  const ModelSpec& m = *c.model;
  if (rc.layernorm) {
    for (int norm = 0; norm < 2; ++norm)
      norm_op(b, d, Pass::kRecompute, d.h);
    if (m.mla) {
      norm_op(b, d, Pass::kRecompute, d.normed_latents);
    }
  }
  if (rc.mla_up_proj && m.mla) {
    if (m.mla->q_lora_rank > 0) b.gemm(OpRole::kQkv, Pass::kRecompute, d.T, d.q_up_n, d.q_rank);
    b.gemm(OpRole::kQkv, Pass::kRecompute, d.T, d.kv_up_n, d.kv_rank);
  }
  if (rc.core_attn) b.attention(Pass::kRecompute);
  if (rc.moe_act && moe_layer) {
    const MoeDims e = moe_dims(c, d);
    const bool swiglu = m.ffn_act == FfnActivation::kSwiglu;
    const double elements = e.m_per_expert * e.local_experts * e.f_e;
    b.mem(OpRole::kActivation, Pass::kRecompute, activation_bytes(d, swiglu, false) * elements, elements);
  }
  if (rc.mlp && !moe_layer) dense_mlp_core_forward(b, c, d, Pass::kRecompute);
}

OpBlock layer_block(const LayerContext& c, bool moe, PassKind pass, int repeat) {
  const Dims d = dims(c);
  BlockBuilder b(c, moe ? "moe layer" : "dense layer", repeat);
  const RankLayerParams params = rank_layer_params(c, moe);
  const bool moe_layer = moe && c.model->moe.has_value();
  b.params(params.dense, params.experts);
  const ModuleTensors tensors = layer_tensors(c, moe_layer);
  if (pass == PassKind::kForward) {
    zero3_gathers(b, c, Pass::kForward, tensors, params.dense, params.experts);
    weight_casts(b, c, Pass::kForward, params.dense + params.experts);
    attention_forward(b, c, d, Pass::kForward);
    if (moe_layer) moe_mlp_forward(b, c, d, Pass::kForward);
    else dense_mlp_forward(b, c, d, Pass::kForward);
    return b.finish();
  }
  if (has_input_grad(pass)) {
    // Parameters are gathered again for the backward pass; W alone does not need them (dW = X^T dY).
    zero3_gathers(b, c, Pass::kBackwardInput, tensors, params.dense, params.experts);
    if (c.recompute == Recompute::kFull) {
      weight_casts(b, c, Pass::kRecompute, params.dense + params.experts);
      attention_forward(b, c, d, Pass::kRecompute);
      if (moe_layer) moe_mlp_forward(b, c, d, Pass::kRecompute);
      else if (c.recompute_early_stop) dense_mlp_recompute_until_last_gemm(b, c, d);
      else dense_mlp_forward(b, c, d, Pass::kRecompute);
    } else if (c.recompute == Recompute::kSelective) {
      selective_recompute(b, c, d, moe_layer);
    }
  }
  if (moe_layer) moe_mlp_backward(b, c, d, pass);
  else dense_mlp_backward(b, c, d, pass);
  attention_backward(b, c, d, pass);
  if (pass != PassKind::kBackwardInput) {
    weight_casts(b, c, Pass::kBackwardWeight, params.dense + params.experts);
    zero3_reduce_scatters(b, c, tensors, params.dense, params.experts);
    gradient_accumulation(b, c, params.dense + params.experts);
  }
  return b.finish();
}

double layer_power_share(const LayerContext& ctx, bool moe_layer) {
  const GpuSpec& gpu = *ctx.gpu;
  if (gpu.op_rates.present() || !follows_power_curve(gpu)) return 0;
  LayerContext c = ctx;
  // The benchmark rate of one GPU: the busy share is the curve's input, whatever the job's
  // slowest GPU does to the step's times.
  c.power_share = 1;
  c.slowest_gpu = 1;
  double gemm_s = 0, attention_s = 0, other_s = 0;
  for (PassKind pass : {PassKind::kForward, PassKind::kBackward}) {
    const OpBlock b = layer_block(c, moe_layer, pass, 1);
    for (std::size_t i = 0; i < b.compute.size(); ++i) {
      const ComputeKind kind = b.compute[i].kind;
      (kind == ComputeKind::kGemm ? gemm_s : kind == ComputeKind::kAttention ? attention_s : other_s) += b.compute_s[i];
    }
  }
  return power_limited_tensor_share(gpu.kernel, gemm_s, attention_s, other_s);
}

OpBlock embedding_block(const LayerContext& c, PassKind pass) {
  const Dims d = dims(c);
  const ModelSpec& m = *c.model;
  BlockBuilder b(c, "embedding", 1);
  const double params = static_cast<double>(m.vocab) * d.h / (c.vocab_parallel ? c.tp : 1);
  b.params(params, 0);
  if (pass == PassKind::kForward) {
    zero3_gathers(b, c, Pass::kForward, ModuleTensors{}, params);
    // Vocab-parallel embedding: each rank gathers the rows it holds, an all-reduce (or, with
    // sequence parallel, a reduce-scatter) sums the partial embeddings. A replicated one gathers
    // every row itself.
    b.mem(OpRole::kEmbedding, Pass::kForward, 2 * d.R * d.T * d.h, d.T * d.h);
    if (c.vocab_parallel) b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.h * d.A);
    b.mem(OpRole::kResidual, Pass::kForward, 2 * d.R * d.Te * d.h, d.Te * d.h);
  } else if (pass != PassKind::kBackwardInput) {
    // The embedding's gradient is a scatter-add of the incoming gradient (its weight gradient).
    // ZeRO-3 / FSDP gather a module's parameters for its backward whether it reads them or not.
    zero3_gathers(b, c, Pass::kBackwardWeight, ModuleTensors{}, params);
    if (c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.h * d.A);
    b.mem(OpRole::kEmbedding, Pass::kBackwardWeight, 2 * d.R * d.T * d.h, d.T * d.h);
    zero3_reduce_scatters(b, c, ModuleTensors{}, params, 0);
  }
  return b.finish();
}

OpBlock head_block(const LayerContext& c, PassKind pass) {
  const Dims d = dims(c);
  const ModelSpec& m = *c.model;
  BlockBuilder b(c, "output layer", 1);
  // A replicated output layer (plan.vocab_parallel false) computes every logit on each TP rank;
  // its input and its input gradient are then whole on every rank, and no TP collective runs.
  const double v = static_cast<double>(m.vocab) / (c.vocab_parallel ? c.tp : 1);
  const double params = v * d.h + d.h;
  b.params(params, 0);
  // The output matrix and the final norm's weight (and bias, a LayerNorm's).
  const ModuleTensors tensors{1, m.linear_bias ? 2 : 1, d.h, 0};
  if (pass == PassKind::kForward) {
    zero3_gathers(b, c, Pass::kForward, tensors, params);
    weight_casts(b, c, Pass::kForward, v * d.h);
    norm_op(b, d, Pass::kForward, d.h);
    if (c.sp) b.tp_comm(CollectiveOp::kAllGather, d.T * d.h * d.A);
    b.gemm(OpRole::kLmHead, Pass::kForward, d.T, v, d.h);
    // Cross-entropy runs in fp32 (PyTorch autocast lists log_softmax / nll_loss among the ops
    // it runs in float32; Megatron's _VocabParallelCrossEntropy casts the logits to fp32 and
    // all-reduces max and sum over TP): read the 16-bit logits and write them in fp32, a max and
    // a sum-exp pass over them, write the log-probabilities.
    if (c.vocab_parallel) b.inline_comm(CollectiveOp::kAllReduce, CommPurpose::kTp, CommGroup::kTp, 2 * 4 * d.T);
    if (loss_casts(c, d.A)) b.mem(OpRole::kCast, Pass::kForward, loss_cast_bytes(d.A) * d.T * v, d.T * v);
    const double bytes = c.fused_loss ? fused_loss_forward_bytes(d.A) : kLossForwardBytes;
    b.mem(loss_role(c), Pass::kForward, bytes * d.T * v, d.T * v, loss_kernels(c));
    return b.finish();
  }
  if (has_input_grad(pass)) zero3_gathers(b, c, Pass::kBackwardInput, tensors, params);
  if (has_input_grad(pass)) {
    const double bytes = c.fused_loss ? fused_loss_backward_bytes(d.A) : kLossBackwardBytes;
    b.mem(loss_role(c), Pass::kBackwardInput, bytes * d.T * v, d.T * v, loss_kernels(c));
    if (loss_casts(c, d.A)) b.mem(OpRole::kCast, Pass::kBackwardInput, loss_cast_bytes(d.A) * d.T * v, d.T * v);
  }
  linear_backward(b, OpRole::kLmHead, pass, d.T, v, d.h);
  if (pass != PassKind::kBackwardInput) weight_casts(b, c, Pass::kBackwardWeight, v * d.h);
  if (has_input_grad(pass)) {
    if (c.vocab_parallel) b.tp_comm(c.sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, d.T * d.h * d.A);
    norm_op(b, d, Pass::kBackwardInput, d.h);
  }
  if (pass != PassKind::kBackwardInput) zero3_reduce_scatters(b, c, tensors, params, 0);
  return b.finish();
}

}  // namespace trainsim
