// The Topology view draws GPU 0's groups where Megatron's rank order puts them
// (gpu = tp + TP*(cp + CP*(dp + DP*stage)), the placement "tp-cp-dp-pp"), follows edits made in
// the spin boxes, and after Simulate colours the links the simulation reports.
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/main_window.hpp"
#include "gui/scenario_panel.hpp"
#include "gui/simulate_runner.hpp"
#include "gui/topology_view.hpp"

using trainsim::gui::DrawnGroup;
using trainsim::gui::MainWindow;
using trainsim::gui::TopologyView;

namespace {

const QString kDefault = QString(TRAINSIM_TEST_SCENARIOS) + "/default.json";

TopologyView* topology(MainWindow& w) { return qobject_cast<TopologyView*>(w.views()[3].second); }

void click_tab(MainWindow& w, int index) {
  QTabBar* bar = w.tabs()->tabBar();
  QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(index).center());
  QCOMPARE(w.tabs()->currentIndex(), index);
}

const DrawnGroup* group(const trainsim::gui::TopologyPicture& pic, const QString& kind) {
  for (const auto& g : pic.groups)
    if (g.kind == kind) return &g;
  return nullptr;
}

std::vector<int> strided(int first, int stride, int count) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i * stride);
  return out;
}

void type_into(QSpinBox* spin, int value) {
  QLineEdit* edit = spin->findChild<QLineEdit*>();
  QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(edit, QString::number(value));
  QTest::keyClick(edit, Qt::Key_Enter);
}

}  // namespace

class TopologyViewTest : public QObject {
  Q_OBJECT

 private slots:
  void draws_the_groups_of_gpu_0_where_the_placement_puts_them() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));  // TP 8, PP 8, DP 24 on 192 nodes of 8 GPUs
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    click_tab(w, 3);
    const auto& pic = topology(w)->picture();
    QVERIFY(pic.drawable);
    const DrawnGroup* tp = group(pic, "TP");
    const DrawnGroup* dp = group(pic, "DP");
    const DrawnGroup* pp = group(pic, "PP");
    QVERIFY(tp && dp && pp);
    QVERIFY(!group(pic, "CP") && !group(pic, "EP"));
    QCOMPARE(tp->gpus, strided(0, 1, 8));    // tp ranks 0..7: GPUs 0..7
    QCOMPARE(tp->nodes, 1);
    QVERIFY(!tp->over_nics);
    QCOMPARE(dp->gpus, strided(0, 8, 24));   // dp rank r: GPU 8r
    QCOMPARE(dp->nodes, 24);
    QVERIFY(dp->over_nics);
    QCOMPARE(pp->gpus, strided(0, 192, 8));  // stage s: GPU 8*24*s
    QCOMPARE(pp->nodes, 8);
    // Node 0, then the node of the next stage (GPU 192 on node 24), of the next DP replica
    // (GPU 8 on node 1), of the stage after (GPU 384 on node 48).
    QCOMPARE(pic.nodes, (std::vector<int>{0, 24, 1, 48}));
    // The estimate's traffic: TP on NVLink, DP and PP over the NICs.
    QCOMPARE(pic.estimate.intra_groups, QString("TP"));
    QVERIFY(pic.estimate.inter_groups.contains("DP") && pic.estimate.inter_groups.contains("PP"));
    QVERIFY(!pic.simulated);
    QCOMPARE(pic.nvlink_utilisation(3), pic.estimate.nvlink);
    QVERIFY(pic.estimate.nvlink > 0 && pic.estimate.nic > 0);
  }

  void follows_an_edit_of_tp_in_the_spin_box() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    click_tab(w, 3);
    auto* tp_spin = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.tp"));
    tp_spin->setFocus();
    type_into(tp_spin, 4);  // DP follows: 1536 / (4 x 8) = 48
    QCOMPARE(w.evaluation().scenario.plan.dp, 48);
    const auto& pic = topology(w)->picture();
    QVERIFY(pic.drawable);
    QCOMPARE(group(pic, "TP")->gpus, strided(0, 1, 4));
    QCOMPARE(group(pic, "DP")->gpus, strided(0, 4, 48));
    QCOMPARE(group(pic, "PP")->gpus, strided(0, 4 * 48, 8));
  }

  void after_simulate_links_take_the_simulated_utilisation() {
    QTemporaryDir dir;
    QFile script(dir.filePath("trainsim"));
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write(R"(#!/bin/sh
echo '{"feasible": true, "fidelity": "simulate", "step_time_s": 20, "tokens_per_s": 1000, "hottest_links": [
 {"link": "nvlink_gpu1346:down", "kind": "nvlink", "bytes": 2e9, "bandwidth_bytes_per_s": 3e11, "utilisation": 0.7},
 {"link": "nic_node0_0:up", "kind": "nic", "bytes": 1e9, "bandwidth_bytes_per_s": 25e9, "utilisation": 0.62},
 {"link": "nvlink_gpu3:down", "kind": "nvlink", "bytes": 1e9, "bandwidth_bytes_per_s": 3e11, "utilisation": 0.3},
 {"link": "leaf0_spine1:up", "kind": "switch", "bytes": 1e9, "bandwidth_bytes_per_s": 25e9, "utilisation": 0.45}]}'
)");
    script.close();
    script.setPermissions(script.permissions() | QFileDevice::ExeOwner);
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    click_tab(w, 3);
    w.runner()->set_program(script.fileName());
    QSignalSpy done(w.runner(), &trainsim::gui::SimulateRunner::finished_ok);
    w.simulate();
    QVERIFY(done.wait(10000));
    const auto& pic = topology(w)->picture();
    QVERIFY(pic.simulated);
    QCOMPARE(pic.hottest.size(), size_t(4));
    // The node of the hottest link (GPU 1346 on node 168) is drawn next to GPU 0's.
    QCOMPARE(pic.nodes, (std::vector<int>{0, 168, 24, 1}));
    QCOMPARE(pic.nvlink_utilisation(1346), 0.7);
    QCOMPARE(pic.nic_utilisation(0, 0), 0.62);
    QCOMPARE(pic.nvlink_utilisation(3), 0.3);
    QCOMPARE(pic.uplink_utilisation(), 0.45);
    QVERIFY(pic.nvlink_utilisation(4) < 0);  // not among the simulation's hottest links
    QVERIFY(pic.nic_utilisation(24, 1) < 0);
    // The groups are still drawn: the placement did not change.
    QVERIFY(group(pic, "TP") && group(pic, "PP"));
    // An edit brings the estimate back.
    auto* mb = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.micro_batch"));
    mb->setFocus();
    type_into(mb, 2);
    QVERIFY(!topology(w)->picture().simulated);
  }
};

QTEST_MAIN(TopologyViewTest)
#include "topology_view_test.moc"
