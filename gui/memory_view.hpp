// Memory: per pipeline stage, stacked bars of params, grads, optimizer state, activations and
// other buffers per GPU, against the GPU's HBM capacity (a dashed line).
#pragma once

#include "gui/scenario_view.hpp"

class QChartView;

namespace trainsim::gui {

class MemoryView : public ScenarioView {
  Q_OBJECT

 public:
  explicit MemoryView(QWidget* parent = nullptr);
  QWidget* export_widget() override;

 protected:
  void redraw() override;

 private:
  QChartView* chart_view_ = nullptr;
};

}  // namespace trainsim::gui
