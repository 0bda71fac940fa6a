// Progress of long work on stderr (plan search, sweeps, simulate-tier validation, a simulated
// step): done/total, the rate, the ETA and the time so far. Shown when stderr is a terminal (one
// line redrawn with \r), or in plain lines every two seconds with --progress; silent with
// --quiet and when stderr is not a terminal. A terminal sees nothing for work that ends within
// half a second. A background thread draws, so a step that reports nothing for a while (a
// simulation building its platform) still shows that it runs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "cli/cli_args.hpp"

namespace trainsim::cli {

class Progress {
 public:
  // what: "plan search"; unit: "plans" (empty: a fraction, shown as a percentage).
  Progress(std::string what, std::string unit, double total, ProgressMode mode);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Reports `done` of the total; cheap (the drawing thread reads it).
  void update(double done) { done_.store(done, std::memory_order_relaxed); }
  // Stops the drawing and prints the last line (when anything is shown).
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(bool final);
  void loop();
  std::string what_, unit_;
  double total_;
  bool enabled_, forced_, tty_, shown_ = false, finished_ = false;
  std::atomic<double> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace trainsim::cli
