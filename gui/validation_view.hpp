// A `trainsim validate --report DIR` report: the verdict and its reasons, and predicted against
// measured for the step and each component (median, 95% interval, error, share of the step,
// limit), as the CLI prints them. The report's trace.json (measured and predicted timelines,
// one process each) goes to the Timeline view. Independent of the scenario being edited.
#pragma once

#include <QString>

#include <nlohmann/json.hpp>

#include "gui/scenario_view.hpp"

class QLabel;
class QTableWidget;

namespace trainsim::gui {

class ValidationView : public ScenarioView {
  Q_OBJECT

 public:
  explicit ValidationView(QWidget* parent = nullptr);
  // `path`: the report directory, its report.json or its index.html. On failure the view keeps
  // what it showed and `error` says which file or field is wrong.
  bool load_report(const QString& path, QString* error = nullptr);
  // The report's trace.json, empty when none was loaded or the report has none.
  QString trace_path() const { return trace_path_; }
  const nlohmann::json& report() const { return report_; }
  QTableWidget* table() const { return table_; }
  QLabel* summary() const { return summary_; }

 protected:
  void redraw() override;

 private:
  QLabel* summary_ = nullptr;
  QTableWidget* table_ = nullptr;
  nlohmann::json report_;
  QString source_;
  QString trace_path_;
};

}  // namespace trainsim::gui
