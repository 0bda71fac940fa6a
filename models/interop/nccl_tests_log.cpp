#include "models/interop/nccl_tests_log.hpp"

#include <functional>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "models/scenario/input_file.hpp"
#include "models/scenario/json_reader.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

// The most ranks a log may state: the largest cluster a scenario describes (2^24 GPUs).
constexpr long long kMaxLogRanks = 1LL << 24;

// A row no GPU can produce: times below nccl-tests' printed resolution (0.01 us) or above a
// day, sizes above 1 TiB, or an algbw that is not size / time (nccl-tests prints size / time;
// allowing for its two decimals).
void check_row(const NcclSample& s, const std::string& where) {
  if (!(s.time_s >= 1e-8)) throw ScenarioError(where, "time: must be at least 0.01 us (nccl-tests' resolution)");
  if (s.time_s > 86400) throw ScenarioError(where, "time: more than a day for one collective");
  if (s.bytes > 1099511627776.0) throw ScenarioError(where, "size: more than 1 TiB per rank");
  if (s.algbw_bytes_per_s > 0.1e9 && s.bytes > 0) {
    const double implied = s.bytes / s.time_s;
    if (std::fabs(implied - s.algbw_bytes_per_s) > 0.05 * implied + 0.01e9)
      throw ScenarioError(where, "algbw: " + std::to_string(s.algbw_bytes_per_s / 1e9) +
                                     " GB/s is not size / time = " + std::to_string(implied / 1e9) + " GB/s");
  }
}

}  // namespace

namespace {

using nlohmann::json;

std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> t;
  std::istringstream ss(line);
  for (std::string w; ss >> w;) t.push_back(w);
  return t;
}

bool is_unsigned_integer(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A number as nccl-tests prints it (%7.2f, %.1e); "N/A" only where allowed.
double number_at(const std::string& s, const std::string& where, const std::string& column) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
    throw ScenarioError(where, column + ": expected a non-negative number, got \"" + s + "\"");
  return v;
}

void finish_log(NcclTestsLog& log) {
  if (!log.op_known) {
    if (nccl_op_from_name(log.program, log.op) ||
        nccl_op_from_name(std::filesystem::path(log.source).filename().string(), log.op))
      log.op_known = true;
  }
  if (log.out_of_place.empty() && log.in_place.empty())
    throw ScenarioError(log.source, "no result rows found (expected the nccl-tests table: "
                                    "\"size count type ... time algbw busbw #wrong\")");
}

double read_result_number(const json& v, const std::string& path) {
  if (v.is_number()) return v.get<double>();
  throw ScenarioError(path, "expected a number, got " + json_type_name(v));
}

}  // namespace

bool nccl_op_from_name(const std::string& name, CollectiveOp& op) {
  std::string s;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(c));
  // Longest names first: "reducescatter" and "allreduce" both contain "reduce".
  static const std::pair<const char*, CollectiveOp> kNames[] = {
      {"reducescatter", CollectiveOp::kReduceScatter}, {"allreduce", CollectiveOp::kAllReduce},
      {"allgather", CollectiveOp::kAllGather},         {"alltoall", CollectiveOp::kAllToAll},
      {"sendrecv", CollectiveOp::kSendRecv},           {"broadcast", CollectiveOp::kBroadcast},
      {"reduce", CollectiveOp::kReduce}};
  for (const auto& [n, o] : kNames)
    if (s.find(n) != std::string::npos) {
      op = o;
      return true;
    }
  return false;
}

