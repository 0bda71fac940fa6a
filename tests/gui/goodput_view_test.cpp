// The Goodput view shows what `trainsim run` prints for the same scenario: the live figures are
// the CLI's --fidelity estimate JSON (same function, same trials and seed), and after Simulate
// the simulation's own goodput report.
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QSignalSpy>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/format.hpp"
#include "gui/goodput_view.hpp"
#include "gui/main_window.hpp"
#include "gui/simulate_runner.hpp"
#include "gui/summary_bar.hpp"
#include "models/reliability/goodput_json.hpp"

using trainsim::gui::MainWindow;

namespace {

const QString kExample = QString(TRAINSIM_TEST_SCENARIOS) + "/examples/llama3-405b-16k-goodput.json";

nlohmann::json cli_json(const QStringList& args) {
  QProcess p;
  p.start(TRAINSIM_CLI_BINARY, args);
  if (!p.waitForFinished(120000)) return {};
  const QByteArray out = p.readAllStandardOutput();
  return nlohmann::json::parse(out.constBegin(), out.constEnd(), nullptr, false);
}

QLabel* goodput_summary(MainWindow& w) {
  auto* view = qobject_cast<trainsim::gui::GoodputView*>(w.views()[6].second);
  return view ? view->findChild<QLabel*>() : nullptr;
}

void click_tab(MainWindow& w, int index) {
  QTabBar* bar = w.tabs()->tabBar();
  QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(index).center());
  QCOMPARE(w.tabs()->currentIndex(), index);
}

}  // namespace

class GoodputViewTest : public QObject {
  Q_OBJECT

 private slots:
  void the_live_goodput_is_the_clis_estimate_json() {
    const nlohmann::json cli = cli_json({"run", kExample, "--fidelity", "estimate", "--json"});
    QVERIFY(cli.is_object() && cli.contains("goodput"));
    MainWindow w;
    QVERIFY(w.open_scenario(kExample));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    click_tab(w, 6);
    const auto& g = w.evaluation().goodput;
    QVERIFY(g.enabled);
    const nlohmann::json& c = cli["goodput"];
    // Same function, same inputs: the same numbers, not close ones.
    QCOMPARE(g.goodput_fraction, c["goodput_fraction"].get<double>());
    QCOMPARE(g.goodput_tokens_per_s, c["goodput_tokens_per_s"].get<double>());
    QCOMPARE(g.lost.total() / 3600, c["lost_hours"]["total"].get<double>());
    QCOMPARE(g.lost.restart_s / 3600, c["lost_hours"]["restart"].get<double>());
    QCOMPARE(g.run.useful_fraction_mean, c["useful_fraction"]["monte_carlo_mean"].get<double>());
    QCOMPARE(g.expected_failures, c["expected_failures"].get<double>());
    QCOMPARE(trainsim::goodput_to_json(g).dump(), c.dump());
    // And the view prints them.
    QLabel* summary = goodput_summary(w);
    QVERIFY(summary);
    const QString text = summary->text();
    QVERIFY2(text.contains(trainsim::gui::format_percent(c["goodput_fraction"].get<double>())), qPrintable(text));
    QVERIFY2(text.contains(QString::number(c["lost_hours"]["total"].get<double>(), 'f', 2) + " h"), qPrintable(text));
    QVERIFY(text.contains("estimated step"));
    QVERIFY(text.contains(QString("Monte Carlo of %1 runs").arg(w.evaluation().scenario.training.faults.trials)));
  }

  void after_simulate_the_view_shows_the_simulations_goodput() {
    // A stand-in simulation: the CLI's estimate JSON relabelled as a simulation with its own
    // goodput figures, as `trainsim run --fidelity simulate --json` reports them.
    nlohmann::json sim = cli_json({"run", kExample, "--fidelity", "estimate", "--json"});
    QVERIFY(sim.is_object());
    sim["fidelity"] = "simulate";
    sim["goodput"]["goodput_fraction"] = 0.5;
    sim["goodput"]["lost_hours"] = {{"checkpoint", 1.0}, {"lost_work", 2.0}, {"restart", 300.0}, {"repair_wait", 0.0},
                                    {"stragglers", 10.0}, {"degraded_links", 8.0}, {"total", 321.0}};
    QTemporaryDir dir;
    QFile json_file(dir.filePath("sim.json"));
    QVERIFY(json_file.open(QIODevice::WriteOnly));
    json_file.write(QByteArray::fromStdString(sim.dump()));
    json_file.close();
    QFile script(dir.filePath("trainsim"));
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write(QByteArray("#!/bin/sh\ncat '") + json_file.fileName().toUtf8() + "'\n");
    script.close();
    script.setPermissions(script.permissions() | QFileDevice::ExeOwner);

    MainWindow w;
    QVERIFY(w.open_scenario(kExample));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    click_tab(w, 6);
    w.runner()->set_program(script.fileName());
    QSignalSpy done(w.runner(), &trainsim::gui::SimulateRunner::finished_ok);
    w.simulate();
    QVERIFY(done.wait(10000));
    QCOMPARE(w.evaluation().goodput.goodput_fraction, 0.5);
    const QString text = goodput_summary(w)->text();
    QVERIFY2(text.contains(trainsim::gui::format_percent(0.5)), qPrintable(text));
    QVERIFY(text.contains("321.00 h"));
    QVERIFY(text.contains("simulated step"));
  }
};

QTEST_MAIN(GoodputViewTest)
#include "goodput_view_test.moc"
