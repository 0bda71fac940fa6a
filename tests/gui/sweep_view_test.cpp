// The Sweep view as a user meets it: clicks on "Sweep this scenario", "Search plans" and
// "Cancel" start and stop a child trainsim (a stand-in script, and the real binary on a small
// sweep), progress follows the child's progress lines, the results load into the chart; the
// Pareto count is the CLI's on the same rows; the axes span the feasible plans.
#include <QFile>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/format.hpp"
#include "gui/main_window.hpp"
#include "gui/search_runner.hpp"
#include "gui/summary_bar.hpp"
#include "gui/sweep_view.hpp"

using trainsim::gui::MainWindow;
using trainsim::gui::SearchRunner;
using trainsim::gui::SweepView;

namespace {

const QString kScenarios = QString(TRAINSIM_TEST_SCENARIOS);

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& text, bool executable = false) {
  const QString path = dir.filePath(name);
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write(text);
  f.close();
  if (executable) f.setPermissions(f.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeUser);
  return path;
}

SweepView* sweep_view(MainWindow& w) { return qobject_cast<SweepView*>(w.views()[4].second); }

// Clicks the Sweep tab as a user would.
void open_sweep_tab(MainWindow& w) {
  QTabBar* bar = w.tabs()->tabBar();
  QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(4).center());
  QCOMPARE(w.tabs()->currentIndex(), 4);
}

// "Pareto front (throughput vs peak memory vs GPU count, estimate): 21 plans" in the summary.
int cli_front_count(const QString& summary) {
  const auto m = QRegularExpression(R"(Pareto front \([^)]*\): (\d+) plans)").match(summary);
  return m.hasMatch() ? m.captured(1).toInt() : -1;
}

// A stand-in trainsim: `sweep FILE --out PREFIX ...` writes two rows (one feasible, one out of
// memory, the sweep's format) after two progress lines; `plan ...` prints a plan search's JSON.
QByteArray stand_in_cli() {
  return R"(#!/bin/sh
case "$1" in
sweep)
  prefix="$4"
  echo "sweep: 1/2 plans ( 50%)  1 plans/s  ETA 1 s, 1 s so far" >&2
  sleep 0.3
  printf '%s\n' '{"trainsim_sweep": {"format": 1, "fingerprint": "x", "sweep": "s", "plans": 2}}' \
    '{"index": 0, "gpus": 1536, "plan": {"tp": 8, "pp": 8, "dp": 24}, "feasible": true, "meets_constraints": true, "objective": 1e5, "step_time_s": 15, "tokens_per_s": 1e5, "memory": {"peak_bytes": 6e10}}' \
    '{"index": 1, "gpus": 1536, "plan": {"tp": 2, "pp": 2, "dp": 384}, "feasible": false, "meets_constraints": false, "objective": null, "reason_code": "out_of_memory", "reason": "out of memory", "memory": {"peak_bytes": 7e11}}' \
    > "$prefix.rows.jsonl"
  echo "sweep: 2/2 plans (100%)  2 plans/s  done in 1 s" >&2
  echo "Pareto front (throughput vs peak memory vs GPU count, estimate): 1 plans"
  ;;
plan)
  echo "plan search:  40%  ETA 1 s, 1 s so far" >&2
  sleep 0.3
  echo '{"searched": 10, "feasible": 2, "best": [{"feasible": true, "gpus": 1536, "step_time_s": 14, "tokens_per_s": 1.2e5, "memory": {"peak_bytes": 5e10}, "scenario": {"plan": {"tp": 4, "pp": 16, "dp": 24, "micro_batch": 1}}}, {"feasible": true, "gpus": 1536, "step_time_s": 16, "tokens_per_s": 1.0e5, "memory": {"peak_bytes": 4e10}, "scenario": {"plan": {"tp": 8, "pp": 16, "dp": 12, "micro_batch": 1}}}], "rejected": []}'
  ;;
*) echo "unexpected: $*" >&2; exit 2 ;;
esac
)";
}

}  // namespace

class SweepViewTest : public QObject {
  Q_OBJECT

