// Sweep results for the Sweep view: JSON Lines (one `trainsim run --json`-like object per line)
// or CSV with a header. A row has plan fields ("plan": {...}, or flat/dotted columns "tp",
// "plan.tp") and metrics step_time_s, tokens_per_s, memory.peak_bytes (or peak_bytes), feasible.
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
  bool feasible = true;
  QString label;  // "TP8 PP8 DP24 ..." for tooltips
};

struct SweepTable {
  std::vector<SweepRow> rows;
  std::vector<int> pareto;  // indices of feasible rows on the front: max tokens/s for min memory
  int skipped_lines = 0;    // lines that were neither a row nor blank
};

// Throws std::runtime_error when the file cannot be read or has no usable row.
SweepTable load_sweep_file(const QString& file_path);
SweepTable parse_sweep_text(const QString& text, bool csv);
// Feasible rows not dominated by another (no other row has >= throughput with <= memory, one strictly).
std::vector<int> pareto_front(const std::vector<SweepRow>& rows);

}  // namespace trainsim::gui
