#include "sim/step_trace.hpp"

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::sim {
namespace {

using nlohmann::json;

std::string op_name(const PipeOp& op) {
  return std::string(to_string(op.kind)) + " mb" + std::to_string(op.micro_batch) + " c" +
         std::to_string(op.chunk);
}
double us(double s) { return s * 1e6; }

}  // namespace

void write_step_trace(std::ostream& out, const StepTimeline& tl, const LinkStats* stats,
                      const std::vector<DirectedLink>& links) {
  json ev = json::array();
  const int n = static_cast<int>(tl.busy_s.size());
  const char* tracks[] = {"compute", "p2p send", "p2p recv", "dp reduction", "expert dp reduction"};
  for (int s = 0; s < n; ++s) {
    ev.push_back({{"ph", "M"}, {"pid", s}, {"name", "process_name"},
                  {"args", {{"name", "stage " + std::to_string(s)}}}});
    ev.push_back({{"ph", "M"}, {"pid", s}, {"name", "process_sort_index"}, {"args", {{"sort_index", s}}}});
    for (int t = 0; t < 5; ++t)
      ev.push_back({{"ph", "M"}, {"pid", s}, {"tid", t}, {"name", "thread_name"}, {"args", {{"name", tracks[t]}}}});
  }
  for (const StepOpRecord& op : tl.ops) {
    ev.push_back({{"ph", "X"}, {"pid", op.stage}, {"tid", kTrackCompute}, {"name", op_name(op.op)},
                  {"cat", "compute"}, {"ts", us(op.start_s)}, {"dur", us(op.end_s - op.start_s)},
                  {"args", {{"micro_batch", op.op.micro_batch}, {"chunk", op.op.chunk}}}});
    if (op.free_s > op.end_s)
      ev.push_back({{"ph", "X"}, {"pid", op.stage}, {"tid", kTrackCompute}, {"name", "wait send"},
                    {"cat", "p2p"}, {"ts", us(op.end_s)}, {"dur", us(op.free_s - op.end_s)}});
  }
  for (std::size_t i = 0; i < tl.transfers.size(); ++i) {
    const StepTransferRecord& t = tl.transfers[i];
    const std::string name = std::string(t.op.kind == PipeOpKind::kForward ? "act " : "grad ") +
                             "mb" + std::to_string(t.op.micro_batch) + " " +
                             std::to_string(t.src_stage) + "->" + std::to_string(t.dst_stage);
    const double ts = us(t.start_s), dur = us(t.end_s - t.start_s);
    ev.push_back({{"ph", "X"}, {"pid", t.src_stage}, {"tid", kTrackP2pSend}, {"name", name},
                  {"cat", "p2p"}, {"ts", ts}, {"dur", dur}});
    ev.push_back({{"ph", "X"}, {"pid", t.dst_stage}, {"tid", kTrackP2pRecv}, {"name", name},
                  {"cat", "p2p"}, {"ts", ts}, {"dur", dur}});
    ev.push_back({{"ph", "s"}, {"pid", t.src_stage}, {"tid", kTrackP2pSend}, {"name", "p2p"},
                  {"cat", "p2p"}, {"id", i}, {"ts", ts}});
    ev.push_back({{"ph", "f"}, {"bp", "e"}, {"pid", t.dst_stage}, {"tid", kTrackP2pRecv},
                  {"name", "p2p"}, {"cat", "p2p"}, {"id", i}, {"ts", ts}});
  }
  for (std::size_t i = 0; i < tl.buckets.size(); ++i) {
    const StepBucketRecord& b = tl.buckets[i];
    ev.push_back({{"ph", "X"}, {"pid", b.stage}, {"tid", b.expert ? kTrackExpertDp : kTrackDp},
                  {"name", std::string(b.expert ? "expert " : "") + "bucket c" + std::to_string(b.chunk)},
                  {"cat", "dp"}, {"ts", us(b.start_s)}, {"dur", us(b.end_s - b.start_s)},
                  {"args", {{"params", b.params}, {"bytes_per_rank", b.bytes}, {"groups", b.groups},
                            {"ready_us", us(b.ready_s)}, {"closed_form_us", us(b.closed_form_s)}}}});
  }
  // Each stage's optimizer where its step's span ends (from its origin: the same instant for all
  // where a step ends with a barrier).
  if (tl.step_end_s > tl.optimizer_start_s)
    for (int s = 0; s < n; ++s)
      ev.push_back({{"ph", "X"}, {"pid", s}, {"tid", kTrackCompute}, {"name", "optimizer"},
                    {"cat", "optimizer"}, {"ts", us(tl.origin_s[static_cast<std::size_t>(s)] + tl.optimizer_start_s)},
                    {"dur", us(tl.step_end_s - tl.optimizer_start_s)}});
  if (stats && !links.empty()) {
    std::ostringstream ls;
    stats->write_chrome_trace(ls, links);
    const json counters = json::parse(ls.str());
    ev.push_back({{"ph", "M"}, {"pid", n}, {"name", "process_name"}, {"args", {{"name", "links"}}}});
    for (json e : counters.at("traceEvents")) {
      if (e.value("ph", "") != "C") continue;
      e["pid"] = n;
      ev.push_back(std::move(e));
    }
  }
  json doc = {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(ev)}};
  out << doc.dump() << "\n";
}

}  // namespace trainsim::sim
