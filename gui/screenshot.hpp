// `trainsim-gui --screenshot DIR SCENARIO`: one PNG per view (DIR/<view>.png), each showing the
// whole window with that tab selected, so the panel and headline numbers are in every picture.
#pragma once

#include <QString>
#include <QStringList>

namespace trainsim::gui {

class MainWindow;

// Returns the files written; *error says what failed (empty list on failure).
QStringList save_screenshots(MainWindow& window, const QString& dir, QString* error);

}  // namespace trainsim::gui
