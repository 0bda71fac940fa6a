// Sweep result rows: one JSON object per plan, appended to a JSON-lines file and flushed as
// soon as the plan is evaluated, so that a killed sweep loses nothing it finished; plus the CSV
// view and the end-of-sweep summary (best plans, Pareto front, infeasibility reasons).
#pragma once

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::cli {

// Appends rows to a JSON-lines file; every row is flushed to the OS before add() returns.
class RowWriter {
 public:
  // Opens `path` for appending. With resume, first reads the complete rows already there
  // (returned by done()) and cuts a trailing partial line left by a kill.
  RowWriter(const std::string& path, bool resume);
  ~RowWriter();
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;
  const std::set<long long>& done() const { return done_; }
  // Throws std::runtime_error naming the file on a write failure (full disk, ...).
  void add(const nlohmann::json& row);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::set<long long> done_;
};

// Reads every complete row of one or more JSON-lines files, keyed and sorted by "index"; the
// first copy of an index wins.
std::map<long long, nlohmann::json> read_rows(const std::vector<std::string>& paths);

void write_rows_jsonl(const std::string& path, const std::map<long long, nlohmann::json>& rows);
void write_rows_csv(const std::string& path, const std::map<long long, nlohmann::json>& rows);

// The human summary: best plans by objective, Pareto front of throughput vs peak memory vs GPU
// count, and infeasibility reasons counted (numbers folded so that like reasons group).
std::string summarize_rows(const std::map<long long, nlohmann::json>& rows, bool maximize,
                           const std::string& objective_text, int top_k);

// "plan.tp: 16 does not divide model.heads (24)" -> "plan.tp: N does not divide model.heads (N)".
std::string reason_category(const std::string& reason);

}  // namespace trainsim::cli
