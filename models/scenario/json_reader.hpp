// Strict, path-aware reading of one JSON object (CONVENTIONS.md #4): every key read is marked,
// finish() rejects whatever was not read, and every error names the JSON path and what was
// expected. The scenario, sweep and calibration loaders all read through this class.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/units.hpp"

namespace trainsim {

class JsonReader {
 public:
  // `object` must outlive the reader. Throws if it is not an object.
  JsonReader(const nlohmann::json& object, std::string path);

  const std::string& path() const { return path_; }
  std::string child_path(const std::string& key) const;
  bool has(const std::string& key) const;
  const nlohmann::json* raw(const std::string& key);  // marks the key as read; null if absent

  int64_t integer(const std::string& key, int64_t min, int64_t max);
  int64_t integer_or(const std::string& key, int64_t fallback, int64_t min, int64_t max);
  double number(const std::string& key, double min, double max);
  double number_or(const std::string& key, double fallback, double min, double max);
  double quantity(const std::string& key, units::Kind kind, double min = 0,
                  double max = std::numeric_limits<double>::max());
  double quantity_or(const std::string& key, units::Kind kind, double fallback, double min = 0,
                     double max = std::numeric_limits<double>::max());
  bool boolean_or(const std::string& key, bool fallback);
  std::string string(const std::string& key);
  std::string string_or(const std::string& key, const std::string& fallback);
  std::string choice(const std::string& key, std::initializer_list<const char*> allowed);
  std::string choice_or(const std::string& key, std::initializer_list<const char*> allowed,
                        const std::string& fallback);
  // The same with the allowed values from a registry.
  std::string choice(const std::string& key, const std::vector<const char*>& allowed);
  std::string choice_or(const std::string& key, const std::vector<const char*>& allowed,
                        const std::string& fallback);

  // Rejects keys that were never read, listing the ones this object accepts.
  void finish(std::initializer_list<const char*> also_allowed = {}) const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const nlohmann::json& require(const std::string& key);
  const nlohmann::json& object_;
  std::string path_;
  std::set<std::string> read_;
};

// Standalone converters, for values that are not in an object.
int64_t json_to_integer(const nlohmann::json& v, const std::string& path, int64_t min, int64_t max);
double json_to_quantity(const nlohmann::json& v, units::Kind kind, const std::string& path);
std::string json_type_name(const nlohmann::json& v);

// What an error message may say about a value it rejects (the value may come from any file):
// its type, and for a number or a boolean the value itself; never a string's content, never a
// container's elements (and no recursion: a value may nest deeply). "a string (12 characters)",
// "a list of 3 items", "the number 1e+30".
std::string describe_json_value(const nlohmann::json& v);
// At most `max_chars` characters of `s`, "..." when cut: printable ASCII and well-formed UTF-8
// letters and signs as they are; control characters, bidi and zero-width marks and bytes that are
// not UTF-8 as '?'. For the rare message that must quote a user's own word (an unknown choice, a
// key).
std::string safe_excerpt(const std::string& s, std::size_t max_chars = 40);

}  // namespace trainsim
