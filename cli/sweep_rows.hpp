// Sweep result rows: one JSON object per plan, appended to a JSON-lines file and flushed as
// soon as the plan is evaluated, so that a killed sweep loses nothing it finished; plus the CSV
// view and the end-of-sweep summary (best plans, Pareto front, infeasibility reasons).
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/output_file.hpp"

namespace trainsim::cli {

// The first line of every rows file: {"trainsim_sweep": {format, fingerprint, sweep, plans,
// trainsim_version}}. The fingerprint (sweep_fingerprint of the sweep file, the resolved base,
// the calibration and the trainsim version) ties the rows to the sweep that wrote them.
std::string sweep_fingerprint(const nlohmann::json& what);
nlohmann::json sweep_header(const std::string& fingerprint, const std::string& sweep_name, long long plans);
// The header of a rows file, or null when it has none.
nlohmann::json read_sweep_header(const std::string& path);
std::string header_fingerprint(const nlohmann::json& header);

// Appends rows to a JSON-lines file; every row is flushed to the OS before add() returns and
// synced to the disk at least every second and at close().
class RowWriter {
 public:
  // Writes `header` first. With resume, keeps the complete rows already there (returned by
  // done()) and cuts a trailing partial line left by a kill; a file whose header has another
  // fingerprint (or none) is refused: ScenarioError("--resume", ...).
  RowWriter(const std::string& path, bool resume, const nlohmann::json& header);
  ~RowWriter();
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;
  const std::set<long long>& done() const { return done_; }
  // Throws ScenarioError("--out", ...) naming the file on a write failure (full disk, ...).
  void add(const nlohmann::json& row);
  void close();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<OutputFile> file_;
  std::set<long long> done_;
  std::chrono::steady_clock::time_point last_sync_;
};

// An advisory lock (flock) on PREFIX.lock held while a sweep writes PREFIX.*: a second sweep on
// the same outputs is refused (ScenarioError("--out", ...), exit 2) instead of interleaving rows.
class SweepLock {
 public:
  explicit SweepLock(const std::string& lock_path);
  ~SweepLock();
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// Reads every complete row of one or more JSON-lines files, keyed and sorted by "index"; the
// first copy of an index wins; headers and partial rows are skipped.
std::map<long long, nlohmann::json> read_rows(const std::vector<std::string>& paths);

// Writes the rows (after the header, unless it is null) through a temporary file and a rename.
void write_rows_jsonl(const std::string& path, const std::map<long long, nlohmann::json>& rows,
                      const nlohmann::json& header);
void write_rows_csv(const std::string& path, const std::map<long long, nlohmann::json>& rows);

// The human summary: best plans by objective (the simulated ones, `simulated` by index with
// their own "objective", ranked first by the simulation), ZeRO-1/2 twins folded, the Pareto front
// of throughput vs peak memory vs GPU count, and the rejections counted by reason code.
std::string summarize_rows(const std::map<long long, nlohmann::json>& rows, bool maximize,
                           const std::string& objective_text, int top_k,
                           const std::map<long long, nlohmann::json>& simulated = {});

}  // namespace trainsim::cli
