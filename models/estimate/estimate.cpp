#include "models/estimate/estimate.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/compression.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/cost/flops.hpp"
#include "models/cost/memory.hpp"
#include "models/schedules/pipeline_schedule.hpp"

namespace trainsim {
namespace {

// Megatron's gradient bucket: max(40M, 1M x dp) parameters (distributed.py). The last bucket
// of the backward pass cannot overlap with compute.
double dp_bucket_params(int dp) { return std::max(40e6, 1e6 * dp); }
// Adam step traffic per parameter: read grad (2) + master, m, v (12), write master, m, v (12)
// and the 16-bit copy (2).
constexpr double kAdamBytesPerParam = 28;
// DeepSpeed's CPU Adam sustains about 1e9 parameters/s per GPU's share of a host's cores.
constexpr double kCpuAdamParamsPerS = 1e9;
// Activations on the wire: 16-bit in mixed precision (fp8 training keeps them in bf16 between
// layers), 4 bytes in fp32 training.
double activation_bytes(Precision p) { return p == Precision::kFp32 ? 4.0 : 2.0; }

std::string str(int64_t v) { return std::to_string(v); }
// "12.3 GiB" without printf: reasons are built for every infeasible plan of a sweep.
std::string gib(double bytes) {
  const long long tenths = std::llround(bytes / (1024.0 * 1024 * 1024) * 10);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " GiB";
}

// Placement "tp-cp-dp-pp" (innermost first): a group of `size` ranks whose members are `stride`
// ranks apart spans nodes as follows.
GroupShape group_shape(int size, int64_t stride, int gpus_per_node) {
  GroupShape g;
  g.ranks = size;
  if (size <= 1) return g;
  if (stride >= gpus_per_node) {
    g.ranks_per_node = 1;
    g.nodes = size;
  } else {
    g.ranks_per_node = static_cast<int>(std::min<int64_t>(size, gpus_per_node / stride));
    g.nodes = (size + g.ranks_per_node - 1) / g.ranks_per_node;
  }
  return g;
}

CollectiveAlgo plan_algo(const ParallelPlan& p) {
  return collective_algo_from_string(p.collective_algorithm, "plan.collective_algorithm");
}

// Layers held by each pipeline device (all of its virtual chunks), and how many are MoE.
struct DeviceLayers {
  int layers = 0;
  int moe_layers = 0;
  bool first = false;
  bool last = false;
};

}  // namespace

bool build_workload(const Scenario& sc, Workload& w, Result& r) {
  const ModelSpec& m = sc.model;
  const ClusterSpec& c = sc.cluster;
  const ParallelPlan& p = sc.plan;
  const GpuSpec& gpu = c.gpu;
  r.gpus = c.total_gpus();
  r.hbm_capacity_bytes = gpu.hbm_capacity_bytes;
  r.reason = check_plan_structure(sc);
  if (!r.reason.empty()) {
    r.feasible = false;
    return false;
  }

  const int tp = p.tp, pp = p.pp, dp = p.dp, cp = p.cp, ep = p.ep, vpp = p.vpp;
  const ScheduleKind schedule = schedule_kind(p.schedule);
  const int gpn = c.gpus_per_node;
  const int micro_batches = static_cast<int>(p.global_batch / (p.micro_batch * dp));
  r.micro_batches = micro_batches;
  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab);
  const double seq = static_cast<double>(m.seq_len);
  const double tokens_step = static_cast<double>(p.global_batch) * seq;
  r.tokens_per_step = tokens_step;
  const StepFlops flops = step_flops(m, p.recompute, tokens_step);
  r.model_flops_per_step = flops.model;
  r.hardware_flops_per_step = flops.hardware;

  // ---- rank groups and their network shape (placement tp, cp, dp, pp innermost first) ----
  const FabricTerms fabric = fabric_terms(c);
  const CollectiveAlgo algo = plan_algo(p);
  const GroupShape tp_group = group_shape(tp, 1, gpn);
  const GroupShape dp_group = group_shape(dp * cp, tp, gpn);
  const GroupShape ep_group = group_shape(ep, int64_t{tp} * cp, gpn);
  const GroupShape expert_dp_group = group_shape(dp * cp / ep, int64_t{tp} * cp * ep, gpn);
  const int64_t pp_stride = int64_t{tp} * cp * dp;
  const GroupShape pp_pair = group_shape(2, pp_stride, gpn);

