// The Validation view as a user opens it: a `trainsim validate --backend cpu --report DIR`
// report (a real one, from a run the tool refused to judge because the machine was busy) through
// the window, its table against the report's own rows, its trace in the Timeline view, and a
// broken report refused with the field named while the view keeps what it showed.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gui/main_window.hpp"
#include "gui/timeline_view.hpp"
#include "gui/validation_view.hpp"

using trainsim::gui::MainWindow;
using trainsim::gui::TimelineView;
using trainsim::gui::ValidationView;

namespace {

const QString kReportDir = QString(TRAINSIM_GUI_TEST_DATA) + "/validation_report";

nlohmann::json report_json() {
  std::ifstream f((kReportDir + "/report.json").toStdString());
  return nlohmann::json::parse(f);
}

}  // namespace

class ValidationViewTest : public QObject {
  Q_OBJECT

 private slots:
  void opening_a_report_shows_its_rows_and_its_timelines() {
    MainWindow w;
    w.open_scenario(QString(TRAINSIM_TEST_SCENARIOS) + "/default.json");
    QString error;
    QVERIFY2(w.load_validation_report(kReportDir, &error), qPrintable(error));
    auto* view = w.findChild<ValidationView*>();
    QVERIFY(view);
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(view));
    const nlohmann::json r = report_json();
    // Every metric and every compute op class of the report, in its order.
    QCOMPARE(view->table()->rowCount(), static_cast<int>(r["metrics"].size() + r["compute_by_op_class"].size()));
    QCOMPARE(view->table()->item(0, 0)->text(), QString("step_time_s"));
    // Predicted step in ms, as the report has it in seconds.
    const double predicted_ms = 1e3 * r["metrics"][0]["predicted"].get<double>();
    QCOMPARE(view->table()->item(0, 1)->text(), QString::asprintf("%.4g ms", predicted_ms));
    // The run was refused: its verdict and reasons are shown, and no row is marked as failing.
    const QString summary = view->summary()->text();
    QVERIFY2(summary.contains(QString::fromStdString(r["verdict"].get<std::string>())), qPrintable(summary));
    QVERIFY2(summary.contains("disturbed by other processes"), qPrintable(summary));
    QVERIFY2(view->table()->item(0, 7)->text().contains("not judged"), qPrintable(view->table()->item(0, 7)->text()));
    // The side-by-side trace is in the Timeline view: the measured and the predicted process.
    auto* timeline = w.findChild<TimelineView*>();
    QVERIFY(timeline);
    QVERIFY(!timeline->current_trace().events.empty());
    const QStringList lanes = timeline->current_trace().lanes;
    auto lanes_of = [&](const QString& process) {
      return std::count_if(lanes.begin(), lanes.end(), [&](const QString& l) { return l.startsWith(process); });
    };
    QVERIFY2(lanes_of("measured") >= 1 && lanes_of("predicted") >= 1, qPrintable(lanes.join(", ")));
  }

  void index_html_and_report_json_open_the_same_report() {
    ValidationView a, b;
    QVERIFY(a.load_report(kReportDir + "/report.json"));
    QVERIFY(b.load_report(kReportDir + "/index.html"));
    QCOMPARE(a.report(), b.report());
  }

  void a_broken_report_names_the_field_and_keeps_the_view() {
    ValidationView v;
    QVERIFY(v.load_report(kReportDir));
    const int rows = v.table()->rowCount();
    QTemporaryDir dir;
    nlohmann::json bad = report_json();
    bad["metrics"] = "none";
    {
      QFile f(dir.filePath("report.json"));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray::fromStdString(bad.dump()));
    }
    QString error;
    QVERIFY(!v.load_report(dir.path(), &error));
    QVERIFY2(error.contains("metrics"), qPrintable(error));
    QCOMPARE(v.table()->rowCount(), rows);
    // Not JSON at all, and no file: refused with the file named.
    {
      QFile f(dir.filePath("report.json"));
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write("{ not json");
    }
    QVERIFY(!v.load_report(dir.path(), &error));
    QVERIFY2(error.contains("report.json"), qPrintable(error));
    QVERIFY(!v.load_report(dir.filePath("missing"), &error));
    QCOMPARE(v.table()->rowCount(), rows);
  }
};

QTEST_MAIN(ValidationViewTest)
#include "validation_view_test.moc"
