// `trainsim train`: train the small GPT on real ranks (kernels/trainer.hpp) and log one JSON
// line per step: loss, step time, peak memory, bytes sent per group.
//   mpirun -np 8 --oversubscribe trainsim train --tp 2 --pp 2 --dp 2
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/command_registry.hpp"
#include "kernels/backend.hpp"
#include "kernels/cli_args.hpp"
#include "kernels/communicator.hpp"
#include "kernels/json_writer.hpp"
#include "kernels/trainer.hpp"
#if defined(TRAINSIM_HAVE_NCCL)
#include "kernels/nccl_communicator.hpp"
#endif

namespace trainsim::cli {
namespace {

namespace tk = trainsim::kernels;

int run_train(int argc, char** argv) {
  tk::TrainConfig cfg;
  std::string backend = "cpu", compression = "none", log_path, corpus;
  int threads = 1, sync_every = 1, quant_block = 64, seed = int(cfg.model.seed), corpus_bytes = int(cfg.corpus_bytes);
  bool no_ef = false;
  double topk_ratio = 0.01;
  tk::ArgParser ap("trainsim train [--tp N] [--pp N] [--dp N] [options]  (under mpirun for N > 1 ranks)",
                   "Trains a small byte-level GPT with tensor, pipeline (1F1B) and data parallelism\n"
                   "(ZeRO-1), gradient accumulation and compressed gradient reduction, and logs one\n"
                   "JSON line per step. tp x pp x dp must equal the number of MPI ranks, or, with\n"
                   "--backend cuda and no mpirun, the number of GPUs driven from threads (NCCL).");
  ap.add_string("backend", "cpu or cuda", &backend);
  ap.add_int("tp", "tensor-parallel degree", &cfg.tp);
  ap.add_int("pp", "pipeline-parallel degree (1F1B)", &cfg.pp);
  ap.add_int("dp", "data-parallel degree", &cfg.dp);
  ap.add_int("zero", "ZeRO stage for data parallelism: 0 or 1", &cfg.zero);
  ap.add_int("layers", "transformer layers", &cfg.model.layers);
  ap.add_int("hidden", "hidden size", &cfg.model.hidden);
  ap.add_int("heads", "attention heads", &cfg.model.heads);
  ap.add_int("seq", "sequence length (tokens)", &cfg.model.seq);
  ap.add_int("vocab", "vocabulary size (>= 256, byte tokens)", &cfg.model.vocab);
  ap.add_int("global-batch", "sequences per step", &cfg.global_batch);
  ap.add_int("micro-batch", "sequences per micro-batch", &cfg.micro_batch);
  ap.add_int("steps", "training steps", &cfg.steps);
  ap.add_double("lr", "AdamW learning rate", &cfg.lr);
  ap.add_double("weight-decay", "AdamW weight decay", &cfg.weight_decay);
  ap.add_int("warmup", "linear learning-rate warm-up, in optimizer steps", &cfg.warmup_steps);
  ap.add_int("seed", "seed of initialisation and data", &seed);
  ap.add_string("compression", "DP gradient compression: none|int8|int4|fp8|2of4|topk, or stages "
                "\"2of4@0,int4@10,none:4@20\" (method[:sync_every]@start_step)", &compression);
  ap.add_int("sync-every", "DP sync (and optimizer step) every K steps, default for stages", &sync_every);
  ap.add_int("quant-block", "elements per quantization scale", &quant_block);
  ap.add_double("topk-ratio", "share of gradient values top-k keeps", &topk_ratio);
  ap.add_flag("no-error-feedback", "compress without error feedback", &no_ef);
  ap.add_string("corpus", "training text file (default: a generated corpus)", &corpus);
  ap.add_int("corpus-bytes", "size of the generated corpus", &corpus_bytes);
  ap.add_string("log", "write the JSON lines here instead of stdout", &log_path);
  ap.add_int("threads", "cpu threads per rank", &threads);
  if (int rc = ap.parse(argc, argv)) return rc == 1 ? kExitOk : kExitBadInput;

  if (backend != "cpu" && backend != "cuda") {
    std::fprintf(stderr, "trainsim train: --backend \"%s\" unknown; expected one of: cpu cuda\n", backend.c_str());
    return kExitBadInput;
  }
  if (backend == "cuda" && !tk::cuda_compiled()) {
    std::fprintf(stderr, "trainsim train: --backend cuda: this trainsim was built without CUDA\n");
    return kExitBadInput;
  }
  if (sync_every < 1) { std::fprintf(stderr, "trainsim train: --sync-every must be >= 1\n"); return kExitBadInput; }
  if (quant_block < 2 || quant_block % 4) { std::fprintf(stderr, "trainsim train: --quant-block must be a positive multiple of 4\n"); return kExitBadInput; }
  if (!(topk_ratio > 0 && topk_ratio <= 1)) { std::fprintf(stderr, "trainsim train: --topk-ratio must be in (0, 1]\n"); return kExitBadInput; }
  if (256 % quant_block) { std::fprintf(stderr, "trainsim train: --quant-block must divide 256\n"); return kExitBadInput; }
  if (corpus_bytes < 1024) { std::fprintf(stderr, "trainsim train: --corpus-bytes must be >= 1024\n"); return kExitBadInput; }
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
  // Without MPI (or not under mpirun) the world is one rank: check before starting MPI.
  const int ranks = cfg.tp * cfg.pp * cfg.dp;
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
      return kExitFailure;
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
    if (out != stdout) std::fclose(out);
    return rc;
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
        rc = kExitFailure;
      }
    }
    try {
      tk::BackendOptions bo{.threads = threads, .device = 0};
      if (backend == "cuda") {
        std::string why;
        int devices = tk::cuda_device_count(&why);
        if (devices == 0) throw std::runtime_error("no CUDA device (" + why + ")");
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
    if (out != stdout) std::fclose(out);
  }
  tk::finalize_world();
  return rc;
}

const CommandRegistrar kRegistrar("train", "train a small GPT with TP/PP/DP on real ranks, log JSON lines",
                                  run_train);

}  // namespace
}  // namespace trainsim::cli
