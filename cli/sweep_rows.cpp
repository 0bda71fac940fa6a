#include "cli/sweep_rows.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace trainsim::cli {
using nlohmann::json;

RowWriter::RowWriter(const std::string& path, bool resume) : path_(path) {
  if (resume) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    long long good_bytes = 0;
    while (in && std::getline(in, line)) {
      if (in.eof()) break;  // no newline: a partial row from a kill
      try {
        const json row = json::parse(line);
        if (row.contains("index")) done_.insert(row["index"].get<long long>());
        good_bytes += static_cast<long long>(line.size()) + 1;
      } catch (const std::exception&) {
        break;  // a damaged row: keep what precedes it
      }
    }
    in.close();
    if (!done_.empty() || good_bytes == 0) {
      if (truncate(path.c_str(), good_bytes) != 0 && errno != ENOENT)
        throw std::runtime_error(path + ": cannot cut the partial last row: " + std::strerror(errno));
    }
  }
  file_ = std::fopen(path.c_str(), resume ? "ab" : "wb");
  if (!file_) throw std::runtime_error(path + ": cannot open for writing: " + std::strerror(errno));
}

RowWriter::~RowWriter() {
  if (file_) std::fclose(file_);
}

void RowWriter::add(const json& row) {
  const std::string text = row.dump() + "\n";
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    throw std::runtime_error(path_ + ": cannot write a result row (" + std::strerror(errno) +
                             "); rows written before are intact");
  if (row.contains("index")) done_.insert(row["index"].get<long long>());
}

std::map<long long, json> read_rows(const std::vector<std::string>& paths) {
  std::map<long long, json> rows;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error(p + ": cannot read rows");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      try {
        json row = json::parse(line);
        if (!row.is_object() || !row.contains("index") || !row["index"].is_number_integer()) continue;
        rows.emplace(row["index"].get<long long>(), std::move(row));
      } catch (const std::exception&) {
        // a partial row from a kill: skipped
      }
    }
  }
  return rows;
}

void write_rows_jsonl(const std::string& path, const std::map<long long, json>& rows) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    for (const auto& [i, row] : rows) out << row.dump() << "\n";
    if (!out.flush()) throw std::runtime_error(tmp + ": cannot write merged rows");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": cannot replace: " + std::strerror(errno));
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
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
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
  if (!out.flush()) throw std::runtime_error(path + ": cannot write CSV");
}

std::string reason_category(const std::string& reason) {
  std::string out;
  bool in_number = false;
  for (std::size_t i = 0; i < reason.size(); ++i) {
    const char c = reason[i];
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) ||
                       (in_number && (c == '.' || c == 'x'));
    if (digit) {
      if (!in_number) out += 'N';
      in_number = true;
    } else {
      in_number = false;
      out += c;
    }
  }
  // Out-of-memory details (per-part sizes) differ per plan: keep the head.
  const auto paren = out.find(" (params");
  if (paren != std::string::npos) out.erase(paren);
  return out;
}

std::string summarize_rows(const std::map<long long, json>& rows, bool maximize,
                           const std::string& objective_text, int top_k) {
  std::vector<const json*> ok;
  std::map<std::string, int> reasons;
  int infeasible = 0, constrained = 0;
  for (const auto& [i, row] : rows) {
    const bool feasible = at(row, "feasible").is_boolean() && row["feasible"].get<bool>();
    const bool meets = !at(row, "meets_constraints").is_boolean() || row["meets_constraints"].get<bool>();
    if (!feasible) {
      ++infeasible;
      ++reasons[reason_category(at(row, "reason").is_string() ? row["reason"].get<std::string>() : "?")];
    } else if (!meets) {
      ++constrained;
      const json& v = at(row, "violated");
      ++reasons["constraint: " + (v.is_array() && !v.empty() ? v[0].get<std::string>() : std::string("?"))];
    } else if (at(row, "objective").is_number()) {
      ok.push_back(&row);
    }
  }
  std::sort(ok.begin(), ok.end(), [&](const json* a, const json* b) {
    const double x = num((*a)["objective"]), y = num((*b)["objective"]);
    if (x != y) return maximize ? x > y : x < y;
    return (*a)["index"].get<long long>() < (*b)["index"].get<long long>();
  });
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%zu plans: %zu feasible within constraints, %d infeasible, %d outside constraints\n",
                rows.size(), ok.size(), infeasible, constrained);
  o << line;
  auto describe = [&](const json& row) {
    const json& p = row["plan"];
    std::snprintf(line, sizeof line,
                  "%6lld  %-14s TP%-2d PP%-3d DP%-5d CP%-2d EP%-2d vpp%-2d %-11s mb%-3d Z%d %-9s %8.3f s %10.4g tok/s  MFU %4.1f%%  mem %6.1f GiB  bubble %4.1f%%\n",
                  row["index"].get<long long>(), at(row, "model").is_string() ? row["model"].get<std::string>().c_str() : "",
                  p.value("tp", 0), p.value("pp", 0), p.value("dp", 0), p.value("cp", 0), p.value("ep", 0),
                  p.value("vpp", 0), p.value("schedule", std::string()).c_str(), p.value("micro_batch", 0),
                  p.value("zero_stage", 0), p.value("recompute", std::string()).c_str(),
                  num(at(row, "step_time_s")), num(at(row, "tokens_per_s")), 100 * num(at(row, "mfu")),
                  num(at(row, "memory", "peak_bytes")) / (1024.0 * 1024 * 1024), 100 * num(at(row, "bubble_fraction")));
    return std::string(line);
  };
  o << "\nbest plans by " << (maximize ? "maximum " : "minimum ") << objective_text << ":\n";
  for (int k = 0; k < top_k && k < static_cast<int>(ok.size()); ++k) o << describe(*ok[k]);
  // Pareto front: more throughput, less peak memory, fewer GPUs.
  std::vector<const json*> by_tokens = ok;
  std::sort(by_tokens.begin(), by_tokens.end(), [](const json* a, const json* b) {
    return num((*a)["tokens_per_s"]) > num((*b)["tokens_per_s"]);
  });
  std::vector<const json*> front;
  for (const json* r : by_tokens) {
    const double t = num((*r)["tokens_per_s"]), m = num(at(*r, "memory", "peak_bytes")), g = num(at(*r, "gpus"));
    bool dominated = false;
    for (const json* f : front) {
      const double ft = num((*f)["tokens_per_s"]), fm = num(at(*f, "memory", "peak_bytes")), fg = num(at(*f, "gpus"));
      if (ft >= t && fm <= m && fg <= g && (ft > t || fm < m || fg < g)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(r);
  }
  o << "\nPareto front (throughput vs peak memory vs GPU count): " << front.size() << " plans\n";
  for (std::size_t k = 0; k < front.size() && k < 20; ++k) o << describe(*front[k]);
  if (front.size() > 20) o << "  ... (" << front.size() - 20 << " more in the rows file)\n";
  if (!reasons.empty()) {
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [r, n] : reasons) sorted.emplace_back(n, r);
    std::sort(sorted.rbegin(), sorted.rend());
    o << "\nwhy plans were rejected:\n";
    for (std::size_t k = 0; k < sorted.size() && k < 15; ++k) {
      std::snprintf(line, sizeof line, "  %7d  %s\n", sorted[k].first, sorted[k].second.c_str());
      o << line;
    }
  }
  return o.str();
}

}  // namespace trainsim::cli
