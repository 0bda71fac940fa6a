#include "models/scenario/json_reader.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "models/core/scenario_error.hpp"

namespace trainsim {

std::string json_type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  return "an unsupported value";
}

namespace {

// The code point of the UTF-8 sequence at s[i] and its length; length 0 where the bytes there
// are not one well-formed sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
std::pair<uint32_t, std::size_t> utf8_at(const std::string& s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return {0, 0};
  uint32_t cp = n == 1 ? c : c & (0x7f >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char t = static_cast<unsigned char>(s[i + k]);
    if ((t >> 6) != 0x2) return {0, 0};
    cp = (cp << 6) | (t & 0x3f);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {0, 0};
  return {cp, n};
}

// The bidirectional embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069: they
// let text rewrite the order of what a terminal shows after it.
bool reorders_text(uint32_t cp) { return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069); }

// Characters an excerpt may show as they are: printable ASCII and non-ASCII letters and signs,
// not C0/C1 controls, nor the marks that reorder or hide text on a terminal (bidi embeddings,
// overrides and isolates, zero-width and directional marks).
bool shown_as_is(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) return false;
  return !reorders_text(cp) && !(cp >= 0x200b && cp <= 0x200f) && cp != 0x061c && cp != 0xfeff;
}

}  // namespace

std::string safe_excerpt(const std::string& s, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0, i = 0;
  for (; i < s.size() && chars < max_chars; ++chars) {
    const auto [cp, n] = utf8_at(s, i);
    if (n > 0 && shown_as_is(cp)) {
      out.append(s, i, n);
      i += n;
    } else {
      out += '?';
      i += n > 0 ? n : 1;
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

std::string describe_json_value(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned()) return "the number " + std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return "the number " + std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return "the number " + v.dump();  // shortest form that reads back
  if (v.is_string()) return "a string (" + std::to_string(v.get_ref<const std::string&>().size()) + " characters)";
  if (v.is_array()) return "a list of " + std::to_string(v.size()) + (v.size() == 1 ? " item" : " items");
  if (v.is_object()) return "an object with " + std::to_string(v.size()) + (v.size() == 1 ? " key" : " keys");
  return "an unsupported value";
}

namespace {
std::string join_path(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}
std::string describe_range(double min, double max) {
  char buf[96];
  if (max >= 1e300) std::snprintf(buf, sizeof buf, ">= %g", min);
  else std::snprintf(buf, sizeof buf, "between %g and %g", min, max);
  return buf;
}
std::string describe_int_range(int64_t min, int64_t max) {
  if (max >= (int64_t{1} << 40)) return ">= " + std::to_string(min);
  return "between " + std::to_string(min) + " and " + std::to_string(max);
}
}  // namespace

int64_t json_to_integer(const nlohmann::json& v, const std::string& path, int64_t min,
                        int64_t max) {
  int64_t value = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw ScenarioError(path, "expected an integer " + describe_int_range(min, max) + ", got " +
                                    describe_json_value(v));
    value = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15)
      throw ScenarioError(path, "expected an integer " + describe_int_range(min, max) + ", got " +
                                    describe_json_value(v));
    value = static_cast<int64_t>(d);
  } else {
    throw ScenarioError(path, "expected an integer " + describe_int_range(min, max) + ", got " +
                                  describe_json_value(v));
  }
  if (value < min || value > max)
    throw ScenarioError(path, "expected an integer " + describe_int_range(min, max) + ", got " +
                                  std::to_string(value));
  return value;
}

double json_to_quantity(const nlohmann::json& v, units::Kind kind, const std::string& path) {
  if (v.is_number()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) throw ScenarioError(path, "expected a finite number");
    if (d < 0) throw ScenarioError(path, "expected a non-negative quantity, got " + describe_json_value(v));
    return d;
  }
  if (v.is_string()) return units::parse(v.get<std::string>(), kind, path);
  throw ScenarioError(path, "expected a number or a string with a unit (" +
                                units::accepted_units(kind) + "), got " + describe_json_value(v));
}

JsonReader::JsonReader(const nlohmann::json& object, std::string path)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object())
    throw ScenarioError(path_, "expected an object, got " + json_type_name(object_));
}

std::string JsonReader::child_path(const std::string& key) const { return join_path(path_, key); }

bool JsonReader::has(const std::string& key) const { return object_.contains(key); }

