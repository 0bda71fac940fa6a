#include "sim/collective_engine.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace trainsim::sim {

double CollectiveResult::busbw_bytes_per_s() const {
  return algbw_bytes_per_s() * bus_bandwidth_factor(op, ranks);
}

namespace {

// Stages up to this many transfers play one activity per transfer; larger ones are bundled
// into about kMaxActivities activities.
constexpr std::size_t kExactFlows = 4096;
constexpr std::size_t kMaxActivities = 2048;

struct Running : std::enable_shared_from_this<Running> {
  Platform* platform = nullptr;
  CollectivePlan plan;
  CollectiveResult result;
  CollectiveEngine::Callback on_done;
  uint64_t id = 0;
  std::size_t stage = 0;
  double stage_start_s = 0;
  // flow stage
  std::size_t outstanding = 0;
  double max_bandwidth_s = 0;
  std::vector<double> group_latency;  // route latency of each activity of the stage
  std::size_t activities = 0;         // SimGrid activities started over the whole plan
  // ring-step stage, per ring: last step whose send finished / whose chunk arrived, per rank
  std::vector<std::vector<int>> send_done, recv_done;

  void start_stage() {
    if (stage >= plan.stages.size()) {
      result.end_s = platform->now_s();
      result.time_s = result.end_s - result.start_s;
      if (activities > 0) result.activities = activities;
      if (on_done) on_done(result);
      return;
    }
    stage_start_s = platform->now_s();
    const auto& s = plan.stages[stage];
    if (s.ring_steps)
      start_ring_steps(s.steps);
    else
      start_flows(s.flow);
  }

  void finish_stage() {
    ++stage;
    start_stage();
  }

  void start_flows(const FlowStage& f) {
    max_bandwidth_s = 0;
    const auto& ts = f.transfers;
    // Large stages play consecutive transfers of equal size (consecutive ring / tree edges of
    // one channel) as one bundled activity each (Platform::start_bundle): SimGrid's per-activity
    // bookkeeping is linear in the activities in flight, so 30k single flows cost ~N^2; a
    // bundle keeps every link's load and progresses at its most contended link's share, as a
    // pipelined channel does.
    // Transfers of one size stay in plan order (consecutive edges of a ring / tree).
    std::vector<std::size_t> order(ts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::vector<std::pair<std::size_t, std::size_t>> groups;  // ranges of `order`
    if (ts.size() > kExactFlows) {
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return ts[a].bytes < ts[b].bytes; });
      const std::size_t per = (ts.size() + kMaxActivities - 1) / kMaxActivities;
      for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i + 1;
        while (j < order.size() && j - i < per &&
               std::fabs(ts[order[j]].bytes - ts[order[i]].bytes) <= 1e-9 * ts[order[i]].bytes)
          ++j;
        groups.emplace_back(i, j);
        i = j;
      }
    } else {
      for (std::size_t i = 0; i < ts.size(); ++i) groups.emplace_back(i, i + 1);
    }
    outstanding = groups.size();
    activities += groups.size();
    if (outstanding == 0) {
      auto self = shared_from_this();
      platform->after(f.min_bandwidth_s + f.latency_s, [self] { self->finish_stage(); });
      return;
    }
    group_latency.assign(groups.size(), 0.0);
    std::vector<Platform::Hop> hops;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      hops.clear();
      for (std::size_t k = groups[g].first; k < groups[g].second; ++k)
        hops.push_back({ts[order[k]].src_gpu, ts[order[k]].dst_gpu, ts[order[k]].channel});
      const uint64_t salt = id * 0x9e3779b97f4a7c15ull + g;
      auto self = shared_from_this();
      group_latency[g] = platform->start_bundle(
          hops, ts[order[groups[g].first]].bytes,
          [self, g] {
            // The flow paid its route latency once; the stage's latency is added below.
            self->max_bandwidth_s =
                std::max(self->max_bandwidth_s,
                         self->platform->now_s() - self->stage_start_s - self->group_latency[g]);
            if (--self->outstanding == 0) {
              const auto& st = self->plan.stages[self->stage].flow;
              const double end = self->stage_start_s +
                                 std::max(self->max_bandwidth_s, st.min_bandwidth_s) + st.latency_s;
              self->platform->after(end - self->platform->now_s(), [self] { self->finish_stage(); });
            }
          },
          salt);
    }
  }

  void start_ring_steps(const RingStepStage& s) {
    outstanding = 0;
    send_done.assign(s.rings.size(), {});
    recv_done.assign(s.rings.size(), {});
    for (std::size_t r = 0; r < s.rings.size(); ++r) {
      send_done[r].assign(s.rings[r].size(), s.steps - 1);  // step 0 in flight (see try_advance)
      recv_done[r].assign(s.rings[r].size(), -1);
      outstanding += s.rings[r].size() * static_cast<std::size_t>(s.steps);
    }
    activities += outstanding;
    if (outstanding == 0 || s.steps == 0) {
      finish_stage();
      return;
    }
    for (std::size_t r = 0; r < s.rings.size(); ++r)
      for (std::size_t i = 0; i < s.rings[r].size(); ++i) send_step(r, i, 0);
  }

  void send_step(std::size_t r, std::size_t i, int k) {
    const auto& s = plan.stages[stage].steps;
    const auto& ring = s.rings[r];
    const std::size_t next = (i + 1) % ring.size();
    auto self = shared_from_this();
    const uint64_t salt = id * 0x9e3779b97f4a7c15ull + (r << 20) + i;
    platform->start_transfer(
        ring[i], ring[next], s.chunk_bytes,
        [self, r, i, next, k] {
          self->send_done[r][i] = k;
          self->recv_done[r][next] = k;
          if (--self->outstanding == 0) {
            self->finish_stage();
            return;
          }
          self->try_advance(r, i);
          self->try_advance(r, next);
        },
        salt);
  }

  // Rank i starts step k+1 once its step-k send is done and the step-k chunk has arrived.
  void try_advance(std::size_t r, std::size_t i) {
    const auto& s = plan.stages[stage].steps;
    const int k = send_done[r][i];
    if (k + 1 >= s.steps || recv_done[r][i] < k) return;
    send_done[r][i] = k + s.steps;  // mark "step k+1 in flight" (restored on its completion)
    send_step(r, i, k + 1);
  }
};

}  // namespace

void CollectiveEngine::start(const PlanRequest& request, Callback on_done) {
  start(make_plan(platform_.topology(), request), request, std::move(on_done));
}

void CollectiveEngine::start(CollectivePlan plan, const PlanRequest& request, Callback on_done) {
  auto run = std::make_shared<Running>();
  run->platform = &platform_;
  run->id = next_id_++;
  run->result.op = request.op;
  run->result.algo = plan.algo;
  run->result.protocol = plan.protocol;
  run->result.model = plan.model;
  run->result.ranks = static_cast<int>(request.group.size());
  run->result.bytes = request.bytes;
  run->result.start_s = platform_.now_s();
  run->result.channels = plan.channels;
  run->result.transfers = plan.transfer_count();
  run->plan = std::move(plan);
  run->on_done = std::move(on_done);
  run->start_stage();
}

CollectiveResult CollectiveEngine::run_one(const PlanRequest& request) {
  CollectiveResult out;
  start(request, [&out](const CollectiveResult& r) { out = r; });
  platform_.run();
  return out;
}

}  // namespace trainsim::sim