NcclTestsLog parse_nccl_tests_text(const std::string& text, const std::string& source) {
  NcclTestsLog log;
  log.source = source;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  std::set<int> rank_ids;
  std::set<std::string> hosts;
  int threads = 1, gpus = 0;
  // Column indices in a data row (after the '#' of the header is dropped).
  int c_size = -1, c_time[2] = {-1, -1}, c_alg[2] = {-1, -1}, c_bus[2] = {-1, -1},
      c_wrong[2] = {-1, -1};
  std::size_t header_columns = 0;
  int skipped = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = source + ":" + std::to_string(line_no);
    std::vector<std::string> t = tokens_of(line);
    if (t.empty()) continue;
    if (t[0][0] == '#') {
      if (t[0] == "#") t.erase(t.begin());
      else t[0] = t[0].substr(1);
      if (t.empty()) continue;
      if (t.size() >= 4 && t[0] == "Collective" && t[1] == "test" && t[2] == "starting:") {
        // Words of a text log go into JSON output (the calibration file): printable ASCII only,
        // as a log line may hold any bytes (nlohmann refuses to write invalid UTF-8).
        log.program = safe_excerpt(t[3], 80);
        if (nccl_op_from_name(t[3], log.op)) log.op_known = true;
      } else if (t[0] == "nThread" && t.size() >= 4 && t[2] == "nGpus") {
        // Each a count from 1 to 2^24, their product (the ranks) at most 2^24: no overflow.
        const long long th = std::strtoll(t[1].c_str(), nullptr, 10), gp = std::strtoll(t[3].c_str(), nullptr, 10);
        if (th < 1 || gp < 1 || th > kMaxLogRanks || gp > kMaxLogRanks || th * gp > kMaxLogRanks)
          throw ScenarioError(source, "\"nThread " + safe_excerpt(t[1], 24) + " nGpus " + safe_excerpt(t[3], 24) +
                                          "\": expected counts of at least 1, at most " +
                                          std::to_string(kMaxLogRanks) + " ranks in all");
        threads = static_cast<int>(th);
        gpus = static_cast<int>(gp);
      } else if (t[0] == "Rank" && t.size() >= 2 && is_unsigned_integer(t[1])) {
        rank_ids.insert(std::atoi(t[1].c_str()));
        for (std::size_t i = 0; i + 1 < t.size(); ++i)
          if (t[i] == "on") hosts.insert(t[i + 1]);
        const auto close = line.find(']');
        if (log.device.empty() && close != std::string::npos) {
          std::string d = line.substr(close + 1);
          d.erase(0, d.find_first_not_of(' '));
          log.device = safe_excerpt(d, 120);
        }
      } else if (std::find(t.begin(), t.end(), "size") != t.end() &&
                 (std::find(t.begin(), t.end(), "time") != t.end() ||
                  std::find(t.begin(), t.end(), "cputime") != t.end())) {
        if (c_size >= 0 && !log.out_of_place.empty())
          throw ScenarioError(where, "a second result table in one log; split the log per test");
        header_columns = t.size();
        // A header before any row replaces the previous one whole.
        c_size = -1;
        for (int g = 0; g < 2; ++g) c_time[g] = c_alg[g] = c_bus[g] = c_wrong[g] = -1;
        int group = 0;
        for (int i = 0; i < static_cast<int>(t.size()); ++i) {
          const std::string& c = t[i];
          if (c == "size") c_size = i;
          else if (c == "time" || c == "cputime") {
            if (group < 2 && c_time[group] >= 0) ++group;
            if (group < 2) c_time[group] = i;
          } else if (c == "algbw" && group < 2) c_alg[group] = i;
          else if (c == "busbw" && group < 2) c_bus[group] = i;
          else if ((c == "#wrong" || c == "error" || c == "wrong") && group < 2) c_wrong[group] = i;
        }
        if (c_time[0] < 0 || c_alg[0] < 0 || c_bus[0] < 0)
          throw ScenarioError(where, "result header lacks time/algbw/busbw columns");
        // A second (in-place) group is read only when it has all three columns.
        if (c_time[1] >= 0 && (c_alg[1] < 0 || c_bus[1] < 0)) c_time[1] = c_wrong[1] = -1;
      }
      continue;
    }
    if (!is_unsigned_integer(t[0])) {
      ++skipped;  // NCCL INFO/WARN lines, MPI chatter
      continue;
    }
    if (c_size < 0)
      throw ScenarioError(where, "a result row before the nccl-tests header line "
                                 "(\"# size count type ... time algbw busbw #wrong\")");
    // Rows have as many fields as the header names, minus empty trailing labels.
    int needed = c_size;
    for (int g = 0; g < 2; ++g)
      needed = std::max({needed, c_time[g], c_alg[g], c_bus[g], c_wrong[g]});
    if (static_cast<int>(t.size()) <= needed)
      throw ScenarioError(where, "expected " + std::to_string(header_columns) +
                                     " columns as in the header, got " + std::to_string(t.size()) +
                                     " (truncated line?)");
    const double bytes = number_at(t[c_size], where, "size");
    for (int g = 0; g < 2; ++g) {
      if (c_time[g] < 0) continue;
      NcclSample s;
      s.line = line_no;
      s.bytes = bytes;
      s.time_s = number_at(t[c_time[g]], where, g ? "in-place time" : "out-of-place time") * 1e-6;
      s.algbw_bytes_per_s = number_at(t[c_alg[g]], where, "algbw") * 1e9;
      s.busbw_bytes_per_s = number_at(t[c_bus[g]], where, "busbw") * 1e9;
      if (c_wrong[g] >= 0 && t[c_wrong[g]] != "N/A")
        s.wrong = number_at(t[c_wrong[g]], where, "#wrong");
      check_row(s, where);
      (g ? log.in_place : log.out_of_place).push_back(s);
    }
  }
  log.ranks = !rank_ids.empty() ? static_cast<int>(rank_ids.size()) : threads * gpus;
  log.nodes = static_cast<int>(hosts.size());
  if (skipped > 0)
    log.warnings.push_back(std::to_string(skipped) + " non-table lines skipped");
  finish_log(log);
  if (log.ranks <= 0)
    throw ScenarioError(source, "rank count not stated (no \"# Rank\" lines, no \"nGpus\"): "
                                "pass --ranks N");
  return log;
}

