// Chrome trace event format (the JSON Perfetto and chrome://tracing open): complete events
// (ph "X": name, cat, ts and dur in microseconds, pid, tid, args) and thread/process name
// metadata (ph "M"). The simulate tier writes these; the GUI reads them into a GanttTrace and
// writes any GanttTrace back out ("Export Perfetto trace").
#pragma once

#include <QString>

#include <nlohmann/json.hpp>

#include "gui/gantt_trace.hpp"

namespace trainsim::gui {

// Accepts {"traceEvents": [...]} or a bare array. Throws std::runtime_error on malformed input.
GanttTrace gantt_from_chrome_trace(const nlohmann::json& trace);
GanttTrace load_chrome_trace_file(const QString& file_path);

nlohmann::json chrome_trace_from_gantt(const GanttTrace& gantt);
// Returns false (and sets *error) when the file cannot be written.
bool save_chrome_trace_file(const GanttTrace& gantt, const QString& file_path, QString* error);

}  // namespace trainsim::gui
