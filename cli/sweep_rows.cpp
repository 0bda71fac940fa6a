#include "cli/sweep_rows.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli/plan_row.hpp"
#include "models/core/pareto.hpp"
#include "models/core/scenario_error.hpp"
#include "models/core/units.hpp"

namespace trainsim::cli {
using nlohmann::json;

namespace {

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string sweep_fingerprint(const json& what) {
  // FNV-1a 64 over the canonical dump (nlohmann sorts object keys): the same sweep, base,
  // calibration and tool give the same fingerprint, any change another.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : what.dump()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return hex64(h);
}

json sweep_header(const std::string& fingerprint, const std::string& sweep_name, long long plans) {
  return {{"trainsim_sweep",
           {{"format", 1}, {"fingerprint", fingerprint}, {"sweep", sweep_name}, {"plans", plans},
            {"trainsim_version", TRAINSIM_VERSION}}}};
}

json read_sweep_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return nullptr;
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("trainsim_sweep") || !j["trainsim_sweep"].is_object())
    return nullptr;
  return j;
}

std::string header_fingerprint(const json& header) {
  if (!header.is_object() || !header.contains("trainsim_sweep")) return "";
  return header["trainsim_sweep"].value("fingerprint", std::string());
}

RowWriter::RowWriter(const std::string& path, bool resume, const json& header) : path_(path) {
  const std::string fingerprint = header_fingerprint(header);
  bool keep = false;
  if (resume) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    long long good_bytes = 0;
    bool first = true, any = false;
    while (in && std::getline(in, line)) {
      if (in.eof()) break;  // no newline: a partial row from a kill
      any = true;
      const json row = json::parse(line, nullptr, false);
      if (first) {
        first = false;
        // The rows of another sweep (or of another base, calibration or trainsim version)
        // would be reported as this sweep's best plans: refuse them.
        const std::string theirs = row.is_discarded() ? "" : header_fingerprint(row);
        if (theirs.empty())
          throw ScenarioError("--resume", "\"" + path + "\" has no sweep header (another tool's file, or a sweep "
                                          "from an older trainsim): remove it or choose another --out");
        if (theirs != fingerprint)
          throw ScenarioError("--resume", "\"" + path + "\" holds rows of another sweep (fingerprint " + theirs +
                                              ", this sweep " + fingerprint + ": a different sweep file, base, "
                                              "calibration or trainsim version); choose another --out");
        good_bytes += static_cast<long long>(line.size()) + 1;
        continue;
      }
      if (row.is_discarded()) break;  // a damaged row: keep what precedes it
      if (row.contains("index") && row["index"].is_number_integer()) done_.insert(row["index"].get<long long>());
      good_bytes += static_cast<long long>(line.size()) + 1;
    }
    in.close();
    if (any) {
      keep = true;
      if (truncate(path.c_str(), good_bytes) != 0)
        throw ScenarioError("--out", "\"" + path + "\": cannot cut the partial last row: " + std::strerror(errno));
    }
  }
  file_ = std::make_unique<OutputFile>(path, "--out", keep ? OutputFile::Mode::kAppend : OutputFile::Mode::kTruncate);
  if (!keep && !header.is_null()) {
    file_->write(header.dump() + "\n");
    file_->flush(true);
  }
  last_sync_ = std::chrono::steady_clock::now();
}

RowWriter::~RowWriter() = default;

void RowWriter::add(const json& row) {
  try {
    file_->write(row.dump() + "\n");
    // Flushed to the OS on every row (a killed sweep loses nothing it finished); on the disk
    // (fsync) every second and at the end, which a power cut needs.
    const auto now = std::chrono::steady_clock::now();
    const bool sync = now - last_sync_ > std::chrono::seconds(1);
    file_->flush(sync);
    if (sync) last_sync_ = now;
  } catch (const ScenarioError& e) {
    throw ScenarioError("--out", std::string(e.what()) + " (while writing a result row; rows written before are intact)");
  }
  if (row.contains("index")) done_.insert(row["index"].get<long long>());
}

void RowWriter::close() { file_->close(true); }

std::map<long long, json> read_rows(const std::vector<std::string>& paths) {
  std::map<long long, json> rows;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw ScenarioError(p, "cannot read rows");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      json row = json::parse(line, nullptr, false);
      // The header, and a partial row from a kill, are no rows.
      if (row.is_discarded() || !row.is_object() || !row.contains("index") || !row["index"].is_number_integer()) continue;
      rows.emplace(row["index"].get<long long>(), std::move(row));
    }
  }
  return rows;
}

void write_rows_jsonl(const std::string& path, const std::map<long long, json>& rows, const json& header) {
  std::string text = header.is_null() ? "" : header.dump() + "\n";
  for (const auto& [i, row] : rows) text += row.dump() + "\n";
  replace_output_file(path, text, "--out");
}

