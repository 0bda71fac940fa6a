// Sweep result rows: one JSON object per plan, appended to a JSON-lines file as each plan is
// evaluated and flushed at least every 50 ms, so that a killed sweep loses at most that much
// (--resume redoes it); plus the CSV view and the end-of-sweep summary (best plans, Pareto
// front, infeasibility reasons), made from plain records of the rows rather than their JSON.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
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

// Appends rows to a JSON-lines file. A row given to add() is flushed to the OS before add()
// returns; rows given as text are flushed at least every 50 ms (a killed sweep loses at
// most that much work, which --resume redoes); all are synced to the disk at least every second
// and at close().
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
  // Rows as text: append complete rows, each ending in a newline, to buffer(), then commit().
  // Not added to done().
  std::string& buffer() { return pending_; }
  void commit() { flush(false); }
  void close();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<OutputFile> file_;
  std::set<long long> done_;
  void flush(bool force);
  std::chrono::steady_clock::time_point last_sync_, last_flush_;
  std::string pending_;
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
// The CSV view in parts: its header line, one row's line (from the row's JSON), and the file
// written from a header and the lines already joined.
const std::string& rows_csv_header();
void append_csv_line(const nlohmann::json& row, std::string& out);
void write_csv_text(const std::string& path, const std::string& lines);

// Strings rows repeat (model, cluster, schedule, ...), each kept once.
class StringTable {
 public:
  uint32_t id(const std::string& s);
  const std::string& at(uint32_t id) const { return strings_[id]; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> ids_;
};

// A row that ranks (feasible, within the constraints, a number for objective): what the
// summary, the Pareto front and the simulate stage read of it.
struct RankedPlan {
  long long index = 0;
  double objective = 0, tokens_per_s = 0, peak_bytes = 0, gpus = 0, step_time_s = 0, mfu = 0,
         bubble_fraction = 0;
  uint32_t model = 0, cluster = 0, schedule = 0, recompute = 0, precision = 0;  // StringTable ids
  int tp = 0, pp = 0, dp = 0, cp = 0, ep = 0, vpp = 0, zero_stage = 0;
  int dp_shard = 0;  // ZeRO-3's shard group (plan.dp_shard); 0: the whole DP group
  int hpz = 0;       // ZeRO++'s secondary partition (plan.zero_hpz_partition_size); 0: none
  int64_t micro_batch = 0, global_batch = 0;
  bool sp = false, offload_optimizer = false;
  bool qwz = false, qgz = false;  // ZeRO++'s quantized weights and gradients
  // The ZeRO column: the folded stage label, "++" with ZeRO++, "/n" under a shard group of n.
  std::string zero_text(const std::string& zero_label) const;
};

// Every row of a sweep, counted for the summary: the ranked rows kept as records, the others
// counted by reason code with the reason of the lowest-index row of each code as its example.
class SweepTally {
 public:
  struct Rejected {
    int count = 0;
    long long first = 0;
    std::string example;
  };
  void add_ranked(const RankedPlan& p);
  // An infeasible or invalid row (code "invalid_input") with its reason.
  void add_rejected(long long index, const std::string& code, const std::string& reason);
  // A feasible row outside the constraints; `violated` its first violated constraint (or "?").
  void add_constrained(long long index, const std::string& violated);
  // A feasible row within the constraints without a number for objective: a row, nothing else.
  void add_unranked() { ++rows_, ++unranked; }
  // A row read back as JSON (a resumed or merged sweep): whichever of the above it is.
  void add_json(const nlohmann::json& row);
  // The plan object of a ranked row, as the row holds it.
  nlohmann::json plan_json(const RankedPlan& p) const;
  // The ranked rows by index (sorted on first call after adding).
  const std::vector<RankedPlan>& ranked();
  std::size_t rows() const { return rows_; }

  StringTable strings;
  int infeasible = 0, constrained = 0, invalid = 0;
  int unranked = 0;  // feasible, within the constraints, the objective not a number (x / 0)
  std::map<std::string, Rejected> reasons;

 private:
  void count_reason(const std::string& key, long long index, const std::string& example);
  std::vector<RankedPlan> ranked_;
  bool sorted_ = true;
  std::size_t rows_ = 0;
};

// The human summary: best plans by objective (the simulated ones, `simulated` by index with
// their own "objective", ranked first by the simulation), ZeRO-1/2 twins folded, the Pareto front
// of throughput vs peak memory vs GPU count, and the rejections counted by reason code.
std::string summarize_rows(const std::map<long long, nlohmann::json>& rows, bool maximize,
                           const std::string& objective_text, int top_k,
                           const std::map<long long, nlohmann::json>& simulated = {});
std::string summarize_rows(SweepTally& tally, bool maximize, const std::string& objective_text, int top_k,
                           const std::map<long long, nlohmann::json>& simulated = {});

}  // namespace trainsim::cli
