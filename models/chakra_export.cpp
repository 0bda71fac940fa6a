#include "models/chakra_export.hpp"

#include <map>
#include <queue>
#include <tuple>

#include "models/result.hpp"
#include "models/scenario_error.hpp"
#include "models/schedule_order.hpp"
#include "models/workload.hpp"

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
  Workload w;
  Result result;
  if (!build_workload(sc, w, result) || !result.feasible)
    throw ScenarioError("plan", "cannot export this plan: " + result.reason);
  PipelineRunner runner(w.schedule, w.pp, w.vpp, w.micro_batches);
  const int n = runner.devices();
  const int chunks = w.schedule == ScheduleKind::kDualPipe ? 2 : std::max(1, w.vpp);
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
  // Per-op compute of one chunk: the stage's per-micro-batch work split evenly over its chunks.
  auto duration_s = [&](int device, const PipeOp& op) {
    const StageWork& s = w.stages[std::min<std::size_t>(device, w.stages.size() - 1)];
    const double b_only = s.backward_s - s.backward_weight_s;
    switch (op.kind) {
      case PipeOpKind::kForward: return s.forward_s / chunks;
      case PipeOpKind::kBackward:
        return (op.with_weight_grad ? s.backward_s : b_only) / chunks;
      case PipeOpKind::kBackwardWeight: return s.backward_weight_s / chunks;
    }
    return 0.0;
  };
  auto op_name = [](const PipeOp& op) {
    const char* k = op.kind == PipeOpKind::kForward ? "F" : op.kind == PipeOpKind::kBackward ? "B" : "W";
    return std::string(k) + "_mb" + std::to_string(op.micro_batch) + "_c" + std::to_string(op.chunk);
  };
  // Inputs waiting on a device: (device, op) -> recv node id.
  std::map<std::tuple<int, int, int, int>, int64_t> pending_recv;
  auto key = [](int d, const PipeOp& op) {
    return std::make_tuple(d, static_cast<int>(op.kind), op.micro_batch, op.chunk);
  };
  // The op on a device that produced a local input (F -> B on the last stage, B -> W).
  std::map<std::tuple<int, int, int, int>, int64_t> local_input;
  std::map<std::tuple<int, int, int, int>, int64_t> comp_id;
  std::map<std::tuple<int, int, int, int>, int64_t> arrival_tag;

  // Play the schedule with the workload's durations (as timeline.cpp does) to get each rank's
  // op order; the trace records order and durations, not start times.
  struct Event {
    double time;
    int64_t seq;
    bool completion;
    int device;
    PipeOp op;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::vector<bool> busy(n, false);
  int64_t seq = 0;
  auto dispatch = [&](double now) {
    for (int d = 0; d < n; ++d) {
      if (busy[d]) continue;
      auto op = runner.pick(d);
      if (!op) continue;
      std::vector<int64_t> deps;
      if (auto it = pending_recv.find(key(d, *op)); it != pending_recv.end()) {
        deps.push_back(it->second);
        pending_recv.erase(it);
      }
      if (auto it = local_input.find(key(d, *op)); it != local_input.end()) {
        deps.push_back(it->second);
        local_input.erase(it);
      }
      json node = {{"name", op_name(*op)},
                   {"type", kChakraComp},
                   {"duration_micros", micros(duration_s(d, *op))},
                   {"micro_batch", op->micro_batch},
                   {"chunk", op->chunk},
                   {"pass", op->kind == PipeOpKind::kForward ? "forward"
                            : op->kind == PipeOpKind::kBackward ? "backward"
                                                                : "backward_weight"}};
      const int64_t id = add(d, node, deps);
      comp_id[key(d, *op)] = id;
      if (op->kind != PipeOpKind::kForward) ranks[d].last_backward_id = id;
      busy[d] = true;
      events.push({now + duration_s(d, *op), seq++, true, d, *op});
    }
  };
  dispatch(0.0);
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    if (e.completion) {
      busy[e.device] = false;
      const int64_t producer = comp_id[key(e.device, e.op)];
      for (const Handoff& h : runner.finish(e.device, e.op)) {
        if (h.p2p) {
          const int64_t tag = next_tag++;
          const bool activation = h.op.kind == PipeOpKind::kForward;
          json send = {{"name", std::string(activation ? "send_act_" : "send_grad_") + op_name(e.op)},
                       {"type", kChakraSend},
                       {"duration_micros", micros(w.p2p_s)},
                       {"comm_size", w.p2p_bytes},
                       {"comm_src", e.device},
                       {"comm_dst", h.device},
                       {"comm_tag", tag}};
          add(e.device, send, {producer});
          // The matching receive is placed on the destination when the data arrives.
          arrival_tag[key(h.device, h.op)] = tag;
          events.push({e.time + w.p2p_s, seq++, false, h.device, h.op});
        } else {
          local_input[key(h.device, h.op)] = producer;
          runner.arrive(h);
        }
      }
    } else {
      // Arrival: place the recv node on the destination rank now.
      const int64_t tag = arrival_tag[key(e.device, e.op)];
      json recv = {{"name", std::string(e.op.kind == PipeOpKind::kForward ? "recv_act_" : "recv_grad_") + op_name(e.op)},
                   {"type", kChakraRecv},
                   {"duration_micros", micros(w.p2p_s)},
                   {"comm_size", w.p2p_bytes},
                   {"comm_dst", e.device},
                   {"comm_tag", tag}};
      pending_recv[key(e.device, e.op)] = add(e.device, recv, {});
      runner.arrive(Handoff{e.device, e.op, true});
    }
    if (events.empty() || events.top().time > e.time) dispatch(e.time);
  }
  if (!runner.done())
    throw ScenarioError("plan.schedule", "the schedule did not complete every op (internal)");

  // Data-parallel gradient reduction of each stage after its last backward (one bucketed
  // all-reduce here; bucketing and overlap are the estimate's business).
  std::vector<json> out;
  for (int d = 0; d < n; ++d) {
    const StageWork& s = w.stages[std::min<std::size_t>(d, w.stages.size() - 1)];
    if (w.dp * w.cp > 1) {
      json ar = {{"name", "dp_allreduce_grads"},
                 {"type", kChakraCommColl},
                 {"comm_type", "ALL_REDUCE"},
                 {"comm_size", (s.dense_params + s.expert_params) * w.grad_bytes_per_param},
                 {"comm_group_size", w.dp * w.cp},
                 {"duration_micros", micros(s.dp_reduce_s)}};
      add(d, ar, ranks[d].last_backward_id >= 0 ? std::vector<int64_t>{ranks[d].last_backward_id}
                                                : std::vector<int64_t>{});
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
