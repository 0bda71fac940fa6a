// `trainsim collective`: simulate one collective over a size range on a cluster's SimGrid
// platform and print an nccl-tests-like table (size, time, algbw, busbw), or JSON rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/output_file.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "models/core/units.hpp"
#include "sim/cluster_source.hpp"
#include "sim/collective_engine.hpp"
#include "sim/link_stats.hpp"
#include "sim/platform.hpp"
#include "sim/step_simulation.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim collective --cluster C (--ranks N | --group 0,1,...) [options]

Simulates one collective on the cluster's SimGrid platform (every GPU a host, every NVLink, NIC
and switch port a link, max-min bandwidth sharing) and prints an nccl-tests-like table.

options:
  --cluster C          cluster preset name (dgx-a100-superpod, ...) or a cluster JSON file
  --ranks N            use the first N GPUs (the cluster grows its node count as needed)
  --group LIST         comma-separated GPU ids, in rank order (e.g. 0,8,16,24)
  --op OP              allreduce (default), reducescatter, allgather, broadcast, reduce,
                       alltoall, sendrecv
  --algo A             auto (default: the NCCL tuner's choice per size) or one algorithm, as
                       NCCL_ALGO forces it: ring, tree, nvls, nvls_tree, collnet_direct,
                       collnet_chain, pat, direct (all-to-all, send/recv), and hd, hier
                       (textbook algorithms NCCL does not ship)
  --protocol P         auto (default), LL, LL128 or Simple, as NCCL_PROTO forces it
  --sizes RANGE        MIN:MAX:xF (multiply) or MIN:MAX:+STEP, or one size; units B, KiB, MiB,
                       GiB, KB, MB, GB. Default 8B:128MiB:x2 (nccl-tests' -b 8 -e 128M -f 2).
                       Sizes are whole bytes from 1 B to 1 TiB (a per-rank buffer no GPU holds
                       beyond that); at most 4096 rows
  --granularity G      flow (default: one flow per ring edge, latency added analytically) or
                       step (every algorithm step is a transfer; for validation, small groups)
  --order O            topology (default: ring order follows the switch tree) or rank
  --routing R          adaptive (least-loaded next hop), ecmp (flow hash) or dmodk
                       (destination-mod-k); default: the cluster's network.routing
  --channels N         rings per collective (default: one per NIC a node uses)
  --set path=value     override a cluster field, e.g. --set network.oversubscription=2
  --json               print a JSON list of rows {op, algo, protocol, channels, ranks, bytes,
                       time_s, algbw_bytes_per_s, busbw_bytes_per_s, closed_form_time_s, ...}
  --format F           table (default), json (as --json) or nccl-tests: the exact text of
                       nccl-tests' *_perf output (header, rows, footer; in-place = out-of-place,
                       #wrong 0), to diff against your own runs
  --trace FILE         write link utilisation of the ten hottest links as a Chrome/Perfetto
                       trace (counter tracks)

busbw = algbw x 2(n-1)/n for allreduce, (n-1)/n for reducescatter/allgather/alltoall, 1 for
broadcast/reduce/sendrecv (nccl-tests doc/PERFORMANCE.md).
exit codes: 0 ok, 2 bad input
)";

// Far beyond the 16k-GPU goal of the flow granularity; keeps a typo from building a platform
// of millions of hosts.
constexpr int kMaxRanks = 1 << 17;
// Step granularity is a validation mode: 2(n-1) steps x n ranks x channels transfers.
constexpr int kMaxStepRanks = 2048;
constexpr double kMaxSweepRankRows = 1048576;  // sizes x ranks of one call

// A per-rank buffer beyond 1 TiB fits no GPU (the largest hold 288 GB): such a size is a typo.
constexpr double kMaxSizeBytes = 1099511627776.0;
// Rows of one sweep (nccl-tests' -b 8 -e 16G -f 2 is 32 rows).
constexpr std::size_t kMaxRows = 4096;

std::vector<double> parse_sizes(const std::string& text) {
  auto bytes = [&](const std::string& s) {
    const double b = units::parse(s, units::Kind::kBytes, "--sizes");
    if (!(b >= 1))
      throw ScenarioError("--sizes", "\"" + s + "\" is below 1 byte; sizes are whole bytes from 1 B");
    if (b > kMaxSizeBytes)
      throw ScenarioError("--sizes", "\"" + s + "\" exceeds 1 TiB, larger than any GPU's memory; "
                                     "sizes are per-rank buffers from 1 B to 1 TiB");
    return std::round(b);
  };
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  std::vector<double> out;
  auto push = [&](double s) {
    if (out.size() >= kMaxRows)
      throw ScenarioError("--sizes", "\"" + text + "\" gives more than " + std::to_string(kMaxRows) +
                                         " sizes; use a coarser step or a narrower range");
    out.push_back(s);
  };
  if (parts.size() == 1) {
    push(bytes(parts[0]));
  } else if (parts.size() == 2 || parts.size() == 3) {
    const double lo = bytes(parts[0]), hi = bytes(parts[1]);
    const std::string step = parts.size() == 3 ? parts[2] : "x2";
    if (hi < lo) throw ScenarioError("--sizes", "expected MIN <= MAX in \"" + text + "\"");
    if (!step.empty() && step[0] == 'x') {
      char* end = nullptr;
      const double f = std::strtod(step.c_str() + 1, &end);
      if (end == step.c_str() + 1 || *end != '\0' || !(f > 1) || !std::isfinite(f))
        throw ScenarioError("--sizes", "multiplier must be a number > 1, got \"" + step + "\"");
      for (double s = lo; s <= hi * (1 + 1e-9); s *= f) push(std::round(s));
    } else if (!step.empty() && step[0] == '+') {
      const double inc = bytes(step.substr(1));
      for (double s = lo; s <= hi * (1 + 1e-9); s += inc) push(s);
    } else {
      throw ScenarioError("--sizes", "step must be xF or +SIZE, got \"" + step + "\"");
    }
  } else {
    throw ScenarioError("--sizes", "expected MIN:MAX:STEP or one size, got \"" + text + "\"");
  }
  return out;
}

// nccl-tests' program name, data type and reduction for an op (src/*.cu; float, sum or none,
// root -1 except broadcast/reduce at 0), and the element count it prints (per rank for
// all-gather, reduce-scatter and all-to-all: their paramcount).
struct NcclTestsNames {
  const char* program;
  const char* redop;
  int root;
  bool per_rank_count;
};
NcclTestsNames nccl_tests_names(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return {"all_reduce_perf", "sum", -1, false};
    case CollectiveOp::kReduceScatter: return {"reduce_scatter_perf", "sum", -1, true};
    case CollectiveOp::kAllGather: return {"all_gather_perf", "none", -1, true};
    case CollectiveOp::kBroadcast: return {"broadcast_perf", "none", 0, false};
    case CollectiveOp::kReduce: return {"reduce_perf", "sum", 0, false};
    case CollectiveOp::kAllToAll: return {"alltoall_perf", "none", -1, true};
    case CollectiveOp::kSendRecv: return {"sendrecv_perf", "sum", -1, false};
  }
  return {"?", "none", -1, false};
}

