#include "gui/format.hpp"

#include <cmath>

namespace trainsim::gui {

QString format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 1.0) return QString::number(seconds, 'f', 3) + " s";
  if (a >= 1e-3) return QString::number(seconds * 1e3, 'f', 2) + " ms";
  if (a >= 1e-6) return QString::number(seconds * 1e6, 'f', 1) + QString::fromUtf8(" µs");
  if (a == 0) return "0 s";
  return QString::number(seconds * 1e9, 'f', 0) + " ns";
}

double bytes_to_gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

QString format_bytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a >= 1024.0 * 1024 * 1024 * 1024) return QString::number(bytes / std::pow(1024.0, 4), 'f', 2) + " TiB";
  if (a >= 1024.0 * 1024 * 1024) return QString::number(bytes_to_gib(bytes), 'f', 1) + " GiB";
  if (a >= 1024.0 * 1024) return QString::number(bytes / (1024.0 * 1024), 'f', 1) + " MiB";
  if (a >= 1024.0) return QString::number(bytes / 1024.0, 'f', 1) + " KiB";
  return QString::number(bytes, 'f', 0) + " B";
}

QString format_rate(double per_s, const QString& unit) {
  const double a = std::fabs(per_s);
  if (a >= 1e9) return QString::number(per_s / 1e9, 'f', 2) + " G " + unit;
  if (a >= 1e6) return QString::number(per_s / 1e6, 'f', 2) + " M " + unit;
  if (a >= 1e3) return QString::number(per_s / 1e3, 'f', 1) + " k " + unit;
  return QString::number(per_s, 'f', 1) + " " + unit;
}

QString format_percent(double fraction) { return QString::number(fraction * 100.0, 'f', 1) + "%"; }

}  // namespace trainsim::gui
