#include "cli/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "models/core/units.hpp"

namespace trainsim::cli {

namespace {

constexpr double kQuietStartS = 0.5;  // work shorter than this prints nothing
constexpr double kTtyEveryS = 0.1;
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
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

void Progress::update(double done) {
  if (!enabled_ || finished_) return;
  last_done_ = done;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (elapsed < kQuietStartS || since < (tty_ ? kTtyEveryS : kLinesEveryS)) return;
  last_ = now;
  draw(done, false);
}

void Progress::draw(double done, bool final) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0;
  const double left = total_ > done && rate > 0 ? (total_ - done) / rate : 0;
  char line[256];
  const double pct = total_ > 0 ? 100 * done / total_ : 100;
  if (unit_.empty()) {
    std::snprintf(line, sizeof line, "%s: %3.0f%%  %s", what_.c_str(), pct,
                  final ? ("done in " + duration(elapsed)).c_str() : ("ETA " + duration(left)).c_str());
  } else {
    std::snprintf(line, sizeof line, "%s: %s/%s %s (%3.0f%%)  %s %s/s  %s", what_.c_str(), units::format_count(done).c_str(),
                  units::format_count(total_).c_str(), unit_.c_str(), pct, units::format_count(rate).c_str(), unit_.c_str(),
                  final ? ("done in " + duration(elapsed)).c_str() : ("ETA " + duration(left)).c_str());
  }
  if (tty_) std::fprintf(stderr, "\r\033[K%s", line);
  else std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  // --progress always ends with the total line; on a terminal, work too short to show anything
  // stays silent.
  if (!enabled_ || (!shown_ && !forced_)) return;
  draw(total_ > 0 ? total_ : last_done_, true);
  if (tty_) std::fputc('\n', stderr);
}

}  // namespace trainsim::cli
