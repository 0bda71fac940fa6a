#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include "models/core/leaf_switch.hpp"
#include "models/cost/arrival_wait.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/collectives/gradient_reduction.hpp"
#include "models/cost/compression.hpp"
#include "models/cost/compute/memory_bound_model.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/cost/flops.hpp"
#include "models/cost/memory.hpp"
#include "models/workload/layer_program.hpp"
#include "models/workload/memo.hpp"
#include "models/workload/pass_pricing.hpp"
#include "models/workload/plan_structure.hpp"
#include "models/workload/program_reduce.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

// Megatron's gradient bucket: max(40M, 1M x dp) parameters (distributed.py). The last bucket
// of the backward pass cannot overlap with compute.
double dp_bucket_params(int dp) { return std::max(40e6, 1e6 * dp); }
// DeepSpeed's CPU Adam sustains about 1e9 parameters/s per GPU's share of a host's cores.
constexpr double kCpuAdamParamsPerS = 1e9;
// Activations on the wire: 16-bit in mixed precision (fp8 training keeps them in bf16 between
// layers), 4 bytes in fp32 training.
double activation_bytes(Precision p) { return p == Precision::kFp32 ? 4.0 : 2.0; }

std::string str(int64_t v) { return std::to_string(v); }

// Reasons are built for every infeasible plan of a search, so they are written into one buffer
// with std::to_chars (no printf, no temporary strings) and copied out once; a text longer than
// the buffer (a very long GPU name) is cut at its end.
class Text {
 public:
  Text& operator<<(std::string_view t) {
    const std::size_t n = std::min(t.size(), sizeof buf_ - size_);
    std::memcpy(buf_ + size_, t.data(), n);
    size_ += n;
    return *this;
  }
  Text& operator<<(int64_t v) {
    char digits[24];
    return *this << std::string_view(digits, static_cast<std::size_t>(
                                                 std::to_chars(digits, digits + sizeof digits, v).ptr - digits));
  }
  // "12.3 GiB" from bytes.
  struct Gib {
    double bytes;
  };
  Text& operator<<(Gib g) {
    const long long tenths = std::llround(g.bytes / (1024.0 * 1024 * 1024) * 10);
    return *this << static_cast<int64_t>(tenths / 10) << "." << static_cast<int64_t>(tenths % 10) << " GiB";
  }
  std::string str() const { return std::string(buf_, size_); }

 private:
  char buf_[512];
  std::size_t size_ = 0;
};
Text::Gib gib(double bytes) { return {bytes}; }

CollectiveAlgo plan_algo(const ParallelPlan& p) {
  return collective_algo_from_string(p.collective_algorithm, "plan.collective_algorithm");
}

// The plan's names parsed once per distinct name per thread (a search sets the same few names on
// plan after plan): the last name and what it parsed to.
template <class T, class Parse>
T parsed(const std::string& name, Parse parse) {
  thread_local std::string last;
  thread_local T value{};
  thread_local bool have = false;
  if (!have || name != last) {
    value = parse(name);  // throws before caching a bad name
    last = name;
    have = true;
  }
  return value;
}

// Which layers each (device, chunk) holds. Interleaved: chunk c of device d is virtual stage
// c p + d. Bidirectional (DualPipe): device d runs stage d in one direction and stage p-1-d in
// the other.
class ChunkLayout {
 public:
  ChunkLayout(const ModelSpec& m, const ParallelPlan& p, const PipelineSchedule& s) : pp_(p.pp) {
    const int pp = p.pp;
    dual_ = s.bidirectional() && pp > 1;
    const int vstages = dual_ ? pp : pp * s.layer_chunks(p.vpp);
    // The virtual stages live in a per-thread buffer: no allocation per plan after warm-up.
    thread_local std::vector<ChunkLayers> buffer;
    buffer.assign(vstages, ChunkLayers{});
    vs_ = buffer.data();
    vstages_ = vstages;
    // Layers of each declared stage (stage_layers: pp x vpp of them); a schedule without
    // interleaving folds a device's declared chunks into one.
    const int declared = pp * p.vpp;
    auto per = [&](int i) { return stage_layers(m, p, i); };
    int at = 0;
    for (int i = 0; i < vstages; ++i) {
      ChunkLayers& c = vs_[i];
      c.begin = at;
      if (vstages == declared) {
        c.layers = per(i);
      } else {
        // vpp > 1 without interleaving: device i holds chunks i, i + pp, ... as one.
        for (int j = i; j < declared; j += pp) c.layers += per(j);
      }
      at += c.layers;
    }
    for (int i = 0; i < vstages; ++i) {
      ChunkLayers& c = vs_[i];
      if (m.moe) {
        // Layers [begin, begin + layers) past the leading dense layers.
        c.moe_layers = std::max(0, c.begin + c.layers - std::max(c.begin, m.moe->dense_layers));
        c.moe_layers = std::min(c.moe_layers, c.layers);
      }
    }
    vs_[0].first = true;
    vs_[vstages - 1].last = true;
  }
  int chunks() const { return dual_ ? 2 : vstages_ / pp_; }
  const ChunkLayers& chunk(int device, int c) const {
    if (dual_) return vs_[c == 0 ? device : pp_ - 1 - device];
    return vs_[c * pp_ + device];
  }

 private:
  int pp_;
  bool dual_ = false;
  int vstages_ = 0;
  ChunkLayers* vs_ = nullptr;
};

// The placement's group shapes (worst per kind), memoised per (degrees, node size, rank order):
// 1024 slots of ~140 bytes. Pipeline pairs are priced boundary by boundary (build_workload).
struct PlacementShapes {
  GroupShape worst[kCommGroups];
};

