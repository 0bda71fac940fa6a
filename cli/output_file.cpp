#include "cli/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "models/core/scenario_error.hpp"

namespace trainsim::cli {
namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& p) { return "\"" + p + "\""; }

void check_writable_folder(const fs::path& dir, const std::string& option, const std::string& what) {
  struct stat st {};
  const std::string d = dir.empty() ? std::string(".") : dir.string();
  if (stat(d.c_str(), &st) != 0)
    throw ScenarioError(option, "cannot write " + what + ": folder " + quoted(d) + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) throw ScenarioError(option, "cannot write " + what + ": " + quoted(d) + " is not a folder");
  if (access(d.c_str(), W_OK | X_OK) != 0)
    throw ScenarioError(option, "cannot write " + what + ": folder " + quoted(d) + ": " + std::strerror(errno));
}

}  // namespace

void refuse_overwriting_inputs(const std::string& path, const std::string& option,
                               const std::vector<std::string>& inputs) {
  struct stat out {};
  if (path.empty() || stat(path.c_str(), &out) != 0 || !S_ISREG(out.st_mode)) return;
  for (const std::string& input : inputs) {
    struct stat in {};
    if (!input.empty() && stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw ScenarioError(option, "cannot write " + quoted(path) + ": it is the input " + quoted(input) +
                                      ", which the command reads; choose another path");
  }
}

void check_output_file(const std::string& path, const std::string& option) {
  if (path.empty()) throw ScenarioError(option, "an empty path");
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw ScenarioError(option, "cannot write " + quoted(path) + ": it is a folder");
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
      throw ScenarioError(option, "cannot write " + quoted(path) + ": not a regular file");
    if (access(path.c_str(), W_OK) != 0)
      throw ScenarioError(option, "cannot write " + quoted(path) + ": " + std::strerror(errno));
    return;
  }
  if (errno != ENOENT) throw ScenarioError(option, "cannot write " + quoted(path) + ": " + std::strerror(errno));
  check_writable_folder(fs::path(path).parent_path(), option, quoted(path));
}

void check_output_dir(const std::string& dir, const std::string& option) {
  if (dir.empty()) throw ScenarioError(option, "an empty path");
  fs::path p = fs::path(dir);
  struct stat st {};
  if (stat(p.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw ScenarioError(option, "cannot write into " + quoted(dir) + ": it is not a folder");
    check_writable_folder(p, option, "into " + quoted(dir));
    return;
  }
  // The nearest existing ancestor must be a writable folder.
  fs::path parent = fs::absolute(p).lexically_normal();
  while (stat(parent.c_str(), &st) != 0) {
    if (errno != ENOENT) throw ScenarioError(option, "cannot write into " + quoted(dir) + ": " + std::strerror(errno));
    if (parent == parent.root_path() || !parent.has_parent_path()) break;
    parent = parent.parent_path();
  }
  check_writable_folder(parent, option, "into " + quoted(dir));
}

void create_output_dir(const std::string& dir, const std::string& option) {
  check_output_dir(dir, option);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw ScenarioError(option, "cannot create the folder " + quoted(dir) + ": " + ec.message());
}

OutputFile::OutputFile(const std::string& path, const std::string& option, Mode mode) : path_(path), option_(option) {
  file_ = std::fopen(path.c_str(), mode == Mode::kAppend ? "ab" : "wb");
  if (!file_) fail("cannot open for writing");
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

int OutputFile::fd() const { return file_ ? fileno(file_) : -1; }

void OutputFile::fail(const std::string& what) const {
  const int e = errno;
  throw ScenarioError(option_, quoted(path_) + ": " + what + (e ? std::string(": ") + std::strerror(e) : ""));
}

void OutputFile::write(const std::string& text) {
  errno = 0;
  if (!file_ || std::fwrite(text.data(), 1, text.size(), file_) != text.size()) fail("cannot write");
}

void OutputFile::flush(bool durable) {
  errno = 0;
  if (!file_ || std::fflush(file_) != 0) fail("cannot write");
  if (durable) {
    struct stat st {};
    // fsync of a device (/dev/null) or pipe fails with EINVAL: only files need to reach the disk.
    if (fstat(fileno(file_), &st) == 0 && S_ISREG(st.st_mode) && fsync(fileno(file_)) != 0) fail("cannot write");
  }
}

void OutputFile::close(bool durable) {
  flush(durable);
  std::FILE* f = file_;
  file_ = nullptr;
  errno = 0;
  if (std::fclose(f) != 0) fail("cannot close");
}

void write_output_file(const std::string& path, const std::string& text, const std::string& option, bool durable) {
  OutputFile f(path, option);
  f.write(text);
  f.close(durable);
}

void replace_output_file(const std::string& path, const std::string& text, const std::string& option) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    write_output_file(path, text, option);
    return;
  }
  const std::string tmp = path + ".tmp";
  write_output_file(tmp, text, option, true);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw ScenarioError(option, quoted(path) + ": cannot replace: " + std::strerror(e));
  }
}

}  // namespace trainsim::cli
