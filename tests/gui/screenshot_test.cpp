// `trainsim-gui --screenshot DIR SCENARIO` writes one PNG per view, and each is a real picture:
// many colours, not one flat fill. Run as a child process, as a user or CI would.
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QStringList kViews = {"timeline", "memory", "breakdown", "topology", "sweep", "compare", "goodput", "validation"};

// Distinct colours in the right-hand part of the window (the view, not the scenario panel).
int distinct_colours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = image.height() / 6; y < image.height() - 30; y += 3)
    for (int x = image.width() / 3; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  return colours.size();
}

QStringList run_screenshots(const QString& dir, const QStringList& extra,
                            const QString& scenario = QString(TRAINSIM_TEST_SCENARIOS) + "/default.json") {
  QProcess p;
  p.start(TRAINSIM_GUI_BINARY, QStringList{"--screenshot", dir, scenario} + extra);
  if (!p.waitForFinished(60000)) return {};
  if (p.exitCode() != 0) {
    qWarning() << p.readAllStandardError();
    return {};
  }
  return QString::fromUtf8(p.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void every_view_renders_to_a_non_blank_png() {
    QTemporaryDir dir;
    const QStringList files =
        run_screenshots(dir.path(), {"--sweep", QString(TRAINSIM_GUI_TEST_DATA) + "/sweep_gpt3.jsonl"});
    QCOMPARE(files.size(), kViews.size());
    for (const QString& view : kViews) {
      const QImage image(dir.filePath(view + ".png"));
      QVERIFY2(!image.isNull(), qPrintable(view));
      QVERIFY(image.width() >= 800 && image.height() >= 600);
      if (view == "goodput") continue;  // default.json has no training.faults: a hint, no charts
      const int colours = distinct_colours(image);
      QVERIFY2(colours > 20, qPrintable(QString("%1: only %2 colours").arg(view).arg(colours)));
    }
    // The Goodput view draws its charts for a scenario with training.faults.
    QTemporaryDir faults;
    QCOMPARE(run_screenshots(faults.path(), {},
                             QString(TRAINSIM_TEST_SCENARIOS) + "/examples/llama3-405b-16k-goodput.json")
                 .size(),
             kViews.size());
    const int colours = distinct_colours(QImage(faults.filePath("goodput.png")));
    QVERIFY2(colours > 20, qPrintable(QString("goodput: only %1 colours").arg(colours)));
  }

  void an_input_that_does_not_load_renders_the_rest_and_exits_2() {
    // A script's screenshot run: what loaded is still rendered, the bad input is named on
    // stderr, and the exit status says the input was bad.
    QTemporaryDir dir;
    const QString negative = dir.filePath("negative.json");
    {
      QFile f(negative);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(R"({"feasible": true, "step_time_s": 1.5, "tokens_per_s": -3, "breakdown_s": {"compute": 1}})");
    }
    struct Case {
      QStringList args;
      const char* says;
    };
    const Case cases[] = {
        {{"--result", negative}, "--result: "},
        {{"--result", negative}, "tokens_per_s: -3 is negative"},
        {{"--sweep", dir.filePath("missing.jsonl")}, "--sweep: "},
        {{"--trace", dir.filePath("missing.json")}, "--trace: "},
        {{"--validation-report", dir.filePath("missing")}, "--validation-report: "},
        {{"--lang", "xx"}, "expected en or zh_CN"},
    };
    for (const Case& c : cases) {
      QTemporaryDir out;
      QProcess p;
      p.start(TRAINSIM_GUI_BINARY,
              QStringList{"--screenshot", out.path(), QString(TRAINSIM_TEST_SCENARIOS) + "/default.json"} + c.args);
      QVERIFY(p.waitForFinished(60000));
      const QString err = QString::fromUtf8(p.readAllStandardError());
      QVERIFY2(p.exitCode() == 2, qPrintable(c.args.join(' ') + ": exit " + QString::number(p.exitCode()) + " " + err));
      QVERIFY2(err.contains(c.says), qPrintable(c.args.join(' ') + ": " + err));
      QVERIFY2(QFile::exists(out.filePath("memory.png")), qPrintable(c.args.join(' ')));
    }
  }

  void chinese_screenshots_differ_from_english() {
    QTemporaryDir en, zh;
    QCOMPARE(run_screenshots(en.path(), {}).size(), kViews.size());
    QCOMPARE(run_screenshots(zh.path(), {"--lang", "zh_CN"}).size(), kViews.size());
    const QImage a(en.filePath("memory.png")), b(zh.filePath("memory.png"));
    QVERIFY(!a.isNull() && !b.isNull());
    QVERIFY(a != b);
  }
};

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
