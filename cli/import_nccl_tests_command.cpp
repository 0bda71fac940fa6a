// `trainsim import-nccl-tests LOG...` (also `trainsim calibrate --from-nccl-tests LOG...`):
// nccl-tests logs, text or -J JSON (models/nccl_tests_log.hpp) -> alpha/beta per op and size
// range, fit error per size, the cluster's closed form next to the measurement, and a calibration
// file plus a fitted cluster that `trainsim collective --cluster FILE` reproduces the logs with.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/output_file.hpp"
#include "models/cost/collectives/collective_cost.hpp"
#include "models/interop/nccl_tests_log.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim import-nccl-tests LOG... [--cluster C] [--out FILE] [--cluster-out FILE]
                                  [--op OP] [--ranks N] [--in-place] [--json]
       trainsim calibrate --from-nccl-tests LOG... [same options]

Reads nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf,
sendrecv_perf, broadcast_perf, reduce_perf; the text table or the -J JSON report), fits
time = alpha + beta x bytes (least squares on relative error) over all sizes and over a small
and a large range, and prints the fit error per size. Rows with #wrong > 0 are left out. A log
whose times do not grow with size (no bandwidth), or whose rows are impossible (time below
0.01 us, algbw not size / time), is rejected (exit 2, naming the file and field).

  --cluster C        also print the cluster's closed-form busbw per size (NCCL's tuner choice,
                     as trainsim estimate and collective price it), and fit the cluster to all
                     logs together: intra_node.efficiency from single-node logs,
                     network.efficiency and network.latency from multi-node ones (give size
                     sweeps of several ops and node counts)
  --out FILE         write the calibration file (kernels/README.md format, "collectives" part,
                     plus "cluster": the fitted cluster)
  --cluster-out FILE write the fitted cluster alone: `trainsim collective --cluster FILE
                     --op OP --ranks N` then reproduces the logs within the printed fit error
  --op OP            the collective, when neither the log nor its file name says
  --ranks N          the rank count, when the log does not say
  --in-place         fit the in-place columns (default: out-of-place)
  --json             print the calibration JSON instead of the table
exit codes: 0 ok, 2 bad input (the message names the file and line)
)";

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, b == std::floor(b) ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

