// `trainsim collective`: simulate one collective over a size range on a cluster's SimGrid
// platform and print an nccl-tests-like table (size, time, algbw, busbw), or JSON rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
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
  --algo A             auto (default: NCCL-like tuner), ring, tree, hd, hier, direct
  --sizes RANGE        MIN:MAX:xF (multiply) or MIN:MAX:+STEP, or one size; units B, KiB, MiB,
                       GiB, KB, MB, GB. Default 8B:128MiB:x2 (nccl-tests' -b 8 -e 128M -f 2)
  --granularity G      flow (default: one flow per ring edge, latency added analytically) or
                       step (every algorithm step is a transfer; for validation, small groups)
  --order O            topology (default: ring order follows the switch tree) or rank
  --routing R          adaptive (least-loaded next hop), ecmp (flow hash) or dmodk
                       (destination-mod-k); default: the cluster's network.routing
  --channels N         rings per collective (default: one per NIC a node uses)
  --set path=value     override a cluster field, e.g. --set network.oversubscription=2
  --json               print a JSON list of rows {op, algo, ranks, bytes, time_s,
                       algbw_bytes_per_s, busbw_bytes_per_s}
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

std::vector<double> parse_sizes(const std::string& text) {
  auto bytes = [&](const std::string& s) {
    return units::parse(s, units::Kind::kBytes, "--sizes");
  };
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  std::vector<double> out;
  if (parts.size() == 1) {
    out.push_back(bytes(parts[0]));
  } else if (parts.size() == 2 || parts.size() == 3) {
    const double lo = bytes(parts[0]), hi = bytes(parts[1]);
    const std::string step = parts.size() == 3 ? parts[2] : "x2";
    if (lo <= 0 || hi < lo)
      throw ScenarioError("--sizes", "expected 0 < MIN <= MAX in \"" + text + "\"");
    if (!step.empty() && step[0] == 'x') {
      const double f = std::strtod(step.c_str() + 1, nullptr);
      if (!(f > 1)) throw ScenarioError("--sizes", "multiplier must be > 1, got \"" + step + "\"");
      for (double s = lo; s <= hi * (1 + 1e-9) && out.size() < 4096; s *= f)
        out.push_back(std::round(s));
    } else if (!step.empty() && step[0] == '+') {
      const double inc = bytes(step.substr(1));
      if (!(inc > 0)) throw ScenarioError("--sizes", "step must be > 0");
      for (double s = lo; s <= hi * (1 + 1e-9) && out.size() < 4096; s += inc) out.push_back(s);
    } else {
      throw ScenarioError("--sizes", "step must be xF or +SIZE, got \"" + step + "\"");
    }
  } else {
    throw ScenarioError("--sizes", "expected MIN:MAX:STEP or one size, got \"" + text + "\"");
  }
  return out;
}

std::vector<int> parse_group(const std::string& text) {
  std::vector<int> g;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ',');)
    g.push_back(static_cast<int>(parse_int_option("--group", p, 0, kMaxRanks - 1)));
  if (g.empty()) throw ScenarioError("--group", "expected a comma-separated list of GPU ids");
  std::vector<int> sorted = g;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ScenarioError("--group", "a GPU id appears twice");
  return g;
}

int run(int argc, char** argv) {
  std::string cluster_arg, op_name = "allreduce", algo_name = "auto", sizes = "8B:128MiB:x2";
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
  const auto gran = sim::granularity_from_string(granularity, "--granularity");
  if (order != "topology" && order != "rank")
    throw ScenarioError("--order",
                        "unknown ring order \"" + order + "\"; expected topology or rank");
  if (!routing.empty()) sim::routing_policy_from_string(routing, "--routing");
  const std::vector<double> size_list = parse_sizes(sizes);

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
    req.bytes = bytes;
    req.group = group;
    req.granularity = gran;
    req.order = order == "rank" ? sim::RingOrder::kRankOrder : sim::RingOrder::kTopologyAware;
    req.channels = channels;
    rows.push_back(engine.run_one(req));
  }
  const double t1 = platform.now_s();
  const auto hot = platform.link_stats().hottest(10, t0, t1);

  if (as_json) {
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
        "# trainsim collective: %s over %zu ranks, algo %s, granularity %s, order %s, routing %s\n",
        to_string(op), group.size(), algo_name.c_str(), to_string(gran), order.c_str(),
        routing.c_str());
    std::printf("# cluster %s: %d nodes x %d GPUs, %s, %zu links\n", cluster.name.c_str(),
                cluster.nodes, cluster.gpus_per_node, topo.kind().c_str(), topo.links().size());
    std::printf("#\n# %12s %8s %5s %12s %12s %12s\n", "size(B)", "algo", "chan", "time(us)",
                "algbw(GB/s)", "busbw(GB/s)");
    for (const auto& r : rows)
      std::printf("  %12.0f %8s %5d %12.2f %12.2f %12.2f\n", r.bytes, to_string(r.algo), r.channels,
                  r.time_s * 1e6, r.algbw_bytes_per_s() / 1e9, r.busbw_bytes_per_s() / 1e9);
    std::printf("#\n# hottest links over the sweep (bytes, mean utilisation):\n");
    for (const auto& l : hot)
      std::printf("#   %-36s %8s %14.0f B %6.1f%%\n", l.name.c_str(), sim::to_string(l.kind),
                  l.bytes, l.busy_share * 100);
  }
  if (!trace_path.empty()) {
    std::ofstream f(trace_path);
    if (!f) throw ScenarioError("--trace", "cannot write \"" + trace_path + "\"");
    std::vector<sim::DirectedLink> links;
    for (const auto& l : hot) links.push_back(l.link);
    platform.link_stats().write_chrome_trace(f, links);
  }
  return kExitOk;
}

const CommandRegistrar kRegistrar("collective",
                                  "simulate one collective (nccl-tests-like table) on SimGrid",
                                  run);

}  // namespace
}  // namespace trainsim::cli
