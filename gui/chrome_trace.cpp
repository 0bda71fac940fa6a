#include "gui/chrome_trace.hpp"

#include <QFile>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "models/scenario/input_file.hpp"

namespace trainsim::gui {

GanttTrace gantt_from_chrome_trace(const nlohmann::json& trace) {
  const nlohmann::json* events = &trace;
  if (trace.is_object()) {
    auto it = trace.find("traceEvents");
    if (it == trace.end() || !it->is_array()) throw std::runtime_error("traceEvents: missing or not an array");
    events = &*it;
  } else if (!trace.is_array()) {
    throw std::runtime_error("expected a JSON object with traceEvents or an array of events");
  }
  using Key = std::pair<long long, long long>;  // (pid, tid)
  auto id_of = [](const nlohmann::json& e, const char* k) -> long long {
    auto it = e.find(k);
    if (it == e.end()) return 0;
    if (it->is_number_integer()) return it->get<long long>();
    if (it->is_number_float() && std::fabs(it->get<double>()) < 9e15) return static_cast<long long>(it->get<double>());
    if (it->is_string()) return static_cast<long long>(std::hash<std::string>{}(it->get<std::string>()) & 0xffffff);
    return 0;
  };
  std::map<Key, QString> thread_names;
  std::map<long long, QString> process_names;
  std::map<Key, int> lanes;
  struct Pending {
    Key key;
    GanttEvent ev;
  };
  std::vector<Pending> pending;
  // Fields of another type than the format's are read as absent (a hand-edited or foreign file).
  auto text = [](const nlohmann::json& e, const char* k) {
    auto it = e.find(k);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto number = [](const nlohmann::json& e, const char* k) {
    auto it = e.find(k);
    return it != e.end() && it->is_number() ? it->get<double>() : std::nan("");
  };
  int skipped = 0;  // "X" events without a finite start and a non-negative duration
  for (const auto& e : *events) {
    if (!e.is_object()) continue;
    const std::string ph = text(e, "ph");
    const Key key{id_of(e, "pid"), id_of(e, "tid")};
    if (ph == "M") {
      const std::string name = text(e, "name");
      QString label;
      if (auto a = e.find("args"); a != e.end() && a->is_object() && a->contains("name") && (*a)["name"].is_string())
        label = QString::fromStdString((*a)["name"].get<std::string>());
      if (name == "thread_name") thread_names[key] = label;
      if (name == "process_name") process_names[key.first] = label;
      continue;
    }
    if (ph != "X") continue;  // instant/counter/flow events are not drawn
    const double ts_us = number(e, "ts"), dur_us = number(e, "dur");
    if (!std::isfinite(ts_us) || !(dur_us >= 0) || !std::isfinite(dur_us)) {
      ++skipped;
      continue;
    }
    GanttEvent ev;
    ev.name = QString::fromStdString(text(e, "name"));
    ev.category = e.contains("cat") && e["cat"].is_string() ? QString::fromStdString(e["cat"].get<std::string>()) : ev.name;
    ev.start_s = ts_us * 1e-6;
    ev.duration_s = dur_us * 1e-6;
    ev.detail = ev.name;
    if (auto a = e.find("args"); a != e.end() && a->is_object() && !a->empty())
      ev.detail += "\n" + QString::fromStdString(a->dump());
    lanes.emplace(key, 0);
    pending.push_back({key, ev});
  }
  GanttTrace g;
  // Process names only disambiguate when there is more than one process.
  std::set<long long> pids;
  for (const auto& [key, lane] : lanes) pids.insert(key.first);
  const bool many_processes = pids.size() > 1;
  int index = 0;
  for (auto& [key, lane] : lanes) {  // std::map: sorted by (pid, tid)
    lane = index++;
    QString label;
    if (auto p = process_names.find(key.first); many_processes && p != process_names.end() && !p->second.isEmpty())
      label = p->second;
    if (auto t = thread_names.find(key); t != thread_names.end() && !t->second.isEmpty())
      label = label.isEmpty() ? t->second : label + " / " + t->second;
    if (label.isEmpty()) label = QString("pid %1 tid %2").arg(key.first).arg(key.second);
    g.lanes << label;
  }
  double t0 = pending.empty() ? 0 : pending.front().ev.start_s;
  for (const auto& p : pending) t0 = std::min(t0, p.ev.start_s);
  for (auto& p : pending) {
    p.ev.lane = lanes[p.key];
    p.ev.start_s -= t0;  // traces often start at an arbitrary clock
    g.events.push_back(p.ev);
  }
  if (skipped > 0)
    g.legend_note = QString("%1 events drawn on %2 lanes; %3 slices without a numeric start and a non-negative duration left out")
                        .arg(g.events.size()).arg(g.lanes.size()).arg(skipped);
  return g;
}

GanttTrace load_chrome_trace_file(const QString& file_path) {
  // The CLI's bounded regular-file reader and depth-capped parser: a FIFO, a device or a 10 GB
  // file is refused with a message, never waited on or read whole.
  const std::string path = file_path.toStdString();
  nlohmann::json j = trainsim::parse_json_text(trainsim::read_input_file(path, "trace"), path,
                                               trainsim::DuplicateKeys::kKeepLast);
  GanttTrace g = gantt_from_chrome_trace(j);
  g.title = file_path;
  return g;
}

nlohmann::json chrome_trace_from_gantt(const GanttTrace& gantt) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 0}, {"args", {{"name", gantt.title.toStdString()}}}});
  for (int i = 0; i < gantt.lanes.size(); ++i)
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", i},
                      {"args", {{"name", gantt.lanes[i].toStdString()}}}});
  for (const auto& e : gantt.events)
    events.push_back({{"ph", "X"}, {"name", e.name.toStdString()}, {"cat", e.category.toStdString()},
                      {"ts", e.start_s * 1e6}, {"dur", e.duration_s * 1e6}, {"pid", 0}, {"tid", e.lane},
                      {"args", {{"detail", e.detail.toStdString()}}}});
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

bool save_chrome_trace_file(const GanttTrace& gantt, const QString& file_path, QString* error) {
  QFile f(file_path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error) *error = f.errorString();
    return false;
  }
  const std::string text = chrome_trace_from_gantt(gantt).dump();
  f.write(text.data(), static_cast<qint64>(text.size()));
  return true;
}

}  // namespace trainsim::gui
