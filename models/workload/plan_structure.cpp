#include "models/workload/plan_structure.hpp"

#include <algorithm>
#include <cstdint>

#include "models/schedules/pipeline_schedule.hpp"
#include "models/scenario/limits.hpp"

namespace trainsim {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

bool layers_split_unevenly(const ModelSpec& m, const ParallelPlan& p) {
  const int64_t stages = int64_t{p.pp} * p.vpp;
  return static_cast<int64_t>(p.layers_per_stage.size()) != stages && stages > 0 && m.layers % stages != 0;
}

int stage_layers(const ModelSpec& m, const ParallelPlan& p, int i) {
  const int s = p.pp * p.vpp;
  if (static_cast<int>(p.layers_per_stage.size()) == s) return p.layers_per_stage[static_cast<std::size_t>(i)];
  if (m.layers % s == 0) return m.layers / s;
  const int places = m.layers + 2;  // the embedding and the loss take one each
  const int q = places / s, extra = places % s;
  if (q >= 2) return q + (i >= s - extra ? 1 : 0) - (i == 0 ? 1 : 0) - (i == s - 1 ? 1 : 0);
  const int q_even = m.layers / s, extra_even = m.layers % s;
  return q_even + (i >= s - extra_even ? 1 : 0);
}

std::vector<int> stage_layer_split(const ModelSpec& m, const ParallelPlan& p) {
  std::vector<int> out(static_cast<std::size_t>(p.pp * p.vpp));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = stage_layers(m, p, static_cast<int>(i));
  return out;
}

std::string check_plan_structure(const Scenario& sc) {
  const ModelSpec& m = sc.model;
  const ClusterSpec& c = sc.cluster;
  const ParallelPlan& p = sc.plan;
  const int64_t gpus = c.total_gpus();
  // Degrees and batch sizes may come from code as well as from the loader: every product is
  // checked (limits.hpp), none may wrap.
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.ep < 1 || p.vpp < 1)
    return "plan.tp, plan.pp, plan.dp, plan.cp, plan.ep and plan.vpp must be >= 1";
  if (p.micro_batch < 1 || p.global_batch < 1)
    return "plan.micro_batch and plan.global_batch must be >= 1";
  const int64_t inner = limits::checked_product(
      limits::checked_product(p.tp, p.pp, limits::kMaxGpus), p.cp, limits::kMaxGpus);
  const int64_t used = inner < 0 ? -1 : limits::checked_product(inner, p.dp, limits::kMaxGpus);
  if (used < 0)
    return "plan.tp x plan.pp x plan.dp x plan.cp = " + str(p.tp) + "x" + str(p.pp) + "x" +
           str(p.dp) + "x" + str(p.cp) + " exceeds " + str(limits::kMaxGpus) +
           " GPUs, the most a cluster may have";
  if (p.dp_from_gpus && gpus % inner != 0)
    return "plan.tp x plan.pp x plan.cp = " + str(inner) +
           " does not divide the cluster's " + str(gpus) + " GPUs";
  if (used != gpus)
    return "plan.tp x plan.pp x plan.dp x plan.cp = " + str(p.tp) + "x" + str(p.pp) + "x" +
           str(p.dp) + "x" + str(p.cp) + " = " + str(used) + " GPUs, but the cluster has " +
           str(gpus) + " (" + str(c.nodes) + " nodes x " + str(c.gpus_per_node) + ")";
  if (m.heads % p.tp != 0)
    return "plan.tp: " + str(p.tp) + " does not divide model.heads (" + str(m.heads) + ")";
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    return "plan.tp: " + str(p.tp) + " and model.kv_heads (" + str(m.kv_heads) +
           ") do not divide one another";
  if (m.ffn_hidden % p.tp != 0)
    return "plan.tp: " + str(p.tp) + " does not divide model.ffn_hidden (" + str(m.ffn_hidden) + ")";
  const int64_t chunks = int64_t{p.pp} * p.vpp;
  if (!p.layers_per_stage.empty()) {
    if (static_cast<int64_t>(p.layers_per_stage.size()) != chunks)
      return "plan.layers_per_stage has " + str(p.layers_per_stage.size()) +
             " entries, expected plan.pp x plan.vpp = " + str(chunks);
    int64_t sum = 0;
    for (int l : p.layers_per_stage) sum += l;
    if (sum != m.layers)
      return "plan.layers_per_stage sums to " + str(sum) + ", expected model.layers (" +
             str(m.layers) + ")";
  } else if (m.layers < chunks) {
    return "model.layers (" + str(m.layers) + ") is fewer than plan.pp x plan.vpp = " + str(chunks) +
           " stages: every stage needs a layer";
  }
  const int64_t per_micro_batch = limits::checked_product(p.micro_batch, p.dp, limits::kMaxGlobalBatch);
  if (per_micro_batch < 0)
    return "plan.global_batch (" + str(p.global_batch) + ") is smaller than plan.micro_batch x plan.dp (" +
           str(p.micro_batch) + " x " + str(p.dp) + ")";
  if (p.global_batch / per_micro_batch > limits::kMaxMicroBatchesPerStep)
    return "plan.global_batch / (plan.micro_batch x plan.dp) = " + str(p.global_batch / per_micro_batch) +
           " micro-batches per step; at most " + str(limits::kMaxMicroBatchesPerStep) + " are supported";
  if (p.global_batch % per_micro_batch != 0)
    return "plan.global_batch (" + str(p.global_batch) + ") is not a multiple of plan.micro_batch x plan.dp (" +
           str(p.micro_batch) + " x " + str(p.dp) + ")";
  if (m.seq_len % p.cp != 0)
    return "plan.cp: " + str(p.cp) + " does not divide model.seq_len (" + str(m.seq_len) + ")";
  if (p.sp && (m.seq_len / p.cp) % p.tp != 0)
    return "plan.sp needs model.seq_len / plan.cp to be a multiple of plan.tp";
  if (p.sp && p.tp > 1 && !p.vocab_parallel)
    return "plan.vocab_parallel = false needs plan.sp off: a replicated output layer reads the whole "
           "sequence, which sequence parallelism splits";
  if (p.ep > 1) {
    if (!m.moe) return "plan.ep = " + str(p.ep) + " but the model has no experts (model.moe)";
    if (m.moe->experts % p.ep != 0)
      return "plan.ep: " + str(p.ep) + " does not divide model.moe.experts (" + str(m.moe->experts) + ")";
    if ((int64_t{p.dp} * p.cp) % p.ep != 0)
      return "plan.ep: " + str(p.ep) + " must divide plan.dp x plan.cp (" +
             str(int64_t{p.dp} * p.cp) + "): experts are spread over data-parallel ranks";
  }
  if (m.moe) {
    // MoE parallel folding (Megatron-Core): each expert group's expert TP x EP x expert DP ranks
    // are the attention's TP x CP x DP ranks of a stage, folded another way.
    const int64_t block = int64_t{p.tp} * p.cp * p.dp;
    const int64_t etp_ep = int64_t{p.expert_tp} * p.ep;
    if (p.expert_tp < 1 || block % etp_ep != 0)
      return "plan.expert_tp x plan.ep = " + str(p.expert_tp) + " x " + str(p.ep) +
             " must divide plan.tp x plan.cp x plan.dp (" + str(block) +
             "): the expert groups fold into the ranks of a pipeline stage";
    if (m.moe->expert_ffn_hidden % p.expert_tp != 0)
      return "plan.expert_tp: " + str(p.expert_tp) + " does not divide model.moe.expert_ffn_hidden (" +
             str(m.moe->expert_ffn_hidden) + ")";
  }
  if (p.dp_shard < 0 || (p.dp_shard > 0 && p.dp % p.dp_shard != 0))
    return "plan.dp_shard: " + str(p.dp_shard) + " does not divide plan.dp (" + str(p.dp) + ")";
  if (p.dp_shard > 0 && p.dp_shard != p.dp && p.zero_stage < 1)
    return "plan.dp_shard: ZeRO-0 shards nothing: sharding over part of the data-parallel group needs "
           "plan.zero_stage 1, 2 or 3";
  if (p.zero_plus_plus()) {
    if (p.zero_stage < 3)
      return "plan.zero_hpz_partition_size, plan.zero_quantized_weights and plan.zero_quantized_gradients are "
             "ZeRO++'s, for plan.zero_stage 3; got zero_stage " + str(p.zero_stage);
    const int shard = p.dp_shard > 0 ? p.dp_shard : p.dp;
    if (p.zero_hpz_partition_size > 1 && shard % p.zero_hpz_partition_size != 0)
      return "plan.zero_hpz_partition_size: " + str(p.zero_hpz_partition_size) + " does not divide the ranks the "
             "parameters are sharded over (" + str(shard) + ")";
  }
  if (c.gpu.peak_flops(p.precision) <= 0)
    return std::string("plan.precision \"") + to_string(p.precision) + "\" is not supported by " +
           c.gpu.name + " (no peak rate for it)";
  const int64_t m_count = p.global_batch / per_micro_batch;  // <= kMaxMicroBatchesPerStep
  const PipelineSchedule* schedule = find_pipeline_schedule(p.schedule);
  if (!schedule) return "plan.schedule \"" + p.schedule.substr(0, 64) + "\" is not a pipeline schedule";
  std::string sched = schedule->constraint(p.pp, p.vpp, static_cast<int>(m_count));
  if (!sched.empty()) return sched;
  return "";
}