SweepLock::SweepLock(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw ScenarioError("--out", "cannot create the lock file \"" + path + "\": " + std::strerror(errno));
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {0};
    const ssize_t n = pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    std::string who = n > 0 ? std::string(pid, static_cast<std::size_t>(n)) : std::string();
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    throw ScenarioError("--out", "another trainsim sweep" + (who.empty() ? std::string() : " (pid " + who + ")") +
                                     " is writing to these outputs (\"" + path +
                                     "\" is locked): wait for it, or choose another --out");
  }
  const std::string me = std::to_string(getpid()) + "\n";
  if (ftruncate(fd_, 0) == 0) (void)!pwrite(fd_, me.data(), me.size(), 0);
}

SweepLock::~SweepLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays (removing it would race)
}

namespace {
std::string csv_field(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) {
    std::string s = v.get<std::string>(), out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  }
  return v.dump();
}
const json& at(const json& row, const char* a, const char* b = nullptr) {
  static const json kNull;
  if (!row.contains(a)) return kNull;
  if (!b) return row[a];
  return row[a].is_object() && row[a].contains(b) ? row[a][b] : kNull;
}
double num(const json& v, double fallback = 0) { return v.is_number() ? v.get<double>() : fallback; }
}  // namespace

void write_rows_csv(const std::string& path, const std::map<long long, json>& rows) {
  std::ostringstream out;
  static const char* kPlanCols[] = {"tp", "pp", "dp", "cp", "ep", "vpp", "schedule", "micro_batch",
                                    "global_batch", "zero_stage", "recompute", "sp"};
  static const char* kMetricCols[] = {"step_time_s", "tokens_per_s", "mfu", "hfu",
                                      "model_tflops_per_gpu", "bubble_fraction", "exposed_comm_s"};
  out << "index,model,cluster,gpus";
  for (const char* c : kPlanCols) out << "," << c;
  out << ",feasible,meets_constraints,objective";
  for (const char* c : kMetricCols) out << "," << c;
  out << ",peak_bytes,reason\n";
  for (const auto& [i, row] : rows) {
    out << i << "," << csv_field(at(row, "model")) << "," << csv_field(at(row, "cluster")) << ","
        << csv_field(at(row, "gpus"));
    for (const char* c : kPlanCols) out << "," << csv_field(at(row, "plan", c));
    out << "," << csv_field(at(row, "feasible")) << "," << csv_field(at(row, "meets_constraints"))
        << "," << csv_field(at(row, "objective"));
    for (const char* c : kMetricCols) out << "," << csv_field(at(row, c));
    out << "," << csv_field(at(row, "memory", "peak_bytes")) << "," << csv_field(at(row, "reason")) << "\n";
  }
  replace_output_file(path, out.str(), "--out");
}

namespace {

// Each ranked row in one line; a simulated plan shows the simulation's figures and the estimate's
// step time beside them.
std::string describe(const RankedRow& r, const json* sim) {
  const json& row = *r.row;
  const json& p = row["plan"];
  const json& m = sim ? (*sim)["simulate"] : row;
  char line[512];
  std::snprintf(line, sizeof line,
                "%6lld  %-14s TP%-2d PP%-3d DP%-5d CP%-2d EP%-2d vpp%-2d %-11s mb%-3d %-8s %-9s %9s %12s tok/s  MFU %4.1f%%  "
                "mem %8s  bubble %4.1f%%",
                row["index"].get<long long>(), at(row, "model").is_string() ? row["model"].get<std::string>().c_str() : "",
                p.value("tp", 0), p.value("pp", 0), p.value("dp", 0), p.value("cp", 0), p.value("ep", 0),
                p.value("vpp", 0), p.value("schedule", std::string()).c_str(), p.value("micro_batch", 0),
                r.zero_label.c_str(), p.value("recompute", std::string()).c_str(),
                units::format_time(num(at(m, "step_time_s"))).c_str(), units::format_count(num(at(m, "tokens_per_s"))).c_str(),
                100 * num(at(m, "mfu")), units::format_bytes_si(sim ? num(at(m, "memory", "peak_bytes")) : r.memory_bytes).c_str(),
                100 * num(at(m, "bubble_fraction")));
  std::string out = line;
  if (sim) {
    const double est = num(at(row, "step_time_s")), simulated = num(at(m, "step_time_s"));
    std::snprintf(line, sizeof line, "  [simulated; estimate %s, %+.1f%%]", units::format_time(est).c_str(),
                  est > 0 ? 100 * (simulated / est - 1) : 0.0);
    out += line;
  }
  return out + "\n";
}

bool better(double x, double y, bool maximize) { return maximize ? x > y : x < y; }

}  // namespace