NcclTestsLog parse_nccl_tests_json(const json& report, const std::string& source) {
  NcclTestsLog log;
  log.source = source;
  if (!report.is_object())
    throw ScenarioError(source, "an nccl-tests JSON report is an object, got " + json_type_name(report));
  if (report.contains("args") && report["args"].is_array() && !report["args"].empty() &&
      report["args"][0].is_string()) {
    log.program = std::filesystem::path(report["args"][0].get<std::string>()).filename().string();
    log.op_known = nccl_op_from_name(log.program, log.op);
  }
  int threads = 1, gpus = 1, procs = 1;
  std::set<std::string> hosts;
  if (report.contains("config")) {
    const json& c = report["config"];
    if (!c.is_object()) throw ScenarioError(source + ": config", "expected an object");
    if (c.contains("nthreads")) threads = static_cast<int>(json_to_integer(c["nthreads"], source + ": config.nthreads", 1, 1 << 20));
    if (c.contains("ngpus")) gpus = static_cast<int>(json_to_integer(c["ngpus"], source + ": config.ngpus", 1, 1 << 20));
    if (c.contains("devices")) {
      if (!c["devices"].is_array()) throw ScenarioError(source + ": config.devices", "expected a list");
      procs = std::max<int>(1, static_cast<int>(c["devices"].size()));
      for (const json& d : c["devices"]) {
        if (d.is_object() && d.contains("hostname") && d["hostname"].is_string())
          hosts.insert(d["hostname"].get<std::string>());
        if (log.device.empty() && d.is_object() && d.contains("device_info") &&
            d["device_info"].is_string())
          log.device = d["device_info"].get<std::string>();
      }
    }
  }
  const long long ranks = static_cast<long long>(threads) * gpus * procs;  // each <= 2^20: no overflow
  if (ranks > kMaxLogRanks)
    throw ScenarioError(source + ": config", "nthreads x ngpus x processes = " + std::to_string(ranks) +
                                                 " ranks; at most " + std::to_string(kMaxLogRanks));
  log.ranks = static_cast<int>(ranks);
  log.nodes = static_cast<int>(hosts.size());
  if (!report.contains("results"))
    throw ScenarioError(source + ": results", "missing (an nccl-tests -J report has a results list)");
  const json& results = report["results"];
  if (!results.is_array()) throw ScenarioError(source + ": results", "expected a list");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string p = source + ": results[" + std::to_string(i) + "]";
    const json& r = results[i];
    if (!r.is_object()) throw ScenarioError(p, "expected an object");
    if (!r.contains("size")) throw ScenarioError(p + ".size", "missing");
    const double bytes = static_cast<double>(json_to_integer(r["size"], p + ".size", 0, int64_t{1} << 50));
    for (int g = 0; g < 2; ++g) {
      const char* key = g ? "in_place" : "out_of_place";
      if (!r.contains(key) || r[key].is_null()) continue;
      const json& b = r[key];
      const std::string bp = p + "." + key;
      if (!b.is_object()) throw ScenarioError(bp, "expected an object or null");
      const char* time_key = b.contains("time") ? "time" : "cpu_time";
      if (!b.contains(time_key)) throw ScenarioError(bp + ".time", "missing");
      NcclSample s;
      s.bytes = bytes;
      s.time_s = read_result_number(b[time_key], bp + "." + time_key) * 1e-6;
      check_row(s, bp);
      if (b.contains("alg_bw")) s.algbw_bytes_per_s = read_result_number(b["alg_bw"], bp + ".alg_bw") * 1e9;
      if (b.contains("bus_bw")) s.busbw_bytes_per_s = read_result_number(b["bus_bw"], bp + ".bus_bw") * 1e9;
      if (b.contains("nwrong") && !b["nwrong"].is_null())
        s.wrong = read_result_number(b["nwrong"], bp + ".nwrong");
      (g ? log.in_place : log.out_of_place).push_back(s);
    }
  }
  finish_log(log);
  return log;
}

