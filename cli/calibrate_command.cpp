// `trainsim calibrate`: measure this machine's ops and collectives (kernels/calibration.hpp)
// and write the calibration file the cost models load (format: kernels/README.md).
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/mpi_launch.hpp"
#include "cli/output_file.hpp"
#include "kernels/backend.hpp"
#include "kernels/calibration.hpp"
#include "kernels/communicator.hpp"
#if defined(TRAINSIM_HAVE_NCCL)
#include "kernels/nccl_communicator.hpp"
#endif

namespace trainsim::cli {
namespace {

namespace tk = trainsim::kernels;

// The file is written after the measurement (its path was checked before it started); a run
// with wrong results is a failed check (exit 4), after the file is written so it can be read.
int write_outcome(const tk::CalibrationOutcome& out, const std::string& path) {
  std::fputs(out.summary.c_str(), stdout);
  write_output_file(path, out.json, "--out", true);
  std::printf("wrote %s\n", path.c_str());
  if (out.wrong) {
    std::fprintf(stderr, "trainsim calibrate: %zu wrong results (see #wrong above)\n", out.wrong);
    return kExitCheckFailed;
  }
  return kExitOk;
}

struct CalibrateOptions {
  std::string backend = "cpu", out_path, gemm_shapes, model_shape;
  int ranks = 0, threads = 1;  // one core per rank, as `train` runs (0: library default)
  double max_bytes = 0, min_time = 0.02;
  bool quick = false, check_only = false, large_checks = false;
};

void declare(CLI::App& app, CalibrateOptions& o) {
  app.description(
      "Runs op and collective microbenchmarks, each checked against a reference before it is timed,\n"
      "and writes a calibration JSON (kernels/README.md) that `trainsim run --calibration` applies.\n"
      "cpu: collectives over MPI; --ranks N > 1 relaunches under mpiexec.\n"
      "cuda: collectives over NCCL; --ranks N drives N GPUs from threads.\n"
      "Also: calibrate --from-nccl-tests LOG... and calibrate --from-torch-trace TRACE (files you have).");
  app.add_option("--backend", o.backend, "cpu or cuda")->type_name("B")->default_str("cpu");
  app.add_option("--ranks", o.ranks, "ranks for the collective benchmarks (0: the MPI world size, or 1)")
      ->type_name("N")
      ->check(CLI::Range(0, 1 << 16));
  app.add_option("--out", o.out_path, "calibration file to write (default: calibration-<backend>.json)")->type_name("FILE");
  app.add_flag("--quick", o.quick, "fewer shapes and sizes (CI)");
  app.add_flag("--check-only", o.check_only, "only the correctness checks: every op, collectives up to 64 KiB");
  app.add_flag("--large-checks", o.large_checks, "also check the ops at large shapes");
  app.add_option("--max-bytes", o.max_bytes, "largest collective size in bytes (0: cpu 16 MiB, cuda 1 GiB)")
      ->type_name("BYTES")
      ->check(finite_range(0, 1ull << 40));
  app.add_option("--min-time", o.min_time, "seconds to repeat each timed point for")
      ->type_name("S")
      ->check(finite_range(0, 3600))
      ->default_str("0.02");
  app.add_option("--gemm-shapes", o.gemm_shapes, "extra GEMM shapes of the model at hand, \"MxNxK,MxNxK\"")->type_name("LIST");
  app.add_option("--threads", o.threads, "cpu threads per rank, OpenMP and OpenBLAS (0: library default)")
      ->type_name("N")
      ->check(CLI::Range(0, 4096))
      ->default_str("1");
  app.add_option("--model-shape", o.model_shape,
                 "also time one rank's ops of the train job at its shapes (op_rates), e.g.\n"
                 "\"layers=4,hidden=128,heads=4,seq=64,micro_batch=2,tp=1,pp=2,dp=1\" (+vocab, zero)")
      ->type_name("SHAPE");
  app.footer(mpi_root_help());
}

int run_calibrate(CalibrateOptions& o) {
  std::string backend = o.backend, out_path = o.out_path;
  const std::string& gemm_shapes = o.gemm_shapes;
  const std::string& model_shape = o.model_shape;
  const int ranks = o.ranks, threads = o.threads;
  const double max_bytes = o.max_bytes, min_time = o.min_time;
  const bool quick = o.quick, check_only = o.check_only, large_checks = o.large_checks;

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
  if (out_path.empty()) out_path = "calibration-" + backend + ".json";
  // Checked before any measurement: a wrong path fails now, not after minutes of timing.
  check_output_file(out_path, "--out");

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
  // The ranges run_calibration enforces, checked here so that they are bad input (exit 2).
  if (const std::string err = tk::check_calibration_options(opts); !err.empty()) {
    std::fprintf(stderr, "trainsim calibrate: %s\n", err.c_str());
    return kExitBadInput;
  }

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
    const std::vector<std::string>& args = command_args();
    allow_mpi_as_root();
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
          return kExitBadInput;
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
    else rc = out.wrong ? kExitCheckFailed : kExitOk;
    comm.reset();
    be.reset();
  }
  tk::finalize_world();
  return rc;
}

const CommandRegistrar kRegistrar("calibrate", "measure ops and collectives, write a calibration file",
                                  declare, run_calibrate);

}  // namespace
}  // namespace trainsim::cli
