// Sweep results for the Sweep view: the rows of `trainsim sweep` (JSON Lines, the first line its
// header), the JSON of `trainsim plan --json` (its "best" plans), or CSV with a header. A row has
// plan fields ("plan": {...}, "scenario": {"plan": ...}, or flat/dotted columns "tp", "plan.tp")
// and, when feasible, metrics step_time_s, tokens_per_s, memory.peak_bytes (or peak_bytes), gpus.
// An infeasible row may carry no metrics, only its reason (reason_code, reason).
#pragma once

#include <QString>
#include <map>
#include <string>
#include <vector>

namespace trainsim::gui {

struct SweepRow {
  std::map<std::string, std::string> plan;  // "plan.tp" -> "8" (JSON text of the value)
  double step_time_s = 0;
  double tokens_per_s = 0;
  double peak_bytes = 0;
  double gpus = 0;
  bool feasible = true;
  bool meets_constraints = true;  // rows without constraints (a plan search) meet them
  std::string reason_code;        // infeasible rows: "out_of_memory", ...
  std::string reason;
  QString label;  // "TP8 PP8 DP24 ..." for tooltips
  bool has_metrics() const { return tokens_per_s > 0 && step_time_s > 0; }
  // Competes on the Pareto front: feasible, within the sweep's constraints, with figures (the
  // rows the CLI's summary ranks).
  bool competes() const { return feasible && meets_constraints && has_metrics(); }
};

struct SweepTable {
  std::vector<SweepRow> rows;
  // Rows on the Pareto front (models/core/pareto.hpp, the CLI's definition), most throughput
  // first; rows with the same figures as a front row count once (the first stands for them).
  std::vector<int> pareto;
  int skipped_lines = 0;  // lines that were neither a row, a header nor blank
  QString kind;           // "sweep" (rows), "plan" (a plan search's best plans), "csv"
};

// Throws std::runtime_error when the file cannot be read or has no usable row.
SweepTable load_sweep_file(const QString& file_path);
SweepTable parse_sweep_text(const QString& text, bool csv);
// The Pareto front of the rows that compete (SweepRow::competes), by the shared definition.
std::vector<int> pareto_front(const std::vector<SweepRow>& rows);

}  // namespace trainsim::gui
