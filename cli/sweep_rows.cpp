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
#include <type_traits>

#include "cli/plan_row.hpp"
#include "models/core/pareto.hpp"
#include "models/core/scenario_error.hpp"
#include "models/core/units.hpp"
#include "models/scenario/input_file.hpp"

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

namespace {

// The header's "trainsim_sweep" object, or nullptr when the line is not a sweep header.
const json* sweep_meta(const json& header) {
  if (!header.is_object()) return nullptr;
  const auto it = header.find("trainsim_sweep");
  return it != header.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace

json read_sweep_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return nullptr;
  const json j = parse_json_or_discarded(line);
  if (j.is_discarded() || !sweep_meta(j)) return nullptr;
  return j;
}

std::string header_fingerprint(const json& header) {
  const json* meta = sweep_meta(header);
  if (!meta) return "";
  const auto it = meta->find("fingerprint");
  return it != meta->end() && it->is_string() ? it->get<std::string>() : "";
}

RowWriter::RowWriter(const std::string& path, bool resume, const json& header) : path_(path) {
  const std::string fingerprint = header_fingerprint(header);
  long long plans = -1;
  if (const json* meta = sweep_meta(header))
    if (const auto it = meta->find("plans"); it != meta->end() && it->is_number_integer()) plans = it->get<long long>();
  bool keep = false;
  if (resume) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    long long good_bytes = 0;
    bool first = true, any = false;
    while (in && std::getline(in, line)) {
      if (in.eof()) break;  // no newline: a partial row from a kill
      any = true;
      const json row = parse_json_or_discarded(line);
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
      // A damaged row, or one whose index is not a plan of this sweep (an edited file): keep
      // what precedes it.
      if (row.is_discarded() || !row.is_object() || !row.contains("index") || !row["index"].is_number_integer())
        break;
      const long long index = row["index"].get<long long>();
      if (index < 0 || (plans >= 0 && index >= plans)) break;
      done_.insert(index);
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
  last_sync_ = last_flush_ = std::chrono::steady_clock::now();
}

RowWriter::~RowWriter() = default;

void RowWriter::add(const json& row) {
  pending_ += row.dump();
  pending_ += '\n';
  flush(true);
  if (row.contains("index")) done_.insert(row["index"].get<long long>());
}

void RowWriter::flush(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && pending_.size() < (1u << 20) && now - last_flush_ < std::chrono::milliseconds(50)) return;
  try {
    if (!pending_.empty()) file_->write(pending_);
    pending_.clear();
    // Flushed to the OS (a killed sweep loses nothing flushed); on the disk (fsync) every second
    // and at the end, which a power cut needs.
    const bool sync = now - last_sync_ > std::chrono::seconds(1);
    file_->flush(sync);
    if (sync) last_sync_ = now;
    last_flush_ = now;
  } catch (const ScenarioError& e) {
    throw ScenarioError("--out", std::string(e.what()) + " (while writing a result row; rows written before are intact)");
  }
}

void RowWriter::close() {
  flush(true);
  file_->close(true);
}

std::map<long long, json> read_rows(const std::vector<std::string>& paths) {
  std::map<long long, json> rows;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw ScenarioError(p, "cannot read rows");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      json row = parse_json_or_discarded(line);
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
// A field of a row read back from a file, or the fallback where the file holds another type:
// rows of an edited or damaged file never stop the summary.
template <class T>
T typed(const json& object, const char* key, T fallback) {
  const json& v = at(object, key);
  if constexpr (std::is_same_v<T, bool>) return v.is_boolean() ? v.get<bool>() : fallback;
  else return v.is_number_integer() ? v.get<T>() : fallback;
}

const char* const kPlanCols[] = {"tp", "pp", "dp", "cp", "ep", "vpp", "schedule", "micro_batch",
                                 "global_batch", "zero_stage", "recompute", "sp"};
const char* const kMetricCols[] = {"step_time_s", "tokens_per_s", "mfu", "hfu",
                                   "model_tflops_per_gpu", "bubble_fraction", "exposed_comm_s"};
}  // namespace

const std::string& rows_csv_header() {
  static const std::string header = [] {
    std::string h = "index,model,cluster,gpus";
    for (const char* c : kPlanCols) h += std::string(",") + c;
    h += ",feasible,meets_constraints,objective";
    for (const char* c : kMetricCols) h += std::string(",") + c;
    return h + ",peak_bytes,reason\n";
  }();
  return header;
}

void append_csv_line(const json& row, std::string& out) {
  out += std::to_string(row["index"].get<long long>());
  out += "," + csv_field(at(row, "model")) + "," + csv_field(at(row, "cluster")) + "," + csv_field(at(row, "gpus"));
  for (const char* c : kPlanCols) out += "," + csv_field(at(row, "plan", c));
  out += "," + csv_field(at(row, "feasible")) + "," + csv_field(at(row, "meets_constraints")) + "," +
         csv_field(at(row, "objective"));
  for (const char* c : kMetricCols) out += "," + csv_field(at(row, c));
  out += "," + csv_field(at(row, "memory", "peak_bytes")) + "," + csv_field(at(row, "reason")) + "\n";
}

void write_csv_text(const std::string& path, const std::string& lines) {
  replace_output_file(path, rows_csv_header() + lines, "--out");
}

void write_rows_csv(const std::string& path, const std::map<long long, json>& rows) {
  std::string lines;
  for (const auto& [i, row] : rows) append_csv_line(row, lines);
  write_csv_text(path, lines);
}

uint32_t StringTable::id(const std::string& s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(s);
  ids_.emplace(s, id);
  return id;
}

void SweepTally::add_ranked(const RankedPlan& p) {
  if (!ranked_.empty() && ranked_.back().index > p.index) sorted_ = false;
  ranked_.push_back(p);
  ++rows_;
}

void SweepTally::count_reason(const std::string& key, long long index, const std::string& example) {
  Rejected& r = reasons[key];
  // The example is the reason of the first row of the code in index order.
  if (r.count++ == 0 || index < r.first) {
    r.first = index;
    r.example = example;
  }
}

void SweepTally::add_rejected(long long index, const std::string& code, const std::string& reason) {
  ++rows_;
  if (code == "invalid_input") ++invalid;
  else ++infeasible;
  count_reason(code, index, reason);
}

void SweepTally::add_constrained(long long index, const std::string& violated) {
  ++rows_;
  ++constrained;
  count_reason("constraint: " + violated, index, "");
}

void SweepTally::add_json(const json& row) {
  const long long index = row["index"].get<long long>();
  const bool feasible = at(row, "feasible").is_boolean() && row["feasible"].get<bool>();
  const bool meets = at(row, "meets_constraints").is_boolean() && row["meets_constraints"].get<bool>();
  if (!feasible) {
    const std::string reason = at(row, "reason").is_string() ? row["reason"].get<std::string>() : "?";
    const std::string code = at(row, "reason_code").is_string() ? row["reason_code"].get<std::string>() : reason_code(reason);
    add_rejected(index, code, reason);
  } else if (!meets) {
    const json& v = at(row, "violated");
    add_constrained(index, v.is_array() && !v.empty() && v[0].is_string() ? v[0].get<std::string>() : std::string("?"));
  } else if (at(row, "objective").is_number()) {
    const json& p = at(row, "plan");
    auto str = [&](const json& v) { return strings.id(v.is_string() ? v.get<std::string>() : std::string()); };
    auto pv = [&](const char* k) -> const json& { return at(row, "plan", k); };
    RankedPlan r;
    r.index = index;
    r.objective = num(row["objective"]);
    r.tokens_per_s = num(at(row, "tokens_per_s"));
    r.peak_bytes = num(at(row, "memory", "peak_bytes"));
    r.gpus = num(at(row, "gpus"));
    r.step_time_s = num(at(row, "step_time_s"));
    r.mfu = num(at(row, "mfu"));
    r.bubble_fraction = num(at(row, "bubble_fraction"));
    r.model = str(at(row, "model"));
    r.cluster = str(at(row, "cluster"));
    r.schedule = str(pv("schedule"));
    r.recompute = str(pv("recompute"));
    r.precision = str(pv("precision"));
    if (p.is_object()) {
      r.tp = typed(p, "tp", 0), r.pp = typed(p, "pp", 0), r.dp = typed(p, "dp", 0), r.cp = typed(p, "cp", 0);
      r.ep = typed(p, "ep", 0), r.vpp = typed(p, "vpp", 0), r.zero_stage = typed(p, "zero_stage", -1);
      r.dp_shard = typed(p, "dp_shard", 0);
      r.hpz = typed(p, "zero_hpz_partition_size", 0);
      r.qwz = typed(p, "zero_quantized_weights", false), r.qgz = typed(p, "zero_quantized_gradients", false);
      r.micro_batch = typed(p, "micro_batch", int64_t{0}), r.global_batch = typed(p, "global_batch", int64_t{0});
      r.sp = typed(p, "sp", false), r.offload_optimizer = typed(p, "offload_optimizer", false);
    } else {
      r.zero_stage = -1;
    }
    add_ranked(r);
  } else {
    add_unranked();
  }
}

json SweepTally::plan_json(const RankedPlan& p) const {
  json plan = {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"ep", p.ep}, {"sp", p.sp},
               {"vpp", p.vpp}, {"schedule", strings.at(p.schedule)}, {"micro_batch", p.micro_batch},
               {"global_batch", p.global_batch}, {"zero_stage", p.zero_stage},
               {"recompute", strings.at(p.recompute)}, {"precision", strings.at(p.precision)},
               {"offload_optimizer", p.offload_optimizer}};
  if (p.dp_shard > 0) plan["dp_shard"] = p.dp_shard;
  if (p.hpz > 1) plan["zero_hpz_partition_size"] = p.hpz;
  if (p.qwz) plan["zero_quantized_weights"] = true;
  if (p.qgz) plan["zero_quantized_gradients"] = true;
  return plan;
}

