// What the Timeline view draws: lanes (a pipeline stage's compute stream, its communication
// stream, a rank, a thread of a Chrome trace) and timed events on them. Built from the estimate
// (estimate_timeline.hpp) or loaded from a Chrome/Perfetto trace (chrome_trace.hpp).
#pragma once

#include <algorithm>

#include <QString>
#include <QStringList>
#include <vector>

namespace trainsim::gui {

struct GanttEvent {
  int lane = 0;
  QString name;      // short label drawn in the box ("F3", "B3.1")
  QString category;  // colour key: "F", "B", "W", "B+W", "p2p", "dp", "optimizer", ... or free text
  double start_s = 0;
  double duration_s = 0;
  QString detail;  // tooltip text
};

struct GanttTrace {
  QString title;
  QStringList lanes;
  std::vector<GanttEvent> events;
  QString legend_note;  // how the events were derived, shown under the chart
  std::vector<bool> hatch_idle;  // per lane: draw idle time as hatched (compute streams)
  double end_s() const {
    double e = 0;
    for (const auto& ev : events) e = std::max(e, ev.start_s + ev.duration_s);
    return e;
  }
};

}  // namespace trainsim::gui