 private slots:
  void sweep_this_scenario_runs_a_child_with_progress_and_loads_its_rows() {
    QTemporaryDir dir;
    const QString fake = write_file(dir, "trainsim", stand_in_cli(), true);
    MainWindow w;
    QVERIFY(w.open_scenario(kScenarios + "/default.json"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    open_sweep_tab(w);
    SweepView* sweep = sweep_view(w);
    sweep->runner()->set_program(fake);
    QSignalSpy progress(sweep->runner(), &SearchRunner::progress);
    QSignalSpy done(sweep->runner(), &SearchRunner::finished_ok);
    QVERIFY(sweep->sweep_button()->isEnabled());
    QTest::mouseClick(sweep->sweep_button(), Qt::LeftButton);
    QVERIFY(sweep->runner()->running());
    QVERIFY(sweep->cancel_button()->isEnabled());
    QVERIFY(!sweep->sweep_button()->isEnabled());
    QVERIFY(sweep->progress_bar()->isVisible());
    QCOMPARE(sweep->runner()->last_arguments().first(), QString("sweep"));
    QVERIFY(done.wait(10000));
    // The child's progress line "sweep: 1/2 plans ( 50%)" came through as a half.
    bool half = false;
    for (const auto& args : progress) half = half || std::abs(args.at(0).toDouble() - 0.5) < 1e-9;
    QVERIFY(half);
    QCOMPARE(sweep->table().rows.size(), size_t(2));
    QCOMPARE(sweep->table().pareto.size(), size_t(1));
    QVERIFY(sweep->run_status().contains("finished"));
    QVERIFY(!sweep->progress_bar()->isVisible());
    QVERIFY(sweep->sweep_button()->isEnabled());
    // The out-of-memory row (no throughput) is counted by its reason, not drawn.
    QVERIFY(sweep->info_text().contains("out_of_memory 1"));
    QCOMPARE(sweep->drawn_rows().size(), size_t(1));
  }

  void a_sweep_can_be_cancelled_with_the_cancel_button() {
    QTemporaryDir dir;
    const QString fake = write_file(dir, "trainsim", "#!/bin/sh\nexec sleep 30\n", true);
    MainWindow w;
    QVERIFY(w.open_scenario(kScenarios + "/default.json"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    open_sweep_tab(w);
    SweepView* sweep = sweep_view(w);
    sweep->runner()->set_program(fake);
    QSignalSpy cancelled(sweep->runner(), &SearchRunner::cancelled);
    QTest::mouseClick(sweep->sweep_button(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(sweep->runner()->running(), 5000);
    QTest::mouseClick(sweep->cancel_button(), Qt::LeftButton);
    QVERIFY(cancelled.wait(10000));
    QVERIFY(!sweep->runner()->running());
    QVERIFY(sweep->run_status().contains("Cancelled"));
    QVERIFY(sweep->sweep_button()->isEnabled());
    QVERIFY(!sweep->cancel_button()->isEnabled());
  }

  void search_plans_runs_trainsim_plan_and_cancels() {
    QTemporaryDir dir;
    const QString fake = write_file(dir, "trainsim", stand_in_cli(), true);
    MainWindow w;
    QVERIFY(w.open_scenario(kScenarios + "/default.json"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    open_sweep_tab(w);
    SweepView* sweep = sweep_view(w);
    sweep->runner()->set_program(fake);
    QSignalSpy progress(sweep->runner(), &SearchRunner::progress);
    QSignalSpy done(sweep->runner(), &SearchRunner::finished_ok);
    QTest::mouseClick(sweep->plan_button(), Qt::LeftButton);
    QVERIFY(done.wait(10000));
    // The search is the scenario's: its GPUs and global batch.
    const QStringList args = sweep->runner()->last_arguments();
    QCOMPARE(args.first(), QString("plan"));
    QCOMPARE(args.at(args.indexOf("--gpus") + 1), QString("1536"));
    QCOMPARE(args.at(args.indexOf("--global-batch") + 1), QString::number(w.evaluation().scenario.plan.global_batch));
    bool forty = false;
    for (const auto& a : progress) forty = forty || std::abs(a.at(0).toDouble() - 0.4) < 1e-9;
    QVERIFY(forty);
    QCOMPARE(sweep->table().kind, QString("plan"));
    QCOMPARE(sweep->table().rows.size(), size_t(2));
    QCOMPARE(QString::fromStdString(sweep->table().rows[0].plan.at("plan.tp")), QString("4"));
    // Both are on the front: one is faster, the other needs less memory.
    QCOMPARE(sweep->table().pareto.size(), size_t(2));

    // And a search that runs long is cancelled by the button.
    const QString slow = write_file(dir, "slow", "#!/bin/sh\nexec sleep 30\n", true);
    sweep->runner()->set_program(slow);
    QSignalSpy cancelled(sweep->runner(), &SearchRunner::cancelled);
    QTest::mouseClick(sweep->plan_button(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(sweep->runner()->running(), 5000);
    QTest::mouseClick(sweep->cancel_button(), Qt::LeftButton);
    QVERIFY(cancelled.wait(10000));
    QVERIFY(sweep->plan_button()->isEnabled());
  }

  void the_real_trainsim_sweeps_a_small_scenario_and_the_pareto_count_is_the_clis() {
    // The base of the shipped small sweep (GPT 1.7B on 32 A100) as the scenario being edited.
    QTemporaryDir dir;
    const QString scenario = write_file(dir, "small.json", R"({
      "schema_version": 1, "name": "gpt-1.7b-32xA100", "model": "gpt-1.7b",
      "cluster": {"base": "dgx-a100-superpod", "nodes": 4},
      "plan": {"micro_batch": 4, "global_batch": 512, "recompute": "full"}})");
    MainWindow w;
    QVERIFY(w.open_scenario(scenario));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    open_sweep_tab(w);
    SweepView* sweep = sweep_view(w);
    sweep->runner()->set_program(TRAINSIM_CLI_BINARY);
    QSignalSpy done(sweep->runner(), &SearchRunner::finished_ok);
    QSignalSpy failed(sweep->runner(), &SearchRunner::failed);
    QTest::mouseClick(sweep->sweep_button(), Qt::LeftButton);
    QVERIFY2(done.wait(60000), failed.isEmpty() ? "timeout" : qPrintable(failed.first().first().toString()));
    const QString summary = done.first().at(1).toString();
    const int cli = cli_front_count(summary);
    QVERIFY2(cli > 0, qPrintable(summary));
    QCOMPARE(static_cast<int>(sweep->table().pareto.size()), cli);
    // 21 factorisations of 32 x 4 micro-batches x 3 ZeRO stages x 2 recompute choices.
    QCOMPARE(sweep->table().rows.size(), size_t(21 * 4 * 3 * 2));
  }

  void the_pareto_count_equals_the_clis_on_the_shipped_gpt3_sweep() {
    // scenarios/sweeps/gpt3-175b-1536.json run by the real trainsim from the GUI: the front
    // the chart draws has as many plans as the CLI's summary of the same rows says.
    MainWindow w;
    QVERIFY(w.open_scenario(kScenarios + "/default.json"));
    SweepView* sweep = sweep_view(w);
    sweep->runner()->set_program(TRAINSIM_CLI_BINARY);
    QSignalSpy done(sweep->runner(), &SearchRunner::finished_ok);
    QSignalSpy failed(sweep->runner(), &SearchRunner::failed);
    sweep->run_sweep_file(kScenarios + "/sweeps/gpt3-175b-1536.json");
    QVERIFY2(done.wait(120000), failed.isEmpty() ? "timeout" : qPrintable(failed.first().first().toString()));
    const int cli = cli_front_count(done.first().at(1).toString());
    QVERIFY(cli > 0);
    QCOMPARE(static_cast<int>(sweep->table().pareto.size()), cli);
    // Plans outside the constraints are not on the front although feasible.
    int outside = 0;
    for (const auto& r : sweep->table().rows) outside += r.feasible && !r.meets_constraints;
    QVERIFY(outside > 0);
    for (int i : sweep->table().pareto) QVERIFY(sweep->table().rows[i].meets_constraints);
  }

  void the_axes_span_the_feasible_plans() {
    // sweep_gpt3.jsonl carries metrics for its out-of-memory plans too (up to 705 GB per GPU).
    MainWindow w;
    QVERIFY(w.open_scenario(kScenarios + "/default.json"));
    QString error;
    QVERIFY2(w.load_sweep(QString(TRAINSIM_GUI_TEST_DATA) + "/sweep_gpt3.jsonl", &error), qPrintable(error));
    SweepView* sweep = sweep_view(w);
    double feasible_max = 0, max_all = 0;
    for (const auto& r : sweep->table().rows) {
      max_all = std::max(max_all, r.peak_bytes);
      if (r.feasible) feasible_max = std::max(feasible_max, r.peak_bytes);
    }
    const double hbm = w.evaluation().result.hbm_capacity_bytes;
    QVERIFY(max_all > 5 * hbm);  // the file has plans far out of memory
    const double axis_max = sweep->x_max_gib();
    QVERIFY(axis_max >= trainsim::gui::bytes_to_gib(std::max(feasible_max, hbm)));
    QVERIFY2(axis_max < 1.5 * trainsim::gui::bytes_to_gib(std::max(feasible_max, hbm)), qPrintable(QString::number(axis_max)));
    QVERIFY(sweep->infeasible_outside_axes() > 0);
    QVERIFY(sweep->info_text().contains("outside the axes"));
    for (int i : sweep->drawn_rows()) QVERIFY(trainsim::gui::bytes_to_gib(sweep->table().rows[i].peak_bytes) <= axis_max);
  }
};

QTEST_MAIN(SweepViewTest)
#include "sweep_view_test.moc"
