// Topology: the cluster drawn from its spec (nodes with GPUs, NVSwitch and NICs; leaf and spine
// switches for the network topology), links coloured by utilisation. Until a simulation reports
// per-link utilisation, utilisation is estimated from the estimate's bytes per GPU per group and
// the step time (see link_load()).
#pragma once

#include "gui/scenario_view.hpp"

namespace trainsim::gui {

// Estimated share of line rate each link class carries over a step.
struct LinkLoad {
  double nvlink = 0;       // per GPU, one direction
  double nic = 0;          // per NIC, one direction
  double uplink = 0;       // leaf to spine, after oversubscription
  double intra_bytes = 0;  // per GPU per step over NVLink
  double inter_bytes = 0;  // per GPU per step over the NICs
  QString intra_groups;    // "TP, CP"
  QString inter_groups;    // "DP, PP"
};
LinkLoad link_load(const Scenario& sc, const Result& r);

class TopologyView : public ScenarioView {
  Q_OBJECT

 public:
  explicit TopologyView(QWidget* parent = nullptr);
  QSize sizeHint() const override { return {1000, 640}; }

 protected:
  void redraw() override { update(); }
  void paintEvent(QPaintEvent* event) override;
};

}  // namespace trainsim::gui
