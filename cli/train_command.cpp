// `trainsim train`: train the small GPT on real ranks (kernels/trainer.hpp) and log one JSON
// line per step: loss, step time, peak memory, bytes sent per group.
//   trainsim train --tp 2 --pp 2 --dp 2     (starts 8 ranks under mpiexec itself)
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/mpi_launch.hpp"
#include "cli/output_file.hpp"
#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"
#include "kernels/json_writer.hpp"
#include "kernels/trainer.hpp"
#if defined(TRAINSIM_HAVE_NCCL)
#include "kernels/nccl_communicator.hpp"
#endif

namespace trainsim::cli {
namespace {

namespace tk = trainsim::kernels;

// A log that could not be written completely (a full disk) is not a successful run.
int close_log(std::FILE* out, const std::string& path, int rc) {
  const bool failed = std::fflush(out) != 0 || std::ferror(out);
  if (out != stdout && std::fclose(out) != 0 && !failed) {
    std::fprintf(stderr, "trainsim train: cannot write --log %s\n", path.c_str());
    return rc == kExitOk ? kExitBadInput : rc;
  }
  if (failed) {
    std::fprintf(stderr, "trainsim train: cannot write %s\n", out == stdout ? "the standard output" : path.c_str());
    return rc == kExitOk ? kExitBadInput : rc;
  }
  return rc;
}

struct TrainOptions {
  tk::TrainConfig cfg;
  std::string backend = "cpu", compression = "none", log_path, corpus;
  int threads = 1, sync_every = 1, quant_block = 64, seed = 0, corpus_bytes = 0;
  bool no_ef = false;
  double topk_ratio = 0.01;
};

void declare(CLI::App& app, TrainOptions& o) {
  tk::TrainConfig& cfg = o.cfg;
  o.seed = int(cfg.model.seed);
  o.corpus_bytes = int(cfg.corpus_bytes);
  app.description(
      "Trains a small byte-level GPT with tensor, pipeline (1F1B or GPipe) and data parallelism (ZeRO-1),\n"
      "gradient accumulation and compressed gradient reduction, and logs one JSON line per step.\n"
      "tp x pp x dp ranks: with the cpu backend trainsim starts them under mpiexec itself (or run it\n"
      "under mpirun -np N); with --backend cuda and no mpirun, one GPU per rank driven from threads.");
  const auto count = [](int max) { return CLI::Range(1, max); };
  app.add_option("--backend", o.backend, "cpu or cuda")->type_name("B")->default_str("cpu");
  app.add_option("--tp", cfg.tp, "tensor-parallel degree")->type_name("N")->check(count(1 << 16))->default_str(std::to_string(cfg.tp));
  app.add_option("--pp", cfg.pp, "pipeline-parallel degree (1F1B)")->type_name("N")->check(count(1 << 16))->default_str(std::to_string(cfg.pp));
  app.add_option("--dp", cfg.dp, "data-parallel degree")->type_name("N")->check(count(1 << 16))->default_str(std::to_string(cfg.dp));
  app.add_option("--zero", cfg.zero, "ZeRO stage for data parallelism: 0 or 1")->type_name("Z")->check(CLI::Range(0, 1))->default_str(std::to_string(cfg.zero));
  app.add_option("--layers", cfg.model.layers, "transformer layers")->type_name("N")->check(count(4096))->default_str(std::to_string(cfg.model.layers));
  app.add_option("--hidden", cfg.model.hidden, "hidden size")->type_name("N")->check(count(1 << 16))->default_str(std::to_string(cfg.model.hidden));
  app.add_option("--heads", cfg.model.heads, "attention heads")->type_name("N")->check(count(4096))->default_str(std::to_string(cfg.model.heads));
  app.add_option("--seq", cfg.model.seq, "sequence length (tokens)")->type_name("N")->check(CLI::Range(2, 1 << 20))->default_str(std::to_string(cfg.model.seq));
  app.add_option("--vocab", cfg.model.vocab, "vocabulary size (>= 256, byte tokens)")->type_name("N")->check(CLI::Range(256, 1 << 20))->default_str(std::to_string(cfg.model.vocab));
  app.add_option("--global-batch", cfg.global_batch, "sequences per step")->type_name("N")->check(count(1 << 24))->default_str(std::to_string(cfg.global_batch));
  app.add_option("--micro-batch", cfg.micro_batch, "sequences per micro-batch")->type_name("N")->check(count(1 << 24))->default_str(std::to_string(cfg.micro_batch));
  app.add_option("--steps", cfg.steps, "training steps")->type_name("N")->check(count(1 << 30))->default_str(std::to_string(cfg.steps));
  app.add_option("--lr", cfg.lr, "AdamW learning rate, > 0")->type_name("LR")->check(finite_range(1e-12, 10))->capture_default_str();
  app.add_option("--weight-decay", cfg.weight_decay, "AdamW weight decay")->type_name("WD")->check(finite_range(0, 100))->capture_default_str();
  app.add_option("--warmup", cfg.warmup_steps, "linear learning-rate warm-up, in optimizer steps")
      ->type_name("N")->check(CLI::Range(0, 1 << 30))->default_str(std::to_string(cfg.warmup_steps));
  app.add_option("--seed", o.seed, "seed of initialisation and data")->type_name("N")->check(CLI::Range(0, 2147483647))->default_str(std::to_string(o.seed));
  app.add_option("--compression", o.compression,
                 "DP gradient compression: none|int8|int4|fp8|2of4|topk, or stages\n"
                 "\"2of4@0,int4@10,none:4@20\" (method[:sync_every]@start_step)")
      ->type_name("C")->default_str("none");
  app.add_option("--sync-every", o.sync_every, "DP sync (and optimizer step) every K steps, default for stages")
      ->type_name("K")->check(count(1 << 20))->default_str("1");
  app.add_option("--quant-block", o.quant_block, "elements per quantization scale (a multiple of 4 dividing 256)")
      ->type_name("N")->check(CLI::Range(4, 256))->default_str("64");
  app.add_option("--topk-ratio", o.topk_ratio, "share of gradient values top-k keeps, in (0, 1]")
      ->type_name("R")->check(finite_range(1e-9, 1))->default_str("0.01");
  app.add_flag("--no-error-feedback", o.no_ef, "compress without error feedback");
  app.add_option("--corpus", o.corpus, "training text file (default: a generated corpus)")->type_name("FILE");
  app.add_option("--corpus-bytes", o.corpus_bytes, "size of the generated corpus")
      ->type_name("N")->check(CLI::Range(1024, 1 << 30))->default_str(std::to_string(o.corpus_bytes));
  app.add_option("--schedule", cfg.schedule, "pipeline order: 1f1b (PipeDream-Flush) or gpipe")
      ->type_name("S")->check(CLI::IsMember({"1f1b", "gpipe"}))->default_str("1f1b");
  app.add_option("--log", o.log_path, "write the JSON lines here instead of stdout")->type_name("FILE");
  app.add_option("--timeline", cfg.timeline_path,
                 "each rank writes its op timeline (every op and collective of every step, with its\n"
                 "start and end) to PREFIX.rank<R>.jsonl")
      ->type_name("PREFIX");
  app.add_option("--threads", o.threads, "cpu threads per rank")->type_name("N")->check(CLI::Range(0, 4096))->default_str("1");
  app.footer(mpi_root_help());
}

int run_train(TrainOptions& o) {
  tk::TrainConfig& cfg = o.cfg;
  const std::string& backend = o.backend;
  const std::string& compression = o.compression;
  const std::string& log_path = o.log_path;
  const std::string& corpus = o.corpus;
  const int threads = o.threads, sync_every = o.sync_every, quant_block = o.quant_block, seed = o.seed,
            corpus_bytes = o.corpus_bytes;
  const bool no_ef = o.no_ef;
  const double topk_ratio = o.topk_ratio;
  if (backend != "cpu" && backend != "cuda") {
    std::fprintf(stderr, "trainsim train: --backend \"%s\" unknown; expected one of: cpu cuda\n", backend.c_str());
    return kExitBadInput;
  }
  if (backend == "cuda" && !tk::cuda_compiled()) {
    std::fprintf(stderr, "trainsim train: --backend cuda: this trainsim was built without CUDA\n");
    return kExitBadInput;
  }
  if (quant_block % 4 || 256 % quant_block) { std::fprintf(stderr, "trainsim train: --quant-block must be a multiple of 4 dividing 256\n"); return kExitBadInput; }
  cfg.model.seed = uint64_t(seed);
  cfg.corpus_bytes = size_t(corpus_bytes);
  cfg.corpus_file = corpus;
  cfg.error_feedback = !no_ef;
  try {
    cfg.compression = tk::parse_compression_schedule(compression, sync_every, size_t(quant_block), topk_ratio);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "trainsim train: --compression: %s\n", e.what());
    return kExitBadInput;
  }
  // The log is checked before any work: a wrong path fails now, not after training.
  if (!log_path.empty()) check_output_file(log_path, "--log");
  if (!cfg.timeline_path.empty()) check_output_file(tk::timeline_file(cfg.timeline_path, 0), "--timeline");
  // The corpus is read whole before training: a regular file (not a device or a pipe, which
  // may never end) of at least one sequence (seq + 2 bytes: the byte tokens and their shifted
  // targets, byte_corpus.cpp) and at most 1 GiB, the generated corpus's bound.
  if (!corpus.empty()) {
    struct stat st {};
    if (stat(corpus.c_str(), &st) != 0) {
      std::fprintf(stderr, "trainsim train: --corpus: cannot read \"%s\": %s\n", corpus.c_str(), std::strerror(errno));
      return kExitBadInput;
    }
    const long long need = static_cast<long long>(cfg.model.seq) + 2;
    const char* problem = !S_ISREG(st.st_mode)             ? "is not a regular file"
                          : st.st_size > (1LL << 30)       ? "is larger than 1 GiB"
                          : st.st_size < need              ? "is shorter than one sequence"
                                                           : nullptr;
    if (problem) {
      std::fprintf(stderr, "trainsim train: --corpus: \"%s\" %s (it needs --seq + 2 = %lld to 1073741824 bytes)\n",
                   corpus.c_str(), problem, need);
      return kExitBadInput;
    }
  }
  // Without MPI (or not under mpirun) the world is one rank: check before starting MPI.
  const int ranks = cfg.tp * cfg.pp * cfg.dp;
  // cpu, several ranks, not under mpiexec: start them (as root too: mpi_launch.hpp).
  if (backend == "cpu" && ranks > 1 && !tk::launched_by_mpi() && tk::mpi_compiled()) {
    if (auto err = tk::check_train_config(cfg, ranks, backend); !err.empty()) {
      std::fprintf(stderr, "trainsim train: %s\n", err.c_str());
      return kExitBadInput;
    }
    allow_mpi_as_root();
    std::string why;
    tk::relaunch_under_mpiexec(ranks, command_args(), &why);
    std::fprintf(stderr, "trainsim train: %d ranks need mpiexec: %s\n", ranks, why.c_str());
    return kExitBadInput;
  }
  // cuda on one node without mpirun: one thread per GPU, NCCL communicators from ncclCommInitAll.
  if (backend == "cuda" && ranks > 1 && !tk::launched_by_mpi()) {
#if defined(TRAINSIM_HAVE_NCCL)
    if (auto err = tk::check_train_config(cfg, ranks, backend); !err.empty()) {
      std::fprintf(stderr, "trainsim train: %s\n", err.c_str());
      return kExitBadInput;
    }
    std::string why;
    int devices = tk::cuda_device_count(&why);
    if (devices < ranks) {
      std::fprintf(stderr, "trainsim train: --tp x --pp x --dp = %d ranks but %d CUDA device(s) %s\n", ranks,
                   devices, why.c_str());
      return devices == 0 ? kExitFailure : kExitBadInput;
    }
    std::FILE* out = log_path.empty() ? stdout : std::fopen(log_path.c_str(), "w");
    if (!out) {
      std::fprintf(stderr, "trainsim train: cannot write --log %s\n", log_path.c_str());
      return kExitBadInput;
    }
    tk::ThreadedNcclWorld world = tk::make_threaded_nccl_world(ranks, threads);
    auto& bes = world.backends;
    auto& comms = world.comms;
    std::fprintf(out, "%s\n", tk::train_config_json(cfg, backend, ranks).c_str());
    std::vector<std::string> errors(ranks);
    std::vector<std::vector<tk::StepLog>> logs(ranks);
    std::vector<std::thread> pool;
    for (int i = 0; i < ranks; ++i)
      pool.emplace_back([&, i] {
        try {
          bes[i]->bind_thread();
          logs[i] = tk::train_gpt(*bes[i], *comms[i], cfg, [&](const tk::StepLog& l) {
            if (i == 0) {
              std::fprintf(out, "%s\n", tk::step_log_json(l).c_str());
              std::fflush(out);
            }
          });
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    for (auto& t : pool) t.join();
    comms.clear();
    int rc = kExitOk;
    for (const auto& e : errors)
      if (!e.empty()) { std::fprintf(stderr, "trainsim train: %s\n", e.c_str()); rc = kExitFailure; }
    if (rc == kExitOk && !logs[0].empty()) {
      tk::JsonWriter w(false);
      double total = 0;
      for (const auto& l : logs[0]) total += l.step_time_s;
      w.begin_object().kv("event", "done").kv("first_loss", logs[0].front().loss).kv("final_loss", logs[0].back().loss)
          .kv("mean_step_time_s", total / logs[0].size()).kv("device", bes[0]->device_name()).end_object();
      std::fprintf(out, "%s\n", w.str().c_str());
    }
    return close_log(out, log_path, rc);
#else
    std::fprintf(stderr, "trainsim train: --backend cuda with %d ranks needs NCCL or mpirun\n", ranks);
    return kExitBadInput;
#endif
  }
  if (!tk::mpi_compiled() && cfg.tp * cfg.pp * cfg.dp > 1) {
    std::fprintf(stderr, "trainsim train: --tp x --pp x --dp = %d ranks needs MPI, which this build lacks\n",
                 cfg.tp * cfg.pp * cfg.dp);
    return kExitBadInput;
  }
  if (!tk::launched_by_mpi()) {
    if (auto err = tk::check_train_config(cfg, 1, backend); !err.empty()) {
      std::fprintf(stderr, "trainsim train: %s\n", err.c_str());
      return kExitBadInput;
    }
  }

  int rc = kExitOk;
  {
    auto world = tk::make_world_communicator();
    const bool root = world->rank() == 0;
    if (auto err = tk::check_train_config(cfg, world->size(), backend); !err.empty()) {
      if (root) std::fprintf(stderr, "trainsim train: %s\n", err.c_str());
      world.reset();
      tk::finalize_world();
      return kExitBadInput;
    }
    std::FILE* out = stdout;
    if (root && !log_path.empty()) {
      out = std::fopen(log_path.c_str(), "w");
      if (!out) {
        std::fprintf(stderr, "trainsim train: cannot write --log %s\n", log_path.c_str());
        out = stdout;
        rc = kExitBadInput;
      }
    }
    try {
      tk::BackendOptions bo{.threads = threads, .device = 0};
      if (backend == "cuda") {
        std::string why;
        int devices = tk::cuda_device_count(&why);
        if (devices == 0) {
          // Asked for a device this machine does not have: bad input, not a bug.
          if (root) std::fprintf(stderr, "trainsim train: --backend cuda: no CUDA device (%s)\n", why.c_str());
          if (out != stdout) std::fclose(out);
          world.reset();
          tk::finalize_world();
          return kExitBadInput;
        }
        bo.device = world->rank() % devices;
      }
      auto be = tk::make_backend(backend, bo);
      if (root) std::fprintf(out, "%s\n", tk::train_config_json(cfg, backend, world->size()).c_str());
      auto logs = tk::train_gpt(*be, *world, cfg, [&](const tk::StepLog& l) {
        if (root) {
          std::fprintf(out, "%s\n", tk::step_log_json(l).c_str());
          std::fflush(out);
        }
      });
      if (root) {
        tk::JsonWriter w(false);
        double total = 0;
        for (const auto& l : logs) total += l.step_time_s;
        w.begin_object().kv("event", "done").kv("first_loss", logs.front().loss).kv("final_loss", logs.back().loss)
            .kv("mean_step_time_s", total / logs.size()).kv("device", be->device_name()).end_object();
        std::fprintf(out, "%s\n", w.str().c_str());
      }
    } catch (const std::exception& e) {
      if (root) std::fprintf(stderr, "trainsim train: %s\n", e.what());
      rc = kExitFailure;
    }
    rc = close_log(out, log_path, rc);
  }
  tk::finalize_world();
  return rc;
}

const CommandRegistrar kRegistrar("train", "train a small GPT with TP/PP/DP on real ranks, log JSON lines",
                                  declare, run_train);

}  // namespace
}  // namespace trainsim::cli
