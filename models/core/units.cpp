#include "models/core/units.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "models/core/scenario_error.hpp"

namespace trainsim::units {
namespace {

struct UnitEntry {
  std::string_view suffix;
  double factor;
};

// Decimal prefixes are SI (1 GB = 1e9 B); binary ones are IEC (1 GiB = 2^30 B).
constexpr double kKi = 1024.0;
constexpr std::array kByteUnits = {
    UnitEntry{"B", 1.0},          UnitEntry{"kB", 1e3},        UnitEntry{"KB", 1e3},
    UnitEntry{"MB", 1e6},         UnitEntry{"GB", 1e9},        UnitEntry{"TB", 1e12},
    UnitEntry{"PB", 1e15},        UnitEntry{"KiB", kKi},       UnitEntry{"MiB", kKi * kKi},
    UnitEntry{"GiB", kKi * kKi * kKi}, UnitEntry{"TiB", kKi * kKi * kKi * kKi},
    UnitEntry{"PiB", kKi * kKi * kKi * kKi * kKi},
};
// Bandwidth: bits per second ("bps", "b/s") are divided by 8.
constexpr std::array kBandwidthUnits = {
    UnitEntry{"bps", 1.0 / 8},     UnitEntry{"Kbps", 1e3 / 8},   UnitEntry{"kbps", 1e3 / 8},
    UnitEntry{"Mbps", 1e6 / 8},    UnitEntry{"Gbps", 1e9 / 8},   UnitEntry{"Tbps", 1e12 / 8},
    UnitEntry{"b/s", 1.0 / 8},     UnitEntry{"Kb/s", 1e3 / 8},   UnitEntry{"Mb/s", 1e6 / 8},
    UnitEntry{"Gb/s", 1e9 / 8},    UnitEntry{"Tb/s", 1e12 / 8},  UnitEntry{"Bps", 1.0},
    UnitEntry{"KBps", 1e3},        UnitEntry{"kBps", 1e3},       UnitEntry{"MBps", 1e6},
    UnitEntry{"GBps", 1e9},        UnitEntry{"TBps", 1e12},      UnitEntry{"B/s", 1.0},
    UnitEntry{"KB/s", 1e3},        UnitEntry{"MB/s", 1e6},       UnitEntry{"GB/s", 1e9},
    UnitEntry{"TB/s", 1e12},       UnitEntry{"KiB/s", kKi},      UnitEntry{"MiB/s", kKi * kKi},
    UnitEntry{"GiB/s", kKi * kKi * kKi},
};
constexpr std::array kTimeUnits = {
    UnitEntry{"s", 1.0},   UnitEntry{"ms", 1e-3}, UnitEntry{"us", 1e-6}, UnitEntry{"µs", 1e-6},
    UnitEntry{"ns", 1e-9}, UnitEntry{"min", 60.0}, UnitEntry{"h", 3600.0},
    UnitEntry{"d", 86400.0},
};
constexpr std::array kFlopsUnits = {
    UnitEntry{"FLOPS", 1.0},     UnitEntry{"GFLOPS", 1e9},    UnitEntry{"TFLOPS", 1e12},
    UnitEntry{"PFLOPS", 1e15},   UnitEntry{"FLOP/s", 1.0},    UnitEntry{"GFLOP/s", 1e9},
    UnitEntry{"TFLOP/s", 1e12},  UnitEntry{"PFLOP/s", 1e15},
};
constexpr std::array kCountUnits = {UnitEntry{"", 1.0}, UnitEntry{"K", 1e3}, UnitEntry{"M", 1e6},
                                    UnitEntry{"B", 1e9}, UnitEntry{"T", 1e12}};

template <std::size_t N>
std::string join(const std::array<UnitEntry, N>& table) {
  std::string out;
  for (const auto& e : table) {
    if (e.suffix.empty()) continue;
    if (!out.empty()) out += ", ";
    out += e.suffix;
  }
  return out;
}

template <std::size_t N>
const UnitEntry* find(const std::array<UnitEntry, N>& table, std::string_view suffix) {
  for (const auto& e : table)
    if (e.suffix == suffix) return &e;
  return nullptr;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kBytes: return "a size in bytes";
    case Kind::kBandwidth: return "a bandwidth";
    case Kind::kTime: return "a time";
    case Kind::kFlops: return "a FLOP rate";
    case Kind::kCount: return "a count";
  }
  return "a quantity";
}

}  // namespace

std::string accepted_units(Kind kind) {
  switch (kind) {
    case Kind::kBytes: return join(kByteUnits);
    case Kind::kBandwidth: return join(kBandwidthUnits);
    case Kind::kTime: return join(kTimeUnits);
    case Kind::kFlops: return join(kFlopsUnits);
    case Kind::kCount: return join(kCountUnits);
  }
  return {};
}

