// Human formatting of SI quantities for labels and tooltips (values stay SI doubles inside).
#pragma once

#include <QString>

namespace trainsim::gui {

QString format_seconds(double seconds);          // "1.23 s", "45.6 ms", "12 µs"
QString format_bytes(double bytes);              // binary units: "74.2 GiB"
QString format_rate(double per_s, const QString& unit);  // "1.2 M tokens/s"
QString format_percent(double fraction);         // 0.423 -> "42.3%"
double bytes_to_gib(double bytes);

}  // namespace trainsim::gui
