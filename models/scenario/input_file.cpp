#include "models/scenario/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "models/scenario/json_reader.hpp"

namespace trainsim {

using nlohmann::json;

namespace {

// Closes the descriptor on every path out of read_input_file.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void line_column(const std::string& text, std::size_t offset, std::size_t& line, std::size_t& col) {
  line = 1, col = 1;
  for (std::size_t i = 0; i < std::min(offset, text.size()); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
}

// nlohmann's parse_error text without its prefix ("[json.exception.parse_error.101] parse error
// at line 1, column 2: ") and without "; last read: '...'", which quotes the input.
std::string reason_of(const std::string& what) {
  std::string s = what;
  if (const auto colon = s.find(": "); s.rfind("[json.exception.", 0) == 0 && colon != std::string::npos)
    s = s.substr(colon + 2);
  if (const auto quoted = s.find("; last read:"); quoted != std::string::npos) s.resize(quoted);
  return s;
}

// A DOM builder for nlohmann's SAX parser that knows the path of the value being read, so that a
// number that overflows a double (nlohmann's out_of_range 406, "1e309") and nesting beyond the
// cap are reported at the field they occur in.
class BoundedDomSax : public nlohmann::json_sax<json> {
 public:
  BoundedDomSax(json& root, bool reject_duplicate_keys)
      : root_(root), reject_duplicate_keys_(reject_duplicate_keys) {}

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t&) override { return put(nullptr); }  // not produced by the JSON lexer
  bool start_object(std::size_t) override { return open(json::value_t::object); }
  bool key(string_t& k) override {
    keys_.back() = k;
    // nlohmann keeps the last of two equal keys: the first value would be dropped unseen.
    if (reject_duplicate_keys_ && stack_.back()->contains(k)) {
      duplicate_key_ = true;
      error_path_ = path();
      return false;
    }
    slot_ = &(*stack_.back())[k];
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::value_t::array); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error_position_ = position;
    error_ = ex.id == 406 ? "a number too large for a double (finite numbers only)" : reason_of(ex.what());
    number_overflow_ = ex.id == 406;
    error_path_ = path();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  bool duplicate_key() const { return duplicate_key_; }
  bool number_overflow() const { return number_overflow_; }
  std::size_t error_position() const { return error_position_; }
  const std::string& error() const { return error_; }
  const std::string& error_path() const { return error_path_; }

 private:
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool put(json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(json::value_t t) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      too_deep_ = true;
      error_path_ = path();
      return false;
    }
    stack_.push_back(place(json(t)));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  // "plan.micro_batch[0]": keys as excerpts, at most 8 components.
  std::string path() const {
    std::string p;
    const std::size_t shown = std::min<std::size_t>(stack_.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) {
      const json& c = *stack_[i];
      if (c.is_object()) {
        if (keys_[i].empty() && i + 1 == stack_.size()) break;
        p += (p.empty() ? "" : ".") + safe_excerpt(keys_[i], 40);
      } else {
        const std::size_t n = c.size();
        p += "[" + std::to_string(i + 1 < stack_.size() ? (n ? n - 1 : 0) : n) + "]";
      }
    }
    if (stack_.size() > shown) p += "...";
    return p;
  }

  json& root_;
  bool reject_duplicate_keys_;
  bool duplicate_key_ = false;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;
  json* slot_ = nullptr;
  bool too_deep_ = false;
  bool number_overflow_ = false;
  std::size_t error_position_ = 0;
  std::string error_, error_path_;
};

}  // namespace

namespace {

// Appends what `fd` holds to `text` until its end, at most `max_bytes` in all: the cap holds for
// what arrives, whatever a size reported beforehand said (a file that grows, a /proc file, a pipe).
// `noun` names the input in messages ("scenario file", "scenario").
void read_capped(int fd, const std::string& path, const std::string& noun, std::size_t max_bytes, std::string& text) {
  std::vector<char> buf(1 << 16);
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ScenarioError(path, "cannot read the " + noun + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      throw ScenarioError(path, "the " + noun + " is larger than " + mib(max_bytes) + "; refusing to read it");
    text.append(buf.data(), static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes) {
  Fd f;
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; the descriptor is
  // checked before a byte is read.
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      throw ScenarioError(path, "cannot open the " + what + " file: not found");
    throw ScenarioError(path, "cannot open the " + what + " file: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    throw ScenarioError(path, "cannot open the " + what + " file: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw ScenarioError(path, "the " + what + " path is " + file_kind(st.st_mode) +
                                  ", expected a regular file");
  if (st.st_size > 0 && static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    throw ScenarioError(path, "the " + what + " file is larger than " + mib(max_bytes) +
                                  "; refusing to read it");
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0) ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 0) + 1);
  read_capped(f.fd, path, what + " file", max_bytes, text);
  return text;
}

std::string read_standard_input(const std::string& what, std::size_t max_bytes) {
  const std::string path = "- (standard input)";
  if (::isatty(STDIN_FILENO))
    throw ScenarioError(path, "is a terminal: pipe the " + what + " in (trainsim run - < scenario.json)");
  std::string text;
  read_capped(STDIN_FILENO, path, what, max_bytes, text);
  return text;
}

namespace {
std::string syntax_message(std::size_t line, std::size_t column, const std::string& reason,
                           const std::string& field, bool number_overflow) {
  const std::string at = "line " + std::to_string(line) + ", column " + std::to_string(column);
  if (number_overflow) return (field.empty() ? "" : field + ": ") + reason + " (" + at + ")";
  return "malformed JSON at " + at + ": " + reason;
}
}  // namespace

JsonSyntaxError::JsonSyntaxError(const std::string& where, std::size_t line, std::size_t column,
                                 bool at_end, const std::string& reason, const std::string& field,
                                 bool number_overflow)
    : ScenarioError(where, syntax_message(line, column, reason, field, number_overflow)),
      line_(line),
      column_(column),
      at_end_(at_end),
      reason_(reason),
      field_(field),
      number_overflow_(number_overflow) {}

json parse_json_or_discarded(std::string_view text) {
  if (json_depth_violation(text) != std::string::npos) return json(json::value_t::discarded);
  return json::parse(text.begin(), text.end(), nullptr, false);
}

std::size_t json_depth_violation(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

json parse_json_text(const std::string& text, const std::string& where, DuplicateKeys duplicates) {
  json root;
  BoundedDomSax sax(root, duplicates == DuplicateKeys::kReject);
  const bool ok = json::sax_parse(text, &sax, json::input_format_t::json, /*strict=*/true);
  if (ok) return root;
  if (sax.duplicate_key())
    throw ScenarioError(where, sax.error_path() +
                                   ": the key appears twice in the same object; keep the one you mean");
  std::size_t line = 1, col = 1;
  if (sax.too_deep()) {
    const std::size_t at = json_depth_violation(text);
    line_column(text, at == std::string::npos ? 0 : at, line, col);
    throw JsonSyntaxError(where, line, col, false,
                          "nests deeper than " + std::to_string(kMaxJsonDepth) + " levels" +
                              (sax.error_path().empty() ? std::string() : " in " + sax.error_path()),
                          sax.error_path());
  }
  // nlohmann counts the byte it stopped on: the error is at position - 1.
  const std::size_t at = sax.error_position() ? sax.error_position() - 1 : 0;
  line_column(text, at, line, col);
  throw JsonSyntaxError(where, line, col, sax.error_position() >= text.size(), sax.error(),
                        sax.error_path(), sax.number_overflow());
}

}  // namespace trainsim
