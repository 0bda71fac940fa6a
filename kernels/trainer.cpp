#include "kernels/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "kernels/byte_corpus.hpp"
#include "kernels/json_writer.hpp"
#include "kernels/op_timeline.hpp"
#if defined(TRAINSIM_HAVE_NCCL)
#include "kernels/nccl_communicator.hpp"
#endif

namespace trainsim::kernels {

std::vector<CompressionStage> parse_compression_schedule(const std::string& text, int default_sync_every,
                                                         size_t quant_block, double topk_ratio) {
  std::vector<CompressionStage> stages;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    CompressionStage st;
    st.sync_every = default_sync_every;
    std::string method = part;
    if (auto at = part.find('@'); at != std::string::npos) {
      method = part.substr(0, at);
      try {
        st.start_step = std::stoi(part.substr(at + 1));
      } catch (...) {
        throw std::invalid_argument("bad start step in \"" + part + "\"");
      }
    } else if (!stages.empty()) {
      throw std::invalid_argument("stage \"" + part + "\" needs @start_step");
    }
    if (auto colon = method.find(':'); colon != std::string::npos) {
      try {
        st.sync_every = std::stoi(method.substr(colon + 1));
      } catch (...) {
        throw std::invalid_argument("bad sync interval in \"" + part + "\"");
      }
      method = method.substr(0, colon);
    }
    st.spec.kind = compression_from_string(method);
    st.spec.block = quant_block;
    st.spec.topk_ratio = topk_ratio;
    if (st.sync_every < 1) throw std::invalid_argument("sync interval must be >= 1 in \"" + part + "\"");
    if (!stages.empty() && st.start_step <= stages.back().start_step)
      throw std::invalid_argument("stage start steps must increase (\"" + part + "\")");
    stages.push_back(st);
  }
  if (stages.empty()) throw std::invalid_argument("empty compression schedule");
  if (stages.front().start_step != 0) throw std::invalid_argument("the first stage must start at step 0");
  return stages;
}

