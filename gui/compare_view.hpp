// Compare: a pinned plan A against the plan being edited (B), side by side: plan fields,
// headline metrics with the change, and the two step-time breakdowns as stacked bars.
#pragma once

#include "gui/scenario_view.hpp"

class QChartView;
class QLabel;
class QPushButton;
class QTableWidget;

namespace trainsim::gui {

class CompareView : public ScenarioView {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);
  void set_reference(const Evaluation& ev, const QString& label);
  bool has_reference() const { return reference_.loaded; }
  QTableWidget* table() const { return table_; }

 signals:
  // "Load A from file…" asks the main window to evaluate a file (presets resolve as for any scenario).
  void reference_file_requested();

 protected:
  void redraw() override;
  void retranslate_ui() override;

 private:
  QTableWidget* table_ = nullptr;
  QChartView* chart_view_ = nullptr;
  QLabel* header_ = nullptr;
  QPushButton* pin_ = nullptr;
  QPushButton* load_ = nullptr;
  Evaluation reference_;
  QString reference_label_;
};

}  // namespace trainsim::gui
