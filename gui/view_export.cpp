#include "gui/view_export.hpp"

#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QWidget>

#ifdef TRAINSIM_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

namespace trainsim::gui {

bool svg_export_available() {
#ifdef TRAINSIM_GUI_HAVE_SVG
  return true;
#else
  return false;
#endif
}

bool export_widget(QWidget* widget, const QString& file_path, QString* error) {
  const QString suffix = QFileInfo(file_path).suffix().toLower();
  if (suffix == "svg") {
#ifdef TRAINSIM_GUI_HAVE_SVG
    QSvgGenerator svg;
    svg.setFileName(file_path);
    svg.setSize(widget->size());
    svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
    svg.setTitle(widget->windowTitle());
    QPainter painter;
    if (!painter.begin(&svg)) {
      if (error) *error = QObject::tr("cannot write %1").arg(file_path);
      return false;
    }
    widget->render(&painter);
    painter.end();
    return true;
#else
    if (error) *error = QObject::tr("SVG export is not in this build (Qt SVG missing); save as .png");
    return false;
#endif
  }
  // Twice the screen resolution: exported charts end up in slides and papers.
  QImage image(widget->size() * 2, QImage::Format_ARGB32);
  image.setDevicePixelRatio(2.0);
  image.fill(Qt::white);
  QPainter painter(&image);
  widget->render(&painter);
  painter.end();
  if (!image.save(file_path, "PNG")) {
    if (error) *error = QObject::tr("cannot write %1").arg(file_path);
    return false;
  }
  return true;
}

}  // namespace trainsim::gui
