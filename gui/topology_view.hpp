// Topology: the cluster drawn from its spec (nodes with GPUs, NVSwitch and NICs; leaf and spine
// switches for the network topology) with the plan's groups on it: which GPUs form the TP, CP,
// EP, DP and PP groups of GPU 0 (the representative rank), from the placement the estimate and
// the simulator use (models/workload/placement.hpp). Links are coloured by utilisation: before a
// simulation, estimated from the bytes per GPU each group moves per step over the step time
// (link_load()); after one, the hottest links the simulation reports.
#pragma once

#include <QColor>
#include <QString>
#include <vector>

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
// A group's traffic stays on NVLink when the placement keeps the group in one node, else it
// crosses the NICs.
LinkLoad link_load(const Scenario& sc, const Result& r, const RankPlacement& placement);

// One group of GPU 0 as drawn.
struct DrawnGroup {
  QString kind;              // "TP", "CP", "EP", "DP", "PP"
  std::vector<int> gpus;     // its GPUs in rank order (PP: stage 0, 1, ...)
  int nodes = 1;             // nodes it spans
  bool over_nics = false;    // spans nodes: its traffic crosses the NICs
  double bytes_per_gpu = 0;  // per step (Result's comm bytes per GPU)
  QColor colour;
};

// A link the simulation reported (the result's "hottest_links").
struct HotLink {
  QString name;  // "nvlink_gpu3:up", "nic_node1_0:down", ...
  QString kind;  // "nvlink", "nic", "switch", "pcie"
  double utilisation = 0;
  double bytes = 0;
};

// Everything the view draws, from one Evaluation (a pure function, for tests).
struct TopologyPicture {
  bool drawable = false;       // the plan has a placement to draw
  std::vector<int> nodes;      // node indices drawn, left to right (node 0 first)
  int gpus_per_node_drawn = 0;
  std::vector<DrawnGroup> groups;
  LinkLoad estimate;           // per-group traffic of the shown result
  bool simulated = false;      // colours come from the simulation's hottest links
  std::vector<HotLink> hottest;
  // Utilisation a drawn link gets: the simulated value of the named link, or the estimate of
  // its class; negative when a simulation ran and did not list it (not among the hottest).
  double nvlink_utilisation(int gpu) const;
  double nic_utilisation(int node, int nic) const;
  double uplink_utilisation() const;
};
TopologyPicture topology_picture(const Evaluation& ev);

class TopologyView : public ScenarioView {
  Q_OBJECT

 public:
  explicit TopologyView(QWidget* parent = nullptr);
  QSize sizeHint() const override { return {1000, 720}; }
  const TopologyPicture& picture() const { return picture_; }

 protected:
  void redraw() override {
    picture_ = topology_picture(evaluation());
    update();
  }
  void paintEvent(QPaintEvent* event) override;

 private:
  TopologyPicture picture_;
};

}  // namespace trainsim::gui