const nlohmann::json* JsonReader::raw(const std::string& key) {
  read_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

void JsonReader::fail(const std::string& key, const std::string& message) const {
  throw ScenarioError(child_path(key), message);
}

const nlohmann::json& JsonReader::require(const std::string& key) {
  const nlohmann::json* v = raw(key);
  if (!v) fail(key, "missing (required)");
  return *v;
}

int64_t JsonReader::integer(const std::string& key, int64_t min, int64_t max) {
  return json_to_integer(require(key), child_path(key), min, max);
}
int64_t JsonReader::integer_or(const std::string& key, int64_t fallback, int64_t min,
                               int64_t max) {
  const nlohmann::json* v = raw(key);
  return v ? json_to_integer(*v, child_path(key), min, max) : fallback;
}

double JsonReader::number(const std::string& key, double min, double max) {
  const nlohmann::json& v = require(key);
  if (!v.is_number())
    fail(key, "expected a number " + describe_range(min, max) + ", got " + describe_json_value(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max)
    fail(key, "expected a number " + describe_range(min, max) + ", got " + describe_json_value(v));
  return d;
}
double JsonReader::number_or(const std::string& key, double fallback, double min, double max) {
  return has(key) ? number(key, min, max) : (read_.insert(key), fallback);
}

double JsonReader::quantity(const std::string& key, units::Kind kind, double min, double max) {
  const nlohmann::json& v = require(key);
  const double d = json_to_quantity(v, kind, child_path(key));
  if (d < min || d > max) {
    char si[48];
    std::snprintf(si, sizeof si, "%.6g", d);
    fail(key, "expected a value " + describe_range(min, max) + " (SI base units), got " +
                  (v.is_string() ? "\"" + safe_excerpt(v.get<std::string>()) + "\" = " + si : std::string(si)));
  }
  return d;
}
double JsonReader::quantity_or(const std::string& key, units::Kind kind, double fallback,
                               double min, double max) {
  return has(key) ? quantity(key, kind, min, max) : (read_.insert(key), fallback);
}

bool JsonReader::boolean_or(const std::string& key, bool fallback) {
  const nlohmann::json* v = raw(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(key, "expected true or false, got " + describe_json_value(*v));
  return v->get<bool>();
}

std::string JsonReader::string(const std::string& key) {
  const nlohmann::json& v = require(key);
  if (!v.is_string()) fail(key, "expected a string, got " + describe_json_value(v));
  const std::string& s = v.get_ref<const std::string&>();
  // Strings are names, paths and choices that reports print: control characters (NUL, escape
  // sequences) and the bidirectional overrides (reorders_text) would let a scenario rewrite the
  // terminal or disguise a name. Other bytes, UTF-8 or not, pass.
  for (std::size_t i = 0; i < s.size();) {
    const auto [cp, n] = utf8_at(s, i);
    if ((n == 1 && (cp < 0x20 || cp == 0x7f)) || (n > 1 && reorders_text(cp)))
      fail(key, "control or text-direction character at byte " + std::to_string(i) + ": expected printable text");
    i += n > 0 ? n : 1;
  }
  return s;
}
std::string JsonReader::string_or(const std::string& key, const std::string& fallback) {
  return has(key) ? string(key) : (read_.insert(key), fallback);
}

std::string JsonReader::choice(const std::string& key, std::initializer_list<const char*> allowed) {
  return choice(key, std::vector<const char*>(allowed));
}
std::string JsonReader::choice(const std::string& key, const std::vector<const char*>& allowed) {
  const std::string s = string(key);
  std::string list;
  for (const char* a : allowed) {
    if (s == a) return s;
    list += list.empty() ? "" : ", ";
    list += std::string("\"") + a + "\"";
  }
  fail(key, "unknown value \"" + safe_excerpt(s) + "\"; expected one of " + list);
}
std::string JsonReader::choice_or(const std::string& key,
                                  std::initializer_list<const char*> allowed,
                                  const std::string& fallback) {
  return has(key) ? choice(key, allowed) : (read_.insert(key), fallback);
}
std::string JsonReader::choice_or(const std::string& key, const std::vector<const char*>& allowed,
                                  const std::string& fallback) {
  return has(key) ? choice(key, allowed) : (read_.insert(key), fallback);
}

void JsonReader::finish(std::initializer_list<const char*> also_allowed) const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (read_.count(it.key())) continue;
    bool ok = false;
    for (const char* a : also_allowed) ok = ok || it.key() == a;
    if (ok) continue;
    std::string list;
    for (const auto& k : read_) list += (list.empty() ? "" : ", ") + k;
    for (const char* a : also_allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw ScenarioError(child_path(safe_excerpt(it.key())), "unknown key; this object accepts: " + list);
  }
}

}  // namespace trainsim
