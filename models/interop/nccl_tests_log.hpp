// nccl-tests results (github.com/NVIDIA/nccl-tests): the text table that every *_perf binary
// prints (src/util.cu writeResultHeader / writeBenchmarkLineBody: size, count, type, redop, root,
// then time (us), algbw (GB/s), busbw (GB/s), #wrong for out-of-place and again for in-place;
// older releases print "error" instead of "#wrong" and omit root/redop), and its JSON report
// (-J FILE, JSON_FILE_VERSION 2: {"args", "config" {"nthreads", "ngpus", "devices"},
// "results" [{"size", "out_of_place" {"time", "alg_bw", "bus_bw", "nwrong"}, "in_place"}]}).
// Then an alpha-beta fit per size range, and the cluster fields that make the collective
// closed forms (collective_cost.hpp) reproduce the measurement.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

struct NcclSample {
  double bytes = 0;
  double time_s = 0;
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  double wrong = -1;  // -1: not checked (nccl-tests -c 0 prints N/A)
  int line = 0;       // 1-based line in a text log (0 for JSON)
};

struct NcclTestsLog {
  std::string source;   // file name
  std::string program;  // all_reduce_perf, ... ("" when not stated)
  CollectiveOp op = CollectiveOp::kAllReduce;
  bool op_known = false;
  int ranks = 0;
  int nodes = 0;  // distinct host names of the "# Rank" lines (0 = not stated)
  std::string device;
  std::vector<NcclSample> out_of_place;
  std::vector<NcclSample> in_place;
  std::vector<std::string> warnings;
};

// Parses a text log; `source` names it in errors ("LOG:12: ..."). Op and ranks come from the
// "# Collective test starting:" and "# Rank" lines, else the file name and "nGpus".
NcclTestsLog parse_nccl_tests_text(const std::string& text, const std::string& source);
NcclTestsLog parse_nccl_tests_json(const nlohmann::json& report, const std::string& source);
// Reads a file, text or JSON (first non-blank character '{'). ScenarioError on bad input.
NcclTestsLog read_nccl_tests_log(const std::string& path);
// allreduce for "all_reduce_perf", "logs/allreduce_8gpu.txt", ...; false when none matches.
bool nccl_op_from_name(const std::string& name, CollectiveOp& op);

// time_s = alpha_s + beta_s_per_byte * bytes, least squares on relative error (weights 1/t^2,
// so 8 B and 8 GiB weigh alike, as kernels/alpha_beta_fit does), alpha and beta clamped >= 0.
struct AlphaBetaFit {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  double min_bytes = 0, max_bytes = 0;
  double max_rel_error = 0;
  double mean_rel_error = 0;
  int samples = 0;
  double time_s(double bytes) const { return alpha_s + beta_s_per_byte * bytes; }
};
AlphaBetaFit fit_alpha_beta(const std::vector<NcclSample>& samples);

// One fit over all sizes, and a small/large split at the size that minimises the larger of the
// two ranges' worst relative errors (each range keeps at least 3 sizes).
struct NcclFit {
  AlphaBetaFit all, small, large;
  double split_bytes = 0;  // first size of the large range (0: no split)
  // The piecewise prediction: small range below split_bytes, large range from it.
  double time_s(double bytes) const {
    return split_bytes > 0 && bytes < split_bytes ? small.time_s(bytes)
                                                  : (split_bytes > 0 ? large : all).time_s(bytes);
  }
};
NcclFit fit_nccl_log(const std::vector<NcclSample>& samples);

// Where the logged group sits on `cluster`: the log's host count when it has one, else packed
// onto nodes of cluster.gpus_per_node.
GroupShape nccl_group_shape(const NcclTestsLog& log, const ClusterSpec& cluster);
// The closed form of the logged collective on `cluster`: NCCL's tuner choice per size (the
// algorithm nccl-tests ran, unless NCCL_ALGO was set), as collective_cost prices it.
double nccl_model_time_s(const NcclTestsLog& log, double bytes, const ClusterSpec& cluster);

// The cluster fields whose values make the closed forms reproduce a set of logs (several ops,
// node counts): intra_node.efficiency from the single-node logs' large sizes (>= 256 MiB, else
// their upper third), then network.efficiency from the multi-node logs' large sizes, then
// network.latency from the multi-node logs' small sizes (<= 64 KiB, else their lower third)
// (the two alternated to a fixed point), each a one-dimensional least-squares fit of
// log(model / measured) with the others held.
// Efficiencies stay in the loader's (0.01, 1]; a bound that is hit is noted.
struct FittedCluster {
  bool intra = false, net = false;  // which parts the logs determine
  double intra_efficiency = 0, net_efficiency = 0, net_latency_s = 0;
  double mean_error_before = 0, mean_error_after = 0;  // |model / measured - 1| over all samples
  std::vector<std::string> notes;
};
// samples[i]: the rows of logs[i] to fit (e.g. out-of-place rows without #wrong).
FittedCluster fit_cluster(const std::vector<NcclTestsLog>& logs,
                          const std::vector<std::vector<NcclSample>>& samples, const ClusterSpec& cluster);
// `cluster` with the fitted fields set.
ClusterSpec apply_fit(const ClusterSpec& cluster, const FittedCluster& fit);

// Rejects a log no cluster can explain: fewer than 2 usable rows, or times that do not grow
// with the message size (the fit's bandwidth term is zero: no bandwidth, or alpha = beta = 0).
// ScenarioError naming the log and field.
void check_fit_is_physical(const NcclTestsLog& log, const NcclFit& fit);

// The calibration file (kernels/README.md "Calibration file", collectives part) for these logs.
nlohmann::json nccl_calibration_json(const std::vector<NcclTestsLog>& logs,
                                     const std::vector<NcclFit>& fits,
                                     const nlohmann::json& fitted_cluster);

}  // namespace trainsim