  // ---- per-layer compute for one micro-batch on one GPU ----
  const double tokens_mb = static_cast<double>(p.micro_batch) * seq / cp;
  const double peak = gpu.peak_flops(p.precision);
  // fp8 runs GEMMs at the fp8 rate; attention stays in 16-bit.
  const double peak_attention =
      p.precision == Precision::kFp8 ? gpu.peak_flops(Precision::kBf16) : peak;
  // Per-GPU GEMMs of a TP layer are h x h/tp (QKV, fc1) or h/tp x h (projections); the
  // harmonic mean of the two weight dimensions, 2h/(tp+1), sets their arithmetic intensity.
  const double eff = gemm_efficiency(gpu, 2 * h / (tp + 1));
  const double elementwise_div = p.sp ? tp : 1;
  // Measured per-op rates (calibration op_rates) replace the roofline op by op; the kernel
  // launch overhead is inside what they measured.
  const OpRates& rates = gpu.op_rates;
  auto measured_layer_times = [&](bool moe, const LayerFlops& lf) {
    LayerOpCounts n;
    n.gemm_flop = lf.gemm * tokens_mb / tp;
    n.attention_flop = lf.attention * tokens_mb / tp / 2;  // causal: half the score matrix
    n.norm_elements = 2 * tokens_mb * h / elementwise_div;
    n.residual_elements = n.norm_elements;
    double ffn = static_cast<double>(m.ffn_hidden);
    if (moe && m.moe)
      ffn = static_cast<double>(m.moe->expert_ffn_hidden) * (m.moe->top_k + m.moe->shared_experts);
    n.activation_elements = tokens_mb * ffn / tp;
    LayerComputeTimes t = layer_times_from_op_rates(rates, n);
    if (p.recompute == Recompute::kFull) t.recompute_s = t.forward_s;
    else if (p.recompute == Recompute::kSelective) t.recompute_s = t.attention_forward_s;
    return t;
  };
  auto layer_times = [&](bool moe) {
    const LayerFlops lf = layer_forward_flops_per_token(m, moe);
    if (rates.present()) return measured_layer_times(moe, lf);
    LayerComputeTimes t;
    const double gemm_s = lf.gemm * tokens_mb / tp / (peak * eff);
    const double attn_s = lf.attention * tokens_mb / tp / (peak_attention * eff);
    const double elem_s = elementwise_bytes_per_hidden(gpu) * h * tokens_mb /
                          elementwise_div / gpu.hbm_bandwidth_bytes_per_s;
    // Unfused attention writes and re-reads the a x s score matrix per token: scores, softmax,
    // dropout mask and output (Korthikanti's 5as bytes) moved twice.
    const double attn_core_s =
        p.flash_attention ? 0.0
                          : kUnfusedAttentionBytesPerScore * m.heads * seq * tokens_mb / tp /
                                gpu.hbm_bandwidth_bytes_per_s;
    const double launch_s = kKernelsPerLayerForward * kKernelOverheadS;
    t.forward_s = gemm_s + attn_s + elem_s + attn_core_s + launch_s;
    t.backward_s = 2 * (gemm_s + attn_s + elem_s + attn_core_s + launch_s);
    t.backward_weight_s = gemm_s;
    t.attention_forward_s = attn_s + attn_core_s;
    if (p.recompute == Recompute::kFull) t.recompute_s = t.forward_s;
    else if (p.recompute == Recompute::kSelective) t.recompute_s = attn_s + attn_core_s;
    return t;
  };
  const LayerComputeTimes dense_t = layer_times(false);
  const LayerComputeTimes moe_t = m.moe ? layer_times(true) : dense_t;