std::string check_train_config(const TrainConfig& c, int world, const std::string& backend) {
  const auto& m = c.model;
  auto s = [](long long v) { return std::to_string(v); };
  if (c.tp < 1 || c.pp < 1 || c.dp < 1) return "--tp, --pp and --dp must be >= 1";
  // Products in 64 bits: three ints multiply past 2^31.
  const long long ranks = static_cast<long long>(c.tp) * c.pp * c.dp;
  if (ranks != world)
    return "--tp " + s(c.tp) + " x --pp " + s(c.pp) + " x --dp " + s(c.dp) + " = " + s(ranks) +
           " but the job has " + s(world) + " rank(s) (launch with mpirun -np " + s(ranks) + ")";
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.seq < 2) return "--layers, --hidden, --heads must be >= 1 and --seq >= 2";
  // The small trainer's ranges: far past what it is for (a CPU or one-node check of the model),
  // small enough that its buffers cannot outgrow a machine.
  if (m.layers > 1024) return "--layers " + s(m.layers) + ": at most 1024";
  if (m.hidden > 65536) return "--hidden " + s(m.hidden) + ": at most 65536";
  if (m.seq > (1 << 20)) return "--seq " + s(m.seq) + ": at most 1048576";
  if (m.vocab < kByteVocab) return "--vocab " + s(m.vocab) + " must be >= 256 (byte-level tokens)";
  if (m.vocab > (1 << 20)) return "--vocab " + s(m.vocab) + ": at most 1048576";
  if (m.hidden % m.heads) return "--heads " + s(m.heads) + " does not divide --hidden " + s(m.hidden);
  if (m.heads % c.tp) return "--tp " + s(c.tp) + " does not divide --heads " + s(m.heads);
  if (m.layers % c.pp) return "--pp " + s(c.pp) + " does not divide --layers " + s(m.layers);
  if (backend == "cuda" && m.hidden / m.heads > 128) return "--hidden / --heads must be <= 128 on cuda";
  if (c.micro_batch < 1 || c.global_batch < 1) return "--micro-batch and --global-batch must be >= 1";
  const long long per_replica = static_cast<long long>(c.dp) * c.micro_batch;
  if (c.global_batch % per_replica)
    return "--global-batch " + s(c.global_batch) + " is not a multiple of --dp x --micro-batch = " + s(per_replica);
  // Weights, gradients and the two AdamW moments in fp32 (16 bytes a parameter) on one rank;
  // activations of one micro-batch (~20 values per hidden unit per layer, plus the logits).
  const double h = m.hidden, params_per_rank = (12.0 * m.layers * h * h / c.pp + (m.vocab + m.seq) * h) / c.tp;
  if (params_per_rank > 1e9)
    return "--layers " + s(m.layers) + " --hidden " + s(m.hidden) + " --vocab " + s(m.vocab) + ": " +
           s(static_cast<long long>(params_per_rank)) +
           " parameters per rank; the trainer holds at most 1e9 (16 GB of weights, gradients and AdamW states)";
  const double activations = static_cast<double>(c.micro_batch) * m.seq *
                             (20.0 * h * m.layers / c.pp + static_cast<double>(m.vocab) / c.tp);
  if (activations > 4e9)
    return "--micro-batch " + s(c.micro_batch) + " x --seq " + s(m.seq) +
           ": one micro-batch's activations exceed 4e9 values (16 GB); lower --micro-batch or --seq";
  if (c.steps < 1) return "--steps must be >= 1";
  if (c.zero != 0 && c.zero != 1) return "--zero must be 0 or 1";
  // AdamW learning rates are well below 1 in practice; NaN fails every comparison.
  if (!(c.lr > 0 && c.lr <= 1)) return "--lr must be in (0, 1]";
  if (!(c.weight_decay >= 0 && c.weight_decay <= 1)) return "--weight-decay must be in [0, 1]";
  if (c.warmup_steps < 0) return "--warmup must be >= 0";
  if (c.schedule != "1f1b" && c.schedule != "gpipe") return "--schedule " + c.schedule + ": expected 1f1b or gpipe";
  return "";
}

std::string timeline_file(const std::string& prefix, int rank) {
  return prefix + ".rank" + std::to_string(rank) + ".jsonl";
}

namespace {

using Clock = std::chrono::steady_clock;

const CompressionStage& stage_at(const std::vector<CompressionStage>& st, int step) {
  static const CompressionStage kNone{};
  const CompressionStage* cur = &kNone;
  for (const auto& s : st)
    if (s.start_step <= step) cur = &s;
  return *cur;
}

}  // namespace

