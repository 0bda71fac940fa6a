#include "gui/estimate_timeline.hpp"

#include <QCoreApplication>
#include <algorithm>

#include "gui/format.hpp"
#include "models/schedules/pipeline_schedule.hpp"
#include "models/schedules/schedule_order.hpp"
#include "models/workload/timeline.hpp"

// Translation context of this file's strings (a free function has no EstimateTimelineText::tr() of its own).
class EstimateTimelineText {
  Q_DECLARE_TR_FUNCTIONS(EstimateTimelineText)
};

namespace trainsim::gui {

GanttTrace estimate_timeline(const Evaluation& ev) {
  GanttTrace g;
  if (!ev.loaded) {
    g.title = EstimateTimelineText::tr("No timeline: the scenario does not load");
    return g;
  }
  if (!has_figures(ev)) {
    // The plan's structure does not allow a step (degrees, batch): there is nothing to play.
    g.title = EstimateTimelineText::tr("No timeline: %1").arg(QString::fromStdString(infeasible_note(ev)));
    return g;
  }
  const Scenario& sc = ev.scenario;
  const Result& r = ev.result;
  const int pp = std::max(1, sc.plan.pp);
  const int vpp = std::max(1, sc.plan.vpp);
  const int m = std::max(1, r.micro_batches);
  const auto& b = r.breakdown;
  // The estimate's own played pipeline (models' estimate_step): each stage's passes as the op
  // graph's reduction gives them, transfers at their contention-free time.
  const Timeline& t = ev.timeline;
  const TransferDelays delays(ev.p2p_boundary_s.data(), static_cast<int>(ev.p2p_boundary_s.size()));
  if (t.ops.empty() && !ev.timeline_skipped.empty()) {
    g.title = EstimateTimelineText::tr("No timeline: %1").arg(QString::fromStdString(ev.timeline_skipped));
    return g;
  }
  if (t.ops.empty()) {
    g.title = EstimateTimelineText::tr("No timeline: the estimate played no pipeline");
    return g;
  }
  for (int s = 0; s < pp; ++s) {
    g.lanes << EstimateTimelineText::tr("stage %1").arg(s);
    g.lanes << EstimateTimelineText::tr("stage %1 comm").arg(s);
    g.hatch_idle.push_back(true);
    g.hatch_idle.push_back(false);
  }
  const PipelineSchedule& schedule = plan_pipeline_schedule(sc.plan.schedule, sc.plan.pp);
  const bool split = schedule.splits_backward();
  for (const auto& op : t.ops) {
    GanttEvent e;
    e.lane = 2 * op.stage;
    e.start_s = op.start_s;
    e.duration_s = op.end_s - op.start_s;
    QString kind;
    switch (op.op.kind) {
      case PipeOpKind::kForward: kind = "F"; break;
      case PipeOpKind::kBackward: kind = op.op.with_weight_grad ? "B+W" : "B"; break;
      case PipeOpKind::kBackwardWeight: kind = "W"; break;
    }
    e.category = kind;
    e.name = (kind == "B+W" ? QString("B") : kind) + QString::number(op.op.micro_batch) +
             (vpp > 1 || schedule.bidirectional() ? "." + QString::number(op.op.chunk) : QString());
    e.detail = EstimateTimelineText::tr("%1 micro-batch %2, chunk %3 on stage %4\n%5 → %6 (%7)")
                   .arg(kind)
                   .arg(op.op.micro_batch)
                   .arg(op.op.chunk)
                   .arg(op.stage)
                   .arg(format_seconds(op.start_s), format_seconds(op.end_s), format_seconds(e.duration_s));
    g.events.push_back(e);
    // The send this op triggers: F goes downstream, B upstream (chunk boundaries wrap).
    const bool sends_forward = op.op.kind == PipeOpKind::kForward;
    const bool sends_backward = op.op.kind == PipeOpKind::kBackward;
    // Forward to the next device, backward to the one before (the wrap boundary p - 1 joins the
    // last device to the first).
    const double p2p_s = delays.between(op.stage, sends_forward ? (op.stage + 1) % pp : (op.stage + pp - 1) % pp, pp);
    if (pp > 1 && p2p_s > 0 && (sends_forward || sends_backward)) {
      GanttEvent c;
      c.lane = 2 * op.stage + 1;
      c.start_s = op.end_s;
      c.duration_s = p2p_s;
      c.category = "p2p";
      c.name = sends_forward ? "→" : "←";
      c.detail = EstimateTimelineText::tr("p2p send of %1 micro-batch %2 (%3)").arg(kind).arg(op.op.micro_batch).arg(format_seconds(p2p_s));
      g.events.push_back(c);
    }
  }
  // After the flush: exposed DP gradient sync, then the optimizer step, on every stage.
  const double flush_s = t.makespan_s;
  for (int s = 0; s < pp; ++s) {
    double at = flush_s;
    if (b.dp_comm_s > 0) {
      g.events.push_back({2 * s + 1, EstimateTimelineText::tr("DP sync"), "dp", at, b.dp_comm_s,
                          EstimateTimelineText::tr("exposed data-parallel gradient sync (%1)").arg(format_seconds(b.dp_comm_s))});
      at += b.dp_comm_s;
    }
    if (b.offload_s > 0) {
      g.events.push_back({2 * s, EstimateTimelineText::tr("offload"), "offload", at, b.offload_s,
                          EstimateTimelineText::tr("exposed offload traffic (%1)").arg(format_seconds(b.offload_s))});
      at += b.offload_s;
    }
    if (b.optimizer_s > 0)
      g.events.push_back({2 * s, EstimateTimelineText::tr("optimizer"), "optimizer", at, b.optimizer_s,
                          EstimateTimelineText::tr("optimizer step (%1)").arg(format_seconds(b.optimizer_s))});
  }
  g.title = EstimateTimelineText::tr("%1 schedule, PP %2, vpp %3, %4 micro-batches: pipeline %5, played bubble %6 (estimate %7)")
                .arg(QString::fromStdString(sc.plan.schedule))
                .arg(pp)
                .arg(vpp)
                .arg(m)
                .arg(format_seconds(t.step_s), format_percent(t.bubble_fraction), format_percent(r.bubble_fraction));
  // After a simulation without a timeline of its own, this is still the estimate's pipeline:
  // say so, and give the simulation's bubble beside it.
  if (ev.simulated())
    g.title = EstimateTimelineText::tr("The estimate's pipeline (the simulation sent no timeline): %1 schedule, PP %2, "
                                       "vpp %3, %4 micro-batches, played bubble %5; simulated bubble %6")
                  .arg(QString::fromStdString(sc.plan.schedule))
                  .arg(pp)
                  .arg(vpp)
                  .arg(m)
                  .arg(format_percent(t.bubble_fraction), format_percent(r.bubble_fraction));
  if (!ev.timeline_note.empty()) g.title += " — " + QString::fromStdString(ev.timeline_note);
  if (!ev.result.feasible)
    g.title = QString::fromStdString(infeasible_note(ev)) + " — " + g.title;
  g.legend_note = EstimateTimelineText::tr("From the estimate: each stage's forward and backward passes as its op graph reduces them "
                     "(compute, and the in-layer communication the compute waited for)%1; p2p at its contention-free time. "
                     "Hatched = idle (bubble). DP ranks run the same timeline.")
                      .arg(split ? EstimateTimelineText::tr(", the backward split into B (input grad) and W (weight grad)") : QString());
  return g;
}

}  // namespace trainsim::gui