  // ---- per-layer communication for one micro-batch ----
  const double kActivationBytes = activation_bytes(p.precision);
  const double act_bytes = tokens_mb * h * kActivationBytes;  // one [s/cp, b, h] tensor
  double tp_collective_s = 0;
  if (tp > 1) {
    tp_collective_s =
        p.sp ? collective_cost(CollectiveOp::kReduceScatter, algo, act_bytes, tp_group, fabric).time_s +
                   collective_cost(CollectiveOp::kAllGather, algo, act_bytes, tp_group, fabric).time_s
             : collective_cost(CollectiveOp::kAllReduce, algo, act_bytes, tp_group, fabric).time_s;
  }
  // Megatron: 2 TP collectives per layer forward (attention, MLP), 2 backward, 2 more in the
  // recomputed forward.
  const int tp_fwd = 2, tp_bwd = 2 + (p.recompute == Recompute::kFull ? 2 : 0);
  const double tp_bytes_per_collective = tp > 1 ? 2.0 * (tp - 1) / tp * act_bytes : 0;

  // Context parallel: ring attention passes K and V blocks cp-1 times forward, twice that
  // backward (K, V and their gradients), overlapped with the attention blocks.
  double cp_fwd_s = 0, cp_bwd_s = 0, cp_bytes_layer = 0;
  if (cp > 1) {
    const double kv_bytes = 2 * tokens_mb * h * m.kv_heads / m.heads * kActivationBytes / tp;
    const double step_s =
        collective_cost(CollectiveOp::kSendRecv, algo, kv_bytes, group_shape(2, tp, gpn), fabric).time_s;
    cp_fwd_s = (cp - 1) * step_s;
    cp_bwd_s = 2 * cp_fwd_s;
    cp_bytes_layer = 3 * (cp - 1) * kv_bytes;
  }
  // Expert parallel: dispatch + combine all-to-all, forward and backward.
  double ep_a2a_s = 0, ep_bytes_layer = 0;
  if (m.moe && ep > 1) {
    const double bytes = tokens_mb * m.moe->top_k * h * kActivationBytes / (p.sp ? tp : 1);
    ep_a2a_s = collective_cost(CollectiveOp::kAllToAll, algo, bytes, ep_group, fabric).time_s;
    ep_bytes_layer = 4 * bytes * (ep - 1) / ep;
  }