std::vector<StepLog> train_gpt(Backend& device, Communicator& world, const TrainConfig& cfg,
                               const std::function<void(const StepLog&)>& on_step) {
  if (auto err = check_train_config(cfg, world.size(), device.name()); !err.empty()) throw std::invalid_argument(err);
  // Every op of the job goes through the recorder (op_timeline.hpp).
  OpTimeline timeline;
  RecordingBackend be(device, timeline);
  const int rank = world.rank(), tp = cfg.tp, pp = cfg.pp, dp = cfg.dp;
  const int tp_i = rank % tp, pp_i = (rank / tp) % pp, dp_i = rank / (tp * pp);

  // Groups. On cuda the groups are NCCL communicators split from one bootstrapped over `world`.
  std::unique_ptr<Communicator> dev_world;
  Communicator* base = &world;
  if (be.name() == "cuda" && world.name() != "nccl") {  // an NCCL world (threads) is used as is
    if (world.size() == 1) {
      dev_world = make_self_communicator(device);
    } else {
#if defined(TRAINSIM_HAVE_NCCL)
      dev_world = make_nccl_communicator(device, world);
#else
      throw std::runtime_error("multi-rank cuda training needs NCCL");
#endif
    }
    base = dev_world.get();
  }
  auto tp_comm = std::make_unique<RecordingCommunicator>(base->split(rank / tp, tp_i), be, timeline, "tp");
  auto pp_comm = std::make_unique<RecordingCommunicator>(base->split(dp_i * tp + tp_i, pp_i), be, timeline, "pp");
  auto dp_comm = std::make_unique<RecordingCommunicator>(base->split(pp_i * tp + tp_i, dp_i), be, timeline, "dp");
  std::FILE* tl_out = nullptr;
  if (!cfg.timeline_path.empty()) {
    tl_out = std::fopen(timeline_file(cfg.timeline_path, rank).c_str(), "w");
    if (!tl_out) throw std::invalid_argument("cannot write the op timeline " + timeline_file(cfg.timeline_path, rank));
    std::fprintf(tl_out, "%s\n", train_config_json(cfg, device.name(), world.size()).c_str());
  }
  struct CloseFile {
    std::FILE*& f;
    ~CloseFile() { if (f) std::fclose(f); }
  } close_timeline{tl_out};

  const auto& mc = cfg.model;
  const int S = mc.seq, h = mc.hidden;
  const int m = cfg.global_batch / (dp * cfg.micro_batch);  // micro-batches per replica per step
  const int T = cfg.micro_batch * S;
  const size_t pad = size_t(dp) * 256;
  GptStage stage(be, mc, {tp, tp_i, pp, pp_i}, pad);
  const size_t N = stage.padded_count(), shard = N / dp;

  std::vector<int32_t> corpus;
  if (!cfg.corpus_file.empty()) {
    std::ifstream f(cfg.corpus_file, std::ios::binary);
    if (!f) throw std::invalid_argument("--corpus " + cfg.corpus_file + ": cannot read");
    corpus = tokenize_bytes(std::string(std::istreambuf_iterator<char>(f), {}));
  } else {
    corpus = tokenize_bytes(generate_corpus(cfg.corpus_bytes, mc.seed ^ 0xc0ffeeull));
  }

  // Optimizer state: this replica's shard (ZeRO-1) or everything (ZeRO-0).
  const size_t opt_n = cfg.zero == 1 ? shard : N;
  const size_t opt_off = cfg.zero == 1 ? size_t(dp_i) * shard : 0;
  DeviceArray<float> adam_m(be, opt_n), adam_v(be, opt_n);
  adam_m.zero();
  adam_v.zero();
  DeviceArray<float> residual;  // error feedback, allocated when a compressed stage starts
  const float grad_scale = float(1.0 / (double(cfg.global_batch) * S));
  int opt_steps = 0, accumulated = 0;
  std::vector<StepLog> logs;

  auto batch_of = [&](int step, int j, std::vector<int32_t>& tok, std::vector<int32_t>& tgt) {
    tok.resize(T);
    tgt.resize(T);
    for (int b = 0; b < cfg.micro_batch; ++b) {
      int64_t index = (int64_t(dp_i) * m + j) * cfg.micro_batch + b;
      sample_sequence(corpus, mc.seed, step, index, S, tok.data() + b * S, tgt.data() + b * S);
    }
  };

  for (int step = 0; step < cfg.steps; ++step) {
    // Aligned start: every rank begins the step together (rank 0's logging of the previous step
    // and any skew it left are not charged to this one).
    be.synchronize();
    world.barrier();
    timeline.begin_step();
    timeline.set_phase(OpPhase::kOptimizer);
    const ThreadUsage u0 = thread_usage();
    const int core = current_core();
    auto t0 = Clock::now();
    be.reset_peak();
    const double persistent_bytes = double(be.current_bytes());
    const uint64_t b_tp0 = tp_comm->bytes_sent(), b_pp0 = pp_comm->bytes_sent(), b_dp0 = dp_comm->bytes_sent();
    tp_comm->reset_seconds();
    pp_comm->reset_seconds();
    dp_comm->reset_seconds();
    const auto& cstage = stage_at(cfg.compression, step);
    if (accumulated == 0) be.fill_zero(stage.grads(), N * sizeof(float));

    std::vector<std::unique_ptr<MicroBatchActivations>> acts(m);
    std::vector<DeviceArray<float>> in_flight;  // send buffers kept until wait_sends()
    double loss_sum = 0.0;
    std::vector<int32_t> tok, tgt;
    auto fwd = [&](int j) {
      timeline.set_phase(OpPhase::kForward, j);
      DeviceArray<int32_t> dtok;
      DeviceArray<float> x_in;
      if (stage.first()) {
        batch_of(step, j, tok, tgt);
        dtok = DeviceArray<int32_t>(be, T);
        dtok.upload(tok);
      } else {
        x_in = DeviceArray<float>(be, size_t(T) * h);
        pp_comm->recv(x_in.data(), x_in.bytes(), pp_i - 1, 2 * j);
      }
      acts[j] = stage.forward(cfg.micro_batch, dtok.data(), x_in.data(), *tp_comm);
      if (!stage.last()) {
        pp_comm->send(acts[j]->x_out.data(), acts[j]->x_out.bytes(), pp_i + 1, 2 * j);
        in_flight.push_back(std::move(acts[j]->x_out));
      }
    };
    auto bwd = [&](int j) {
      timeline.set_phase(OpPhase::kBackward, j);
      DeviceArray<float> dx_out(be, size_t(T) * h);
      if (stage.last()) {
        batch_of(step, j, tok, tgt);
        DeviceArray<int32_t> dtgt(be, T);
        dtgt.upload(tgt);
        loss_sum += stage.loss_and_head_backward(*acts[j], dtgt.data(), grad_scale, dx_out.data());
      } else {
        pp_comm->recv(dx_out.data(), dx_out.bytes(), pp_i + 1, 2 * j + 1);
      }
      DeviceArray<float> dx_in;
      if (!stage.first()) dx_in = DeviceArray<float>(be, size_t(T) * h);
      stage.backward(*acts[j], dx_out.data(), dx_in.data(), *tp_comm);
      acts[j].reset();
      if (!stage.first()) {
        pp_comm->send(dx_in.data(), dx_in.bytes(), pp_i - 1, 2 * j + 1);
        in_flight.push_back(std::move(dx_in));
      }
    };
    if (cfg.schedule == "gpipe") {
      // GPipe (Huang et al. 2019): every forward, then every backward.
      for (int j = 0; j < m; ++j) fwd(j);
      for (int j = 0; j < m; ++j) bwd(j);
    } else {
      // 1F1B (PipeDream-Flush; Narayanan et al. 2021): p - r - 1 warm-up forwards, then one
      // forward and one backward alternately, then the remaining backwards.
      const int warmup = std::min(pp - pp_i - 1, m);
      for (int j = 0; j < warmup; ++j) fwd(j);
      for (int j = 0; j < m - warmup; ++j) {
        fwd(warmup + j);
        bwd(j);
      }
      for (int j = m - warmup; j < m; ++j) bwd(j);
    }
    timeline.set_phase(OpPhase::kOther);
    pp_comm->wait_sends();
    in_flight.clear();
    ++accumulated;

    // Data-parallel reduction and optimizer step (every sync_every steps, and at the end).
    const bool boundary = step + 1 == cfg.steps || stage_at(cfg.compression, step + 1).start_step != cstage.start_step ||
                          accumulated >= cstage.sync_every;
    double optimizer_s = 0;
    auto opt_timer = [&] {
      be.synchronize();
      return Clock::now();
    };
    if (boundary) {
      timeline.set_phase(OpPhase::kOptimizer);
      if (accumulated > 1) be.scale(N, 1.0f / float(accumulated), stage.grads());
      float* ef = nullptr;
      if (cfg.error_feedback && cstage.spec.kind != CompressionKind::kNone) {
        if (!residual.size()) {
          residual = DeviceArray<float>(be, N + shard);  // + the all-gather phase's (ZeRO-0)
          residual.zero();
        }
        ef = residual.data();
      }
      ++opt_steps;
      double lr = cfg.lr * (cfg.warmup_steps > 0 ? std::min(1.0, double(opt_steps) / cfg.warmup_steps) : 1.0);
      // One replica without compression has nothing to reduce: the optimizer steps on the
      // gradients as they are (ZeRO-1's shard is then the whole stage).
      const bool reduce = dp > 1 || cstage.spec.kind != CompressionKind::kNone;
      if (!reduce) {
        const auto o0 = opt_timer();
        be.adamw(N, stage.params(), stage.grads(), adam_m.data(), adam_v.data(), float(lr), float(cfg.beta1),
                 float(cfg.beta2), float(cfg.eps), float(cfg.weight_decay), opt_steps);
        optimizer_s += std::chrono::duration<double>(opt_timer() - o0).count();
      } else if (cfg.zero == 1) {
        DeviceArray<float> gshard(be, shard);
        timeline.set_phase(OpPhase::kDataParallel);
        compressed_reduce_scatter(be, *dp_comm, cstage.spec, stage.grads(), ef, gshard.data(), shard);
        timeline.set_phase(OpPhase::kOptimizer);
        const auto o0 = opt_timer();
        be.adamw(shard, stage.params() + opt_off, gshard.data(), adam_m.data(), adam_v.data(), float(lr),
                 float(cfg.beta1), float(cfg.beta2), float(cfg.eps), float(cfg.weight_decay), opt_steps);
        DeviceArray<float> mine(be, shard);
        be.copy_device(mine.data(), stage.params() + opt_off, shard * sizeof(float));
        optimizer_s += std::chrono::duration<double>(opt_timer() - o0).count();
        timeline.set_phase(OpPhase::kDataParallel);
        dp_comm->all_gather(mine.data(), stage.params(), shard * sizeof(float));
      } else {
        timeline.set_phase(OpPhase::kDataParallel);
        compressed_all_reduce(be, *dp_comm, cstage.spec, stage.grads(), N, ef, ef ? ef + N : nullptr);
        timeline.set_phase(OpPhase::kOptimizer);
        const auto o0 = opt_timer();
        be.adamw(N, stage.params(), stage.grads(), adam_m.data(), adam_v.data(), float(lr), float(cfg.beta1),
                 float(cfg.beta2), float(cfg.eps), float(cfg.weight_decay), opt_steps);
        optimizer_s += std::chrono::duration<double>(opt_timer() - o0).count();
      }
      accumulated = 0;
    }
    be.synchronize();

    StepLog log;
    log.step = step;
    log.compression = std::string(to_string(cstage.spec.kind)) +
                      (cstage.sync_every > 1 ? ":" + std::to_string(cstage.sync_every) : "");
    log.optimizer_step = boundary;
    double sums[4] = {stage.last() && tp_i == 0 ? loss_sum : 0.0, double(tp_comm->bytes_sent() - b_tp0),
                      double(pp_comm->bytes_sent() - b_pp0), double(dp_comm->bytes_sent() - b_dp0)};
    const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const ThreadUsage u1 = thread_usage();
    const double cpu_share = wall_s > 0 ? (u1.cpu_s - u0.cpu_s) / wall_s : 1.0;
    double maxes[8] = {wall_s, double(be.peak_bytes()), tp_comm->seconds(), pp_comm->seconds(), dp_comm->seconds(),
                       wall_s - pp_comm->seconds(), optimizer_s, -cpu_share};
    if (tl_out) {
      JsonWriter w(false);
      w.begin_object().kv("event", "step").kv("step", step).kv("rank", rank).kv("tp_rank", tp_i).kv("pp_rank", pp_i)
          .kv("dp_rank", dp_i).kv("core", core).kv("wall_s", wall_s).kv("cpu_s", u1.cpu_s - u0.cpu_s)
          .kv("involuntary_switches", int64_t(u1.involuntary_switches - u0.involuntary_switches))
          .kv("persistent_bytes", persistent_bytes).kv("peak_bytes", double(be.peak_bytes()))
          .kv("optimizer_step", boundary).kv("compression", to_string(cstage.spec.kind));
      // [op, group, phase, micro-batch, t0_s, t1_s, count] (count: elements, FLOPs for GEMMs and
      // attention, bytes for communication)
      w.key("events").begin_array();
      for (const OpEvent& e : timeline.events())
        w.begin_array().value(e.op).value(e.group).value(to_string(e.phase)).value(e.micro_batch).value(e.t0_s)
            .value(e.t1_s).value(e.count).end_array();
      w.end_array().end_object();
      std::fprintf(tl_out, "%s\n", w.str().c_str());
    }
    world.all_reduce_f64(sums, 4, ReduceOp::kSum);
    world.all_reduce_f64(maxes, 8, ReduceOp::kMax);
    log.cpu_share = -maxes[7];
    log.busy_time_s = maxes[5];
    log.optimizer_time_s = maxes[6];
    log.comm_time_tp_s = maxes[2];
    log.comm_time_pp_s = maxes[3];
    log.comm_time_dp_s = maxes[4];
    log.loss = sums[0] / (double(cfg.global_batch) * S);
    log.bytes_tp = sums[1];
    log.bytes_pp = sums[2];
    log.bytes_dp = sums[3];
    log.step_time_s = maxes[0];
    log.peak_bytes = maxes[1];
    logs.push_back(log);
    if (on_step) on_step(log);
  }
  return logs;
}

