#include "gui/sweep_table.hpp"

#include <QFileInfo>
#include <QStringList>
#include <algorithm>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "models/core/pareto.hpp"
#include "models/scenario/input_file.hpp"

namespace trainsim::gui {
namespace {

// Bare column names that are plan fields (a sweep may write "tp" rather than "plan.tp").
const std::set<std::string> kPlanKeys = {"tp", "pp", "dp", "cp", "ep", "sp", "vpp", "schedule", "micro_batch",
                                         "global_batch", "zero_stage", "recompute", "precision",
                                         "collective_algorithm", "placement"};

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(*it, prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out[prefix] = j;
  }
}

double number(const std::map<std::string, nlohmann::json>& f, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = f.find(k);
    if (it == f.end()) continue;
    if (it->second.is_number()) return it->second.get<double>();
    if (it->second.is_string()) {
      bool ok = false;
      const double v = QString::fromStdString(it->second.get<std::string>()).toDouble(&ok);
      if (ok) return v;
    }
  }
  return 0;
}

std::string text(const std::map<std::string, nlohmann::json>& f, const char* key) {
  auto it = f.find(key);
  return it != f.end() && it->second.is_string() ? it->second.get<std::string>() : std::string();
}

bool flag(const std::map<std::string, nlohmann::json>& f, const char* key, bool fallback) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  if (it->second.is_boolean()) return it->second.get<bool>();
  if (it->second.is_string()) return it->second.get<std::string>() == "true" || it->second.get<std::string>() == "1";
  if (it->second.is_number()) return it->second.get<double>() != 0;
  return fallback;
}

bool row_from_fields(const std::map<std::string, nlohmann::json>& f, SweepRow& row) {
  row.step_time_s = number(f, {"step_time_s"});
  row.tokens_per_s = number(f, {"tokens_per_s"});
  row.peak_bytes = number(f, {"memory.peak_bytes", "peak_bytes", "peak_memory_bytes"});
  row.gpus = number(f, {"gpus"});
  row.feasible = flag(f, "feasible", true);
  row.meets_constraints = flag(f, "meets_constraints", true);
  row.reason_code = text(f, "reason_code");
  row.reason = text(f, "reason");
  for (const auto& [key, value] : f) {
    std::string path;
    if (key.rfind("plan.", 0) == 0) path = key;
    else if (key.rfind("scenario.plan.", 0) == 0) path = key.substr(9);
    else if (kPlanKeys.count(key)) path = "plan." + key;
    if (path.empty() || value.is_null()) continue;
    row.plan[path] = value.dump();
  }
  // A feasible row needs figures; an infeasible one may have only its reason.
  if (row.plan.empty() || (row.feasible && !row.has_metrics())) return false;
  QStringList parts;
  for (const char* k : {"tp", "pp", "dp", "cp", "ep"})
    if (auto it = row.plan.find(std::string("plan.") + k); it != row.plan.end())
      parts << QString("%1%2").arg(QString(k).toUpper(), QString::fromStdString(it->second));
  for (const char* k : {"vpp", "schedule", "micro_batch", "zero_stage", "recompute", "sp", "offload.optimizer"})
    if (auto it = row.plan.find(std::string("plan.") + k); it != row.plan.end())
      parts << QString("%1=%2").arg(QString(k), QString::fromStdString(it->second).remove('"'));
  row.label = parts.join(' ');
  return true;
}

bool is_sweep_header(const nlohmann::json& j) { return j.is_object() && j.contains("trainsim_sweep"); }

QStringList split_csv_line(const QString& line) {
  QStringList out;
  QString cur;
  bool quoted = false;
  for (int i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') { cur += '"'; ++i; }
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out << cur;
      cur.clear();
    } else {
      cur += c;
    }
  }
  out << cur;
  return out;
}

}  // namespace

std::vector<int> pareto_front(const std::vector<SweepRow>& rows) {
  std::vector<int> competing;
  std::vector<ParetoPoint> points;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i)
    if (rows[i].competes()) {
      competing.push_back(i);
      points.push_back({rows[i].tokens_per_s, rows[i].peak_bytes, rows[i].gpus});
    }
  std::vector<int> front;
  for (const ParetoEntry& e : ::trainsim::pareto_front(points)) front.push_back(competing[e.index]);
  return front;
}

SweepTable parse_sweep_text(const QString& text, bool csv) {
  SweepTable t;
  const QStringList lines = text.split('\n');
  if (csv) {
    t.kind = "csv";
    QStringList header;
    for (const QString& raw_line : lines) {
      const QString line = raw_line.trimmed();
      if (line.isEmpty() || line.startsWith('#')) continue;
      const QStringList cells = split_csv_line(line);
      if (header.isEmpty()) {
        header = cells;
        continue;
      }
      std::map<std::string, nlohmann::json> f;
      for (int i = 0; i < header.size() && i < cells.size(); ++i) {
        const std::string v = cells[i].trimmed().toStdString();
        if (v.empty()) continue;
        // Cells that parse as JSON (numbers, true/false) keep their type; others are strings.
        nlohmann::json value = parse_json_or_discarded(v);
        f[header[i].trimmed().toStdString()] = value.is_discarded() ? nlohmann::json(v) : value;
      }
      SweepRow row;
      if (row_from_fields(f, row)) t.rows.push_back(row);
      else ++t.skipped_lines;
    }
  } else {
    // One row of either format, or a skipped line.
    auto add_row = [&t](const nlohmann::json& j) {
      std::map<std::string, nlohmann::json> f;
      SweepRow row;
      if (j.is_object()) flatten(j, "", f);
      if (j.is_object() && row_from_fields(f, row)) t.rows.push_back(row);
      else ++t.skipped_lines;
    };
    // `trainsim plan --json`: one object whose "best" array holds the rows.
    const QByteArray all = text.toUtf8();
    const auto whole = parse_json_or_discarded(std::string_view(all.constData(), static_cast<std::size_t>(all.size())));
    if (whole.is_object() && whole.contains("best") && whole["best"].is_array()) {
      t.kind = "plan";
      for (const auto& j : whole["best"]) add_row(j);
      t.pareto = pareto_front(t.rows);
      return t;
    }
    t.kind = "sweep";
    for (const QString& raw_line : lines) {
      const QByteArray line = raw_line.trimmed().toUtf8();
      if (line.isEmpty()) continue;
      const auto j = parse_json_or_discarded(std::string_view(line.constData(), static_cast<std::size_t>(line.size())));
      if (is_sweep_header(j)) continue;
      add_row(j);
    }
  }
  t.pareto = pareto_front(t.rows);
  return t;
}

SweepTable load_sweep_file(const QString& file_path) {
  // A regular file, read without blocking and bounded (a FIFO or /dev/zero would never end): 2 GiB
  // holds the rows of a sweep of two million plans.
  const std::string bytes = read_input_file(file_path.toStdString(), "sweep", std::size_t{2} << 30);
  const QString text = QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()));
  const bool csv = QFileInfo(file_path).suffix().toLower() == "csv";
  SweepTable t = parse_sweep_text(text, csv);
  if (t.rows.empty())
    throw std::runtime_error(file_path.toStdString() + ": no rows with plan fields and step_time_s/tokens_per_s (or a reason)");
  return t;
}

}  // namespace trainsim::gui
