#include "sim/link_stats.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace trainsim::sim {

std::string directed_link_name(const Topology& topo, DirectedLink link) {
  return topo.links()[link_of(link)].name + (is_down(link) ? ":down" : ":up");
}

LinkStats::LinkStats(const Topology& topo)
    : topo_(topo), bytes_(topo.links().size() * 2, 0.0), series_(topo.links().size() * 2) {}

void LinkStats::add_transfer(const Route& route, double bytes, int src_gpu) {
  for (DirectedLink l : route.links) bytes_[l] += bytes;
  if (src_gpu >= 0 && src_gpu < static_cast<int>(owner_of_gpu_.size())) {
    const int o = owner_of_gpu_[src_gpu];
    if (o >= 0)
      for (DirectedLink l : route.links) owner_bytes_[o][l] += bytes;
  }
}

void LinkStats::set_owners(std::vector<int> owner_of_gpu, int owners) {
  owner_of_gpu_ = std::move(owner_of_gpu);
  owner_bytes_.assign(std::max(0, owners), std::vector<double>(bytes_.size(), 0.0));
}

void LinkStats::add_interval(DirectedLink link, double start_s, double end_s, double bytes) {
  if (end_s <= start_s || !sampling_) return;
  if (++samples_ > kMaxSamples) {
    sampling_ = false;
    sampling_stopped_s_ = start_s;
    return;
  }
  series_[link].push_back({start_s, end_s, bytes / (end_s - start_s)});
}

void LinkStats::reset() {
  std::fill(bytes_.begin(), bytes_.end(), 0.0);
  for (auto& o : owner_bytes_) std::fill(o.begin(), o.end(), 0.0);
  for (auto& s : series_) s.clear();
  samples_ = 0;
  sampling_stopped_s_ = -1;
}

std::vector<LinkLoad> LinkStats::hottest_by_kind(std::size_t count, double t0, double t1) const {
  std::vector<LinkLoad> out;
  for (LinkKind kind : {LinkKind::kNvlink, LinkKind::kNic, LinkKind::kSwitch, LinkKind::kPcie}) {
    const auto some = ranked(count, t0, t1, [&](int l) { return topo_.links()[link_of(l)].kind == kind; });
    out.insert(out.end(), some.begin(), some.end());
  }
  return out;
}

std::vector<LinkLoad> LinkStats::hottest(std::size_t count, double t0, double t1) const {
  return ranked(count, t0, t1, [](int) { return true; });
}

std::vector<LinkLoad> LinkStats::ranked(std::size_t count, double t0, double t1,
                                        const std::function<bool(int)>& keep) const {
  std::vector<int> idx;
  idx.reserve(bytes_.size());
  for (int l = 0; l < static_cast<int>(bytes_.size()); ++l)
    if (bytes_[l] > 0 && keep(l)) idx.push_back(l);
  count = std::min(count, idx.size());
  // Hottest = busiest relative to its bandwidth (bytes / bandwidth = seconds busy).
  auto busy = [&](int l) { return bytes_[l] / topo_.links()[link_of(l)].bandwidth_bytes_per_s; };
  std::partial_sort(idx.begin(), idx.begin() + count, idx.end(),
                    [&](int a, int b) {
                      // Equally busy links (the symmetric groups of a plan) in link order, so
                      // the report is the same on every run.
                      const double ba = busy(a), bb = busy(b);
                      return ba > bb || (ba == bb && a < b);
                    });
  std::vector<LinkLoad> out;
  for (std::size_t i = 0; i < count && bytes_[idx[i]] > 0; ++i) {
    const auto& l = topo_.links()[link_of(idx[i])];
    LinkLoad load;
    load.link = idx[i];
    load.name = directed_link_name(topo_, idx[i]);
    load.kind = l.kind;
    load.bytes = bytes_[idx[i]];
    load.bandwidth_bytes_per_s = l.bandwidth_bytes_per_s;
    if (t1 > t0) load.busy_share = load.bytes / (l.bandwidth_bytes_per_s * (t1 - t0));
    out.push_back(load);
  }
  return out;
}

const std::vector<UtilisationSample>& LinkStats::series(DirectedLink link) const {
  return series_[link];
}

namespace {
void write_escaped(std::ostream& out, const std::string& s) {
  out << '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out << '\\';
    out << c;
  }
  out << '"';
}
}  // namespace

void LinkStats::write_chrome_trace(std::ostream& out,
                                   const std::vector<DirectedLink>& links) const {
  // Chrome trace event format, counter events: {"ph":"C","name":...,"ts":us,"args":{...}}.
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  out << "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"links\"}}";
  first = false;
  for (DirectedLink l : links) {
    // Overlapping samples of several transfers add up: sweep their start/end points.
    std::map<double, double> delta;
    for (const auto& s : series_[l]) {
      delta[s.start_s] += s.bytes_per_s;
      delta[s.end_s] -= s.bytes_per_s;
    }
    const double bw = topo_.links()[link_of(l)].bandwidth_bytes_per_s;
    const std::string name = directed_link_name(topo_, l);
    // The step function: level (bytes/s) from each point to the next.
    std::vector<std::pair<double, double>> steps;
    steps.reserve(delta.size());
    double level = 0;
    for (const auto& [t, d] : delta) steps.emplace_back(t, level += d);
    // More points than a viewer shows are time-averaged into kMaxCounterPoints equal bins: the
    // mean utilisation is kept, the trace stays a bounded size.
    if (steps.size() > kMaxCounterPoints) {
      const double t0 = steps.front().first, t1 = steps.back().first, width = (t1 - t0) / kMaxCounterPoints;
      std::vector<std::pair<double, double>> bins(kMaxCounterPoints);
      for (std::size_t b = 0; b < bins.size(); ++b) bins[b] = {t0 + b * width, 0.0};
      for (std::size_t k = 0; k + 1 < steps.size(); ++k) {
        double a = steps[k].first;
        const double e = steps[k + 1].first, v = steps[k].second;
        std::size_t b = std::min(bins.size() - 1, static_cast<std::size_t>((a - t0) / width));
        while (a < e) {
          const double bin_end = b + 1 == bins.size() ? e : t0 + (b + 1) * width;
          if (bin_end <= a) {  // a sits on the bin's end (rounding): the next bin
            ++b;
            continue;
          }
          const double end = std::min(e, bin_end);
          bins[b].second += v * (end - a) / width;
          a = end;
          if (end == bin_end && b + 1 < bins.size()) ++b;
        }
      }
      bins.emplace_back(t1, 0.0);
      steps = std::move(bins);
    }
    for (const auto& [t, rate] : steps) {
      const double pct = std::max(0.0, rate / bw * 100.0);
      out << (first ? "" : ",\n") << "{\"ph\":\"C\",\"pid\":1,\"name\":";
      write_escaped(out, name);
      out << ",\"ts\":" << t * 1e6 << ",\"args\":{\"utilisation_pct\":" << pct << "}}";
      first = false;
    }
  }
  out << "\n]}\n";
}

}  // namespace trainsim::sim