  // ---- layers on each pipeline device ----
  const int chunks = pp * vpp;
  std::vector<DeviceLayers> devices(pp);
  {
    int layer_index = 0;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const int n = p.layers_per_stage.empty() ? m.layers / chunks : p.layers_per_stage[chunk];
      DeviceLayers& d = devices[chunk % pp];
      d.layers += n;
      if (m.moe) {
        // Layers [layer_index, layer_index + n) that are past the leading dense layers.
        d.moe_layers += std::max(0, layer_index + n - std::max(layer_index, m.moe->dense_layers));
      }
      layer_index += n;
    }
    devices.front().first = true;
    devices.back().last = true;
  }

  // ---- per-device micro-batch times ----
  double worst_fb = 0;  // the slowest device's forward + backward of one micro-batch
  double logits_gemm_s = logits_forward_flops_per_token(m) * tokens_mb / tp / (peak * eff);
  double embedding_fwd_s = 0, embedding_bwd_s = 0;
  if (rates.present()) {
    // Final LayerNorm + LM-head GEMMs + softmax cross-entropy, forward and backward together:
    // a third forward, as the GEMMs split; the embedding gather and its scatter-add.
    RankLayerShape rs;
    rs.micro_batch = static_cast<double>(p.micro_batch);
    rs.seq = seq / cp;
    rs.hidden = h;
    rs.heads = m.heads;
    rs.vocab = v / tp;
    rs.tp = tp;
    logits_gemm_s = lm_head_time_from_op_rates(rates, rs) / 3;
    embedding_fwd_s = embedding_time_from_op_rates(rates, rs, false);
    embedding_bwd_s = embedding_time_from_op_rates(rates, rs, true);
  }
  w.stages.assign(pp, StageWork{});
  for (int di = 0; di < pp; ++di) {
    const DeviceLayers& d = devices[di];
    const int dense_n = d.layers - d.moe_layers;
    auto sum = [&](double LayerComputeTimes::*field) {
      return dense_n * dense_t.*field + d.moe_layers * moe_t.*field;
    };
    double f = sum(&LayerComputeTimes::forward_s);
    double b = sum(&LayerComputeTimes::backward_s) + sum(&LayerComputeTimes::recompute_s);
    double wgt = sum(&LayerComputeTimes::backward_weight_s);
    if (d.last) {
      f += logits_gemm_s;
      b += 2 * logits_gemm_s;
      wgt += logits_gemm_s;
    }
    if (d.first) {
      f += embedding_fwd_s;
      b += embedding_bwd_s;
    }
    const double compute = f + b;
    double tp_s = d.layers * (tp_fwd + tp_bwd) * tp_collective_s;
    if (p.overlap.tp) tp_s = std::max(0.0, tp_s - compute);
    const double attn = sum(&LayerComputeTimes::attention_forward_s);
    const double cp_s = d.layers * (cp_fwd_s + cp_bwd_s) > 3 * attn
                            ? d.layers * (cp_fwd_s + cp_bwd_s) - 3 * attn
                            : 0.0;
    const double ep_s = d.moe_layers * (4 + (p.recompute == Recompute::kFull ? 2 : 0)) * ep_a2a_s;
    const double fb = compute + tp_s + cp_s + ep_s;
    {
      StageWork& sw = w.stages[di];
      sw.layers = d.layers;
      sw.moe_layers = d.moe_layers;
      sw.first = d.first;
      sw.last = d.last;
      sw.forward_compute_s = f;
      sw.backward_compute_s = b;
      sw.backward_weight_s = wgt;
      sw.tp_comm_s = tp_s;
      sw.cp_comm_s = cp_s;
      sw.ep_comm_s = ep_s;
      const double share = compute > 0 ? (tp_s + cp_s + ep_s) / compute : 0;
      sw.forward_s = f * (1 + share);
      sw.backward_s = b * (1 + share);
    }
    worst_fb = std::max(worst_fb, fb);
  }

  // ---- pipeline ----
  double pp_p2p_s = 0;
  if (pp > 1) {
    // Scatter-gather optimisation: each TP rank sends 1/tp of the activation (SC'21 sec. 4.1).
    const double bytes = act_bytes / tp;
    pp_p2p_s = collective_cost(CollectiveOp::kSendRecv, algo, bytes, pp_pair, fabric).time_s;
    r.pp_bytes = 2.0 * micro_batches * bytes * (vpp > 1 ? vpp : 1);
  }
  const double mb_time = worst_fb;

  // ---- model states per device ----
  double max_stage_params = 0, max_stage_dense = 0, max_stage_expert = 0;
  std::vector<double> stage_dense(pp), stage_expert(pp);
  const LayerParams dense_lp = layer_params(m, false);
  const LayerParams moe_lp = m.moe ? layer_params(m, true) : dense_lp;
  double largest_layer_params = 0;
  for (int s = 0; s < pp; ++s) {
    const DeviceLayers& d = devices[s];
    const int dense_n = d.layers - d.moe_layers;
    double dense = dense_n * ((dense_lp.attention + dense_lp.mlp_dense) / tp + dense_lp.norms) +
                   d.moe_layers * ((moe_lp.attention + moe_lp.mlp_dense) / tp + moe_lp.norms);
    const double expert = d.moe_layers * moe_lp.experts / (double(ep) * tp);
    if (d.first) dense += v * h / tp;
    if (d.last && (pp > 1 || !m.tied_embeddings)) dense += v * h / tp;
    stage_dense[s] = dense;
    stage_expert[s] = expert;
    w.stages[s].dense_params = dense;    // workload.hpp: read by the simulate tier
    w.stages[s].expert_params = expert;
    if (dense + expert > max_stage_params) {
      max_stage_params = dense + expert;
      max_stage_dense = dense;
      max_stage_expert = expert;
    }
  }
  largest_layer_params =
      std::max((dense_lp.attention + dense_lp.mlp_dense) / tp,
               m.moe ? (moe_lp.attention + moe_lp.mlp_dense) / tp + moe_lp.experts / (double(ep) * tp)
                     : 0.0);

  // ---- data parallel gradient reduction, per compression stage ----
  const StateBytes sb = state_bytes_per_param(p.precision);
  auto dp_time = [&](const CompressionStage* stage) {
    double t = 0;
    const double ratio_dense = 1.0;
    CompressionEffect ce;
    if (stage) ce = compression_effect(*stage, h);
    auto reduce = [&](double params, const GroupShape& g) {
      if (g.ranks <= 1 || params <= 0) return 0.0;
      const double grad_bytes = params * sb.grads;
      double s = 0;
      if (ce.needs_allgather) {
        s = collective_cost(CollectiveOp::kAllGather, algo, grad_bytes * ce.wire_ratio * g.ranks,
                            g, fabric).time_s;
      } else {
        s = ce.all_reduces *
            collective_cost(CollectiveOp::kAllReduce, algo,
                            grad_bytes * ce.wire_ratio * ratio_dense / ce.all_reduces, g, fabric)
                .time_s;
      }
      s += ce.hbm_passes * 2 * grad_bytes / gpu.hbm_bandwidth_bytes_per_s;
      return s;
    };
    t = reduce(max_stage_dense, dp_group) + reduce(max_stage_expert, expert_dp_group);
    return t;
  };
  auto dp_bytes = [&](const CompressionStage* stage) {
    CompressionEffect ce;
    if (stage) ce = compression_effect(*stage, h);
    const double n = dp_group.ranks;
    if (n <= 1) return 0.0;
    return max_stage_dense * sb.grads * ce.wire_ratio * 2 * (n - 1) / n;
  };
  // Average over the training run when compression stages change with the step.
  double dp_s = 0, dp_bytes_avg = 0;
  {
    const double steps = static_cast<double>(std::max<int64_t>(1, sc.training.steps));
    if (p.compression.empty()) {
      dp_s = dp_time(nullptr) / p.sync_interval;
      dp_bytes_avg = dp_bytes(nullptr) / p.sync_interval;
    } else {
      double covered = 0;
      if (p.compression.front().from_step > 0) {
        const double n = std::min<double>(steps, p.compression.front().from_step);
        dp_s += n * dp_time(nullptr) / p.sync_interval;
        dp_bytes_avg += n * dp_bytes(nullptr) / p.sync_interval;
        covered += n;
      }
      for (std::size_t i = 0; i < p.compression.size(); ++i) {
        const auto& st = p.compression[i];
        const double begin = std::min<double>(steps, st.from_step);
        const double end = i + 1 < p.compression.size()
                               ? std::min<double>(steps, p.compression[i + 1].from_step)
                               : steps;
        const double n = std::max(0.0, end - begin);
        const int interval = std::max(st.sync_interval, p.sync_interval);
        dp_s += n * dp_time(&st) / interval;
        dp_bytes_avg += n * dp_bytes(&st) / interval;
        covered += n;
      }
      if (covered > 0) {
        dp_s /= covered;
        dp_bytes_avg /= covered;
      }
    }
  }
  r.dp_bytes = dp_bytes_avg;
  const double dp_s_gradients = dp_s;
  double zero3_s = 0;
  if (p.zero_stage >= 3 && (dp_group.ranks > 1 || expert_dp_group.ranks > 1)) {
    // ZeRO-3 gathers parameters for every micro-batch's forward and backward (prefetched,
    // overlapped with compute) on top of the gradient reduce-scatter: 1.5x a DP all-reduce
    // when there is one micro-batch. Expert parameters are gathered over the expert-DP group.
    const double ag_s =
        collective_cost(CollectiveOp::kAllGather, algo, max_stage_dense * sb.params, dp_group, fabric).time_s +
        collective_cost(CollectiveOp::kAllGather, algo, max_stage_expert * sb.params, expert_dp_group, fabric).time_s;
    const double per_mb_exposed = std::max(0.0, 2 * ag_s - mb_time);
    dp_s *= 0.5;  // reduce-scatter only
    zero3_s = micro_batches * per_mb_exposed + ag_s * 2 / std::max(1, micro_batches);
    auto gathered = [](double params, const GroupShape& g) {
      return g.ranks > 1 ? params * (g.ranks - 1) / g.ranks : 0.0;
    };
    r.dp_bytes += micro_batches * 2 * sb.params *
                  (gathered(max_stage_dense, dp_group) + gathered(max_stage_expert, expert_dp_group));
  }

  // ---- optimizer step ----
  const double zero_degree = p.zero_stage >= 1 ? dp_group.ranks : 1;
  const double opt_params = max_stage_dense / zero_degree +
                            max_stage_expert / (p.zero_stage >= 1 ? expert_dp_group.ranks : 1);
  double optimizer_s = rates.present()
                           ? optimizer_time_from_op_rates(rates, opt_params, max_stage_params)
                           : opt_params * kAdamBytesPerParam / gpu.hbm_bandwidth_bytes_per_s;
  double offload_s = 0;
  if (p.offload.optimizer) {
    // Gradients down and parameters up over PCIe, Adam on the host.
    optimizer_s = opt_params / kCpuAdamParamsPerS;
    offload_s += opt_params * (sb.grads + sb.params) / c.pcie_bandwidth_bytes_per_s;
  }
  if (p.offload.params) {
    const double fetch_s = 2 * max_stage_params * sb.params / c.pcie_bandwidth_bytes_per_s;
    offload_s += micro_batches * std::max(0.0, fetch_s - mb_time);
  }

  // ---- memory per stage ----
  ActivationOptions ao;
  ao.tp = tp;
  ao.cp = cp;
  ao.sp = p.sp;
  ao.recompute = p.recompute;
  ao.flash_attention = p.flash_attention;
  ao.micro_batch = static_cast<double>(p.micro_batch);
  const double act_dense = layer_activation_bytes(m, false, ao);
  const double act_moe = m.moe ? layer_activation_bytes(m, true, ao) : act_dense;
  r.per_stage.resize(pp);
  double offload_act_s = 0;
  for (int s = 0; s < pp; ++s) {
    const DeviceLayers& d = devices[s];
    StageMemory& sm = r.per_stage[s];
    sm.stage = s;
    sm.layers = d.layers;
    sm.in_flight_micro_batches = in_flight_micro_batches(schedule, pp, vpp, s, micro_batches);
    MemoryBreakdown dense = model_state_bytes(stage_dense[s], p.zero_stage, dp_group.ranks, p.precision);
    MemoryBreakdown expert =
        model_state_bytes(stage_expert[s], p.zero_stage, expert_dp_group.ranks, p.precision);
    MemoryBreakdown& b = sm.breakdown;
    b.params_bytes = dense.params_bytes + expert.params_bytes;
    b.grads_bytes = dense.grads_bytes + expert.grads_bytes;
    b.optimizer_bytes = dense.optimizer_bytes + expert.optimizer_bytes;
    if (schedule == ScheduleKind::kDualPipe && pp > 1) {
      // DualPipe keeps two copies of the parameters (and their gradients) per device.
      b.params_bytes *= 2;
      b.grads_bytes *= 2;
    }
    if (p.offload.optimizer) b.optimizer_bytes = 0;
    if (p.offload.params) b.params_bytes = 2 * largest_layer_params * sb.params;
    const double per_mb = (d.layers - d.moe_layers) * act_dense + d.moe_layers * act_moe;
    double act = per_mb * sm.in_flight_micro_batches;
    if (d.first) act += first_stage_extra_activation_bytes(m, ao) * sm.in_flight_micro_batches;
    if (d.last) act += last_stage_extra_activation_bytes(m, ao);
    if (p.offload.activations && d.layers > 0) {
      // Only the layer being computed and the one being prefetched stay on the GPU.
      const double kept = 2.0 / d.layers;
      offload_act_s = std::max(offload_act_s, 2 * act * (1 - kept) / c.pcie_bandwidth_bytes_per_s);
      act *= kept;
    }
    b.activations_bytes = act;
    b.other_bytes = kFrameworkReserveBytes;
    if (dp_group.ranks > 1) b.other_bytes += 2 * dp_bucket_params(dp) * sb.grads / (p.zero_stage >= 2 ? 1 : 2);
    if (p.zero_stage >= 3) b.other_bytes += 2 * largest_layer_params * sb.params;  // gather + prefetch
    for (const auto& st : p.compression)
      if (compression_effect(st, h).error_feedback_buffer) {
        b.other_bytes += (stage_dense[s] + stage_expert[s]) * sb.grads;
        break;
      }
    sm.total_bytes = b.total();
    if (sm.total_bytes > r.peak_memory_bytes) {
      r.peak_memory_bytes = sm.total_bytes;
      r.peak_breakdown = b;
    }
  }
  offload_s += std::max(0.0, offload_act_s - micro_batches * mb_time);

  // ---- warnings and memory feasibility ----
  if (tp > gpn) r.warnings.push_back("plan.tp spans nodes: tensor-parallel traffic crosses the NICs");
  if (tp > m.kv_heads) r.warnings.push_back("plan.tp exceeds model.kv_heads: KV heads are replicated");
  if (r.peak_memory_bytes > gpu.hbm_capacity_bytes) {
    int worst = 0;
    for (int s = 0; s < pp; ++s)
      if (r.per_stage[s].total_bytes > r.per_stage[worst].total_bytes) worst = s;
    const MemoryBreakdown& b = r.per_stage[worst].breakdown;
    r.feasible = false;
    r.reason = "out of memory: pipeline stage " + str(worst) + " needs " +
               gib(r.peak_memory_bytes) + " but " + gpu.name + " has " +
               gib(gpu.hbm_capacity_bytes) + " (params " + gib(b.params_bytes) + ", grads " +
               gib(b.grads_bytes) + ", optimizer " + gib(b.optimizer_bytes) + ", activations " +
               gib(b.activations_bytes) + ", other " + gib(b.other_bytes) + ")";
  }
  if (r.feasible && (p.offload.optimizer || p.offload.params)) {
    double host_per_gpu = 0;
    if (p.offload.optimizer) host_per_gpu += opt_params * sb.optimizer;
    if (p.offload.params) host_per_gpu += max_stage_params * sb.params;
    if (host_per_gpu * gpn > c.host_memory_bytes) {
      r.feasible = false;
      r.reason = "offload needs " + gib(host_per_gpu * gpn) +
                 " of host memory per node but cluster.host_memory is " + gib(c.host_memory_bytes);
    }
  }
  const double layers_dev = devices.front().layers;
  r.tp_bytes = micro_batches * layers_dev * (tp_fwd + tp_bwd) * tp_bytes_per_collective;
  r.cp_bytes = micro_batches * layers_dev * cp_bytes_layer;
  r.ep_bytes = micro_batches * devices.front().moe_layers * ep_bytes_layer;

  // ---- what the step plays ----
  w.schedule = schedule;
  w.tp = tp;
  w.pp = pp;
  w.dp = dp;
  w.cp = cp;
  w.ep = ep;
  w.vpp = vpp;
  w.micro_batches = micro_batches;
  w.p2p_bytes = pp > 1 ? act_bytes / tp : 0;
  w.p2p_s = pp_p2p_s;
  w.pp_pair = pp_pair;
  w.fabric = fabric;
  w.algo = algo;
  w.dp_group = dp_group;
  w.expert_dp_group = expert_dp_group;
  w.grad_bytes_per_param = sb.grads;
  w.dp_bucket_params = dp_bucket_params(dp);
  w.overlap_dp = p.overlap.dp;
  w.optimizer_s = optimizer_s;
  w.offload_s = offload_s;
  w.largest_stage_params = max_stage_params;
  {
    const double base = dp_time(nullptr);
    w.dp_wire_ratio = base > 0 ? dp_s_gradients / base : 1.0;
    for (int s = 0; s < pp; ++s) {
      const double scale = max_stage_params > 0 ? (stage_dense[s] + stage_expert[s]) / max_stage_params : 0;
      w.stages[s].dp_reduce_s = dp_s * scale;
    }
  }
  w.zero3_gather_s = zero3_s;
  r.micro_batches = micro_batches;
  return true;
}

