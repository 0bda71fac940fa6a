// The one way an input file is read (CONVENTIONS.md #18, "fail loud at the edge"): scenario and
// preset files, sweep files and their base, hf_config, calibration files, torch traces,
// nccl-tests logs and Megatron argument files all come through here.
//   - regular files only: the file is opened without blocking and fstat'ed before any read, so
//     a FIFO, a device (/dev/zero), a folder or a socket is refused, never waited on;
//   - a size cap counted as the bytes arrive (a /proc file reports st_size 0);
//   - JSON nesting capped before the parser runs (nlohmann's parser is iterative, but the code
//     that walks, merges or prints a value recurses);
//   - error messages name the file and what it was for, never the file's content: a file that
//     is not the JSON it should be may be any file on the machine.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "models/core/scenario_error.hpp"

namespace trainsim {

// 64 MiB: a Kineto trace of one step of a large model is 10-50 MiB; scenario files are < 100 KiB.
constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;
// Scenarios nest 6 deep, Kineto traces 7 (traceEvents[i].args."Input Dims"[j][k]).
constexpr int kMaxJsonDepth = 64;

// The bytes of the regular file at `path`, at most `max_bytes`. `what` says what the file is for
// ("scenario", "model.hf_config", "calibration"): ScenarioError(path, "<what> file ...") when
// it is missing, not a regular file, unreadable or too large.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes = kMaxInputFileBytes);

// The bytes of standard input, at most `max_bytes`, for a file named "-" (`trainsim run - <
// scenario.json`, a scenario a script generates). A terminal is refused, never waited on.
std::string read_standard_input(const std::string& what, std::size_t max_bytes = kMaxInputFileBytes);

// A JSON syntax error (or nesting deeper than kMaxJsonDepth, or a number beyond a double) at a
// line and column of a text. `reason` is nlohmann's description with the bytes it quotes removed;
// `field` is the path of the value being read ("plan.global_batch"), when known.
class JsonSyntaxError : public ScenarioError {
 public:
  JsonSyntaxError(const std::string& where, std::size_t line, std::size_t column, bool at_end,
                  const std::string& reason, const std::string& field = "",
                  bool number_overflow = false);
  std::size_t line() const { return line_; }
  std::size_t column() const { return column_; }
  bool at_end() const { return at_end_; }  // the text ended before the value did (truncated)
  const std::string& reason() const { return reason_; }
  const std::string& field() const { return field_; }
  bool number_overflow() const { return number_overflow_; }  // "1e309"

 private:
  std::size_t line_, column_;
  bool at_end_;
  std::string reason_, field_;
  bool number_overflow_;
};

// What a key that appears twice in one object means. Files people write (scenarios, presets,
// sweeps, published runs) reject it: the parser would keep the last value and silently drop the
// first. Machine-written files from other tools (profiler traces) keep the last, as their
// readers do.
enum class DuplicateKeys { kReject, kKeepLast };

// Parses `text` (the content of `where`) under the depth cap. Throws JsonSyntaxError, whose
// message is "where: malformed JSON at line L, column C: reason", or for a number beyond a
// double "where: FIELD: a number too large for a double (line L, column C)"; a duplicate key
// (kReject) is ScenarioError "where: PATH: the key appears twice in the same object ...".
nlohmann::json parse_json_text(const std::string& text, const std::string& where,
                               DuplicateKeys duplicates = DuplicateKeys::kReject);

// Offset of the first '[' or '{' that opens nesting level max_depth + 1 outside strings, or
// std::string::npos when the text never nests deeper than max_depth.
std::size_t json_depth_violation(std::string_view text, int max_depth = kMaxJsonDepth);

// nlohmann::json::parse(text, nullptr, false) under the depth cap: a discarded value when the
// text is not JSON or nests deeper than the cap (nlohmann's parser recurses once per level, so a
// line of a hundred thousand '[' overflows the stack). For lines of machine-written files
// (sweep rows, timelines) whose readers skip or name a bad line themselves.
nlohmann::json parse_json_or_discarded(std::string_view text);

}  // namespace trainsim
