#include "cli/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "models/core/units.hpp"

namespace trainsim::cli {

namespace {

constexpr double kQuietStartS = 0.5;  // on a terminal, work shorter than this prints nothing
constexpr double kTtyEveryS = 0.2;
constexpr double kLinesEveryS = 2.0;  // --progress into a file or pipe

std::string duration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%d min %02d s", int(s / 60), int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%d h %02d min", int(s / 3600), int(s / 60) % 60);
  return buf;
}

}  // namespace

Progress::Progress(std::string what, std::string unit, double total, ProgressMode mode)
    : what_(std::move(what)), unit_(std::move(unit)), total_(total), tty_(isatty(2) != 0) {
  enabled_ = mode == ProgressMode::kOn || (mode == ProgressMode::kAuto && tty_);
  forced_ = mode == ProgressMode::kOn;
  start_ = std::chrono::steady_clock::now();
  if (enabled_) thread_ = std::thread([this] { loop(); });
}

Progress::~Progress() { finish(); }

void Progress::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto every = std::chrono::duration<double>(tty_ ? kTtyEveryS : kLinesEveryS);
  const auto first = std::chrono::duration<double>(tty_ ? kQuietStartS : kLinesEveryS);
  if (wake_.wait_for(lock, first, [this] { return finished_; })) return;
  while (true) {
    draw(false);
    if (wake_.wait_for(lock, every, [this] { return finished_; })) return;
  }
}

void Progress::draw(bool final) {
  const double done = final && total_ > 0 ? total_ : done_.load(std::memory_order_relaxed);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0;
  const std::string when = final ? "done in " + duration(elapsed)
                                 : (done > 0 && total_ > done ? "ETA " + duration((total_ - done) / rate) + ", "
                                                              : std::string()) +
                                       duration(elapsed) + " so far";
  const double pct = total_ > 0 ? 100 * done / total_ : 100;
  char line[256];
  if (unit_.empty()) {
    std::snprintf(line, sizeof line, "%s: %3.0f%%  %s", what_.c_str(), pct, when.c_str());
  } else {
    std::snprintf(line, sizeof line, "%s: %s/%s %s (%3.0f%%)  %s %s/s  %s", what_.c_str(), units::format_count(done).c_str(),
                  units::format_count(total_).c_str(), unit_.c_str(), pct, units::format_count(rate).c_str(), unit_.c_str(),
                  when.c_str());
  }
  if (tty_) std::fprintf(stderr, "\r\033[K%s", line);
  else std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // --progress always ends with the total line; on a terminal, work too short to show anything
  // stays silent.
  if (!enabled_ || (!shown_ && !forced_)) return;
  draw(true);
  if (tty_) std::fputc('\n', stderr);
}

}  // namespace trainsim::cli