std::string summarize_rows(const std::map<long long, json>& rows, bool maximize, const std::string& objective_text,
                           int top_k, const std::map<long long, json>& simulated) {
  std::vector<const json*> ok;
  struct Rejected {
    int count = 0;
    std::string example;
  };
  std::map<std::string, Rejected> reasons;
  int infeasible = 0, constrained = 0, invalid = 0;
  for (const auto& [i, row] : rows) {
    const bool feasible = at(row, "feasible").is_boolean() && row["feasible"].get<bool>();
    const bool meets = at(row, "meets_constraints").is_boolean() && row["meets_constraints"].get<bool>();
    if (!feasible) {
      const std::string reason = at(row, "reason").is_string() ? row["reason"].get<std::string>() : "?";
      const std::string code = at(row, "reason_code").is_string() ? row["reason_code"].get<std::string>() : reason_code(reason);
      if (code == "invalid_input") ++invalid;
      else ++infeasible;
      Rejected& r = reasons[code];
      if (r.count++ == 0) r.example = reason;
    } else if (!meets) {
      ++constrained;
      const json& v = at(row, "violated");
      Rejected& r = reasons["constraint: " + (v.is_array() && !v.empty() ? v[0].get<std::string>() : std::string("?"))];
      if (r.count++ == 0) r.example = "";
    } else if (at(row, "objective").is_number()) {
      ok.push_back(&row);
    }
  }
  const std::vector<const json*> by_index = ok;  // rows is keyed by index
  // The simulated plans rank by their simulated objective, ahead of the plans only estimated.
  auto sim_of = [&](const json* row) -> const json* {
    const auto it = simulated.find((*row)["index"].get<long long>());
    if (it == simulated.end() || !it->second.contains("simulate") || !at(it->second, "objective").is_number()) return nullptr;
    return &it->second;
  };
  std::sort(ok.begin(), ok.end(), [&](const json* a, const json* b) {
    const json *sa = sim_of(a), *sb = sim_of(b);
    if ((sa != nullptr) != (sb != nullptr)) return sa != nullptr;
    const double x = num(sa ? (*sa)["objective"] : (*a)["objective"]), y = num(sb ? (*sb)["objective"] : (*b)["objective"]);
    if (x != y) return better(x, y, maximize);
    return (*a)["index"].get<long long>() < (*b)["index"].get<long long>();
  });
  std::size_t simulated_ok = 0;
  for (const json* r : ok) simulated_ok += sim_of(r) != nullptr;

  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%zu plans: %zu feasible within constraints, %d infeasible, %d outside constraints",
                rows.size(), ok.size(), infeasible, constrained);
  o << line << (invalid ? ", " + std::to_string(invalid) + " invalid" : std::string()) << "\n";
  o << "\nbest plans by " << (maximize ? "maximum " : "minimum ") << objective_text;
  if (simulated_ok > 0)
    o << " (the " << simulated_ok << " simulated plans first, ranked by the simulation; then by the estimate)";
  o << ":\n";
  const std::vector<RankedRow> best = fold_zero_twins(ok);
  bool folded = false;
  for (int k = 0; k < top_k && k < static_cast<int>(best.size()); ++k) {
    o << describe(best[k], sim_of(best[k].row));
    folded = folded || best[k].zero_label == "ZeRO-1/2";
  }
  if (folded) o << "  (ZeRO-1/2: ZeRO-1 and ZeRO-2 of the same plan take the same time; memory is ZeRO-2's)\n";
  // Pareto front: more throughput, less peak memory, fewer GPUs (the estimate's figures), by the
  // definition the GUI's Sweep view uses too (models/core/pareto.hpp). Plans with the same
  // figures are one point; a ZeRO-1/2 pair among them is shown as such.
  std::vector<ParetoPoint> points;
  for (const json* r : by_index)
    points.push_back({num((*r)["tokens_per_s"]), num(at(*r, "memory", "peak_bytes")), num(at(*r, "gpus"))});
  std::vector<RankedRow> front_rows;
  for (const ParetoEntry& e : pareto_front(points)) {
    std::vector<const json*> same = {by_index[e.index]};
    for (std::size_t k : e.same) same.push_back(by_index[k]);
    front_rows.push_back(fold_zero_twins(same).front());
  }
  o << "\nPareto front (throughput vs peak memory vs GPU count, estimate): " << front_rows.size() << " plans\n";
  for (std::size_t k = 0; k < front_rows.size() && k < 20; ++k) o << describe(front_rows[k], nullptr);
  if (front_rows.size() > 20) o << "  ... (" << front_rows.size() - 20 << " more in the rows file)\n";
  if (!reasons.empty()) {
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [code, r] : reasons) sorted.emplace_back(r.count, code);
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    o << "\nwhy plans were rejected (reason_code in the rows):\n";
    for (std::size_t k = 0; k < sorted.size() && k < 15; ++k) {
      const std::string& code = sorted[k].second;
      const Rejected& r = reasons[code];
      const bool constraint = code.rfind("constraint: ", 0) == 0;
      std::snprintf(line, sizeof line, "  %7d  %-26s %s\n", sorted[k].first, constraint ? "constraint" : code.c_str(),
                    constraint ? code.substr(12).c_str() : reason_label(code).c_str());
      o << line;
      if (!r.example.empty()) o << "           e.g. " << r.example << "\n";
    }
  }
  return o.str();
}

}  // namespace trainsim::cli
