#include "gui/screenshot.hpp"

#include <QApplication>
#include <QDir>
#include <QPixmap>
#include <QTabWidget>

#include "gui/main_window.hpp"
#include "gui/scenario_view.hpp"

namespace trainsim::gui {

QStringList save_screenshots(MainWindow& window, const QString& dir, QString* error) {
  QStringList written;
  if (!QDir().mkpath(dir)) {
    if (error) *error = QString("cannot create %1").arg(dir);
    return {};
  }
  window.show();
  const auto views = window.views();
  for (int i = 0; i < views.size(); ++i) {
    window.tabs()->setCurrentIndex(i);
    // Let layouts settle and lazily drawn views (the timeline) run before grabbing.
    for (int k = 0; k < 3; ++k) QApplication::processEvents();
    const QString path = QDir(dir).filePath(views[i].first + ".png");
    if (!window.grab().save(path, "PNG")) {
      if (error) *error = QString("cannot write %1").arg(path);
      return {};
    }
    written << path;
  }
  return written;
}

}  // namespace trainsim::gui