NcclTestsLog read_nccl_tests_log(const std::string& path) {
  const std::string text = read_input_file(path, "nccl-tests log");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{')
    return parse_nccl_tests_json(parse_json_text(text, path, DuplicateKeys::kKeepLast), path);
  return parse_nccl_tests_text(text, path);
}

AlphaBetaFit fit_alpha_beta(const std::vector<NcclSample>& samples) {
  AlphaBetaFit f;
  f.samples = static_cast<int>(samples.size());
  if (samples.empty()) return f;
  // Minimise sum ((a + b x - t) / t)^2: weighted normal equations with w = 1/t^2.
  double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
  for (const auto& s : samples) {
    const double w = 1.0 / (s.time_s * s.time_s);
    sw += w, sx += w * s.bytes, sxx += w * s.bytes * s.bytes, st += w * s.time_s,
        sxt += w * s.bytes * s.time_s;
  }
  const double det = sw * sxx - sx * sx;
  double a = 0, b = 0;
  if (samples.size() >= 2 && std::fabs(det) > 1e-300 * std::max(1.0, sw * sxx)) {
    a = (st * sxx - sx * sxt) / det;
    b = (sw * sxt - sx * st) / det;
  }
  if (!(samples.size() >= 2) || a < 0 || b < 0 || !std::isfinite(a) || !std::isfinite(b)) {
    // Clamped solutions: the best of pure latency and pure bandwidth, as one of a, b = 0.
    const double b_only = sxx > 0 ? sxt / sxx : 0, a_only = sw > 0 ? st / sw : 0;
    double err_b = 0, err_a = 0;
    for (const auto& s : samples) {
      err_b += std::pow((b_only * s.bytes - s.time_s) / s.time_s, 2);
      err_a += std::pow((a_only - s.time_s) / s.time_s, 2);
    }
    if (b_only > 0 && err_b <= err_a) a = 0, b = b_only;
    else a = a_only, b = 0;
  }
  f.alpha_s = a;
  f.beta_s_per_byte = b;
  f.min_bytes = std::numeric_limits<double>::max();
  double sum = 0;
  for (const auto& s : samples) {
    const double e = std::fabs(f.time_s(s.bytes) - s.time_s) / s.time_s;
    f.max_rel_error = std::max(f.max_rel_error, e);
    sum += e;
    f.min_bytes = std::min(f.min_bytes, s.bytes);
    f.max_bytes = std::max(f.max_bytes, s.bytes);
  }
  f.mean_rel_error = sum / samples.size();
  return f;
}

NcclFit fit_nccl_log(const std::vector<NcclSample>& raw) {
  NcclFit fit;
  std::vector<NcclSample> s;
  for (const auto& x : raw)
    if (x.bytes > 0 && x.time_s > 0) s.push_back(x);
  std::stable_sort(s.begin(), s.end(), [](const NcclSample& a, const NcclSample& b) { return a.bytes < b.bytes; });
  fit.all = fit_alpha_beta(s);
  fit.small = fit.large = fit.all;
  std::vector<double> sizes;
  for (const auto& x : s)
    if (sizes.empty() || sizes.back() != x.bytes) sizes.push_back(x.bytes);
  double best = fit.all.max_rel_error;
  for (std::size_t k = 3; k + 3 <= sizes.size(); ++k) {
    std::vector<NcclSample> lo, hi;
    for (const auto& x : s) (x.bytes < sizes[k] ? lo : hi).push_back(x);
    const AlphaBetaFit a = fit_alpha_beta(lo), b = fit_alpha_beta(hi);
    const double worst = std::max(a.max_rel_error, b.max_rel_error);
    if (worst < best * 0.9) {  // split only when it clearly helps
      best = worst;
      fit.small = a;
      fit.large = b;
      fit.split_bytes = sizes[k];
    }
  }
  return fit;
}

GroupShape nccl_group_shape(const NcclTestsLog& log, const ClusterSpec& cluster) {
  GroupShape g;
  g.ranks = std::max(1, log.ranks);
  const int per_node = std::max(1, cluster.gpus_per_node);
  g.nodes = log.nodes > 0 ? log.nodes : (g.ranks + per_node - 1) / per_node;
  g.nodes = std::max(1, std::min(g.nodes, g.ranks));
  g.ranks_per_node = std::max(1, g.ranks / g.nodes);
  return g;
}

double nccl_model_time_s(const NcclTestsLog& log, double bytes, const ClusterSpec& cluster) {
  return collective_cost(log.op, CollectiveAlgo::kAuto, bytes, nccl_group_shape(log, cluster),
                         fabric_terms(cluster))
      .time_s;
}

namespace {

struct FitSet {
  const NcclTestsLog* log;
  std::vector<NcclSample> samples;
};

double mean_sq_log_error(const std::vector<FitSet>& sets, const ClusterSpec& c) {
  double sum = 0;
  int n = 0;
  for (const auto& set : sets)
    for (const auto& s : set.samples) {
      const double t = nccl_model_time_s(*set.log, s.bytes, c);
      if (t > 0) sum += std::pow(std::log(t / s.time_s), 2), ++n;
    }
  return n ? sum / n : 0;
}

// Golden-section search of a one-dimensional error on [lo, hi], refined from a coarse grid so
// a min-of-algorithms model (piecewise smooth) does not trap it.
double minimise(const std::function<double(double)>& err, double lo, double hi) {
  const int grid = 40;
  int best = 0;
  double best_e = std::numeric_limits<double>::max();
  for (int i = 0; i <= grid; ++i) {
    const double e = err(lo + (hi - lo) * i / grid);
    if (e < best_e) best_e = e, best = i;
  }
  double a = lo + (hi - lo) * std::max(0, best - 1) / grid, b = lo + (hi - lo) * std::min(grid, best + 1) / grid;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 60; ++it) {
    const double x1 = b - g * (b - a), x2 = a + g * (b - a);
    if (err(x1) < err(x2)) b = x2;
    else a = x1;
  }
  return (a + b) / 2;
}

std::vector<FitSet> select(const std::vector<NcclTestsLog>& logs, const std::vector<std::vector<NcclSample>>& samples,
                           const ClusterSpec& c, bool multi_node, bool large) {
  std::vector<FitSet> out;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    if ((nccl_group_shape(logs[i], c).nodes > 1) != multi_node) continue;
    std::vector<NcclSample> s = samples[i];
    std::sort(s.begin(), s.end(), [](const NcclSample& x, const NcclSample& y) { return x.bytes < y.bytes; });
    if (s.empty()) continue;
    std::vector<NcclSample> pick;
    for (const auto& x : s)
      if (large ? x.bytes >= 256.0 * 1024 * 1024 : x.bytes <= 64.0 * 1024) pick.push_back(x);
    if (pick.empty()) {
      const std::size_t third = std::max<std::size_t>(1, s.size() / 3);
      pick.assign(large ? s.end() - third : s.begin(), large ? s.end() : s.begin() + third);
    }
    out.push_back({&logs[i], pick});
  }
  return out;
}

}  // namespace

