#include "gui/validation_view.hpp"

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::gui {
namespace {

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

bool flag(const nlohmann::json& j, const char* key, bool otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

QString percent(double x) {
  return std::isfinite(x) ? QString::asprintf("%+.1f%%", 100 * x) : ValidationView::tr("n/a");
}

// Seconds in milliseconds; model_state_bytes in bytes.
QString value(double x, bool bytes) {
  if (!std::isfinite(x)) return ValidationView::tr("n/a");
  return bytes ? QString::asprintf("%.4g B", x) : QString::asprintf("%.4g ms", 1e3 * x);
}

QString pair_text(const nlohmann::json& j, const char* key, bool as_percent, bool bytes) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2) return ValidationView::tr("n/a");
  auto one = [&](const nlohmann::json& v) {
    const double x = v.is_number() ? v.get<double>() : NAN;
    return as_percent ? percent(x) : value(x, bytes);
  };
  return QStringLiteral("[%1, %2]").arg(one((*it)[0]), one((*it)[1]));
}

// Checks the fields the view reads; the message names the first one that is wrong.
std::string shape_error(const nlohmann::json& r) {
  if (!r.is_object()) return "expected a JSON object";
  if (!r.contains("verdict") || !r["verdict"].is_string()) return "verdict: expected a string";
  for (const char* key : {"metrics", "compute_by_op_class"}) {
    if (!r.contains(key) || !r[key].is_array()) return std::string(key) + ": expected an array";
    for (const auto& row : r[key])
      if (!row.is_object() || !row.contains("name") || !row["name"].is_string())
        return std::string(key) + ": every row needs a \"name\"";
  }
  return "";
}

}  // namespace

ValidationView::ValidationView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QVBoxLayout(this);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_ = new QTableWidget(this);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  redraw();
}

bool ValidationView::load_report(const QString& path, QString* error) {
  QFileInfo info(path);
  QString file = path;
  if (info.isDir()) file = QDir(path).filePath("report.json");
  else if (info.suffix().compare("html", Qt::CaseInsensitive) == 0) file = info.dir().filePath("report.json");
  nlohmann::json r;
  try {
    r = read_json_file(file.toStdString(), "validation report");
  } catch (const ScenarioError& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  const std::string bad = shape_error(r);
  if (!bad.empty()) {
    if (error) *error = tr("%1 is not a trainsim validation report: %2").arg(file, QString::fromStdString(bad));
    return false;
  }
  report_ = std::move(r);
  source_ = file;
  const QString trace = QFileInfo(file).dir().filePath("trace.json");
  trace_path_ = QFileInfo::exists(trace) ? trace : QString();
  redraw();
  return true;
}

void ValidationView::redraw() {
  const QStringList headers = {tr("metric"), tr("predicted"), tr("measured median"), tr("95% interval"), tr("error"),
                               tr("error 95% interval"), tr("share of step"), tr("limit")};
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  if (report_.is_null()) {
    summary_->setText(tr("No validation report loaded. Run `trainsim validate --backend cpu --report DIR` and open "
                         "DIR here (File > Open validation report); its timelines go to the Timeline view."));
    table_->setRowCount(0);
    return;
  }
  const auto& r = report_;
  QString text = tr("<b>Verdict: %1</b> (%2)").arg(QString::fromStdString(r["verdict"].get<std::string>()).toHtmlEscaped(),
                                                   source_.toHtmlEscaped());
  if (r.contains("job") && r["job"].is_object()) {
    const auto& j = r["job"];
    auto i = [&](const char* k) { return j.contains(k) && j[k].is_number_integer() ? j[k].get<int>() : 0; };
    auto s = [&](const char* k) {
      return j.contains(k) && j[k].is_string() ? QString::fromStdString(j[k].get<std::string>()).toHtmlEscaped()
                                               : QStringLiteral("?");
    };
    text += "<br>" + tr("%1 rank(s): TP %2 x PP %3 x DP %4, ZeRO-%5, %6, compression %7")
                         .arg(i("ranks")).arg(i("tp")).arg(i("pp")).arg(i("dp")).arg(i("zero")).arg(s("schedule"), s("compression"));
  }
  if (r.contains("reasons") && r["reasons"].is_array())
    for (const auto& reason : r["reasons"])
      if (reason.is_string()) text += "<br>&bull; " + QString::fromStdString(reason.get<std::string>()).toHtmlEscaped();
  summary_->setText(text);

  std::vector<std::pair<const nlohmann::json*, bool>> rows;  // row, is an op class
  for (const auto& m : r["metrics"]) rows.push_back({&m, false});
  for (const auto& m : r["compute_by_op_class"]) rows.push_back({&m, true});
  table_->setRowCount(static_cast<int>(rows.size()));
  for (int k = 0; k < static_cast<int>(rows.size()); ++k) {
    const nlohmann::json& m = *rows[k].first;
    const std::string name = m["name"].get<std::string>();
    const bool bytes = name == "model_state_bytes";
    // No undisturbed step after warm-up: nothing was measured, whatever the report's zeros say.
    const bool measured = !m.contains("n") || !m["n"].is_number() || m["n"].get<double>() > 0;
    const QString none = tr("n/a");
    QString limit = QStringLiteral("-");
    if (flag(m, "judged", false) && m.contains("limit") && m["limit"].is_number()) {
      // The report says whether the row is within its limit; null when the run was not judged.
      const auto within = m.find("within");
      const QString mark = within == m.end() || !within->is_boolean() ? tr("not judged")
                           : within->get<bool>()                      ? tr("ok")
                                                                      : tr("FAIL");
      limit = QString::asprintf("±%.0f%%", 100 * m["limit"].get<double>()) + " " + mark;
    } else if (!flag(m, "modelled", true)) {
      limit = tr("not modelled");
    }
    const QString cells[] = {
        rows[k].second ? tr("compute: %1").arg(QString::fromStdString(name)) : QString::fromStdString(name),
        value(number(m, "predicted"), bytes),
        measured ? value(number(m, "measured_median"), bytes) : none,
        measured ? pair_text(m, "measured_ci95", false, bytes) : none,
        percent(number(m, "error")),
        pair_text(m, "error_ci95", true, bytes),
        measured && std::isfinite(number(m, "share_of_step"))
            ? QString::asprintf("%.1f%%", 100 * number(m, "share_of_step"))
            : none,
        limit};
    for (int c = 0; c < 8; ++c) table_->setItem(k, c, new QTableWidgetItem(cells[c]));
  }
  table_->resizeColumnsToContents();
}

}  // namespace trainsim::gui
