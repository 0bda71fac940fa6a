// One data-parallel reduction of a set of gradients (ZeRO-0/1/2), composed of collectives: the
// one place both tiers take its shape from (the estimate prices a Megatron bucket with it, the
// simulate tier the closed form of a bucket it plays as flows).
#pragma once

#include "models/cost/collectives/collective_cost.hpp"

namespace trainsim {

struct GradientReduction {
  // ZeRO-1/2 (ZeRO paper sec. 5; Megatron's distributed optimizer): a reduce-scatter of the
  // gradients to the ranks that own their optimizer shard, then an all-gather of the updated
  // parameters, over the shard group; under plan.dp_shard the reduced shard is all-reduced over
  // its replicas between the two (Megatron-Core's partial distributed optimizer, FSDP's hybrid
  // ZeRO-2). Otherwise (ZeRO-0) one all-reduce of the gradients over `group`.
  bool sharded = false;
  double grad_bytes_per_param = 2;
  double param_bytes_per_param = 2;
  GroupShape group;
  GroupShape replicas;  // ranks 1: none
};

// Seconds to reduce `params` parameters' gradients; price(op, bytes, shape) is one collective's
// time (bytes per rank, as nccl-tests counts them).
template <class Price>
double gradient_reduction_s(const GradientReduction& r, double params, Price&& price) {
  if (params <= 0) return 0.0;
  const double grad_bytes = params * r.grad_bytes_per_param;
  if (!r.sharded) return r.group.ranks > 1 ? price(CollectiveOp::kAllReduce, grad_bytes, r.group) : 0.0;
  double s = 0;
  if (r.group.ranks > 1)
    s = price(CollectiveOp::kReduceScatter, grad_bytes, r.group) +
        price(CollectiveOp::kAllGather, params * r.param_bytes_per_param, r.group);
  if (r.replicas.ranks > 1) s += price(CollectiveOp::kAllReduce, grad_bytes / r.group.ranks, r.replicas);
  return s;
}

}  // namespace trainsim