FittedCluster fit_cluster(const std::vector<NcclTestsLog>& logs, const std::vector<std::vector<NcclSample>>& samples,
                          const ClusterSpec& cluster) {
  FittedCluster out;
  ClusterSpec c = cluster;
  std::vector<FitSet> all;
  for (std::size_t i = 0; i < logs.size(); ++i) all.push_back({&logs[i], samples[i]});
  auto mean_abs = [&](const ClusterSpec& k) {
    double sum = 0;
    int n = 0;
    for (const auto& set : all)
      for (const auto& s : set.samples) sum += std::fabs(nccl_model_time_s(*set.log, s.bytes, k) / s.time_s - 1), ++n;
    return n ? sum / n : 0;
  };
  out.mean_error_before = mean_abs(c);
  auto bounded = [&](double v, const char* field) {
    if (v <= 0.0105 || v >= 0.9995)
      out.notes.push_back(std::string(field) + " fitted to the bound of its range (" + std::to_string(v) +
                          "): the logs ask for more or less than the model can give");
    return v;
  };
  // A fitted value replaces the cluster's only where it explains the logs better: a part the
  // logs do not limit (another link or a per-channel cap binds) keeps its value.
  auto keep_unless_better = [&](double fitted, double original, const std::function<double(double)>& err,
                                const char* field) {
    if (err(fitted) < err(original) * (1 - 1e-3)) return fitted;
    if (*field && std::fabs(fitted - original) > 1e-3 * std::max(1e-12, std::fabs(original)))
      out.notes.push_back(std::string(field) + " kept: these logs do not depend on it");
    return original;
  };
  const auto intra = select(logs, samples, c, false, true);
  if (!intra.empty() && c.gpus_per_node > 1) {
    const auto err = [&](double e) {
      ClusterSpec k = c;
      k.intra_node.efficiency = e;
      return mean_sq_log_error(intra, k);
    };
    c.intra_node.efficiency = bounded(
        keep_unless_better(minimise(err, 0.01, 1.0), c.intra_node.efficiency, err, "intra_node.efficiency"),
        "intra_node.efficiency");
    out.intra = true;
    out.intra_efficiency = c.intra_node.efficiency;
  }
  const auto net_bw = select(logs, samples, c, true, true);
  if (!net_bw.empty()) {
    const auto net_lat = select(logs, samples, c, true, false);
    // Bandwidth and latency each leave a trace in the other's sizes: alternate to a fixed point.
    for (int round = 0; round < 4; ++round) {
      const auto bw_err = [&](double e) {
        ClusterSpec k = c;
        k.network.efficiency = e;
        return mean_sq_log_error(net_bw, k);
      };
      c.network.efficiency = keep_unless_better(minimise(bw_err, 0.01, 1.0), c.network.efficiency, bw_err,
                                                round == 3 ? "network.efficiency" : "");
      const auto lat_err = [&](double l) {
        ClusterSpec k = c;
        k.network.latency_s = l;
        return mean_sq_log_error(net_lat, k);
      };
      c.network.latency_s = keep_unless_better(minimise(lat_err, 0.0, 200e-6), c.network.latency_s, lat_err,
                                               round == 3 ? "network.latency" : "");
    }
    bounded(c.network.efficiency, "network.efficiency");
    out.net = true;
    out.net_efficiency = c.network.efficiency;
    out.net_latency_s = c.network.latency_s;
  }
  if (!out.intra && !out.net) out.notes.push_back("no log covers this cluster's fabric: nothing fitted");
  if (intra.empty() && c.gpus_per_node > 1)
    out.notes.push_back("no single-node log: intra_node.efficiency kept (multi-node logs are fitted with it)");
  out.mean_error_after = mean_abs(c);
  return out;
}

