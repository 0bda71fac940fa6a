// A minimal streaming JSON writer, so kernels/ (and the GPU-machine build) needs no JSON
// library. Keys and strings are escaped; non-finite numbers are written as null.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::kernels {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}
  JsonWriter& begin_object() { open('{'); return *this; }
  JsonWriter& end_object() { close('}'); return *this; }
  JsonWriter& begin_array() { open('['); return *this; }
  JsonWriter& end_array() { close(']'); return *this; }
  JsonWriter& key(std::string_view k) {
    separate();
    quote(k);
    out_ += pretty_ ? ": " : ":";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(double v) {
    separate();
    if (!std::isfinite(v)) { out_ += "null"; return *this; }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out_ += buf;
    return *this;
  }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(int64_t v) { separate(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(uint64_t v) { separate(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(bool v) { separate(); out_ += v ? "true" : "false"; return *this; }
  JsonWriter& value(std::string_view s) { separate(); quote(s); return *this; }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  template <typename T>
  JsonWriter& kv(std::string_view k, const T& v) { key(k); return value(v); }
  const std::string& str() const { return out_; }

 private:
  void open(char c) {
    separate();
    out_ += c;
    first_.push_back(true);
  }
  void close(char c) {
    bool empty = first_.back();
    first_.pop_back();
    if (pretty_ && !empty) newline();
    out_ += c;
  }
  void separate() {
    if (after_key_) { after_key_ = false; return; }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    if (pretty_) newline();
  }
  void newline() {
    out_ += '\n';
    out_.append(first_.size() * 2, ' ');
  }
  void quote(std::string_view s) {
    out_ += '"';
    for (char ch : s) {
      switch (ch) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (static_cast<unsigned char>(ch) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", ch);
            out_ += buf;
          } else {
            out_ += ch;
          }
      }
    }
    out_ += '"';
  }
  bool pretty_;
  bool after_key_ = false;
  std::vector<bool> first_;
  std::string out_;
};

}  // namespace trainsim::kernels