// nccl-tests' getFloatStr: the value in `width` characters, dropping decimals as it grows.
std::string nccl_float(double v, int width) {
  char buf[64];
  for (const char* fmt : {"%*.2f", "%*.1f", "%*.0f"}) {
    std::snprintf(buf, sizeof buf, fmt, width, v);
    if (static_cast<int>(std::strlen(buf)) <= width) return buf;
  }
  std::snprintf(buf, sizeof buf, width >= 7 ? "%*.1e" : "%*.0e", width, v);
  return buf;
}

void print_nccl_tests(const std::vector<sim::CollectiveResult>& rows, const std::vector<int>& group,
                      const ClusterSpec& cluster, CollectiveOp op, const std::vector<double>& sizes,
                      const std::string& sizes_text) {
  const NcclTestsNames n = nccl_tests_names(op);
  const int ranks = static_cast<int>(group.size());
  std::printf("# nccl-tests version trainsim (simulated) nccl-headers=23007 nccl-library=23007\n");
  std::printf("# Collective test starting: %s\n", n.program);
  const bool factor = sizes_text.find(":+") == std::string::npos;
  const long step = sizes.size() > 1 ? (factor ? std::lround(sizes[1] / sizes[0]) : std::lround(sizes[1] - sizes[0])) : 1;
  std::printf("# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d agg iters: %d "
              "validation: %d graph: %d unalign: %d\n",
              1, 1, static_cast<long>(sizes.front()), static_cast<long>(sizes.back()), step,
              factor ? "factor" : "bytes", 0, 1, 1, 0, 0, 0);
  std::printf("#\n# Using devices\n");
  for (int r = 0; r < ranks; ++r) {
    const int g = group[r];
    char host[32];
    std::snprintf(host, sizeof host, "node%d", g / cluster.gpus_per_node);
    std::printf("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", r, 0, 0, host,
                g % cluster.gpus_per_node, 0, 0, 0, cluster.gpu.name.c_str());
  }
  std::printf("#\n");
  std::printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "",
              "", "");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type",
              "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, "");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)", "(elements)", "",
              "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, "");
  double bw_sum = 0;
  for (const auto& r : rows) {
    const double elems = r.bytes / 4 / (n.per_rank_count ? ranks : 1);
    std::printf("%12ld  %12ld  %8s  %6s  %6d", static_cast<long>(r.bytes), static_cast<long>(elems), "float",
                n.redop, n.root);
    const std::string t = nccl_float(r.time_s * 1e6, 7), a = nccl_float(r.algbw_bytes_per_s() / 1e9, 6),
                      b = nccl_float(r.busbw_bytes_per_s() / 1e9, 6);
    for (int pass = 0; pass < 2; ++pass) std::printf("  %7s  %6s  %6s  %6g", t.c_str(), a.c_str(), b.c_str(), 0.0);
    std::printf("\n");
    bw_sum += r.busbw_bytes_per_s() / 1e9;
  }
  std::printf("# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
  std::printf("# %-20s : %g %s\n", "Avg bus bandwidth", rows.empty() ? 0.0 : bw_sum / rows.size(), "");
  std::printf("#\n# Collective test concluded: %s\n", n.program);
}

