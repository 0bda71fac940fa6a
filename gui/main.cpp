// trainsim-gui: explore parallelism plans.
//   trainsim-gui [SCENARIO] [--lang en|zh_CN] [--sweep FILE] [--trace FILE]
//   trainsim-gui --screenshot DIR SCENARIO [--lang ...] [--sweep FILE] [--result FILE]
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <cstdio>

#include "gui/evaluation.hpp"
#include "gui/language.hpp"
#include "gui/main_window.hpp"
#include "gui/safe_application.hpp"
#include "gui/screenshot.hpp"

namespace {

// The default scenario (scenarios/default.json) from the preset search path.
QString default_scenario() {
  for (const auto& dir : trainsim::gui::gui_preset_dirs()) {
    const QString path = QDir(QString::fromStdString(dir)).filePath("default.json");
    if (QFileInfo::exists(path)) return path;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  trainsim::gui::SafeApplication app(argc, argv);
  QApplication::setApplicationName("trainsim-gui");
  QApplication::setOrganizationName("trainsim");

  QCommandLineParser parser;
  parser.setApplicationDescription("Explore parallelism plans for large-model training (trainsim).");
  parser.addHelpOption();
  parser.addPositionalArgument("scenario", "Scenario JSON to open (default: scenarios/default.json).");
  QCommandLineOption screenshot(QStringLiteral("screenshot"), "Render each view of SCENARIO to DIR/<view>.png and exit.", "DIR");
  QCommandLineOption lang(QStringLiteral("lang"), "User-interface language: en or zh_CN.", "code", "en");
  QCommandLineOption sweep(QStringLiteral("sweep"), "Load sweep results (JSONL or CSV) into the Sweep view.", "file");
  QCommandLineOption trace(QStringLiteral("trace"), "Load a Chrome/Perfetto trace into the Timeline view.", "file");
  parser.addOption(screenshot);
  parser.addOption(lang);
  parser.addOption(sweep);
  QCommandLineOption result(QStringLiteral("result"),
                            "Show a `trainsim run --json` result (a simulation of SCENARIO) as Simulate would.", "file");
  QCommandLineOption report(QStringLiteral("validation-report"),
                            "Show a `trainsim validate --report DIR` report (DIR or its report.json).", "dir");
  parser.addOption(trace);
  parser.addOption(result);
  parser.addOption(report);
  parser.process(app);

  // An input that does not load is said on stderr; the window opens anyway, with what did. A
  // screenshot run is a script's: it renders what loaded and then exits 2 (bad input).
  bool bad_input = false;
  if (!trainsim::gui::set_language(parser.value(lang))) {
    std::fprintf(stderr, "trainsim-gui: --lang: no translation for %s (expected en or zh_CN); using English\n",
                 qPrintable(parser.value(lang)));
    bad_input = true;
  }

  const QStringList args = parser.positionalArguments();
  QString scenario = args.isEmpty() ? default_scenario() : args.first();
  if (parser.isSet(screenshot) && args.isEmpty()) {
    std::fprintf(stderr, "usage: trainsim-gui --screenshot DIR SCENARIO\n");
    return 2;
  }

  trainsim::gui::MainWindow window;
  if (!scenario.isEmpty()) window.open_scenario(scenario);
  QString error;
  auto failed = [&](const char* option) {
    std::fprintf(stderr, "trainsim-gui: --%s: %s\n", option, qPrintable(error));
    bad_input = true;
  };
  if (parser.isSet(sweep) && !window.load_sweep(parser.value(sweep), &error)) failed("sweep");
  if (parser.isSet(trace) && !window.load_trace(parser.value(trace), &error)) failed("trace");
  if (parser.isSet(result) && !window.load_result(parser.value(result), &error)) failed("result");
  if (parser.isSet(report) && !window.load_validation_report(parser.value(report), &error))
    failed("validation-report");

  if (parser.isSet(screenshot)) {
    const QStringList files = trainsim::gui::save_screenshots(window, parser.value(screenshot), &error);
    if (files.isEmpty()) {
      std::fprintf(stderr, "trainsim-gui: %s\n", qPrintable(error));
      return 1;
    }
    for (const auto& f : files) std::printf("%s\n", qPrintable(f));
    // A scenario that does not load still renders (the error is in the picture), but says so.
    if (!window.evaluation().loaded) {
      std::fprintf(stderr, "trainsim-gui: %s\n", window.evaluation().error_message.c_str());
      return 2;
    }
    return bad_input ? 2 : 0;
  }
  window.show();
  return app.exec();
}