std::string RankedPlan::zero_text(const std::string& zero_label) const {
  ParallelPlan zero;  // the row's ZeRO++ fields, so "++" means what ParallelPlan::zero_plus_plus() says
  zero.zero_hpz_partition_size = hpz;
  zero.zero_quantized_weights = qwz;
  zero.zero_quantized_gradients = qgz;
  return zero_column(zero_label, zero.zero_plus_plus(), dp_shard);
}

const std::vector<RankedPlan>& SweepTally::ranked() {
  if (!sorted_) {
    std::stable_sort(ranked_.begin(), ranked_.end(), [](const RankedPlan& a, const RankedPlan& b) { return a.index < b.index; });
    sorted_ = true;
  }
  return ranked_;
}

namespace {

// Each ranked row in one line; a simulated plan shows the simulation's figures and the estimate's
// step time beside them.
std::string describe(const SweepTally& t, const RankedPlan& p, const std::string& zero_label, double memory_bytes,
                     const json* sim) {
  char line[512];
  double step = p.step_time_s, tokens = p.tokens_per_s, mfu = p.mfu, memory = memory_bytes, bubble = p.bubble_fraction;
  if (sim) {
    const json& m = (*sim)["simulate"];
    step = num(at(m, "step_time_s")), tokens = num(at(m, "tokens_per_s")), mfu = num(at(m, "mfu"));
    memory = num(at(m, "memory", "peak_bytes")), bubble = num(at(m, "bubble_fraction"));
  }
  std::snprintf(line, sizeof line,
                "%6lld  %-14s TP%-2d PP%-3d DP%-5d CP%-2d EP%-2d vpp%-2d %-11s mb%-3d %-8s %-9s %9s %12s tok/s  MFU %4.1f%%  "
                "mem %8s  bubble %4.1f%%",
                p.index, t.strings.at(p.model).c_str(), p.tp, p.pp, p.dp, p.cp, p.ep, p.vpp,
                t.strings.at(p.schedule).c_str(), static_cast<int>(p.micro_batch),
                p.zero_text(zero_label).c_str(),
                t.strings.at(p.recompute).c_str(), units::format_time(step).c_str(),
                units::format_count(tokens).c_str(), 100 * mfu, units::format_bytes(memory).c_str(), 100 * bubble);
  std::string out = line;
  if (sim) {
    const double est = p.step_time_s, simulated = step;
    std::snprintf(line, sizeof line, "  [simulated; estimate %s, %+.1f%%]", units::format_time(est).c_str(),
                  est > 0 ? 100 * (simulated / est - 1) : 0.0);
    out += line;
  }
  return out + "\n";
}

bool better(double x, double y, bool maximize) { return maximize ? x > y : x < y; }

// The plan of a ranked row without its ZeRO stage, as a key: equal keys, the same plan.
std::string twin_key(const RankedPlan& p) {
  std::string k;
  auto put = [&k](const auto& v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(p.model), put(p.cluster), put(p.gpus), put(p.schedule), put(p.recompute), put(p.precision);
  put(p.tp), put(p.pp), put(p.dp), put(p.cp), put(p.ep), put(p.vpp), put(p.micro_batch), put(p.global_batch);
  put(p.sp), put(p.offload_optimizer), put(p.dp_shard), put(p.hpz), put(p.qwz), put(p.qgz);
  return k;
}

}  // namespace

std::string summarize_rows(const std::map<long long, json>& rows, bool maximize, const std::string& objective_text,
                           int top_k, const std::map<long long, json>& simulated) {
  SweepTally tally;
  for (const auto& [i, row] : rows) tally.add_json(row);
  return summarize_rows(tally, maximize, objective_text, top_k, simulated);
}

std::string summarize_rows(SweepTally& tally, bool maximize, const std::string& objective_text, int top_k,
                           const std::map<long long, json>& simulated) {
  const std::vector<RankedPlan>& by_index = tally.ranked();
  std::vector<const RankedPlan*> ok;
  ok.reserve(by_index.size());
  for (const RankedPlan& p : by_index) ok.push_back(&p);
  // The simulated plans rank by their simulated objective, ahead of the plans only estimated.
  auto sim_of = [&](const RankedPlan* row) -> const json* {
    if (simulated.empty()) return nullptr;
    const auto it = simulated.find(row->index);
    if (it == simulated.end() || !it->second.contains("simulate") || !at(it->second, "objective").is_number()) return nullptr;
    return &it->second;
  };
  std::sort(ok.begin(), ok.end(), [&](const RankedPlan* a, const RankedPlan* b) {
    const json *sa = sim_of(a), *sb = sim_of(b);
    if ((sa != nullptr) != (sb != nullptr)) return sa != nullptr;
    const double x = sa ? num((*sa)["objective"]) : a->objective, y = sb ? num((*sb)["objective"]) : b->objective;
    if (x != y) return better(x, y, maximize);
    return a->index < b->index;
  });
  std::size_t simulated_ok = 0;
  for (const RankedPlan* r : ok) simulated_ok += sim_of(r) != nullptr;

  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%zu plans: %zu feasible within constraints, %d infeasible, %d outside constraints",
                tally.rows(), ok.size(), tally.infeasible, tally.constrained);
  o << line << (tally.invalid ? ", " + std::to_string(tally.invalid) + " invalid" : std::string());
  // Every row in one class: a row whose objective is not a number (a division by zero) ranks nowhere.
  if (tally.unranked) o << ", " << tally.unranked << " with no number for the objective (not ranked)";
  o << "\n";
  o << "\nbest plans by " << (maximize ? "maximum " : "minimum ") << objective_text;
  if (simulated_ok > 0)
    o << " (the " << simulated_ok << " simulated plans first, ranked by the simulation; then by the estimate)";
  o << ":\n";
  // ZeRO-1/2 twins folded over a list of ranked rows (best first).
  auto fold = [&](const std::vector<const RankedPlan*>& rows) {
    return fold_zero_twins(
        rows.size(), [&](std::size_t i) { return twin_key(*rows[i]); }, [&](std::size_t i) { return rows[i]->zero_stage; },
        [&](std::size_t i) { return rows[i]->step_time_s; }, [&](std::size_t i) { return rows[i]->peak_bytes; });
  };
  const std::vector<FoldedRow> best = fold(ok);
  bool folded = false;
  for (int k = 0; k < top_k && k < static_cast<int>(best.size()); ++k) {
    const RankedPlan* p = ok[best[k].at];
    o << describe(tally, *p, best[k].zero_label, best[k].memory_bytes, sim_of(p));
    folded = folded || best[k].zero_label == "ZeRO-1/2";
  }
  if (folded) o << "  (ZeRO-1/2: ZeRO-1 and ZeRO-2 of the same plan take the same time; memory is ZeRO-2's)\n";
  // Pareto front: more throughput, less peak memory, fewer GPUs (the estimate's figures), by the
  // definition the GUI's Sweep view uses too (models/core/pareto.hpp). Plans with the same
  // figures are one point; a ZeRO-1/2 pair among them is shown as such.
  std::vector<ParetoPoint> points;
  points.reserve(by_index.size());
  for (const RankedPlan& r : by_index) points.push_back({r.tokens_per_s, r.peak_bytes, r.gpus});
  struct FrontRow {
    const RankedPlan* row;
    FoldedRow folded;
  };
  std::vector<FrontRow> front_rows;
  for (const ParetoEntry& e : pareto_front(points)) {
    std::vector<const RankedPlan*> same = {&by_index[e.index]};
    for (std::size_t k : e.same) same.push_back(&by_index[k]);
    FoldedRow f = fold(same).front();
    front_rows.push_back({same[f.at], std::move(f)});
  }
  o << "\nPareto front (throughput vs peak memory vs GPU count, estimate): " << front_rows.size() << " plans\n";
  for (std::size_t k = 0; k < front_rows.size() && k < 20; ++k)
    o << describe(tally, *front_rows[k].row, front_rows[k].folded.zero_label, front_rows[k].folded.memory_bytes, nullptr);
  if (front_rows.size() > 20) o << "  ... (" << front_rows.size() - 20 << " more in the rows file)\n";
  if (!tally.reasons.empty()) {
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [code, r] : tally.reasons) sorted.emplace_back(r.count, code);
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    o << "\nwhy plans were rejected (reason_code in the rows):\n";
    for (std::size_t k = 0; k < sorted.size() && k < 15; ++k) {
      const std::string& code = sorted[k].second;
      const SweepTally::Rejected& r = tally.reasons[code];
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