double parse(std::string_view text, Kind kind, const std::string& path) {
  auto fail = [&](const std::string& why) -> double {
    // The value as written, but at most 64 printable characters of it (it may be any string).
    std::string shown;
    for (std::size_t i = 0; i < text.size() && shown.size() < 64; ++i)
      shown += text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    if (text.size() > 64) shown += "...";
    throw ScenarioError(path, "\"" + shown + "\" is not " + kind_name(kind) + ": " +
                                  why + " (accepted units: " + accepted_units(kind) + ")");
  };
  if (text.size() > 64) return fail("too long");
  std::string s(text);
  // Trim spaces.
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s = s.substr(start);
  if (s.empty()) return fail("empty");
  const char* begin = s.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin) return fail("no number");
  std::string suffix(end);
  // Allow one space between the number and the unit ("80 GiB").
  if (!suffix.empty() && suffix.front() == ' ') suffix.erase(0, 1);
  if (!std::isfinite(value)) return fail("not a finite number");
  if (value < 0) return fail("negative");
  // strtod also accepts hex floats and "inf"/"nan"; only plain decimal numbers are quantities.
  for (const char* p = begin; p != end; ++p)
    if (!(std::isdigit(static_cast<unsigned char>(*p)) || *p == '.' || *p == 'e' || *p == 'E' ||
          *p == '+' || *p == '-'))
      return fail("not a decimal number");

  const UnitEntry* unit = nullptr;
  switch (kind) {
    case Kind::kBytes:
      if (suffix.empty()) return value;
      unit = find(kByteUnits, suffix);
      if (!unit && (suffix.back() == 'b' || suffix == "bit" || suffix.ends_with("bit")))
        return fail("that is bits; a size needs bytes, e.g. \"80GB\" or \"80GiB\"");
      if (!unit && find(kBandwidthUnits, suffix))
        return fail("that is a bandwidth; a size needs bytes");
      break;
    case Kind::kBandwidth:
      if (suffix.empty()) return value;
      unit = find(kBandwidthUnits, suffix);
      if (!unit && find(kByteUnits, suffix))
        return fail("a bandwidth needs a rate, e.g. \"200Gbps\" (bits) or \"25GBps\" (bytes)");
      break;
    case Kind::kTime:
      if (suffix.empty()) return value;
      unit = find(kTimeUnits, suffix);
      break;
    case Kind::kFlops:
      if (suffix.empty()) return value;
      unit = find(kFlopsUnits, suffix);
      break;
    case Kind::kCount:
      unit = find(kCountUnits, suffix);
      break;
  }
  if (!unit) return fail("unknown unit \"" + suffix + "\"");
  const double result = value * unit->factor;
  if (!std::isfinite(result) || result > 1e30) return fail("out of range");
  return result;
}

namespace {
std::string format_scaled(double value, const std::array<std::pair<double, const char*>, 5>& steps,
                          const char* base) {
  char buf[64];
  for (const auto& [scale, name] : steps) {
    if (std::fabs(value) >= scale) {
      std::snprintf(buf, sizeof buf, "%.3g %s", value / scale, name);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%.3g %s", value, base);
  return buf;
}
}  // namespace

std::string format_bytes(double bytes) {
  constexpr double k = 1024.0;
  return format_scaled(bytes, {{{k * k * k * k * k, "PiB"}, {k * k * k * k, "TiB"},
                                {k * k * k, "GiB"}, {k * k, "MiB"}, {k, "KiB"}}},
                       "B");
}
std::string format_time(double seconds) {
  char buf[64];
  if (seconds >= 1.0 || seconds == 0.0) std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  else if (seconds >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f us", seconds * 1e6);
  return buf;
}
std::string format_bandwidth(double bytes_per_s) {
  return format_scaled(bytes_per_s, {{{1e15, "PB/s"}, {1e12, "TB/s"}, {1e9, "GB/s"},
                                      {1e6, "MB/s"}, {1e3, "KB/s"}}},
                       "B/s");
}
std::string format_flops(double flops_per_s) {
  return format_scaled(flops_per_s, {{{1e18, "EFLOP/s"}, {1e15, "PFLOP/s"}, {1e12, "TFLOP/s"},
                                      {1e9, "GFLOP/s"}, {1e6, "MFLOP/s"}}},
                       "FLOP/s");
}

std::string format_bytes_si(double bytes) {
  return format_scaled(bytes, {{{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}}}, "B");
}
std::string format_count(double value) {
  if (!std::isfinite(value)) return "?";
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(value));
  const std::string s = digits;
  std::string out = value < 0 && s != "0" ? "-" : "";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

}  // namespace trainsim::units
