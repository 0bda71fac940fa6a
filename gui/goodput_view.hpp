// Goodput: what a long run loses to failures, checkpoints, restarts, stragglers and
// degraded links (bars, hours over the run), the useful fraction against the checkpoint interval
// (Daly's closed form, with the Young, Daly, Monte Carlo and chosen intervals marked), and a
// summary. Shows how to enable it when the scenario has no training.faults.
#pragma once

#include "gui/scenario_view.hpp"

class QChartView;
class QLabel;

namespace trainsim::gui {

class GoodputView : public ScenarioView {
  Q_OBJECT

 public:
  explicit GoodputView(QWidget* parent = nullptr);
  QWidget* export_widget() override { return this; }

 protected:
  void redraw() override;

 private:
  QChartView* lost_view_ = nullptr;
  QChartView* interval_view_ = nullptr;
  QLabel* summary_ = nullptr;
};

}  // namespace trainsim::gui
