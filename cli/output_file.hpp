// Output paths, checked before any work starts and written with every write and close checked
// (CONVENTIONS.md #18: fail loud at the edge). An output that cannot be written is bad input:
// a ScenarioError naming the option and the path (exit 2).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace trainsim::cli {

// Throws ScenarioError(option, ...) unless `path` can be written: an existing regular file (or
// a character device such as /dev/null) that is writable, or a new file in a writable folder.
// Creates nothing.
void check_output_file(const std::string& path, const std::string& option);

// Throws ScenarioError(option, ...) when `path` is one of the files `inputs` names (the same
// file, by device and inode, whatever the spelling): writing it would destroy what the command
// reads. Outputs that do not exist yet, and inputs that do not exist, never match.
void refuse_overwriting_inputs(const std::string& path, const std::string& option,
                               const std::vector<std::string>& inputs);

// The same for a folder the command will create files in: an existing writable folder, or one
// whose nearest existing parent is a writable folder. Creates nothing.
void check_output_dir(const std::string& dir, const std::string& option);

// Creates the folder (and its parents); throws ScenarioError(option, ...) when it cannot.
void create_output_dir(const std::string& dir, const std::string& option);

// A file written with every write, flush, fsync and close checked. Errors throw
// ScenarioError(option, "cannot write PATH: <reason>").
class OutputFile {
 public:
  enum class Mode { kTruncate, kAppend };
  OutputFile(const std::string& path, const std::string& option, Mode mode = Mode::kTruncate);
  ~OutputFile();  // closes without checking: call close() to know
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const std::string& text);
  // Flushes to the OS (and, with durable, to the disk: fsync) so a kill after it loses nothing.
  void flush(bool durable = false);
  void close(bool durable = false);
  std::FILE* handle() { return file_; }
  const std::string& path() const { return path_; }
  int fd() const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::string path_, option_;
  std::FILE* file_ = nullptr;
};

// Writes `text` to `path` (truncating), every step checked. With durable: fsync before close.
void write_output_file(const std::string& path, const std::string& text, const std::string& option,
                       bool durable = false);

// Writes `text` to `path` through PATH.tmp and a rename, so a reader never sees half a file;
// for a path that is not a regular file (a device) it writes in place.
void replace_output_file(const std::string& path, const std::string& text, const std::string& option);

}  // namespace trainsim::cli
