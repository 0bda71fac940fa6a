// Progress of long work on stderr (plan search, sweeps, simulate-tier validation, a simulated
// step): done/total, the rate and the ETA. Shown when stderr is a terminal (one line redrawn
// with \r), or in plain lines every few seconds with --progress; silent with --quiet and when
// stderr is not a terminal. Nothing is printed for work that ends within half a second.
#pragma once

#include <chrono>
#include <string>

#include "cli/cli_args.hpp"

namespace trainsim::cli {

class Progress {
 public:
  // what: "plan search"; unit: "plans" (empty: a fraction, shown as a percentage).
  Progress(std::string what, std::string unit, double total, ProgressMode mode);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Reports `done` of the total (cheap when called often: it redraws at most 10 times a second).
  void update(double done);
  // The last line (when anything was shown) and a newline.
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(double done, bool final);
  std::string what_, unit_;
  double total_;
  bool enabled_, forced_, tty_, shown_ = false, finished_ = false;
  double last_done_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace trainsim::cli
