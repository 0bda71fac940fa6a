#include "gui/safe_application.hpp"

#include <cstdio>
#include <exception>

namespace trainsim::gui {
namespace {

std::function<void(const QString&)>& sink() {
  static std::function<void(const QString&)> s;
  return s;
}

}  // namespace

SafeApplication::SafeApplication(int& argc, char** argv) : QApplication(argc, argv) {}

void SafeApplication::set_error_sink(std::function<void(const QString&)> s) { sink() = std::move(s); }

void SafeApplication::report_error(const QString& what) {
  std::fprintf(stderr, "trainsim-gui: %s\n", qPrintable(what));
  if (sink()) sink()(what);
}

bool SafeApplication::notify(QObject* receiver, QEvent* event) {
  try {
    return QApplication::notify(receiver, event);
  } catch (const std::exception& e) {
    report_error(QString::fromUtf8(e.what()));
  } catch (...) {
    report_error(QStringLiteral("unknown error"));
  }
  return false;
}

}  // namespace trainsim::gui