ClusterSpec apply_fit(const ClusterSpec& cluster, const FittedCluster& fit) {
  ClusterSpec c = cluster;
  if (fit.intra) c.intra_node.efficiency = fit.intra_efficiency;
  if (fit.net) {
    c.network.efficiency = fit.net_efficiency;
    c.network.latency_s = fit.net_latency_s;
  }
  return c;
}

void check_fit_is_physical(const NcclTestsLog& log, const NcclFit& fit) {
  if (fit.all.samples < 2) throw ScenarioError(log.source, "fewer than 2 usable rows (need sizes to fit alpha and beta)");
  // The bandwidth term must show: over the sweep, time grows by at least 1% of its smallest.
  const double growth = fit.all.beta_s_per_byte * (fit.all.max_bytes - fit.all.min_bytes);
  if (!(fit.all.beta_s_per_byte > 0) || fit.all.max_bytes <= fit.all.min_bytes ||
      !(growth >= 0.01 * fit.all.time_s(fit.all.min_bytes)))
    throw ScenarioError(log.source + ": time",
                        "does not grow with the message size (the fit has no bandwidth term: alpha " +
                            std::to_string(fit.all.alpha_s * 1e6) + " us, beta " +
                            std::to_string(fit.all.beta_s_per_byte) + " s/B); not an nccl-tests size sweep");
}

