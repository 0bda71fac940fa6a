// Breakdown: where one step's time goes on the critical pipeline stage (exposed parts only; they
// add up to the step time), as bars and as a table with shares.
#pragma once

#include "gui/scenario_view.hpp"

class QChartView;
class QTableWidget;
class QLabel;

namespace trainsim::gui {

class BreakdownView : public ScenarioView {
  Q_OBJECT

 public:
  explicit BreakdownView(QWidget* parent = nullptr);
  QWidget* export_widget() override { return this; }

 protected:
  void redraw() override;

 private:
  QChartView* chart_view_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* note_ = nullptr;
};

// One named part of the step time, in the order the views show them.
struct TimePart {
  QString name;
  QColor color;
  double seconds;
};
std::vector<TimePart> time_parts(const TimeBreakdown& b);

}  // namespace trainsim::gui