std::vector<int> parse_group(const std::string& text) {
  std::vector<int> g;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ',');)
    g.push_back(static_cast<int>(parse_int_option("--group", p, 0, kMaxRanks - 1)));
  // getline drops what follows a last comma: "0," would be a group of one.
  if (!text.empty() && text.back() == ',') throw ScenarioError("--group", "a GPU id is missing after the last comma");
  if (g.empty()) throw ScenarioError("--group", "expected a comma-separated list of GPU ids");
  std::vector<int> sorted = g;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ScenarioError("--group", "a GPU id appears twice");
  return g;
}

int run(int argc, char** argv) {
  std::string cluster_arg, op_name = "allreduce", algo_name = "auto", sizes = "8B:128MiB:x2";
  std::string protocol_name = "auto", format = "table";
  std::string granularity = "flow", order = "topology", routing, trace_path;
  int ranks = 0, channels = 0;
  std::vector<int> group;
  bool as_json = false;
  LoadOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--cluster")
      cluster_arg = option_value(argc, argv, i);
    else if (a == "--ranks")
      ranks = static_cast<int>(parse_int_option(a, option_value(argc, argv, i), 1, kMaxRanks));
    else if (a == "--group")
      group = parse_group(option_value(argc, argv, i));
    else if (a == "--op")
      op_name = option_value(argc, argv, i);
    else if (a == "--algo")
      algo_name = option_value(argc, argv, i);
    else if (a == "--protocol")
      protocol_name = option_value(argc, argv, i);
    else if (a == "--format")
      format = option_value(argc, argv, i);
    else if (a == "--sizes")
      sizes = option_value(argc, argv, i);
    else if (a == "--granularity")
      granularity = option_value(argc, argv, i);
    else if (a == "--order")
      order = option_value(argc, argv, i);
    else if (a == "--routing")
      routing = option_value(argc, argv, i);
    else if (a == "--channels")
      channels = static_cast<int>(parse_int_option(a, option_value(argc, argv, i), 1, 64));
    else if (a == "--set") {
      auto kv = parse_set(option_value(argc, argv, i));
      options.overrides.emplace_back("cluster." + kv.first, kv.second);
    } else if (a == "--json")
      as_json = true;
    else if (a == "--trace")
      trace_path = option_value(argc, argv, i);
    else
      throw ScenarioError(a, "unknown option; see trainsim collective --help");
  }
  if (cluster_arg.empty())
    throw ScenarioError("--cluster", "missing; a preset name or a cluster JSON file");
  if (ranks > 0 && !group.empty())
    throw ScenarioError("--group", "give either --ranks or --group, not both");
  if (ranks == 0 && group.empty())
    throw ScenarioError("--ranks", "missing; give --ranks N or --group LIST");
  const CollectiveOp op = collective_op_from_string(op_name, "--op");
  const CollectiveAlgo algo = collective_algo_from_string(algo_name, "--algo");
  const CollectiveProtocol protocol = collective_protocol_from_string(protocol_name, "--protocol");
  if (as_json) format = "json";
  if (format != "table" && format != "json" && format != "nccl-tests")
    throw ScenarioError("--format", "unknown format \"" + format + "\"; expected table, json or nccl-tests");
  const auto gran = sim::granularity_from_string(granularity, "--granularity");
  if (order != "topology" && order != "rank")
    throw ScenarioError("--order",
                        "unknown ring order \"" + order + "\"; expected topology or rank");
  if (!routing.empty()) sim::routing_policy_from_string(routing, "--routing");
  const std::vector<double> size_list = parse_sizes(sizes);
  if (!trace_path.empty()) check_output_file(trace_path, "--trace");

  options.preset_dirs = default_preset_dirs();
  ClusterSpec cluster = sim::load_cluster(cluster_arg, options);
  if (ranks > 0) {
    for (int r = 0; r < ranks; ++r) group.push_back(r);
  }
  int max_id = 0;
  for (int g : group) max_id = std::max(max_id, g);
  cluster = sim::with_at_least_gpus(cluster, max_id + 1);
  if (cluster.nodes > 1 && cluster.network.nic_bandwidth_bytes_per_s <= 0)
    throw ScenarioError("--cluster",
                        "the group spans several nodes but the cluster has no network");
  if (gran == sim::Granularity::kStep && group.size() > kMaxStepRanks)
    throw ScenarioError("--granularity",
                        "step granularity simulates every algorithm step; use it "
                        "for groups of at most 2048 ranks (flow scales to 16k+)");
  // Each size is one collective over the whole group: bound the sweep's flows, not only each
  // factor (4,096 sizes over 4,096 ranks would run for minutes).
  if (static_cast<double>(size_list.size()) * static_cast<double>(group.size()) > kMaxSweepRankRows)
    throw ScenarioError("--sizes", std::to_string(size_list.size()) + " sizes over " + std::to_string(group.size()) +
                                       " ranks: at most 1,048,576 sizes x ranks in one call (e.g. 256 sizes over 4,096 ranks)");
  if (op == CollectiveOp::kAllToAll && group.size() > 4096)
    throw ScenarioError("--ranks",
                        "alltoall is simulated pairwise (n^2 flows); at most 4096 ranks");

  sim::TopologyOptions topo_options = sim::topology_options(cluster);
  if (!routing.empty()) topo_options.routing = sim::routing_policy_from_string(routing, "--routing");
  routing = sim::to_string(topo_options.routing);
  sim::Platform& platform = sim::Platform::create(cluster, topo_options);
  if (!trace_path.empty()) platform.link_stats().enable_sampling(true);
  sim::CollectiveEngine engine(platform);
  std::vector<sim::CollectiveResult> rows;
  const double t0 = platform.now_s();
  for (double bytes : size_list) {
    sim::PlanRequest req;
    req.op = op;
    req.algo = algo;
    req.protocol = protocol;
    req.bytes = bytes;
    req.group = group;
    req.granularity = gran;
    req.order = order == "rank" ? sim::RingOrder::kRankOrder : sim::RingOrder::kTopologyAware;
    req.channels = channels;
    rows.push_back(engine.run_one(req));
  }
  const double t1 = platform.now_s();
  const auto hot = platform.link_stats().hottest_by_kind(3, t0, t1);

  if (format == "nccl-tests") {
    print_nccl_tests(rows, group, cluster, op, size_list, sizes);
  } else if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
      out.push_back({{"op", to_string(r.op)},
                     {"algo", to_string(r.algo)},
                     {"ranks", r.ranks},
                     {"bytes", r.bytes},
                     {"time_s", r.time_s},
                     {"algbw_bytes_per_s", r.algbw_bytes_per_s()},
                     {"busbw_bytes_per_s", r.busbw_bytes_per_s()},
                     {"protocol", to_string(r.protocol)},
                     {"channels", r.channels},
                     {"closed_form_time_s", r.model.time_s},
                     {"transfers", r.transfers},
                     {"activities", r.activities}});
    std::cout << out.dump(2) << "\n";
  } else {
    const auto& topo = platform.topology();
    std::printf(
        "# trainsim collective: %s over %zu ranks, algo %s, protocol %s, granularity %s, order %s, "
        "routing %s\n",
        to_string(op), group.size(), algo_name.c_str(), to_string(protocol), to_string(gran), order.c_str(),
        routing.c_str());
    std::printf("# cluster %s: %d nodes x %d GPUs, %s, %zu links\n", cluster.name.c_str(),
                cluster.nodes, cluster.gpus_per_node, topo.kind().c_str(), topo.links().size());
    std::printf("#\n# %12s %14s %6s %5s %12s %12s %12s %12s\n", "size(B)", "algo", "proto", "chan", "time(us)",
                "algbw(GB/s)", "busbw(GB/s)", "closed(us)");
    for (const auto& r : rows)
      std::printf("  %12.0f %14s %6s %5d %12.2f %12.2f %12.2f %12.2f\n", r.bytes, to_string(r.algo),
                  to_string(r.protocol), r.channels, r.time_s * 1e6, r.algbw_bytes_per_s() / 1e9,
                  r.busbw_bytes_per_s() / 1e9, r.model.time_s * 1e6);
    std::printf("#\n# closed(us): the estimate tier's closed form for the same choice (NCCL's tuning model)\n");
    std::printf("# hottest links of each kind over the sweep (bytes, mean utilisation):\n");
    for (const auto& l : hot)
      std::printf("#   %-36s %8s %14.0f B %6.1f%%\n", l.name.c_str(), sim::to_string(l.kind),
                  l.bytes, l.busy_share * 100);
  }
  if (!trace_path.empty()) {
    std::ostringstream trace;
    std::vector<sim::DirectedLink> links;
    for (const auto& l : hot) links.push_back(l.link);
    platform.link_stats().write_chrome_trace(trace, links);
    write_output_file(trace_path, trace.str(), "--trace");
  }
  return kExitOk;
}

const CommandRegistrar kRegistrar("collective",
                                  "simulate one collective (nccl-tests-like table) on SimGrid",
                                  run);

}  // namespace
}  // namespace trainsim::cli
