#include "models/interop/chakra_export.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <tuple>

#include "models/core/result.hpp"
#include "models/core/scenario_error.hpp"
#include "models/schedules/schedule_order.hpp"
#include "models/workload/cost_bounds.hpp"
#include "models/workload/timeline.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

double micros(double s) { return s * 1e6; }

struct RankTrace {
  json nodes = json::array();
  int64_t last_id = -1;  // the previous node on this rank (ctrl_deps chain)
  int64_t last_backward_id = -1;
};

}  // namespace

std::vector<json> export_chakra(const Scenario& sc) {
  // Before anything is built: a trace holds a node per op and per hand-off.
  const CostCheck bounds = check_cost_bounds(sc, CostTier::kChakraExport);
  if (!bounds.within) throw ScenarioError("plan", "cannot export this plan: " + bounds.reason);
  Workload w;
  Result result;
  if (!build_workload(sc, w, result) || !result.feasible)
    throw ScenarioError("plan", "cannot export this plan: " + result.reason);
  const int n = w.pp;
  std::vector<RankTrace> ranks(n);
  int64_t next_id = 0;
  int64_t next_tag = 0;
  auto add = [&](int rank, json node, std::vector<int64_t> data_deps) {
    RankTrace& r = ranks[rank];
    node["id"] = next_id++;
    node["ctrl_deps"] = r.last_id >= 0 ? json::array({r.last_id}) : json::array();
    node["data_deps"] = data_deps;
    r.last_id = node["id"].get<int64_t>();
    r.nodes.push_back(node);
    return r.last_id;
  };
  auto op_name = [](const PipeOp& op) {
    const char* k = op.kind == PipeOpKind::kForward ? "F" : op.kind == PipeOpKind::kBackward ? "B" : "W";
    return std::string(k) + "_mb" + std::to_string(op.micro_batch) + "_c" + std::to_string(op.chunk);
  };
  auto key = [](int d, const PipeOp& op) {
    return std::make_tuple(d, static_cast<int>(op.kind), op.micro_batch, op.chunk);
  };
  using Key = std::tuple<int, int, int, int>;

  // The op order and the handoffs come from playing the schedule with the workload's per-chunk
  // durations (the same playback as the estimate's timeline, stage_costs in workload.hpp); the
  // trace records order, dependencies and durations, not start times.
  std::vector<StageCosts> costs;
  for (const StageWork& s : w.stages) costs.push_back(stage_costs(w, s));
  struct Exporter : PlaybackObserver {
    std::function<int64_t(int, json, std::vector<int64_t>)> add;
    std::function<std::string(const PipeOp&)> name;
    std::function<Key(int, const PipeOp&)> key;
    std::vector<RankTrace>* ranks = nullptr;
    const Workload* w = nullptr;
    int64_t* next_tag = nullptr;
    std::map<Key, int64_t> pending_recv, local_input, comp_id, arrival_tag;
    std::map<Key, double> arrival_s;  // the transfer time of the input on its way
    const std::vector<StageCosts>* costs = nullptr;
    std::vector<std::size_t> last_node;  // per device: the index of its latest compute node

    double alone_s(int d, const PipeOp& op) const {
      return stage_op_cost((*costs)[std::min<std::size_t>(d, costs->size() - 1)], op);
    }

    void started(int d, const PipeOp& op, double start_s, double end_s, const PipeOp* beside) override {
      // The forward of an overlapped pair: the pair's time is shared between its two nodes in
      // proportion to their times alone, so the rank's chain of nodes lasts what the pair does.
      double duration = end_s - start_s;
      std::size_t& last = last_node[static_cast<std::size_t>(d)];
      if (beside) {
        const double b = alone_s(d, *beside), f = alone_s(d, op);
        if (b + f > 0) {
          (*ranks)[d].nodes[last]["duration_micros"] = micros(duration * b / (b + f));
          duration *= f / (b + f);
        }
      }
      std::vector<int64_t> deps;
      if (auto it = pending_recv.find(key(d, op)); it != pending_recv.end()) {
        deps.push_back(it->second);
        pending_recv.erase(it);
      }
      if (auto it = local_input.find(key(d, op)); it != local_input.end()) {
        deps.push_back(it->second);
        local_input.erase(it);
      }
      json node = {{"name", name(op)},
                   {"type", kChakraComp},
                   {"duration_micros", micros(duration)},
                   {"micro_batch", op.micro_batch},
                   {"chunk", op.chunk},
                   {"pass", op.kind == PipeOpKind::kForward    ? "forward"
                            : op.kind == PipeOpKind::kBackward ? "backward"
                                                               : "backward_weight"}};
      const int64_t id = add(d, node, deps);
      last = (*ranks)[d].nodes.size() - 1;
      comp_id[key(d, op)] = id;
      if (op.kind != PipeOpKind::kForward) (*ranks)[d].last_backward_id = id;
    }
    void handed_off(int d, const PipeOp& op, const Handoff& h, double) override {
      const int64_t producer = comp_id[key(d, op)];
      if (!h.p2p) {
        local_input[key(h.device, h.op)] = producer;
        return;
      }
      const int64_t tag = (*next_tag)++;
      const bool activation = h.op.kind == PipeOpKind::kForward;
      const double transfer_s = w->p2p_delays().between(d, h.device, w->pp);  // this boundary's
      json send = {{"name", std::string(activation ? "send_act_" : "send_grad_") + name(op)},
                   {"type", kChakraSend},
                   {"duration_micros", micros(transfer_s)},
                   {"comm_size", w->p2p_bytes},
                   {"comm_src", d},
                   {"comm_dst", h.device},
                   {"comm_tag", tag}};
      add(d, send, {producer});
      // The matching receive is placed on the destination when the data arrives.
      arrival_tag[key(h.device, h.op)] = tag;
      arrival_s[key(h.device, h.op)] = transfer_s;
    }
    void arrived(const Handoff& h, double) override {
      json recv = {{"name", std::string(h.op.kind == PipeOpKind::kForward ? "recv_act_" : "recv_grad_") + name(h.op)},
                   {"type", kChakraRecv},
                   {"duration_micros", micros(arrival_s[key(h.device, h.op)])},
                   {"comm_size", w->p2p_bytes},
                   {"comm_dst", h.device},
                   {"comm_tag", arrival_tag[key(h.device, h.op)]}};
      pending_recv[key(h.device, h.op)] = add(h.device, recv, {});
    }
  } exporter;
  exporter.add = add;
  exporter.name = op_name;
  exporter.key = key;
  exporter.ranks = &ranks;
  exporter.w = &w;
  exporter.next_tag = &next_tag;
  exporter.costs = &costs;
  exporter.last_node.assign(static_cast<std::size_t>(n), 0);
  try {
    play_schedule(*w.schedule, w.pp, w.vpp, w.micro_batches, costs, w.p2p_delays(), &exporter);
  } catch (const std::logic_error&) {
    throw ScenarioError("plan.schedule", "the schedule did not complete every op (internal)");
  }

  // Data-parallel gradient reduction of each stage after its last backward (one bucketed
  // all-reduce here, or ZeRO-1/2's reduce-scatter and all-gather, workload.hpp; bucketing and
  // overlap are the estimate's business). The closed form's time is split between the two in
  // proportion to their bytes. ZeRO-3 has none: its reduce-scatters (and gathers) run layer by
  // layer inside the passes, whose nodes' durations hold what of them the compute leaves exposed.
  std::vector<json> out;
  for (int d = 0; d < n; ++d) {
    const StageWork& s = w.stages[std::min<std::size_t>(d, w.stages.size() - 1)];
    if (w.dp * w.cp > 1 && w.zero_stage < 3) {
      const double params = s.dense_params + s.expert_params;
      const std::vector<int64_t> after_backward =
          ranks[d].last_backward_id >= 0 ? std::vector<int64_t>{ranks[d].last_backward_id} : std::vector<int64_t>{};
      if (w.dp_sharded) {
        // Under plan.dp_shard the two run over the shard group and the reduced shard is
        // all-reduced across its replicas between them (time split by bytes as well).
        const int shard = w.dp_shard_group.ranks, replicas = w.dp_replica_group.ranks;
        const double rs_bytes = params * w.grad_bytes_per_param, ag_bytes = params * w.param_bytes_per_param;
        const double ar_bytes = replicas > 1 ? rs_bytes / std::max(1, shard) : 0;
        const double total = std::max(1.0, rs_bytes + ag_bytes + ar_bytes);
        json rs = {{"name", "dp_reduce_scatter_grads"},
                   {"type", kChakraCommColl},
                   {"comm_type", "REDUCE_SCATTER"},
                   {"comm_size", rs_bytes},
                   {"comm_group_size", shard},
                   {"duration_micros", micros(s.dp_reduce_s * rs_bytes / total)}};
        int64_t before_gather = add(d, rs, after_backward);
        if (ar_bytes > 0) {
          json ar = {{"name", "dp_all_reduce_shard_replicas"},
                     {"type", kChakraCommColl},
                     {"comm_type", "ALL_REDUCE"},
                     {"comm_size", ar_bytes},
                     {"comm_group_size", replicas},
                     {"duration_micros", micros(s.dp_reduce_s * ar_bytes / total)}};
          before_gather = add(d, ar, std::vector<int64_t>{before_gather});
        }
        json ag = {{"name", "dp_all_gather_params"},
                   {"type", kChakraCommColl},
                   {"comm_type", "ALL_GATHER"},
                   {"comm_size", ag_bytes},
                   {"comm_group_size", shard},
                   {"duration_micros", micros(s.dp_reduce_s * ag_bytes / total)}};
        add(d, ag, std::vector<int64_t>{before_gather});
      } else {
        json ar = {{"name", "dp_allreduce_grads"},
                   {"type", kChakraCommColl},
                   {"comm_type", "ALL_REDUCE"},
                   {"comm_size", params * w.grad_bytes_per_param},
                   {"comm_group_size", w.dp * w.cp},
                   {"duration_micros", micros(s.dp_reduce_s)}};
        add(d, ar, after_backward);
      }
    }
    // Fill comm_src of receives from their tag's send.
    std::map<int64_t, int> src_of_tag;
    for (int e = 0; e < n; ++e)
      for (const json& node : ranks[e].nodes)
        if (node["type"] == kChakraSend) src_of_tag[node["comm_tag"].get<int64_t>()] = e;
    for (json& node : ranks[d].nodes)
      if (node["type"] == kChakraRecv) node["comm_src"] = src_of_tag[node["comm_tag"].get<int64_t>()];
    json trace = {{"schema", "chakra-json"},
                  {"schema_note", "JSON form of the Chakra ET node schema (et_def.proto)"},
                  {"rank", d},
                  {"global_rank", static_cast<int64_t>(d) * w.tp * w.cp * w.dp},
                  {"pipeline_stage", d},
                  {"world", {{"tp", w.tp}, {"pp", w.pp}, {"dp", w.dp}, {"cp", w.cp}, {"ep", w.ep}}},
                  {"micro_batches", w.micro_batches},
                  {"schedule", sc.plan.schedule},
                  {"scenario", sc.name},
                  {"nodes", std::move(ranks[d].nodes)}};
    out.push_back(std::move(trace));
  }
  return out;
}

}  // namespace trainsim