int run(int argc, char** argv) {
  std::vector<std::string> paths;
  std::string cluster_arg, out_path, cluster_out, op_name;
  long long ranks = 0;
  bool in_place = false, as_json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--cluster") cluster_arg = option_value(argc, argv, i);
    else if (a == "--out") out_path = option_value(argc, argv, i);
    else if (a == "--cluster-out") cluster_out = option_value(argc, argv, i);
    else if (a == "--op") op_name = option_value(argc, argv, i);
    else if (a == "--ranks") ranks = parse_int_option(a, option_value(argc, argv, i), 1, 1 << 20);
    else if (a == "--in-place") in_place = true;
    else if (a == "--json") as_json = true;
    else if (a == "--from-nccl-tests") continue;  // as forwarded by `calibrate`
    else if (!a.empty() && a[0] == '-') throw ScenarioError(a, "unknown option; see --help");
    else paths.push_back(a);
  }
  if (paths.empty()) throw ScenarioError("LOG", "missing: one or more nccl-tests logs");
  if (!cluster_out.empty() && cluster_arg.empty())
    throw ScenarioError("--cluster-out", "needs --cluster C: the cluster to fit");
  // Checked before the fit: a wrong path fails now, and no output replaces an input.
  std::vector<std::string> inputs = paths;
  inputs.push_back(cluster_arg);
  for (const auto& [path, option] : {std::pair{out_path, "--out"}, std::pair{cluster_out, "--cluster-out"}})
    if (!path.empty()) {
      check_output_file(path, option);
      refuse_overwriting_inputs(path, option, inputs);
    }

  LoadOptions load;
  load.preset_dirs = default_preset_dirs();
  nlohmann::json cluster_json;
  ClusterSpec cluster;
  if (!cluster_arg.empty()) {
    cluster_json = cluster_arg;
    if (cluster_arg.find('/') != std::string::npos ||
        (cluster_arg.size() > 5 && cluster_arg.substr(cluster_arg.size() - 5) == ".json")) {
      cluster_json = read_json_file(cluster_arg, "cluster");
      if (cluster_json.is_object() && cluster_json.contains("cluster") &&
          cluster_json.contains("schema_version"))
        cluster_json = nlohmann::json(cluster_json["cluster"]);
    }
    cluster = parse_cluster(resolve_cluster_json(cluster_json, load), "--cluster");
  }

  std::vector<NcclTestsLog> logs;
  std::vector<NcclFit> fits;
  std::vector<std::vector<NcclSample>> used;
  for (const auto& path : paths) {
    NcclTestsLog log = read_nccl_tests_log(path);
    if (!op_name.empty()) {
      log.op = collective_op_from_string(op_name, "--op");
      log.op_known = true;
    }
    if (!log.op_known)
      throw ScenarioError(path, "which collective is this? The log has no \"# Collective test "
                                "starting\" line and its name none of allreduce, allgather, ...: "
                                "pass --op");
    if (ranks > 0) log.ranks = static_cast<int>(ranks);
    std::vector<NcclSample> use;
    int wrong_rows = 0;
    for (const auto& s : in_place ? log.in_place : log.out_of_place) {
      if (s.wrong > 0) ++wrong_rows;
      else use.push_back(s);
    }
    if (wrong_rows > 0)
      std::fprintf(stderr, "%s: %d rows with #wrong > 0 left out of the fit\n", path.c_str(), wrong_rows);
    if (use.size() < 2)
      throw ScenarioError(path, "fewer than 2 usable rows (need sizes to fit alpha and beta)");
    const NcclFit fit = fit_nccl_log(use);
    check_fit_is_physical(log, fit);
    for (const auto& w : log.warnings) std::fprintf(stderr, "%s: %s\n", path.c_str(), w.c_str());
    logs.push_back(std::move(log));
    fits.push_back(fit);
    used.push_back(std::move(use));
  }
  nlohmann::json fitted = nlohmann::json();
  ClusterSpec fitted_cluster;
  if (!cluster_arg.empty()) {
    const FittedCluster fc = fit_cluster(logs, used, cluster);
    fitted = cluster_json.is_string() ? nlohmann::json{{"base", cluster_json}} : cluster_json;
    if (fc.intra) fitted["intra_node"]["efficiency"] = fc.intra_efficiency;
    if (fc.net) {
      fitted["network"]["efficiency"] = fc.net_efficiency;
      fitted["network"]["latency"] = fc.net_latency_s;
    }
    for (const auto& n : fc.notes) std::fprintf(stderr, "fit: %s\n", n.c_str());
    std::string from;
    for (const auto& p : paths) from += (from.empty() ? "" : ", ") + p;
    fitted["notes"] = "efficiencies and network latency fitted to nccl-tests logs (" + from +
                      ") by trainsim calibrate --from-nccl-tests: mean |model/measured - 1| " +
                      std::to_string(fc.mean_error_before * 100).substr(0, 5) + "% before, " +
                      std::to_string(fc.mean_error_after * 100).substr(0, 5) + "% after";
    fitted_cluster = parse_cluster(resolve_cluster_json(fitted, load), "fitted");
  }
  const nlohmann::json calibration = nccl_calibration_json(logs, fits, fitted);

  if (as_json) {
    std::cout << calibration.dump(2) << "\n";
  } else {
    for (std::size_t i = 0; i < logs.size(); ++i) {
      const NcclTestsLog& log = logs[i];
      const NcclFit& fit = fits[i];
      const double factor = bus_bandwidth_factor(log.op, std::max(1, log.ranks));
      std::printf("%s: %s, %d ranks%s%s%s, %zu sizes, %s\n", log.source.c_str(), to_string(log.op),
                  log.ranks, log.nodes > 0 ? (" on " + std::to_string(log.nodes) + " node(s)").c_str() : "",
                  log.device.empty() ? "" : ", ", log.device.c_str(),
                  (in_place ? log.in_place : log.out_of_place).size(),
                  in_place ? "in-place" : "out-of-place");
      auto show = [&](const char* label, const AlphaBetaFit& f) {
        std::printf("  fit %-22s alpha %8.2f us  beta %.4g s/B (busbw %7.1f GB/s)  max err %5.1f%%  mean %4.1f%%\n",
                    label, f.alpha_s * 1e6, f.beta_s_per_byte,
                    f.beta_s_per_byte > 0 ? factor / f.beta_s_per_byte / 1e9 : 0.0,
                    f.max_rel_error * 100, f.mean_rel_error * 100);
      };
      show("all sizes", fit.all);
      if (fit.split_bytes > 0) {
        show(("< " + human_bytes(fit.split_bytes)).c_str(), fit.small);
        show((">= " + human_bytes(fit.split_bytes)).c_str(), fit.large);
      }
      const bool with_model = !cluster_arg.empty();
      std::printf("  %12s %11s %11s %7s %11s", "size", "time us", "fit us", "err %", "busbw GB/s");
      if (with_model) std::printf(" %13s %13s", "model GB/s", "fitted GB/s");
      std::printf("\n");
      for (const auto& s : in_place ? log.in_place : log.out_of_place) {
        const double t = fit.time_s(s.bytes);
        std::printf("  %12.0f %11.2f %11.2f %7.1f %11.2f", s.bytes, s.time_s * 1e6, t * 1e6,
                    (t - s.time_s) / s.time_s * 100, s.busbw_bytes_per_s / 1e9);
        if (with_model) {
          const double m0 = nccl_model_time_s(log, s.bytes, cluster);
          const double m1 = nccl_model_time_s(log, s.bytes, fitted_cluster);
          std::printf(" %13.2f %13.2f", m0 > 0 ? s.bytes / m0 * factor / 1e9 : 0.0,
                      m1 > 0 ? s.bytes / m1 * factor / 1e9 : 0.0);
        }
        std::printf("%s\n", s.wrong > 0 ? "  (#wrong > 0: not fitted)" : "");
      }
    }
    if (!fitted.is_null()) std::printf("fitted cluster: %s\n", fitted.dump().c_str());
  }
  if (!out_path.empty()) write_output_file(out_path, calibration.dump(2) + "\n", "--out");
  if (!cluster_out.empty()) write_output_file(cluster_out, fitted.dump(2) + "\n", "--cluster-out");
  return kExitOk;
}

const CommandRegistrar kImportNccl("import-nccl-tests",
                                   "fit alpha/beta to nccl-tests logs; calibrate a cluster", run);

}  // namespace
}  // namespace trainsim::cli
