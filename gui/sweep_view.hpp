// Sweep: throughput against peak memory for every plan of a sweep, the Pareto front (most
// tokens/s for the memory) highlighted, infeasible plans greyed; click a point to load its plan.
#pragma once

#include <QPointF>

#include "gui/scenario_view.hpp"
#include "gui/sweep_table.hpp"

class QChartView;
class QLabel;
class QPushButton;

namespace trainsim::gui {

class SweepView : public ScenarioView {
  Q_OBJECT

 public:
  explicit SweepView(QWidget* parent = nullptr);
  QWidget* export_widget() override;
  bool load_file(const QString& file_path, QString* error);
  const SweepTable& table() const { return table_; }
  // Emits plan_selected for the row nearest to a point in chart coordinates (GiB, tokens/s unit).
  void select_nearest(const QPointF& value);

 signals:
  void plan_selected(const trainsim::gui::SweepRow& row);

 protected:
  void redraw() override;
  void retranslate_ui() override;

 private:
  QChartView* chart_view_ = nullptr;
  QLabel* info_ = nullptr;
  QPushButton* load_ = nullptr;
  SweepTable table_;
  QString file_;
  double y_scale_ = 1;  // tokens/s per axis unit
};

}  // namespace trainsim::gui
