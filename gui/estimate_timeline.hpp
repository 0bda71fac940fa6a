// The estimate tier's Gantt chart: the plan's schedule played by models/timeline.hpp with
// per-op durations derived from the estimate's critical-stage compute time.
#pragma once

#include "gui/evaluation.hpp"
#include "gui/gantt_trace.hpp"

namespace trainsim::gui {

// Empty trace (with a title saying why) when the scenario does not load.
GanttTrace estimate_timeline(const Evaluation& ev);

}  // namespace trainsim::gui
