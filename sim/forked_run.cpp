#include "sim/forked_run.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "sim/platform.hpp"

namespace trainsim::sim {

ForkedRun ForkedRun::start(const std::function<std::vector<double>()>& fn) {
  if (Platform::exists())
    throw std::logic_error("ForkedRun::start: fork before creating the Platform");
  ForkedRun run;
  int fds[2];
  if (pipe(fds) != 0) {
    run.error_ = "pipe failed";
    return run;
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    run.error_ = "fork failed";
    return run;
  }
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    std::vector<double> out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      std::string msg = e.what();
      (void)!write(2, msg.data(), msg.size());
      code = 1;
    }
    const double n = static_cast<double>(out.size());
    (void)!write(fds[1], &n, sizeof n);
    if (!out.empty()) (void)!write(fds[1], out.data(), out.size() * sizeof(double));
    close(fds[1]);
    _exit(code);  // no atexit handlers, no parent buffers flushed
  }
  close(fds[1]);
  run.pid_ = pid;
  run.fd_ = fds[0];
  return run;
}

std::vector<double> ForkedRun::wait() {
  std::vector<double> out;
  if (pid_ < 0) return out;
  double n = 0;
  std::size_t got = 0;
  auto* np = reinterpret_cast<char*>(&n);
  while (got < sizeof n) {
    const ssize_t r = read(fd_, np + got, sizeof n - got);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got == sizeof n && n > 0 && n < 1e7) {
    out.resize(static_cast<std::size_t>(n));
    got = 0;
    auto* p = reinterpret_cast<char*>(out.data());
    const std::size_t want = out.size() * sizeof(double);
    while (got < want) {
      const ssize_t r = read(fd_, p + got, want - got);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    if (got < want) out.clear();
  }
  close(fd_);
  fd_ = -1;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error_ = "child simulation failed (status " + std::to_string(status) + ")";
    out.clear();
  }
  return out;
}

ForkedRun::ForkedRun(ForkedRun&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), fd_(std::exchange(o.fd_, -1)), error_(std::move(o.error_)) {}
ForkedRun& ForkedRun::operator=(ForkedRun&& o) noexcept {
  if (this != &o) {
    if (pid_ >= 0) wait();
    pid_ = std::exchange(o.pid_, -1);
    fd_ = std::exchange(o.fd_, -1);
    error_ = std::move(o.error_);
  }
  return *this;
}
ForkedRun::~ForkedRun() {
  if (pid_ >= 0) wait();
}

}  // namespace trainsim::sim