json nccl_calibration_json(const std::vector<NcclTestsLog>& logs, const std::vector<NcclFit>& fits,
                           const json& fitted_cluster) {
  json out = {{"format", "trainsim-calibration"},
              {"version", 1},
              {"tool", "trainsim import-nccl-tests"},
              {"backend", "nccl-tests"},
              {"collectives", json::array()}};
  double wrong = 0;
  for (std::size_t i = 0; i < logs.size() && i < fits.size(); ++i) {
    const NcclTestsLog& log = logs[i];
    const NcclFit& fit = fits[i];
    auto range = [](const AlphaBetaFit& f) {
      return json{{"min_bytes", f.min_bytes},       {"max_bytes", f.max_bytes},
                  {"alpha_s", f.alpha_s},           {"beta_s_per_byte", f.beta_s_per_byte},
                  {"fit_max_rel_error", f.max_rel_error}, {"fit_mean_rel_error", f.mean_rel_error},
                  {"samples", f.samples}};
    };
    const AlphaBetaFit& large = fit.split_bytes > 0 ? fit.large : fit.all;
    const double factor = bus_bandwidth_factor(log.op, std::max(1, log.ranks));
    json row = {{"op", to_string(log.op)},
                {"algorithm", "nccl"},
                {"fabric", log.nodes > 1 ? "inter_node" : "intra_node"},
                {"ranks", log.ranks},
                {"nodes", log.nodes},
                {"source", log.source},
                {"device", log.device},
                {"alpha_s", fit.all.alpha_s},
                {"beta_s_per_byte", fit.all.beta_s_per_byte},
                {"bandwidth_bytes_per_s", large.beta_s_per_byte > 0 ? 1.0 / large.beta_s_per_byte : 0.0},
                {"bus_bandwidth_bytes_per_s", large.beta_s_per_byte > 0 ? factor / large.beta_s_per_byte : 0.0},
                {"fit_max_rel_error", fit.all.max_rel_error},
                {"split_bytes", fit.split_bytes},
                {"ranges", json::array({range(fit.split_bytes > 0 ? fit.small : fit.all)})},
                {"samples", json::array()}};
    if (fit.split_bytes > 0) row["ranges"].push_back(range(fit.large));
    for (const auto& s : log.out_of_place) {
      row["samples"].push_back({{"bytes", s.bytes},
                                {"time_s", s.time_s},
                                {"algbw_bytes_per_s", s.algbw_bytes_per_s},
                                {"busbw_bytes_per_s", s.busbw_bytes_per_s},
                                {"wrong", s.wrong}});
      if (s.wrong > 0) wrong += s.wrong;
    }
    out["collectives"].push_back(row);
  }
  out["wrong"] = wrong;
  if (!fitted_cluster.is_null()) out["cluster"] = fitted_cluster;
  return out;
}

}  // namespace trainsim