std::vector<std::string> unused_plan_fields(const Scenario& sc) {
  const ParallelPlan& p = sc.plan;
  std::vector<std::string> out;
  if (p.recompute != Recompute::kSelective && !(p.recompute_modules == RecomputeModules{}))
    out.push_back(std::string("plan.recompute_modules is unused: it names what plan.recompute \"selective\" "
                              "recomputes, and plan.recompute is \"") +
                  (p.recompute == Recompute::kFull ? "full" : "none") + "\"");
  if (p.recompute != Recompute::kFull && p.recompute_early_stop)
    out.push_back("plan.recompute_early_stop is unused: it applies under plan.recompute \"full\"");
  if (p.zero_stage < 3 && p.zero3_prefetch_params > 0)
    out.push_back("plan.zero3_prefetch_params is unused: it bounds ZeRO-3's parameter prefetch, and plan.zero_stage is " +
                  std::to_string(p.zero_stage));
  if (p.zero_stage < 3 && p.zero3_per_parameter)
    out.push_back("plan.zero3_collectives is unused: it says how ZeRO-3 gathers its parameters, and plan.zero_stage is " +
                  std::to_string(p.zero_stage));
  bool fp8 = p.precision == Precision::kFp8;
  for (const PrecisionStage& st : p.precision_stages) fp8 = fp8 || st.precision == Precision::kFp8;
  if (!fp8 && p.fp8_activation_cache)
    out.push_back("plan.fp8_activation_cache is unused: no step trains in fp8 (plan.precision, plan.precision_stages)");
  if (!sc.model.moe && p.moe_dispatcher != MoeDispatcher::kAllToAll)
    out.push_back("plan.moe_dispatcher is unused: the model has no experts (model.moe)");
  if (p.pp <= 1 && p.schedule != default_pipeline_schedule().name())
    out.push_back("plan.schedule \"" + p.schedule + "\" is unused: plan.pp is 1, so there is no pipeline and each "
                  "micro-batch runs its forward then its backward");
  if (!p.flash_attention && p.attention_kernel != "flash2")
    out.push_back("plan.attention_kernel is unused: plan.flash_attention is false (unfused attention)");
  return out;
}

}  // namespace trainsim
