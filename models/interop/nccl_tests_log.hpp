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
// The algorithm whose closed form stands for NCCL's measured one: ring, direct for all-to-all.
CollectiveAlgo nccl_reference_algo(CollectiveOp op);

// Cluster fields fitted so that collective_cost(op, nccl_reference_algo(op), ...) on the group
// reproduces the fit: the latency of the domain the group crosses (intra_node for one node, else
// network) from the small-size alpha, its efficiency from the large-size beta (both scale the
// closed form linearly). Efficiency is clamped to the loader's (0.01, 1]; clamping is noted.
struct FittedFabric {
  bool inter_node = false;
  double latency_s = 0;
  double efficiency = 0;
  std::vector<std::string> notes;
};
FittedFabric fit_fabric(const NcclTestsLog& log, const NcclFit& fit, const ClusterSpec& cluster);

// The calibration file (kernels/README.md "Calibration file", collectives part) for these logs.
nlohmann::json nccl_calibration_json(const std::vector<NcclTestsLog>& logs,
                                     const std::vector<NcclFit>& fits,
                                     const nlohmann::json& fitted_cluster);

}  // namespace trainsim
