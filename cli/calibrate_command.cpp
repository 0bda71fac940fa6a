// `trainsim calibrate`: measure this machine's ops and collectives (kernels/calibration.hpp)
// and write the calibration file the cost models load (format: kernels/README.md).
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/command_registry.hpp"
#include "kernels/backend.hpp"
#include "kernels/calibration.hpp"
#include "kernels/cli_args.hpp"
#include "kernels/communicator.hpp"
#if defined(TRAINSIM_HAVE_NCCL)
#include "kernels/nccl_communicator.hpp"
#endif

namespace trainsim::cli {
namespace {

namespace tk = trainsim::kernels;

int write_outcome(const tk::CalibrationOutcome& out, const std::string& path) {
  std::fputs(out.summary.c_str(), stdout);
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "trainsim calibrate: cannot write --out %s\n", path.c_str());
    return kExitFailure;
  }
  f << out.json;
  std::printf("wrote %s\n", path.c_str());
  if (out.wrong) {
    std::fprintf(stderr, "trainsim calibrate: %zu wrong results (see #wrong above)\n", out.wrong);
    return kExitFailure;
  }
  return kExitOk;
}

int run_calibrate(int argc, char** argv) {
  std::string backend = "cpu", out_path;
  int ranks = 0, threads = 1;  // one core per rank, as `train` runs (0: library default)
  double max_bytes = 0, min_time = 0.02;
  bool quick = false, check_only = false, large_checks = false;
  tk::ArgParser ap("trainsim calibrate --backend cpu|cuda [--ranks N] [--out FILE]",
                   "Runs op and collective microbenchmarks, each checked against a reference\n"
                   "before it is timed, and writes a calibration JSON (kernels/README.md).\n"
                   "cpu: collectives over MPI; --ranks N > 1 relaunches under mpiexec.\n"
                   "cuda: collectives over NCCL; --ranks N drives N GPUs from threads.");
  ap.add_string("backend", "cpu or cuda", &backend);
  ap.add_int("ranks", "ranks for the collective benchmarks (0: the MPI world size, or 1)", &ranks);
  ap.add_string("out", "calibration file to write (default: calibration-<backend>.json)", &out_path);
  ap.add_flag("quick", "fewer shapes and sizes (CI)", &quick);
  ap.add_flag("check-only", "only the correctness checks: every op, collectives up to 64 KiB", &check_only);
  ap.add_flag("large-checks", "also check the ops at large shapes", &large_checks);
  ap.add_double("max-bytes", "largest collective size in bytes (0: cpu 16 MiB, cuda 1 GiB)", &max_bytes);
  ap.add_double("min-time", "seconds to repeat each timed point for", &min_time);
  std::string gemm_shapes;
  ap.add_string("gemm-shapes", "extra GEMM shapes of the model at hand, \"MxNxK,MxNxK\"", &gemm_shapes);
  ap.add_int("threads", "cpu threads per rank, OpenMP and OpenBLAS (0: library default)", &threads);
  std::string model_shape;
  ap.add_string("model-shape", "also time one rank's ops of the train job at its shapes (op_rates), e.g. "
                "\"layers=4,hidden=128,heads=4,seq=64,micro_batch=2,tp=1,pp=2,dp=1\" (+vocab, zero)", &model_shape);
  if (int rc = ap.parse(argc, argv)) return rc == 1 ? kExitOk : kExitBadInput;

  bool known = false;
  for (const auto& n : tk::backend_names()) known |= n == backend;
  if (!known && backend != "cuda") {
    std::string valid;
    for (const auto& n : tk::backend_names()) valid += " " + n;
    std::fprintf(stderr, "trainsim calibrate: --backend \"%s\" unknown; expected one of:%s\n", backend.c_str(), valid.c_str());
    return kExitBadInput;
  }
  if (!known) {
    std::fprintf(stderr, "trainsim calibrate: --backend cuda: this trainsim was built without CUDA\n");
    return kExitBadInput;
  }
  if (ranks < 0) { std::fprintf(stderr, "trainsim calibrate: --ranks must be >= 1\n"); return kExitBadInput; }
  if (min_time < 0 || max_bytes < 0) { std::fprintf(stderr, "trainsim calibrate: --min-time and --max-bytes must be >= 0\n"); return kExitBadInput; }
  if (out_path.empty()) out_path = "calibration-" + backend + ".json";

  tk::CalibrationOptions opts;
  for (size_t pos = 0; pos < gemm_shapes.size();) {
    size_t end = gemm_shapes.find(',', pos);
    std::string item = gemm_shapes.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    int m = 0, n = 0, k = 0;
    char x1 = 0, x2 = 0;
    if (std::sscanf(item.c_str(), "%d%c%d%c%d", &m, &x1, &n, &x2, &k) != 5 || x1 != 'x' || x2 != 'x' || m < 1 ||
        n < 1 || k < 1) {
      std::fprintf(stderr, "trainsim calibrate: --gemm-shapes: \"%s\" is not MxNxK\n", item.c_str());
      return kExitBadInput;
    }
    opts.model_gemm_shapes.push_back({m, n, k});
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  if (!model_shape.empty()) {
    try {
      opts.model_shape = tk::parse_model_op_shape(model_shape);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "trainsim calibrate: --model-shape: %s\n", e.what());
      return kExitBadInput;
    }
  }
  opts.quick = quick;
  opts.check_only = check_only;
  opts.large_checks = large_checks;
  opts.max_collective_bytes = size_t(max_bytes);
  opts.min_time_per_point_s = min_time;
  opts.tool_version = TRAINSIM_VERSION;

  const bool under_mpi = tk::launched_by_mpi();
  // cuda, one process, several GPUs: threads + ncclCommInitAll (no MPI needed).
  if (backend == "cuda" && ranks > 1 && !under_mpi) {
#if defined(TRAINSIM_HAVE_NCCL)
    std::string why;
    int devices = tk::cuda_device_count(&why);
    if (devices < ranks) {
      std::fprintf(stderr, "trainsim calibrate: --ranks %d but only %d CUDA device(s) %s\n", ranks, devices, why.c_str());
      return kExitBadInput;
    }
    tk::ThreadedNcclWorld world = tk::make_threaded_nccl_world(ranks, threads);
    auto& bes = world.backends;
    auto& comms = world.comms;
    std::vector<tk::CalibrationOutcome> outs(ranks);
    std::vector<std::thread> pool;
    for (int i = 0; i < ranks; ++i)
      pool.emplace_back([&, i] {
        bes[i]->bind_thread();
        outs[i] = tk::run_calibration(*bes[i], *comms[i], opts);
      });
    for (auto& t : pool) t.join();
    return write_outcome(outs[0], out_path);
#else
    std::fprintf(stderr, "trainsim calibrate: --ranks > 1 with cuda needs NCCL, which this build lacks\n");
    return kExitBadInput;
#endif
  }
  // cpu, several ranks, not yet under mpiexec: relaunch under it.
  if (ranks > 1 && !under_mpi) {
    std::vector<std::string> args;
    for (int i = 0; i < argc; ++i) args.emplace_back(argv[i]);
    std::string why;
    tk::relaunch_under_mpiexec(ranks, args, &why);
    std::fprintf(stderr, "trainsim calibrate: --ranks %d needs mpiexec: %s\n", ranks, why.c_str());
    return kExitBadInput;
  }

  int rc = kExitOk;
  {
    auto world = tk::make_world_communicator();
    if (ranks > 0 && world->size() != ranks) {
      if (world->rank() == 0)
        std::fprintf(stderr, "trainsim calibrate: --ranks %d but launched with %d MPI ranks\n", ranks, world->size());
      world.reset();
      tk::finalize_world();
      return kExitBadInput;
    }
    std::unique_ptr<tk::Backend> be;
    try {
      tk::BackendOptions bo{.threads = threads, .device = 0};
      if (backend == "cuda") {
        std::string why;
        int devices = tk::cuda_device_count(&why);
        if (devices == 0) {
          std::fprintf(stderr, "trainsim calibrate: --backend cuda: no CUDA device (%s)\n", why.c_str());
          world.reset();
          tk::finalize_world();
          return kExitFailure;
        }
        bo.device = world->rank() % devices;
      }
      be = tk::make_backend(backend, bo);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "trainsim calibrate: --backend %s: %s\n", backend.c_str(), e.what());
      world.reset();
      tk::finalize_world();
      return kExitFailure;
    }
    std::unique_ptr<tk::Communicator> comm;  // device buffers need a device-side group
    if (backend == "cuda" && world->size() == 1) comm = tk::make_self_communicator(*be);
#if defined(TRAINSIM_HAVE_NCCL)
    if (backend == "cuda" && world->size() > 1) comm = tk::make_nccl_communicator(*be, *world);
#endif
    auto out = tk::run_calibration(*be, comm ? *comm : *world, opts);
    if (world->rank() == 0) rc = write_outcome(out, out_path);
    else rc = out.wrong ? kExitFailure : kExitOk;
    comm.reset();
    be.reset();
  }
  tk::finalize_world();
  return rc;
}

const CommandRegistrar kRegistrar("calibrate", "measure ops and collectives, write a calibration file",
                                  run_calibrate);

}  // namespace
}  // namespace trainsim::cli
