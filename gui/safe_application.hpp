// The GUI's QApplication: an exception escaping a slot or an event handler is caught at the
// event loop and shown to the user, never allowed to abort the program (and lose edits).
#pragma once

#include <QApplication>
#include <QString>
#include <functional>

namespace trainsim::gui {

class SafeApplication : public QApplication {
 public:
  SafeApplication(int& argc, char** argv);
  bool notify(QObject* receiver, QEvent* event) override;

  // Who hears about a caught exception (the main window's status bar); stderr when unset.
  static void set_error_sink(std::function<void(const QString&)> sink);
  // Reports `what` to the sink; used by notify() and by code that catches for itself.
  static void report_error(const QString& what);
};

}  // namespace trainsim::gui
