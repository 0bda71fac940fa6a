// "Export view": renders a widget to PNG (pixels, at 2x for print) or SVG (vectors, when Qt SVG
// is in the build).
#pragma once

#include <QString>

class QWidget;

namespace trainsim::gui {

bool svg_export_available();
// The format follows the file suffix (.png or .svg). Returns false and sets *error on failure.
bool export_widget(QWidget* widget, const QString& file_path, QString* error);

}  // namespace trainsim::gui