std::string step_log_json(const StepLog& l) {
  JsonWriter w(false);
  w.begin_object().kv("event", "step").kv("step", l.step).kv("loss", l.loss).kv("step_time_s", l.step_time_s)
      .kv("peak_bytes", l.peak_bytes);
  w.key("bytes_sent").begin_object().kv("tp", l.bytes_tp).kv("pp", l.bytes_pp).kv("dp", l.bytes_dp).end_object();
  w.key("comm_time_s").begin_object().kv("tp", l.comm_time_tp_s).kv("pp", l.comm_time_pp_s).kv("dp", l.comm_time_dp_s)
      .end_object();
  w.kv("busy_time_s", l.busy_time_s).kv("optimizer_time_s", l.optimizer_time_s).kv("cpu_share", l.cpu_share);
  w.kv("compression", l.compression).kv("optimizer_step", l.optimizer_step).end_object();
  return w.str();
}

std::string train_config_json(const TrainConfig& c, const std::string& backend, int world_size) {
  JsonWriter w(false);
  w.begin_object().kv("event", "config").kv("backend", backend).kv("ranks", world_size);
  w.key("model").begin_object().kv("layers", c.model.layers).kv("hidden", c.model.hidden).kv("heads", c.model.heads)
      .kv("seq", c.model.seq).kv("vocab", c.model.vocab).kv("seed", uint64_t(c.model.seed)).end_object();
  w.key("plan").begin_object().kv("tp", c.tp).kv("pp", c.pp).kv("dp", c.dp).kv("zero", c.zero)
      .kv("global_batch", c.global_batch).kv("micro_batch", c.micro_batch)
      .kv("micro_batches_per_replica", c.global_batch / (c.dp * c.micro_batch)).kv("schedule", c.schedule).end_object();
  w.key("optimizer").begin_object().kv("name", "adamw").kv("lr", c.lr).kv("beta1", c.beta1).kv("beta2", c.beta2)
      .kv("eps", c.eps).kv("weight_decay", c.weight_decay).kv("warmup_steps", c.warmup_steps).end_object();
  w.key("compression").begin_array();
  for (const auto& s : c.compression)
    w.begin_object().kv("start_step", s.start_step).kv("method", to_string(s.spec.kind)).kv("sync_every", s.sync_every)
        .kv("block", uint64_t(s.spec.block)).kv("topk_ratio", s.spec.topk_ratio).end_object();
  w.end_array();
  w.kv("error_feedback", c.error_feedback).kv("steps", c.steps);
  w.kv("corpus", c.corpus_file.empty() ? "generated:" + std::to_string(c.corpus_bytes) + "B" : c.corpus_file);
  w.end_object();
  return w.str();
}

}  // namespace trainsim::kernels
