// A computation in a forked child that hands back a few numbers through a pipe. SimGrid allows
// one s4u::Engine per process (ARCHITECTURE.md), so a run that wants a second simulation (the
// no-fault baseline of a faulted step, each job alone on a shared fabric) forks BEFORE it
// creates its own Platform: children and parent then simulate in parallel. POSIX only.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace trainsim::sim {

class ForkedRun {
 public:
  ForkedRun() = default;
  // Forks now; the child runs fn, writes its numbers and _exits. Must be called while this
  // process holds no Platform (the child would inherit the engine).
  static ForkedRun start(const std::function<std::vector<double>()>& fn);
  // Waits for the child; its numbers, or empty with error() set when it failed.
  std::vector<double> wait();
  const std::string& error() const { return error_; }

  ForkedRun(ForkedRun&& other) noexcept;
  ForkedRun& operator=(ForkedRun&& other) noexcept;
  ForkedRun(const ForkedRun&) = delete;
  ForkedRun& operator=(const ForkedRun&) = delete;
  ~ForkedRun();  // waits for a child not waited for

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string error_;
};

}  // namespace trainsim::sim