PlacementShapes placement_shapes(const RankPlacement& place, const std::string& order, bool memoise) {
  auto compute = [&] {
    PlacementShapes out;
    for (int k = 0; k < kCommGroups; ++k) out.worst[k] = place.worst_shape(k);
    return out;
  };
  struct Key {
    int32_t tp, cp, dp, pp, ep, etp, gpn, nodes_per_leaf, dp_shard, hpz, qgz;
    char order[24];
  };
  if (!memoise || order.size() >= sizeof(Key::order)) return compute();
  Key k;
  memo::zero(k);
  k.tp = place.tp(), k.cp = place.cp(), k.dp = place.dp(), k.pp = place.pp();
  k.ep = place.ep(), k.etp = place.etp(), k.gpn = place.gpus_per_node();
  k.nodes_per_leaf = place.nodes_per_leaf();
  k.dp_shard = place.dp_shard();
  k.hpz = place.hpz();
  k.qgz = place.qgz();
  std::memcpy(k.order, order.data(), order.size());
  thread_local memo::Table<Key, PlacementShapes, 1024> table;
  return table.get(k, compute);
}

bool same_layout(const ChunkLayers& a, const ChunkLayers& b) {
  return a.layers == b.layers && a.moe_layers == b.moe_layers && a.first == b.first && a.last == b.last;
}

// A pipeline send across a tapered leaf: alone_s with the uplinks carrying its direction's
// sends, both_s with the other direction's as well (RankPlacement::pp_pair_shape). In the
// steady state a boundary carries one send each way per micro-batch slot of slot_s, so the
// other direction's transfer shares the uplinks for about min(1, t / slot_s) of a send that
// lasts t, and t = alone_s + (both_s - alone_s) min(1, t / slot_s). Its fixed point: a send
// that fits its slot even at the shared rate takes alone_s slot_s / (slot_s - (both_s -
// alone_s)); one that does not runs beside the other direction throughout (both_s): a
// pipeline paced by its transfers.
double pp_send_under_taper_s(double alone_s, double both_s, double slot_s) {
  const double extra_s = both_s - alone_s;
  if (extra_s <= 0) return alone_s;
  if (both_s >= slot_s) return both_s;
  return alone_s * slot_s / (slot_s - extra_s);
}

}  // namespace

