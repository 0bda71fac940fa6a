// The evidence of `trainsim validate --backend cpu|cuda`: the measured and the predicted step as
// one Chrome / Perfetto trace (process "measured": a thread per rank, every op the trainer
// recorded; process "predicted": a thread per pipeline stage, the estimate's played pipeline
// with each pass expanded into its op graph's ops), the comparison as JSON, and a self-contained
// HTML page with inline SVG charts (error per component with its 95% interval, both timelines,
// the step times, the calibration used). No external files, scripts or fonts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "validate/cpu_validation.hpp"

namespace trainsim::validate {

// What the report shows besides the comparison.
struct RunContext {
  std::string backend = "cpu";
  int cores = 0;              // usable cores of the machine (0: unknown)
  std::string binding;        // how ranks were placed ("one rank per core", "oversubscribed")
  std::string calibration_file;       // "" when measured by this run
  nlohmann::json calibration;         // the one the prediction used
  nlohmann::json calibration_after;   // null when none
};

// The step of the run the trace and the report draw: the used step closest to the median.
int representative_step(const MeasuredRun& run, const Comparison& c);

nlohmann::json comparison_json(const CpuJob& job, const CpuPrediction& p, const Comparison& c,
                               const RunContext& ctx);
std::string comparison_text(const CpuJob& job, const CpuPrediction& p, const Comparison& c, const RunContext& ctx);

// Chrome trace event format (JSON object form), times in microseconds from the step's start.
nlohmann::json trace_json(const CpuJob& job, const CpuPrediction& p, const MeasuredRun& run, int step);

std::string report_html(const CpuJob& job, const CpuPrediction& p, const Comparison& c, const MeasuredRun& run,
                        const RunContext& ctx);

}  // namespace trainsim::validate