namespace {

// The closed form of a workload: steady 1F1B-like state of the slowest stage, the schedule's
// bubble formula, exposed transfers, the exposed part of the DP reduction, fixed costs.
void compose_closed_form(const Scenario& sc, const Workload& w, Result& r) {
  const StageWork* worst = &w.stages.front();
  for (const StageWork& s : w.stages)
    if (s.forward_s + s.backward_s > worst->forward_s + worst->backward_s) worst = &s;
  const int m = w.micro_batches;
  const double mb_time = worst->forward_s + worst->backward_s;
  const double steady = m * mb_time;
  const BubbleInputs bin{w.pp, w.vpp, m, worst->forward_s, worst->backward_s, worst->backward_weight_s};
  double bubble = bubble_time_s(w.schedule, bin);
  if (w.pp > 1 && m < 2 * w.pp) {
    // The closed forms assume the pipeline fills (m >= p, and DualPipe's (p/2-1) term assumes
    // p > 2). With few micro-batches play the schedule instead: p x m x 3 ops, cheap here.
    std::vector<StageCosts> costs;
    // Interleaving splits a device's layers into vpp chunks; DualPipe's two directions each
    // hold a full stage (hence its two parameter copies), so its per-pass cost is the stage's.
    const int chunks = w.vpp;
    for (const StageWork& s : w.stages)
      costs.push_back({s.forward_s / chunks, (s.backward_s - s.backward_weight_s) / chunks,
                       s.backward_weight_s / chunks});
    const Timeline t = play_schedule(w.schedule, w.pp, w.vpp, m, costs, 0.0);
    bubble = std::max(0.0, t.makespan_s - steady);
  }
  double pp_exposed = 0;
  if (w.pp > 1) {
    // Fill and drain put 2(p-1) transfers on the critical path; without overlap every
    // micro-batch also waits for its send and receive.
    pp_exposed = 2.0 * (w.pp - 1) * w.p2p_s;
    if (!sc.plan.overlap.pp) pp_exposed += 2.0 * m * w.p2p_s * w.vpp;
  }
  double dp_s = 0;
  for (const StageWork& s : w.stages) dp_s = std::max(dp_s, s.dp_reduce_s);
  dp_s += w.zero3_gather_s;
  double dp_exposed = dp_s;
  if (w.overlap_dp && dp_s > 0) {
    // Reduction of each bucket starts when its gradients are ready during the last
    // micro-batch's backward; the last bucket is always exposed.
    const double last_bucket =
        dp_s * std::min(1.0, w.dp_bucket_params / std::max(1.0, w.largest_stage_params));
    dp_exposed = std::max(last_bucket, dp_s - worst->backward_s);
  }
  const double step = steady + bubble + pp_exposed + dp_exposed + w.optimizer_s + w.offload_s;
  const double peak = sc.cluster.gpu.peak_flops(sc.plan.precision);
  r.step_time_s = step;
  r.tokens_per_s = r.tokens_per_step / step;
  r.model_tflops_per_gpu = r.model_flops_per_step / step / r.gpus / 1e12;
  r.hardware_tflops_per_gpu = r.hardware_flops_per_step / step / r.gpus / 1e12;
  r.mfu = r.model_flops_per_step / (step * r.gpus * peak);
  r.hfu = r.hardware_flops_per_step / (step * r.gpus * peak);
  r.bubble_fraction = w.pp > 1 ? bubble / (steady + bubble) : 0.0;
  TimeBreakdown& bd = r.breakdown;
  bd.compute_s = m * (worst->forward_compute_s + worst->backward_compute_s);
  bd.tp_comm_s = m * worst->tp_comm_s;
  bd.cp_comm_s = m * worst->cp_comm_s;
  bd.ep_comm_s = m * worst->ep_comm_s;
  bd.pp_comm_s = pp_exposed;
  bd.dp_comm_s = dp_exposed;
  bd.bubble_s = bubble;
  bd.optimizer_s = w.optimizer_s;
  bd.offload_s = w.offload_s;
  r.exposed_comm_s = bd.tp_comm_s + bd.cp_comm_s + bd.ep_comm_s + bd.pp_comm_s + bd.dp_comm_s;
  r.overlapped_comm_s = std::max(0.0, dp_s - dp_exposed);
}

}  // namespace

Result estimate(const Scenario& sc) {
  Result r;
  r.fidelity = "estimate";
  Workload w;
  if (!build_workload(sc, w, r)) return r;
  compose_closed_form(sc, w, r);
  return r;
}

}  // namespace trainsim