bool build_workload(const Scenario& sc, Workload& w, Result& r, const WorkloadOptions& options) {
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
  const int etp = m.moe ? p.expert_tp : tp;
  const PipelineSchedule& schedule = plan_pipeline_schedule(p.schedule, p.pp);
  // As PipelineRunner splits them: zero-bubble schedules and DualPipe run B and W apart.
  const bool split = schedule.splits_backward();
  const int gpn = c.gpus_per_node;
  const int micro_batches = static_cast<int>(p.global_batch / (p.micro_batch * dp));
  r.micro_batches = micro_batches;
  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab);
  const double seq = static_cast<double>(m.seq_len);
  const double tokens_step = static_cast<double>(p.global_batch) * seq;
  r.tokens_per_step = tokens_step;
  const StepFlops flops = step_flops(m, p.recompute, tokens_step, p.recompute_modules, p.recompute_early_stop);
  r.model_flops_per_step = flops.model;
  r.hardware_flops_per_step = flops.hardware;

  // ---- placement: the groups each rank talks in, and their shapes on the fabric ----
  const FabricTerms fabric = fabric_terms(c);
  const CollectiveAlgo algo = plan_algo(p);
  const CollectiveProtocol protocol = parsed<CollectiveProtocol>(p.collective_protocol, [](const std::string& n) {
    return collective_protocol_from_string(n, "plan.collective_protocol");
  });
  // The cost-only route memoises every priced part under this environment (memo.hpp).
  const uint32_t env = options.keep_programs ? 0 : memo::environment_id(m, gpu, fabric);
  w.placement = RankPlacement(tp, cp, dp, pp, p.placement, m.moe ? ep : 1, etp, gpn, nodes_per_leaf(c));
  if (c.network.oversubscription > 1) w.placement.set_leaves(c.nodes, leaf_rails(c));
  w.placement.set_dp_shard(p.zero_stage >= 1 ? p.dp_shard : 0);
  w.placement.set_hpz(p.zero_stage >= 3 ? p.zero_hpz_partition_size : 0);
  w.placement.set_qgz(p.zero_stage >= 3 && p.zero_quantized_gradients);
  const RankPlacement& place = w.placement;
  const PlacementShapes shapes = placement_shapes(place, p.placement, env != 0);
  for (int k = 0; k < kCommGroups; ++k) w.group_shapes[k] = shapes.worst[k];
  const GroupShape& tp_group = w.group_shapes[static_cast<int>(CommGroup::kTp)];
  const GroupShape dp_group = w.group_shapes[static_cast<int>(CommGroup::kDp)];
  const GroupShape expert_dp_group =
      m.moe ? w.group_shapes[static_cast<int>(CommGroup::kExpertDp)] : GroupShape{};
  // The ranks the dense model states are sharded over (the DP group unless plan.dp_shard), and
  // the replicas of a shard under a dp_shard (none without).
  const GroupShape dp_shard_group = w.group_shapes[static_cast<int>(CommGroup::kDpShard)];
  const GroupShape dp_replica_group = w.group_shapes[static_cast<int>(CommGroup::kDpReplicate)];
  const int dense_shard_ranks = dp_shard_group.ranks;

  // ---- model chunks: which layers and parameters each pipeline device holds ----
  const Precision states = state_precision(p);
  const StateBytes sb = state_bytes(p);
  const double sigma = overlap_slowdown(gpu);
  w.overlap_slowdown = sigma;
  w.split_backward = split;
  const ChunkLayout layout(m, p, schedule);
  const int chunks = layout.chunks();
  w.programs.assign(options.keep_programs ? pp : 0, DeviceProgram{});
  w.stages.assign(pp, StageWork{});
  const LayerParams dense_lp = layer_params(m, false);
  const LayerParams moe_lp = m.moe ? layer_params(m, true) : dense_lp;
  auto chunk_dense_params = [&](const ChunkLayers& cl) {
    const int dense_n = cl.layers - cl.moe_layers;
    double params = dense_n * dense_lp.dense_per_tp_rank(tp) + cl.moe_layers * moe_lp.dense_per_tp_rank(tp);
    const double vocab_split = p.vocab_parallel ? tp : 1;  // plan.vocab_parallel
    if (cl.first) params += v * h / vocab_split;
    if (cl.last && (pp > 1 || !m.tied_embeddings)) params += v * h / vocab_split;
    return params;
  };
  auto chunk_expert_params = [&](const ChunkLayers& cl) {
    return cl.moe_layers * moe_lp.experts / (static_cast<double>(m.moe ? ep : 1) * etp);
  };
  for (int d = 0; d < pp; ++d) {
    StageWork& sw = w.stages[d];
    sw.first = d == 0;
    sw.last = d == pp - 1;
    for (int k = 0; k < chunks; ++k) {
      const ChunkLayers& cl = layout.chunk(d, k);
      sw.layers += cl.layers;
      sw.moe_layers += cl.moe_layers;
      sw.dense_params += chunk_dense_params(cl);
      sw.expert_params += chunk_expert_params(cl);
      if (cl.first) sw.params_final_at_end = v * h / (p.vocab_parallel ? tp : 1);
    }
  }
  // A MoE layer's routed-expert parameters on one GPU.
  const double layer_expert_params = m.moe ? moe_lp.experts / (double(ep) * etp) : 0.0;
  const double largest_layer_params =
      std::max(dense_lp.dense_per_tp_rank(tp) - dense_lp.norms,
               m.moe ? moe_lp.dense_per_tp_rank(tp) - moe_lp.norms + layer_expert_params : 0.0);
  // Per-parameter ZeRO-3 collectives pass each tensor through a flat buffer of its size
  // (largest_zero3_tensor_params): the largest tensor's gathered parameters or its gradients.
  const double zero3_flat_buffer_params =
      p.zero_stage >= 3 && p.zero3_per_parameter
          ? std::max(largest_zero3_tensor_params(m, ep, false, dense_lp.dense_per_tp_rank(tp), 0),
                     m.moe ? largest_zero3_tensor_params(m, ep, true, moe_lp.dense_per_tp_rank(tp), layer_expert_params)
                           : 0.0)
          : 0.0;
  double max_stage_params = 0, max_stage_dense = 0, max_stage_expert = 0;
  for (const StageWork& sw : w.stages)
    if (sw.dense_params + sw.expert_params > max_stage_params) {
      max_stage_params = sw.dense_params + sw.expert_params;
      max_stage_dense = sw.dense_params;
      max_stage_expert = sw.expert_params;
    }
  const double zero_degree = p.zero_stage >= 1 ? dense_shard_ranks : 1;
  const double opt_params = max_stage_dense / zero_degree +
                            max_stage_expert / (p.zero_stage >= 1 ? expert_dp_group.ranks : 1);

  // ---- memory per stage (before any time: a plan that does not fit is rejected cheaply) ----
  ActivationOptions ao;
  ao.tp = tp;
  ao.cp = cp;
  ao.sp = p.sp;
  ao.recompute = p.recompute;
  ao.recompute_modules = p.recompute_modules;
  ao.flash_attention = p.flash_attention;
  ao.micro_batch = static_cast<double>(p.micro_batch);
  ao.vocab_parallel = p.vocab_parallel;
  ao.fused_loss = p.fused_loss;
  ao.fp8_cache = p.fp8_activation_cache && p.precision == Precision::kFp8;
  const double act_dense = layer_activation_bytes(m, false, ao);
  const double act_moe = m.moe ? layer_activation_bytes(m, true, ao) : act_dense;
  r.per_stage.resize(pp);
  double offload_act_s = 0;
  // Compression applies to the ZeRO-0/1/2 gradient reduction only (warned below), so only
  // there does its error-feedback residual take memory.
  bool error_feedback = false;
  for (const auto& st : p.compression)
    if (p.zero_stage < 3 && compression_effect(st, h).error_feedback_buffer) {
      error_feedback = true;
      break;
    }
  const double first_extra = first_stage_extra_activation_bytes(m, ao);
  const double last_extra = last_stage_extra_activation_bytes(m, ao);
  for (int s = 0; s < pp; ++s) {
    const StageWork& sw = w.stages[s];
    StageMemory& sm = r.per_stage[s];
    sm.stage = s;
    sm.layers = sw.layers;
    sm.in_flight_micro_batches = schedule.in_flight_micro_batches(pp, vpp, s, micro_batches);
    MemoryBreakdown dense = model_state_bytes(sw.dense_params, p.zero_stage, dense_shard_ranks, sb);
    MemoryBreakdown expert = model_state_bytes(sw.expert_params, p.zero_stage, expert_dp_group.ranks, sb);
    MemoryBreakdown& b = sm.breakdown;
    b.params_bytes = dense.params_bytes + expert.params_bytes;
    b.grads_bytes = dense.grads_bytes + expert.grads_bytes;
    b.optimizer_bytes = dense.optimizer_bytes + expert.optimizer_bytes;
    if (p.offload.optimizer) {
      // The host runs Adam, so each gradient streams to it as it is produced (the PCIe transfer
      // counted above): the GPU holds one layer's gradients, as DeepSpeed's ZeRO-Offload
      // estimator counts no gradient state on the GPU beyond the largest layer's (memory.hpp).
      b.optimizer_bytes = 0;
      b.grads_bytes = std::min(b.grads_bytes, largest_layer_params * sb.grads);
    }
    if (p.offload.params) b.params_bytes = 2 * largest_layer_params * sb.params;
    // ZeRO++'s hpZ keeps a secondary copy of the 16-bit parameters sharded over its partition.
    if (const int hpz = w.group_shapes[static_cast<int>(CommGroup::kDpSecondary)].ranks; p.zero_stage >= 3 && hpz > 1)
      b.params_bytes += sw.dense_params * sb.params / hpz;
    const double per_mb = (sw.layers - sw.moe_layers) * act_dense + sw.moe_layers * act_moe;
    double act = per_mb * sm.in_flight_micro_batches;
    if (sw.first) act += first_extra * sm.in_flight_micro_batches;
    if (sw.last) act += last_extra;
    if (p.offload.activations && sw.layers > 0) {
      // Only the layer being computed and the one being prefetched stay on the GPU.
      const double kept = 2.0 / sw.layers;
      offload_act_s = std::max(offload_act_s, 2 * act * (1 - kept) / c.pcie_bandwidth_bytes_per_s);
      act *= kept;
    }
    b.activations_bytes = act;
    b.other_bytes = kFrameworkReserveBytes;
    // Two buckets in flight, each at most the stage's own gradients: Megatron's max(40M, 1M x dp)
    // rule sizes a bucket, but a stage with fewer parameters fills one bucket with all of them.
    if (dp_group.ranks > 1)
      b.other_bytes += 2 * std::min(dp_bucket_params(dp), sw.dense_params + sw.expert_params) * sb.grads /
                       (p.zero_stage >= 2 ? 1 : 2);
    if (p.zero_stage >= 3) {
      // The layer being computed, gathered whole, and the prefetch buffer: the next layer, or
      // as many parameters as plan.zero3_prefetch_params bounds it to.
      b.other_bytes +=
          (largest_layer_params + zero3_prefetched_params(p.zero3_prefetch_params, largest_layer_params)) * sb.params +
          zero3_flat_buffer_params * std::max(sb.params, sb.grads);
    }
    if (error_feedback) b.other_bytes += (sw.dense_params + sw.expert_params) * sb.grads;
    sm.total_bytes = b.total();
    if (sm.total_bytes > r.peak_memory_bytes) {
      r.peak_memory_bytes = sm.total_bytes;
      r.peak_breakdown = b;
    }
  }

  // ---- warnings and memory feasibility ----
  if (tp_group.nodes > 1) {
    if (tp > gpn) r.warnings.push_back("plan.tp spans nodes: tensor-parallel traffic crosses the NICs");
    else r.warnings.push_back("plan.tp (" + str(tp) + ") does not divide cluster.gpus_per_node (" + str(gpn) +
                              "): some tensor-parallel groups straddle two nodes and their traffic crosses the NICs");
  }
  if (cp > 1 && w.group_shapes[static_cast<int>(CommGroup::kCp)].nodes > 1 &&
      place.straddles(place.cp_group(0)))
    r.warnings.push_back("plan.cp groups straddle node boundaries");
  if (tp > m.kv_heads) r.warnings.push_back("plan.tp exceeds model.kv_heads: KV heads are replicated");
  if (layers_split_unevenly(m, p)) {
    std::string split;
    for (int l : stage_layer_split(m, p)) split += (split.empty() ? "" : ",") + str(l);
    r.warnings.push_back("model.layers (" + str(m.layers) + ") does not divide plan.pp x plan.vpp: layers per stage " +
                         split + " (the embedding and the loss count as a layer each; plan.layers_per_stage sets another split)");
  }
  for (std::string& unused : unused_plan_fields(sc)) r.warnings.push_back(std::move(unused));
  if (std::string note = schedule.order_note(pp, micro_batches); !note.empty()) r.warnings.push_back(std::move(note));
  if (pp > 1 && schedule.steps_overlap())
    r.warnings.push_back("plan.schedule \"" + std::string(schedule.name()) +
                         "\": timed with back-to-back steps that overlap, as the zero-bubble runtime runs them "
                         "(no barrier at the optimizer step; post-validation rolls back an invalid update): a "
                         "runtime that synchronises the stages there adds the pipeline fill to every step");
  if (p.zero_stage >= 3 && !p.compression.empty())
    r.warnings.push_back("plan.compression is not applied under ZeRO-3: its per-layer gradient reduce-scatters "
                         "and parameter all-gathers are modelled uncompressed");
  if (r.peak_memory_bytes > gpu.hbm_capacity_bytes) {
    int worst = 0;
    for (int s = 0; s < pp; ++s)
      if (r.per_stage[s].total_bytes > r.per_stage[worst].total_bytes) worst = s;
    const MemoryBreakdown& b = r.per_stage[worst].breakdown;
    r.feasible = false;
    r.reason = (Text() << "out of memory: pipeline stage " << worst << " needs " << gib(r.peak_memory_bytes) << " but "
                       << gpu.name << " has " << gib(gpu.hbm_capacity_bytes) << " (params " << gib(b.params_bytes)
                       << ", grads " << gib(b.grads_bytes) << ", optimizer " << gib(b.optimizer_bytes)
                       << ", activations " << gib(b.activations_bytes) << ", other " << gib(b.other_bytes) << ")")
                    .str();
  }
  // A plan that fits with little headroom: PyTorch's caching allocator, short of a free block of
  // the size asked, frees its cache and retries the allocation (the num_alloc_retries counter of
  // torch.cuda.memory_stats), synchronizing the device each time; steps slow by an amount this
  // model does not price. kTightMemoryShare marks where that becomes likely.
  if (r.feasible && r.peak_memory_bytes > kTightMemoryShare * gpu.hbm_capacity_bytes)
    r.warnings.push_back((Text() << "memory: the peak (" << gib(r.peak_memory_bytes) << ") is above "
                                 << static_cast<int64_t>(100 * kTightMemoryShare) << "% of " << gpu.name << "'s "
                                 << gib(gpu.hbm_capacity_bytes)
                                 << ": the caching allocator may free and retry allocations, slowing steps (not modelled)")
                             .str());
  if (r.feasible && (p.offload.optimizer || p.offload.params)) {
    double host_per_gpu = 0;
    if (p.offload.optimizer) host_per_gpu += opt_params * (sb.optimizer + sb.grads);
    if (p.offload.params) host_per_gpu += max_stage_params * sb.params;
    if (host_per_gpu * gpn > c.host_memory_bytes) {
      r.feasible = false;
      r.reason = (Text() << "offload needs " << gib(host_per_gpu * gpn)
                         << " of host memory per node but cluster.host_memory is " << gib(c.host_memory_bytes))
                     .str();
    }
  }
  if (!r.feasible && options.stop_when_infeasible) return false;

  // ---- the op graph: one program per (device, chunk, pass) ----
  LayerContext ctx;
  ctx.model = &m;
  ctx.gpu = &gpu;
  ctx.fabric = fabric;
  ctx.algo = algo;
  ctx.protocol = protocol;
  for (int k = 0; k < kCommGroups; ++k) ctx.shape[k] = w.group_shapes[k];
  ctx.tp = tp;
  ctx.cp = cp;
  ctx.ep = m.moe ? ep : 1;
  ctx.etp = etp;
  ctx.dp = dp;
  ctx.sp = p.sp;
  ctx.micro_batch = static_cast<double>(p.micro_batch);
  ctx.precision = p.precision;
  ctx.recompute = p.recompute;
  ctx.recompute_modules = piecewise_recompute(p.recompute, p.recompute_modules);
  ctx.flash_attention = p.flash_attention;
  ctx.attention_kernel = fused_attention_kernel(p.attention_kernel);
  ctx.overlap_tp = p.overlap.tp;
  ctx.zero_stage = p.zero_stage;
  ctx.zero3_prefetch_params = p.zero3_prefetch_params;
  ctx.zero3_per_parameter = p.zero3_per_parameter;
  ctx.zero_quantized_weights = p.zero_stage >= 3 && p.zero_quantized_weights;
  ctx.zero_quantized_gradients = p.zero_stage >= 3 && p.zero_quantized_gradients;
  ctx.moe_dispatcher = p.moe_dispatcher;
  ctx.grad_accumulation_fusion = p.grad_accumulation_fusion;
  ctx.autocast = states != p.precision;
  ctx.vocab_parallel = p.vocab_parallel;
  ctx.attention_relayout = p.attention_relayout;
  ctx.fused_loss = p.fused_loss;
  ctx.recompute_early_stop = p.recompute_early_stop;
  ctx.micro_batches = micro_batches;
  ctx.activation_bytes = activation_bytes(p.precision);
  ctx.param_bytes = sb.params;
  ctx.grad_bytes = sb.grads;
  ctx.memo_env = env;
  // The step's tensor-busy share, from the layer kind most of the model is made of.
  ctx.power_share = memo_layer_power_share(ctx, m.moe.has_value() && 2 * m.moe->dense_layers < m.layers);
  ctx.slowest_gpu = slowest_gpu_slowdown(gpu, tp * cp * dp * pp);

  double traffic_per_gpu[kCommPurposes][2] = {};  // [purpose][0: first stage's GPU, 1: all GPUs]
  const double stage_gpus = static_cast<double>(tp) * cp * dp;
  const PassKind kinds[] = {PassKind::kForward, split ? PassKind::kBackwardInput : PassKind::kBackward,
                            PassKind::kBackwardWeight};
  const int passes = split ? 3 : 2;
  uint32_t contexts[3] = {0, 0, 0};
  if (env != 0) context_ids(ctx, kinds, passes, contexts);
  // A stage's figures are per micro-batch: interleaving takes every micro-batch through each
  // of the device's chunks, DualPipe takes each through one of its two (its direction's), so a
  // chunk counts for the share of the micro-batches that visit it.
  const double visits = static_cast<double>(schedule.layer_chunks(p.vpp)) / chunks;
  const bool by_direction = schedule.bidirectional() && pp > 1;  // stage_costs reads them
  const bool pairs = by_direction && schedule.overlaps_forward_backward() && chunks == 2;
  // Pairs left for price_pairs: the context they are priced in, the layouts per device below.
  const bool defer = pairs && options.defer_pairs && !options.keep_programs;
  Workload::PendingPairs& pending = w.pending_pairs;
  pending.pending = defer;
  pending.chunks.clear();
  if (defer) {
    pending.ctx = ctx;
    std::copy(contexts, contexts + 3, pending.contexts);
    pending.backward = PassKind::kBackward;  // a pair runs the whole backward (pick_partner)
    pending.sigma = sigma;
  }
  // The cost-only route reuses the previous device's passes when its chunks are laid out alike
  // (the middle stages of an even split): the same sums of the same passes.
  double previous_traffic[kCommPurposes] = {};
  for (int d = 0; d < pp; ++d) {
    StageWork& sw = w.stages[d];
    double stage_traffic[kCommPurposes] = {};
    bool reuse = !options.keep_programs && d > 0;
    for (int k = 0; reuse && k < chunks; ++k) reuse = same_layout(layout.chunk(d, k), layout.chunk(d - 1, k));
    if (reuse) {
      const StageWork& prev = w.stages[d - 1];
      sw.forward_s = prev.forward_s;
      sw.forward_compute_s = prev.forward_compute_s;
      sw.backward_s = prev.backward_s;
      sw.backward_compute_s = prev.backward_compute_s;
      sw.backward_weight_s = prev.backward_weight_s;
      sw.async_busy_s = prev.async_busy_s;
      sw.async_tail_s = prev.async_tail_s;
      std::copy(prev.comm_busy_s, prev.comm_busy_s + kCommPurposes, sw.comm_busy_s);
      sw.tp_comm_s = prev.tp_comm_s;
      sw.cp_comm_s = prev.cp_comm_s;
      sw.ep_comm_s = prev.ep_comm_s;
      sw.zero3_comm_s = prev.zero3_comm_s;
      sw.compute_sq_s2 = prev.compute_sq_s2;
      for (int k = 0; k < 2; ++k) {
        sw.direction_forward_s[k] = prev.direction_forward_s[k];
        sw.direction_backward_s[k] = prev.direction_backward_s[k];
        sw.direction_backward_weight_s[k] = prev.direction_backward_weight_s[k];
        sw.direction_forward_beyond_compute_s[k] = prev.direction_forward_beyond_compute_s[k];
        sw.direction_backward_beyond_compute_s[k] = prev.direction_backward_beyond_compute_s[k];
        for (int b = 0; b < 2; ++b) sw.pair_s[k][b] = prev.pair_s[k][b];
      }
      std::copy(previous_traffic, previous_traffic + kCommPurposes, stage_traffic);
    }
    for (int k = 0; k < chunks && !reuse; ++k) {
      const ChunkLayers& cl = layout.chunk(d, k);
      ChunkProgram* ch = nullptr;
      if (options.keep_programs) {
        w.programs[d].chunks.emplace_back();
        ch = &w.programs[d].chunks.back();
        ch->layers = cl.layers;
        ch->moe_layers = cl.moe_layers;
        ch->first = cl.first;
        ch->last = cl.last;
        ch->dense_params = chunk_dense_params(cl);
        ch->expert_params = chunk_expert_params(cl);
      }
      for (int i = 0; i < passes; ++i) {
        PassSummary ps;
        if (ch) {
          PassProgram& prog = ch->program(kinds[i]);
          prog = pass_program(ctx, cl, kinds[i]);
          ps = summarize_pass(prog, sigma);
        } else {
          ps = memo_pass(ctx, contexts[i], cl, kinds[i], sigma);
        }
        const PassCost& pc = ps.cost;
        sw.compute_sq_s2 += visits * ps.compute_sq_s2;
        for (int t = 0; t < kCommPurposes; ++t) {
          stage_traffic[t] += ps.traffic[t] * visits * micro_batches;
          sw.comm_busy_s[t] += visits * ps.comm_busy_s[t];
        }
        const bool fwd = kinds[i] == PassKind::kForward;
        if (fwd) {
          sw.forward_s += visits * pc.time_s;
          sw.forward_compute_s += visits * pc.compute_s;
        } else {
          sw.backward_s += visits * pc.time_s;
          sw.backward_compute_s += visits * pc.compute_s;
          sw.async_busy_s += visits * pc.async_busy_s;
          sw.async_tail_s = std::max(sw.async_tail_s, pc.async_tail_s);
        }
        // The W part: the weight-gradient pass, or the weight-gradient GEMMs inside B + W.
        const double weight_s = kinds[i] == PassKind::kBackwardWeight ? pc.time_s
                                : kinds[i] == PassKind::kBackward    ? ps.wgrad_compute_s
                                                                     : 0.0;
        if (!fwd) sw.backward_weight_s += visits * weight_s;
        if (by_direction) {  // each direction's stage alone
          (fwd ? sw.direction_forward_s : sw.direction_backward_s)[k] += pc.time_s;
          sw.direction_backward_weight_s[k] += weight_s;
          (fwd ? sw.direction_forward_beyond_compute_s : sw.direction_backward_beyond_compute_s)[k] +=
              pc.time_s - pc.compute_s;
        }
        sw.tp_comm_s += visits * pc.exposed_s[static_cast<int>(CommPurpose::kTp)];
        sw.cp_comm_s += visits * pc.exposed_s[static_cast<int>(CommPurpose::kCp)];
        sw.ep_comm_s += visits * pc.exposed_s[static_cast<int>(CommPurpose::kEp)];
        sw.zero3_comm_s += visits * pc.exposed_s[static_cast<int>(CommPurpose::kDp)];
      }
    }
    if (pairs && defer) {
      for (int k = 0; k < 2; ++k) w.pending_pairs.chunks.push_back(layout.chunk(d, k));
    } else if (pairs && !reuse) {
      const ChunkLayers cl[2] = {layout.chunk(d, 0), layout.chunk(d, 1)};
      DeviceProgram* kept = options.keep_programs ? &w.programs[d] : nullptr;
      // A pair runs the forward beside the whole backward, B + W (PipelineRunner::pick_partner).
      const PairCosts pc =
          pair_costs(ctx, contexts, cl, PassKind::kBackward, sigma, kept, kept ? &kept->paired : nullptr);
      std::copy(&pc.s[0][0], &pc.s[0][0] + 4, &sw.pair_s[0][0]);
    }
    std::copy(stage_traffic, stage_traffic + kCommPurposes, previous_traffic);
    for (int k = 0; k < kCommPurposes; ++k) {
      if (d == 0) traffic_per_gpu[k][0] = stage_traffic[k];
      traffic_per_gpu[k][1] += stage_traffic[k] * stage_gpus;
    }
  }
  double worst_fb = 0;
  for (const StageWork& sw : w.stages) worst_fb = std::max(worst_fb, sw.forward_s + sw.backward_s);
  const double mb_time = worst_fb;

  // ---- pipeline ----
  const double act_bytes = static_cast<double>(p.micro_batch) * seq / cp * h * activation_bytes(p.precision);
  double pp_p2p_s = 0;
  w.p2p_boundary_s.clear();
  if (pp > 1) {
    // Scatter-gather optimisation: each TP rank sends 1/tp of the activation (SC'21 sec. 4.1).
    const double bytes = act_bytes / tp;
    // A micro-batch crosses the boundaries of the virtual stages it visits, its activation
    // forward and its gradient back: interleaving's p v - 1, DualPipe's p - 1 in its direction.
    const int visited = schedule.layer_chunks(p.vpp);
    // Each boundary at its own pair's price (TransferDelays, timeline.hpp): boundary d joins
    // devices d and d + 1; the last joins device p - 1 to device 0, which only chunks of
    // interleaved stages cross. Neighbouring boundaries of one shape share a price. The slowest
    // boundary's is the workload's p2p_s.
    w.p2p_boundary_s.assign(static_cast<std::size_t>(pp), 0.0);
    // Interleaved chunks also cross from the last device to the first; DualPipe's two
    // directions run over the same pairs.
    const bool ring = visited > 1 && !schedule.bidirectional();
    auto send_s = [&](const GroupShape& g) {
      return memo::collective_cost(env, CollectiveOp::kSendRecv, algo, protocol, bytes, g, fabric).time_s;
    };
    GroupShape priced{}, priced_both{};
    double alone_s = -1, both_s = 0;
    for (int d = 0; d < (visited > 1 ? pp : pp - 1); ++d) {
      const int next = (d + 1) % pp;
      GroupShape both;
      const GroupShape pair = place.pp_pair_shape(d, next, ring, &both);
      if (alone_s < 0 || pair != priced || both != priced_both) {
        alone_s = send_s(pair);
        both_s = both == pair ? alone_s : send_s(both);
      }
      priced = pair;
      priced_both = both;
      // The slower device's time per micro-batch and crossing paces its sends.
      const auto& a = w.stages[static_cast<std::size_t>(d)];
      const auto& b = w.stages[static_cast<std::size_t>(next)];
      const double slot_s = std::max(a.forward_s + a.backward_s, b.forward_s + b.backward_s) / visited;
      const double price = pp_send_under_taper_s(alone_s, both_s, slot_s);
      w.p2p_boundary_s[static_cast<std::size_t>(d)] = price;
      pp_p2p_s = std::max(pp_p2p_s, price);
    }
    const double sends = 2.0 * micro_batches * visited;
    r.pp_bytes = sends * bytes;
    // Every stage boundary, both directions, every TP rank of every replica.
    const double boundaries = static_cast<double>(pp) * visited - 1;
    traffic_per_gpu[static_cast<int>(CommPurpose::kPp)][1] =
        2.0 * micro_batches * boundaries * bytes * tp * cp * dp;
  }

  // ---- data parallel gradient reduction (ZeRO-0/1/2), per compression stage ----
  // ZeRO-0 all-reduces the gradients. ZeRO-1/2 reduce-scatter them to the ranks that own their
  // optimizer shard and all-gather the updated parameters (ZeRO paper sec. 5; Megatron's
  // distributed optimizer; DeepSpeed stage 1/2), in the parameters' own precision. A compressed
  // reduction stays one compressed all-reduce.
  auto sharded_reduction = [&](const CompressionStage* stage) {
    return p.zero_stage >= 1 && !(stage && stage->method != "none");
  };
  auto dp_time = [&](const CompressionStage* stage) {
    CompressionEffect ce;
    if (stage) ce = compression_effect(*stage, h, sb.grads);
    const bool sharded = sharded_reduction(stage);
    auto price = [&](CollectiveOp op, double bytes, const GroupShape& g) {
      return memo::collective_cost(env, op, algo, protocol, bytes, g, fabric).time_s;
    };
    // g: the reduction's group (the shard group when sharded); replicas: a dp_shard's copies of
    // each shard (gradient_reduction.hpp). A compressed reduction stays one compressed
    // all-reduce (or an all-gather of sparse values).
    auto reduce = [&](double params, const GroupShape& g, const GroupShape& replicas) {
      double s = 0;
      if (sharded || !stage)
        s = gradient_reduction_s({sharded, sb.grads, sb.params, g, replicas}, params, price);
      else if (g.ranks > 1 && params > 0)
        s = ce.needs_allgather ? price(CollectiveOp::kAllGather, params * sb.grads * ce.wire_ratio * g.ranks, g)
                               : ce.all_reduces * price(CollectiveOp::kAllReduce,
                                                        params * sb.grads * ce.wire_ratio / ce.all_reduces, g);
      if (stage && s > 0) s += compression_kernel_time_s(*stage, ce, params, g.ranks, sb.grads, gpu);
      return s;
    };
    // Overlapped with the backward, the reduction runs bucket by bucket (Megatron-LM's
    // max(40M, 1M x dp) parameters, dp_bucket_params), a collective each, each paying its
    // latency; without overlap, one collective of the whole buffer after the backward.
    auto bucketed = [&](double params, const GroupShape& g, const GroupShape& replicas) {
      if (!p.overlap.dp) return reduce(params, g, replicas);
      const double bucket = dp_bucket_params(dp);
      const double full = std::floor(params / bucket);
      return full * reduce(bucket, g, replicas) + reduce(params - full * bucket, g, replicas);
    };
    return (sharded ? bucketed(max_stage_dense, dp_shard_group, dp_replica_group) : bucketed(max_stage_dense, dp_group, {})) +
           bucketed(max_stage_expert, expert_dp_group, {});
  };
  // Bytes one GPU sends reducing `dense` and `expert` gradients (a ring all-reduce's 2 (n-1)/n
  // of each buffer, over its data-parallel and its expert-data-parallel group).
  // as_all_reduce: the bytes of one all-reduce of the gradients whatever the ZeRO stage.
  auto stage_dp_bytes = [&](const CompressionStage* stage, double dense, double expert, bool as_all_reduce = false) {
    CompressionEffect ce;
    if (stage) ce = compression_effect(*stage, h, sb.grads);
    // A ring all-reduce sends 2 (n-1)/n of the buffer; a reduce-scatter and an all-gather
    // (n-1)/n of theirs each.
    const bool sharded = !as_all_reduce && sharded_reduction(stage);
    const double buffers = sharded ? sb.grads + sb.params : 2 * sb.grads * ce.wire_ratio;
    auto part = [&](double params, double n) { return n > 1 ? params * buffers * (n - 1) / n : 0.0; };
    // Under a dp_shard the reduce-scatter and all-gather run over the shard group and the
    // shard's all-reduce over its replicas: 2 (r-1)/r of the 1/s shard.
    const double s = dp_shard_group.ranks, r = dp_replica_group.ranks;
    const double dense_bytes = sharded ? part(dense, s) + (r > 1 ? dense / s * sb.grads * 2 * (r - 1) / r : 0.0)
                                       : part(dense, dp_group.ranks);
    return dense_bytes + part(expert, expert_dp_group.ranks);
  };
  auto dp_bytes = [&](const CompressionStage* stage) { return stage_dp_bytes(stage, max_stage_dense, max_stage_expert); };
  // Average over the training run when compression stages change with the step.
  double dp_s = 0, dp_bytes_avg = 0;
  if (p.zero_stage < 3) {
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
        const double end = i + 1 < p.compression.size() ? std::min<double>(steps, p.compression[i + 1].from_step) : steps;
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
  const int kDpIndex = static_cast<int>(CommPurpose::kDp);
  r.dp_bytes = dp_bytes_avg + traffic_per_gpu[kDpIndex][0];
  // Gradient buckets of every stage's groups: each rank sends its share of its stage's
  // reductions, at the run's average compression (dp_bytes_avg is the largest stage's).
  {
    const double base = dp_bytes(nullptr);
    const double ratio = base > 0 ? dp_bytes_avg / base : 0;
    for (const StageWork& sw : w.stages)
      traffic_per_gpu[kDpIndex][1] += ratio * stage_dp_bytes(nullptr, sw.dense_params, sw.expert_params) * stage_gpus;
  }

  // ---- optimizer step ----
  // The fused AdamW over this GPU's parameters: a calibration's measured rate (and its zeroing of
  // the gradients), else the kernel model's (compute_op_time_s, docs/compute-model.md).
  const OpRates& rates = gpu.op_rates;
  ComputeOp adam;
  adam.kind = ComputeKind::kOptimizer;
  adam.role = OpRole::kOptimizer;
  adam.elements = opt_params;
  adam.bytes = opt_params * optimizer_bytes_per_param(states, grad_reduce_precision(p) == Precision::kFp32,
                                                      adam_moment_bytes(p));
  double optimizer_s = rates.present() ? optimizer_time_from_op_rates(rates, opt_params, max_stage_params)
                                       : compute_op_time_s(gpu, adam);
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
  offload_s += std::max(0.0, offload_act_s - micro_batches * mb_time);

  r.tp_bytes = traffic_per_gpu[static_cast<int>(CommPurpose::kTp)][0];
  r.cp_bytes = traffic_per_gpu[static_cast<int>(CommPurpose::kCp)][0];
  r.ep_bytes = traffic_per_gpu[static_cast<int>(CommPurpose::kEp)][0];

  // ---- what the step plays ----
  w.schedule = &schedule;
  w.tp = tp;
  w.pp = pp;
  w.dp = dp;
  w.cp = cp;
  w.ep = m.moe ? ep : 1;
  w.etp = etp;
  w.vpp = vpp;
  w.micro_batches = micro_batches;
  w.p2p_bytes = pp > 1 ? act_bytes / tp : 0;
  w.p2p_s = pp_p2p_s;
  w.fabric = fabric;
  w.algo = algo;
  w.protocol = protocol;
  w.dp_group = dp_group;
  w.dp_shard_group = dp_shard_group;
  w.dp_replica_group = dp_replica_group;
  w.expert_dp_group = expert_dp_group;
  w.grad_bytes_per_param = sb.grads;
  w.param_bytes_per_param = sb.params;
  w.dp_sharded = sharded_reduction(nullptr) &&
                 std::all_of(p.compression.begin(), p.compression.end(),
                             [&](const CompressionStage& st) { return sharded_reduction(&st); });
  w.dp_bucket_params = dp_bucket_params(dp);
  w.overlap_dp = p.overlap.dp;
  w.zero_stage = p.zero_stage;
  w.optimizer_s = optimizer_s;
  w.offload_s = offload_s;
  {
    // The simulate tier plays each bucket as the uncompressed reduction of its kind (sharded or
    // one all-reduce) carrying the run's average bytes, and waits what the compressed
    // reduction's time adds beyond those flows (its kernels, its own collectives' latency).
    const double base = dp_time(nullptr);
    w.dp_time_ratio = base > 0 ? dp_s / base : 1.0;
    const double played = stage_dp_bytes(nullptr, max_stage_dense, max_stage_expert, !w.dp_sharded);
    w.dp_wire_ratio = played > 0 ? dp_bytes_avg / played : 1.0;
    // The replicas reach the reduction apart: each ran the step's micro-batches alone since the
    // step began (a DP group synchronises nowhere else), so the wait is for the slowest of them.
    double sq = 0;
    for (const StageWork& sw : w.stages) sq = std::max(sq, sw.compute_sq_s2 * micro_batches);
    w.dp_arrival_wait_s = dp_s > 0 ? arrival_wait_s(gpu.op_rates.op_time_cv, sq, dp_group.ranks) : 0;
    for (int s = 0; s < pp; ++s) {
      const double scale = max_stage_params > 0 ? (w.stages[s].dense_params + w.stages[s].expert_params) / max_stage_params : 0;
      w.stages[s].dp_reduce_s = dp_s * scale + (scale > 0 ? w.dp_arrival_wait_s : 0);
    }
  }
  for (int k = 0; k < kCommPurposes; ++k) w.traffic_bytes[k] = traffic_per_gpu[k][1];
  return true;
}

void price_pairs(Workload& w) {
  Workload::PendingPairs& pending = w.pending_pairs;
  if (!pending.pending) return;
  for (std::size_t d = 0; d < w.stages.size(); ++d) {
    const PairCosts pc = pair_costs(pending.ctx, pending.contexts, &pending.chunks[2 * d], pending.backward,
                                    pending.sigma, nullptr, nullptr);
    std::copy(&pc.s[0][0], &pc.s[0][0] + 4, &w.stages[d].pair_s[0][0]);
  }
  pending.pending = false;
}

}  // namespace trainsim
