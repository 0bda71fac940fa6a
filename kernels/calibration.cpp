#include "kernels/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <sstream>
#include <vector>

#include "kernels/alpha_beta_fit.hpp"
#include "kernels/collective_check.hpp"
#include "kernels/compressed_collectives.hpp"
#include "kernels/json_writer.hpp"
#include "kernels/numeric_formats.hpp"
#include "kernels/op_check.hpp"
#include "kernels/op_timeline.hpp"
#include "kernels/ring_collectives.hpp"
#include "kernels/trainer.hpp"

namespace trainsim::kernels {
namespace {

using Clock = std::chrono::steady_clock;

// Median time of fn() (synchronised), repeated until min_time_s has passed (at least 3 runs,
// at most max_iters), after one warm-up run.
double median_time(Backend& be, const std::function<void()>& fn, double min_time_s, int max_iters = 200) {
  fn();
  be.synchronize();
  std::vector<double> t;
  auto start = Clock::now();
  while (int(t.size()) < max_iters) {
    auto t0 = Clock::now();
    fn();
    be.synchronize();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (t.size() >= 3 && std::chrono::duration<double>(Clock::now() - start).count() >= min_time_s) break;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct GemmShape { int m, n, k; const char* label; };

struct GemmPoint {
  DType type;
  GemmShape shape;
  double time_s = 0, flop = 0, flop_per_s = 0;
  size_t wrong = 0, sampled = 0;
};

// Times one GEMM and checks 64 sampled output elements against float64 dot products.
GemmPoint gemm_point(Backend& be, DType t, GemmShape s, double min_time, uint64_t seed) {
  GemmPoint p{t, s};
  auto a = random_floats(size_t(s.m) * s.k, seed), b = random_floats(size_t(s.k) * s.n, seed + 1);
  auto round_to = [&](std::vector<float>& v) {
    if (t == DType::kBF16) for (auto& x : v) x = round_bf16(x);
    if (t == DType::kF16) for (auto& x : v) x = round_fp16(x);
  };
  round_to(a);
  round_to(b);
  const size_t eb = dtype_bytes(t);
  DeviceArray<float> fa(be, a.size()), fb(be, b.size());
  fa.upload(a);
  fb.upload(b);
  DeviceArray<uint8_t> da(be, a.size() * eb), db(be, b.size() * eb), dc(be, size_t(s.m) * s.n * eb);
  be.convert(DType::kF32, t, a.size(), fa.data(), da.data());
  be.convert(DType::kF32, t, b.size(), fb.data(), db.data());
  fa.reset();
  fb.reset();
  p.time_s = median_time(be, [&] { be.gemm(t, false, false, s.m, s.n, s.k, 1.0f, da.data(), db.data(), 0.0f, dc.data()); },
                         min_time);
  p.flop = 2.0 * s.m * s.n * s.k;
  p.flop_per_s = p.flop / p.time_s;
  std::mt19937_64 rng(seed + 2);
  double rtol = t == DType::kBF16 ? 8e-3 : (t == DType::kF16 ? 1e-3 : 1e-5);
  double atol = (t == DType::kF32 ? 1e-5 : 1e-3) * std::sqrt(double(s.k));
  for (int i = 0; i < 64; ++i) {
    size_t r = rng() % s.m, c = rng() % s.n;
    double ref = 0;
    for (int q = 0; q < s.k; ++q) ref += double(a[r * s.k + q]) * b[size_t(q) * s.n + c];
    float got = 0;
    if (t == DType::kF32) {
      be.copy_to_host(&got, dc.data() + (r * s.n + c) * 4, 4);
    } else {
      uint16_t h;
      be.copy_to_host(&h, dc.data() + (r * s.n + c) * 2, 2);
      got = t == DType::kBF16 ? bf16_to_float(h) : fp16_to_float(h);
    }
    if (!(std::fabs(got - ref) <= atol + rtol * std::fabs(ref))) ++p.wrong;
    ++p.sampled;
  }
  return p;
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string fabric_of(const Communicator& comm) {
  if (comm.size() == 1) return "none";
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (local && world && std::string(local) != std::string(world)) return "inter_node";
  return "intra_node";
}

struct MemOp {
  std::string op, shape;
  double bytes = 0, flop = 0, time_s = 0;
};

// Parameters of one pipeline stage of the train job on one rank, padded as GptStage pads them
// (to a multiple of dp x 256).
size_t stage_param_count(const ModelOpShape& m, int pp_rank) {
  const size_t h = m.hidden, hl = h / m.tp, fl = 4 * h / m.tp;
  size_t n = size_t(m.layers / m.pp) * (4 * h + 4 * h * hl + 2 * h * fl);
  if (pp_rank == 0) n += size_t(m.vocab) * h + size_t(m.seq) * h;
  if (pp_rank == m.pp - 1) n += 2 * h + h * size_t(m.vocab);
  const size_t pad = size_t(m.dp) * 256;
  return (n + pad - 1) / pad * pad;
}

// The layer's six forward GEMMs at the trainer's shapes (T tokens, hidden h, hl = h/tp, fl =
// 4h/tp): Q, K, V (a W_q, three times), the output projection (o W_o), fc1 (a W_1), fc2 (g W_2).
void layer_forward_gemms(Backend& be, int T, int h, int hl, int fl, const float* a, const float* wq, float* q,
                         const float* o, const float* wo, float* y, const float* w1, float* u, const float* g,
                         const float* w2) {
  const auto F = DType::kF32;
  for (int i = 0; i < 3; ++i) be.gemm(F, false, false, T, hl, h, 1.0f, a, wq, 0.0f, q);
  be.gemm(F, false, false, T, h, hl, 1.0f, o, wo, 0.0f, y);
  be.gemm(F, false, false, T, fl, h, 1.0f, a, w1, 0.0f, u);
  be.gemm(F, false, false, T, h, fl, 1.0f, g, w2, 0.0f, y);
}

// The "op_rates" section: every op of one rank's training step at the trainer's shapes, timed on
// all ranks at once (the machine is shared as in training: caches, memory bandwidth, cores), the
// per-rank medians averaged over ranks. Each op was checked against the float64 reference in
// op_checks above. Rates: GEMM and attention as a share of the f32 peak (same FLOP conventions as
// the gemm and ops sections), elementwise ops in seconds per element, AdamW per parameter.
void time_model_ops(Backend& be, Communicator& comm, const ModelOpShape& ms, double peak, double mt,
                    JsonWriter& w, std::ostringstream& sum) {
  const int p = comm.size();
  const bool cuda = be.name() == "cuda";
  const int T = ms.micro_batch * ms.seq, h = ms.hidden, hl = h / ms.tp, fl = 4 * h / ms.tp;
  const int heads_l = ms.heads / ms.tp, d = h / ms.heads, V = ms.vocab, S = ms.seq, mb = ms.micro_batch;
  const size_t Th = size_t(T) * h;
  size_t n_params = 0;
  for (int s = 0; s < ms.pp; ++s) n_params = std::max(n_params, stage_param_count(ms, s));
  const size_t opt_n = ms.zero == 1 ? n_params / ms.dp : n_params;
  auto rnd = [&](size_t n, uint64_t seed) {
    DeviceArray<float> a(be, n);
    auto v = random_floats(n, seed);
    for (auto& x : v) x *= 0.5f;
    a.upload(v);
    return a;
  };
  // Buffers at the trainer's shapes, in as many sets as the trainer has distinct ones: one
  // layer's weights (and their gradients) per layer of the stage, one micro-batch's activations
  // per layer and micro-batch (at most 256 MiB, 64 sets). The op is timed cycling through them,
  // so its operands come from where the trainer's do (the last-level cache or memory after the
  // other layers and micro-batches ran, not the core's own cache as one set reused in a loop
  // would give), and the weights are shared by the micro-batches as they are in the step.
  struct Weights {
    DeviceArray<float> wq, wo, w1, w2, wlm, gw, gamma, beta, dgamma, dbeta, wte, wpe;
  };
  struct Set {
    Weights* wt = nullptr;
    DeviceArray<float> x, y, dy, a, q, k, v, o, dq, dk, dv, u, g, du, lse, mean, rstd, logits, losses;
  };
  auto make_weights = [&](uint64_t s0) {
    Weights b;
    b.wq = rnd(size_t(h) * hl, s0 + 5), b.wo = rnd(size_t(hl) * h, s0 + 6), b.w1 = rnd(size_t(h) * fl, s0 + 7);
    b.w2 = rnd(size_t(fl) * h, s0 + 8), b.wlm = rnd(size_t(h) * V, s0 + 9), b.gw = rnd(size_t(h) * std::max(fl, V), s0 + 10);
    b.gamma = rnd(h, s0 + 21), b.beta = rnd(h, s0 + 22);
    b.dgamma = DeviceArray<float>(be, h), b.dbeta = DeviceArray<float>(be, h);
    b.wte = rnd(size_t(V) * h, s0 + 24), b.wpe = rnd(size_t(S) * h, s0 + 25);
    return b;
  };
  auto make_set = [&](uint64_t s0, Weights* wt) {
    Set b;
    b.wt = wt;
    b.x = rnd(Th, s0 + 1), b.y = rnd(Th, s0 + 2), b.dy = rnd(Th, s0 + 3), b.a = rnd(Th, s0 + 4);
    b.q = rnd(size_t(T) * hl, s0 + 11), b.k = rnd(size_t(T) * hl, s0 + 12), b.v = rnd(size_t(T) * hl, s0 + 13);
    b.o = rnd(size_t(T) * hl, s0 + 14), b.dq = rnd(size_t(T) * hl, s0 + 15), b.dk = rnd(size_t(T) * hl, s0 + 16);
    b.dv = rnd(size_t(T) * hl, s0 + 17);
    b.u = rnd(size_t(T) * fl, s0 + 18), b.g = rnd(size_t(T) * fl, s0 + 19), b.du = rnd(size_t(T) * fl, s0 + 20);
    b.lse = DeviceArray<float>(be, size_t(mb) * heads_l * S), b.mean = DeviceArray<float>(be, T);
    b.rstd = DeviceArray<float>(be, T);
    b.logits = rnd(size_t(T) * V, s0 + 23), b.losses = DeviceArray<float>(be, T);
    be.attention_fwd(mb, S, heads_l, d, b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.lse.data());  // a valid lse
    be.layernorm_fwd(T, h, b.x.data(), wt->gamma.data(), wt->beta.data(), 1e-5f, b.a.data(), b.mean.data(), b.rstd.data());
    return b;
  };
  const double weight_bytes = 4.0 * (2.0 * h * hl + 2.0 * h * fl + 2.0 * h * V + h * std::max(fl, V) + S * h);
  const double act_bytes = 4.0 * (5.0 * Th + 7.0 * T * hl + 3.0 * T * fl + 2.0 * T * V);
  // The stage's layers times the micro-batches whose activations are alive at once (beyond the
  // last-level cache more sets change nothing).
  const int layers_here = std::max(1, ms.layers / ms.pp);
  const int wanted_sets = layers_here * ms.micro_batches_in_flight();
  const int n_sets =
      std::clamp(int(std::min<double>(wanted_sets, 256.0 * (1 << 20) / (act_bytes + weight_bytes))), 1, 64);
  const int n_weights = std::min(layers_here, n_sets);
  std::vector<Weights> weights;
  for (int i = 0; i < n_weights; ++i) weights.push_back(make_weights(1000 * uint64_t(i)));
  std::vector<Set> sets;
  for (int i = 0; i < n_sets; ++i) sets.push_back(make_set(1000 * uint64_t(i), &weights[i % n_weights]));
  DeviceArray<int32_t> tokens(be, T);
  {
    std::vector<int32_t> t(T);
    for (int i = 0; i < T; ++i) t[i] = (i * 37) % 256;
    tokens.upload(t);
  }
  // The optimizer's weights and moments were last touched a step earlier: when it runs they are
  // no longer in the core's caches, which one state updated in a loop would keep them in. So it
  // is timed cycling through as many states as what a step touches in between spans (every
  // micro-batch's activations of every layer, and the layers' weights), at least two. The gradient it reads was written just before (the reduction, or the last
  // backward), and the trainer zeroes the gradients right after the optimizer read them: those
  // stay one buffer each.
  struct OptState { DeviceArray<float> w, m, v; };
  const double opt_bytes = 4.0 * 3.0 * opt_n;
  const double step_bytes = layers_here * (ms.micro_batches * act_bytes + weight_bytes);  // what a step touches
  const int opt_states = std::clamp(
      std::min(int(std::ceil(step_bytes / opt_bytes)) + 1, int(256.0 * (1 << 20) / opt_bytes)), 2, 8);
  std::vector<OptState> opt;
  for (int i = 0; i < opt_states; ++i) {
    opt.push_back({rnd(opt_n, 26 + 100 * uint64_t(i)), DeviceArray<float>(be, opt_n), DeviceArray<float>(be, opt_n)});
    opt.back().m.zero();
    opt.back().v.zero();
  }
  DeviceArray<float> pg = rnd(opt_n, 27), zero_buf(be, n_params);
  int next_opt = 0;

  // time_cv: the call-to-call spread of the op's time over its mean (the calls in undisturbed
  // windows; a normal-equivalent sigma from Gini's mean difference, below), per rank, averaged
  // over ranks; 0 where calls are not timed one at a time (cuda, ops without a prelude).
  struct Timed { std::string op; double count; bool flops; double time_s; int disturbed_windows; double time_cv; };
  std::vector<Timed> ops;
  // Every rank runs the op the same number of times in aligned windows, so the ranks load the
  // machine together as they do in training (on shared cores a lone rank runs faster). Within a
  // window the mean per call, since training pays for the slow repetitions too; over kWindows
  // windows the median of those no rank lost its core in (thread CPU time >= kMinCpuShare of
  // the window's wall time: another process ran there, which the trainer's measured steps
  // exclude too), or of all windows when every one was disturbed (counted in the file).
  constexpr int kWindows = 5;
  constexpr double kMinCpuShare = 0.97;
  int disturbed_total = 0;
  int next_set = 0;
  // Each op is timed as the trainer runs it: right after the op that precedes it in the step,
  // on the same set (untimed). Two effects make that differ from a loop of the op alone:
  // - a core that has just run AVX-512 code (OpenBLAS's sgemm) keeps a lower clock for a while
  //   after it (Intel's AVX-512 frequency licences, which relax over about a millisecond), so an
  //   elementwise op timed alone runs at a full clock it does not have in the step, and a GEMM
  //   timed in a loop of GEMMs starts at the lowered clock it would not have after an
  //   elementwise op;
  // - the preceding op wrote the input: the forward GEMMs read the layer norm's output and the
  //   backward GEMMs the incoming gradient from the cache, not from wherever cycling the sets
  //   left them.
  // So on the cpu backend the ops are timed one call at a time, each after its prelude: the
  // layer norm (forward GEMMs), the layer norm's backward writing the incoming gradient
  // (backward GEMMs), the projection GEMM whose output the residual add reads, the layer's fc1
  // GEMM (everything else that follows a GEMM in the step). A GPU keeps no such state between
  // kernels worth a synchronisation per call, so cuda keeps the plain loop.
  const auto F = DType::kF32;
  enum class Prelude { kNone, kLayerNorm, kLayerNormBackward, kGemm, kProjectionGemm };
  auto run_prelude = [&](Prelude kind, Set& b) {
    switch (kind) {
      case Prelude::kNone: break;
      case Prelude::kLayerNorm:
        be.layernorm_fwd(T, h, b.x.data(), b.wt->gamma.data(), b.wt->beta.data(), 1e-5f, b.a.data(), b.mean.data(), b.rstd.data());
        break;
      case Prelude::kLayerNormBackward:
        be.layernorm_bwd(T, h, b.y.data(), b.x.data(), b.wt->gamma.data(), b.mean.data(), b.rstd.data(), b.dy.data(),
                         b.wt->dgamma.data(), b.wt->dbeta.data());
        break;
      case Prelude::kGemm: be.gemm(F, false, false, T, fl, h, 1.0f, b.a.data(), b.wt->w1.data(), 0.0f, b.u.data()); break;
      case Prelude::kProjectionGemm:
        be.gemm(F, false, false, T, h, hl, 1.0f, b.o.data(), b.wt->wo.data(), 0.0f, b.y.data());
        break;
    }
  };
  auto time = [&](const std::string& op, double count, bool flops, const std::function<void(Set&)>& fn_set,
                  Prelude prelude_kind = Prelude::kNone) {
    const bool prelude = prelude_kind != Prelude::kNone && !cuda;
    // One call; returns the seconds the op itself took (the prelude excluded).
    auto call = [&]() -> double {
      Set& b = sets[next_set++ % n_sets];
      if (prelude) run_prelude(prelude_kind, b);
      const auto c0 = Clock::now();
      fn_set(b);
      if (prelude) be.synchronize();
      return std::chrono::duration<double>(Clock::now() - c0).count();
    };
    call();
    be.synchronize();
    comm.barrier();
    auto t0 = Clock::now();
    call();
    be.synchronize();
    double once = std::chrono::duration<double>(Clock::now() - t0).count();
    comm.all_reduce_f64(&once, 1, ReduceOp::kMax);
    const int reps = int(std::clamp(std::ceil(mt / kWindows / std::max(once, 1e-9)), 2.0, 10000.0));
    std::vector<double> clean, all, calls, clean_calls;
    for (int win = 0; win < kWindows; ++win) {
      comm.barrier();
      const ThreadUsage u0 = thread_usage();
      t0 = Clock::now();
      double op_s = 0;
      calls.clear();
      for (int i = 0; i < reps; ++i) {
        const double c = call();
        op_s += c;
        if (prelude) calls.push_back(c);
      }
      be.synchronize();
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      const ThreadUsage u1 = thread_usage();
      double t = (prelude ? op_s : wall) / reps, lost = -(wall > 0 ? (u1.cpu_s - u0.cpu_s) / wall : 1.0);
      comm.all_reduce_f64(&t, 1, ReduceOp::kSum);
      comm.all_reduce_f64(&lost, 1, ReduceOp::kMax);
      all.push_back(t / p);
      // On cuda the host thread waits in synchronize, so its CPU share says nothing there.
      if (cuda || -lost >= kMinCpuShare) {
        clean.push_back(t / p);
        clean_calls.insert(clean_calls.end(), calls.begin(), calls.end());
      }
    }
    std::vector<double>& v = clean.empty() ? all : clean;
    std::sort(v.begin(), v.end());
    const int disturbed = kWindows - int(clean.size());
    disturbed_total += disturbed;
    double cv = 0;
    if (prelude && clean_calls.size() >= 5) {
      // Gini's mean difference E|X - X'| of the calls (sorted: 2 sum (2i - n + 1) x_i / (n (n-1))):
      // two ranks running the op wait E|X - X'| / 2 for each other whatever the distribution,
      // and sqrt(pi) / 2 of it is sigma for a normal one (arrival_wait.hpp then takes it for n).
      std::sort(clean_calls.begin(), clean_calls.end());
      const double n = double(clean_calls.size());
      double gmd = 0, mean = 0;
      for (std::size_t i = 0; i < clean_calls.size(); ++i) {
        gmd += (2.0 * double(i) - n + 1) * clean_calls[i];
        mean += clean_calls[i];
      }
      gmd *= 2.0 / (n * (n - 1));
      mean /= n;
      cv = mean > 0 ? std::sqrt(M_PI) / 2 * gmd / mean : 0;
    }
    comm.all_reduce_f64(&cv, 1, ReduceOp::kSum);  // every rank calls: the windows are aligned
    ops.push_back({op, count, flops, v[v.size() / 2], disturbed, cv / p});
  };
  const double gemm_layer_flop = 2.0 * T * h * (4.0 * hl + 2.0 * fl);  // per pass
  time("gemm_forward", gemm_layer_flop, true, [&](Set& b) {
    layer_forward_gemms(be, T, h, hl, fl, b.a.data(), b.wt->wq.data(), b.q.data(), b.o.data(), b.wt->wo.data(), b.y.data(),
                        b.wt->w1.data(), b.u.data(), b.g.data(), b.wt->w2.data());
  }, Prelude::kLayerNorm);
  time("gemm_backward_input", gemm_layer_flop, true, [&](Set& b) {
    be.gemm(F, false, true, T, fl, h, 1.0f, b.dy.data(), b.wt->w2.data(), 0.0f, b.g.data());
    be.gemm(F, false, true, T, h, fl, 1.0f, b.du.data(), b.wt->w1.data(), 0.0f, b.y.data());
    be.gemm(F, false, true, T, hl, h, 1.0f, b.dy.data(), b.wt->wo.data(), 0.0f, b.dq.data());
    for (int i = 0; i < 3; ++i) be.gemm(F, false, true, T, h, hl, 1.0f, b.dq.data(), b.wt->wq.data(), i ? 1.0f : 0.0f, b.y.data());
  }, Prelude::kLayerNormBackward);
  time("gemm_backward_weight", gemm_layer_flop, true, [&](Set& b) {
    be.gemm(F, true, false, fl, h, T, 1.0f, b.g.data(), b.dy.data(), 1.0f, b.wt->gw.data());
    be.gemm(F, true, false, h, fl, T, 1.0f, b.a.data(), b.du.data(), 1.0f, b.wt->gw.data());
    be.gemm(F, true, false, hl, h, T, 1.0f, b.o.data(), b.dy.data(), 1.0f, b.wt->gw.data());
    for (int i = 0; i < 3; ++i) be.gemm(F, true, false, h, hl, T, 1.0f, b.a.data(), b.dq.data(), 1.0f, b.wt->gw.data());
  }, Prelude::kLayerNormBackward);
  time("gemm_lm_head", 3 * 2.0 * T * h * V, true, [&](Set& b) {
    be.gemm(F, false, false, T, V, h, 1.0f, b.a.data(), b.wt->wlm.data(), 0.0f, b.logits.data());
    be.gemm(F, true, false, h, V, T, 1.0f, b.a.data(), b.logits.data(), 1.0f, b.wt->gw.data());
    be.gemm(F, false, true, T, h, V, 1.0f, b.logits.data(), b.wt->wlm.data(), 0.0f, b.y.data());
  });
  const double attn_flop = 2.0 * mb * heads_l * double(S) * S * d;  // causal convention, as "ops"
  time("attention_fwd", attn_flop, true, [&](Set& b) {
    be.attention_fwd(mb, S, heads_l, d, b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.lse.data());
  }, Prelude::kGemm);
  time("attention_bwd", 2.5 * attn_flop, true, [&](Set& b) {
    be.attention_bwd(mb, S, heads_l, d, b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.lse.data(), b.o.data(), b.dq.data(),
                     b.dk.data(), b.dv.data());
  }, Prelude::kGemm);
  time("layernorm_fwd", double(Th), false, [&](Set& b) {
    be.layernorm_fwd(T, h, b.x.data(), b.wt->gamma.data(), b.wt->beta.data(), 1e-5f, b.a.data(), b.mean.data(), b.rstd.data());
  }, Prelude::kGemm);
  time("layernorm_bwd", double(Th), false, [&](Set& b) {
    be.layernorm_bwd(T, h, b.dy.data(), b.x.data(), b.wt->gamma.data(), b.mean.data(), b.rstd.data(), b.y.data(), b.wt->dgamma.data(), b.wt->dbeta.data());
  }, Prelude::kGemm);
  time("gelu_fwd", double(T) * fl, false, [&](Set& b) { be.gelu_fwd(size_t(T) * fl, b.u.data(), b.g.data()); }, Prelude::kGemm);
  time("gelu_bwd", double(T) * fl, false, [&](Set& b) { be.gelu_bwd(size_t(T) * fl, b.u.data(), b.g.data(), b.du.data()); }, Prelude::kGemm);
  time("residual_add", double(Th), false, [&](Set& b) { be.axpy(Th, 1.0f, b.x.data(), b.y.data()); }, Prelude::kProjectionGemm);
  time("softmax_xent", double(T) * V, false, [&](Set& b) {
    be.softmax_xent(T, V, b.logits.data(), tokens.data(), b.losses.data(), b.logits.data(), 1e-3f);
  }, Prelude::kGemm);
  time("embedding_fwd", double(Th), false, [&](Set& b) { be.embedding_fwd(T, S, h, tokens.data(), b.wt->wte.data(), b.wt->wpe.data(), b.y.data()); }, Prelude::kGemm);
  time("embedding_bwd", double(Th), false, [&](Set& b) { be.embedding_bwd(T, S, h, tokens.data(), b.dy.data(), b.wt->wte.data(), b.wt->wpe.data()); }, Prelude::kGemm);
  time("copy", double(Th), false, [&](Set& b) { be.copy_device(b.y.data(), b.x.data(), Th * sizeof(float)); }, Prelude::kGemm);
  time("fill_zero", double(n_params), false, [&](Set&) { be.fill_zero(zero_buf.data(), n_params * sizeof(float)); });
  time("adamw", double(opt_n), false, [&](Set&) {
    OptState& o = opt[next_opt++ % opt_states];
    be.adamw(opt_n, o.w.data(), pg.data(), o.m.data(), o.v.data(), 1e-4f, 0.9f, 0.95f, 1e-8f, 0.0f, 1);
  }, Prelude::kGemm);
  // The DP gradient compression kernels, over the stage's gradient (what the trainer compresses
  // each step), one pair per method.
  struct CompressionTimed { const char* plan_name; std::string compress_op, decompress_op; };
  std::vector<CompressionTimed> compression_ops;
  DeviceArray<float> grad_values = rnd(n_params, 28), accumulator(be, n_params);
  accumulator.zero();
  for (CompressionKind kind : {CompressionKind::kInt8, CompressionKind::kInt4, CompressionKind::kFp8,
                               CompressionKind::kSparse24, CompressionKind::kTopK}) {
    CompressionSpec spec;
    spec.kind = kind;
    const size_t granule = compression_granule(spec);
    const size_t cn = std::max(granule, size_t(n_params) / granule * granule);
    DeviceArray<uint8_t> payload(be, compressed_bytes(spec, cn));
    const std::string name = to_string(kind);
    compression_ops.push_back({kind == CompressionKind::kSparse24 ? "2:4" : to_string(kind), "compress_" + name,
                               "decompress_add_" + name});
    time(compression_ops.back().compress_op, double(cn), false,
         [&](Set&) { compress(be, spec, grad_values.data(), cn, payload.data()); }, Prelude::kGemm);
    time(compression_ops.back().decompress_op, double(cn), false,
         [&](Set&) { decompress_add(be, spec, payload.data(), cn, accumulator.data()); }, Prelude::kGemm);
  }
  if (comm.rank() != 0) return;
  auto find = [&](const std::string& op) -> const Timed& {
    for (const auto& t : ops)
      if (t.op == op) return t;
    return ops.front();
  };
  auto eff = [&](const std::string& op) { const auto& t = find(op); return t.count / t.time_s / peak; };
  auto per = [&](const std::string& op) { const auto& t = find(op); return t.time_s / t.count; };
  w.key("op_rates").begin_object();
  w.key("shape").begin_object().kv("layers", ms.layers).kv("hidden", h).kv("heads", ms.heads).kv("seq", S)
      .kv("vocab", V).kv("micro_batch", mb).kv("tp", ms.tp).kv("pp", ms.pp).kv("dp", ms.dp).kv("zero", ms.zero)
      .kv("tokens", T).kv("hidden_per_rank", hl).kv("ffn_hidden_per_rank", fl).kv("heads_per_rank", heads_l)
      .kv("head_dim", d).kv("stage_params", uint64_t(n_params)).kv("optimizer_params", uint64_t(opt_n))
      .kv("micro_batches", ms.micro_batches).kv("micro_batches_in_flight", ms.micro_batches_in_flight()).end_object();
  w.kv("ranks_timed_together", p).kv("peak_f32_flop_per_s", peak).kv("windows_per_op", kWindows)
      .kv("sets_cycled", n_sets).kv("weight_sets_cycled", n_weights).kv("optimizer_states_cycled", opt_states)
      .kv("disturbed_windows", disturbed_total);
  w.key("gemm_efficiency").begin_object().kv("forward", eff("gemm_forward"))
      .kv("backward_input", eff("gemm_backward_input")).kv("backward_weight", eff("gemm_backward_weight"))
      .kv("lm_head", eff("gemm_lm_head")).end_object();
  w.key("attention_efficiency").begin_object().kv("forward", eff("attention_fwd")).kv("backward", eff("attention_bwd"))
      .end_object();
  w.key("seconds_per_element").begin_object();
  for (const char* op : {"layernorm_fwd", "layernorm_bwd", "gelu_fwd", "gelu_bwd", "residual_add", "softmax_xent",
                         "embedding_fwd", "embedding_bwd", "copy", "fill_zero"})
    w.kv(op, per(op));
  w.end_object();
  w.kv("adamw_seconds_per_param", per("adamw"));
  {
    // One layer's ops, each once, weighted by their squared time as a segment's spread sums
    // them: sqrt(sum cv_i^2 t_i^2 / sum t_i^2) (arrival_wait.hpp in the models).
    double num = 0, den = 0;
    for (const char* op : {"gemm_forward", "gemm_backward_input", "gemm_backward_weight", "attention_fwd", "attention_bwd",
                           "layernorm_fwd", "layernorm_bwd", "gelu_fwd", "gelu_bwd", "residual_add"}) {
      const Timed& t = find(op);
      num += t.time_cv * t.time_cv * t.time_s * t.time_s;
      den += t.time_s * t.time_s;
    }
    w.kv("op_time_cv", den > 0 ? std::sqrt(num / den) : 0.0);
  }
  w.key("compression_seconds_per_element").begin_object();
  for (const auto& c : compression_ops)
    w.key(c.plan_name).begin_object().kv("compress", per(c.compress_op)).kv("decompress_add", per(c.decompress_op))
        .end_object();
  w.end_object();
  w.key("ops").begin_array();
  sum << "# op rates at the train job's shapes (tokens " << T << ", hidden " << h << ", tp " << ms.tp << "; "
      << p << " rank(s) timed together)\n";
  for (const auto& t : ops) {
    w.begin_object().kv("op", t.op).kv("time_s", t.time_s).kv(t.flops ? "flop" : "elements", t.count)
        .kv("disturbed_windows", t.disturbed_windows).kv("time_cv", t.time_cv).end_object();
    char line[200];
    if (t.flops)
      std::snprintf(line, sizeof line, "  %-22s %10.3f us  %8.3f GFLOP/s  eff %5.3f\n", t.op.c_str(), t.time_s * 1e6,
                    t.count / t.time_s / 1e9, t.count / t.time_s / peak);
    else
      std::snprintf(line, sizeof line, "  %-22s %10.3f us  %8.3f ns/element\n", t.op.c_str(), t.time_s * 1e6,
                    t.time_s / t.count * 1e9);
    sum << line;
  }
  w.end_array().end_object();
}

}  // namespace

ModelOpShape parse_model_op_shape(const std::string& text) {
  ModelOpShape m;
  m.layers = 2;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    auto eq = part.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("\"" + part + "\" is not key=value");
    const std::string key = part.substr(0, eq);
    int value = 0;
    try {
      size_t used = 0;
      value = std::stoi(part.substr(eq + 1), &used);
      if (used != part.size() - eq - 1) throw std::invalid_argument("");
    } catch (...) {
      throw std::invalid_argument("\"" + part + "\": not an integer");
    }
    // Every key counts something (>= 1) except the ZeRO stage, which may be 0.
    if (value < (key == "zero" ? 0 : 1))
      throw std::invalid_argument("\"" + part + "\": must be >= " + (key == "zero" ? "0" : "1"));
    if (key == "layers") m.layers = value;
    else if (key == "hidden") m.hidden = value;
    else if (key == "heads") m.heads = value;
    else if (key == "seq") m.seq = value;
    else if (key == "vocab") m.vocab = value;
    else if (key == "micro_batch") m.micro_batch = value;
    else if (key == "micro_batches") m.micro_batches = value;
    else if (key == "tp") m.tp = value;
    else if (key == "pp") m.pp = value;
    else if (key == "dp") m.dp = value;
    else if (key == "zero") m.zero = value;
    else if (key == "in_flight") m.in_flight = value;
    else
      throw std::invalid_argument("unknown key \"" + key +
                                  "\" (expected layers, hidden, heads, seq, vocab, micro_batch, micro_batches, tp, pp, dp, zero, in_flight)");
  }
  if (m.hidden % m.heads || m.heads % m.tp || m.layers % m.pp || m.vocab < 256)
    throw std::invalid_argument("heads must divide hidden, tp heads, pp layers; vocab >= 256");
  // The shape is one rank of the train job: the trainer's ranges hold (sizes a machine holds).
  TrainConfig c;
  c.model.layers = m.layers, c.model.hidden = m.hidden, c.model.heads = m.heads;
  c.model.seq = m.seq, c.model.vocab = m.vocab;
  c.tp = m.tp, c.pp = m.pp, c.dp = m.dp, c.zero = std::min(m.zero, 1);
  c.micro_batch = m.micro_batch;
  const long long ranks = static_cast<long long>(m.tp) * m.pp * m.dp;
  const long long global = static_cast<long long>(m.micro_batch) * m.dp;
  if (ranks > (1 << 20) || global > (1 << 30)) throw std::invalid_argument("tp x pp x dp or micro_batch x dp too large");
  c.global_batch = static_cast<int>(global);
  if (const std::string err = check_train_config(c, static_cast<int>(ranks), "cpu"); !err.empty())
    throw std::invalid_argument(err);
  return m;
}

std::string check_calibration_options(const CalibrationOptions& o) {
  // 16 GiB: a collective buffer pair on one GPU of today's largest memory.
  if (o.max_collective_bytes > (size_t{16} << 30)) return "--max-bytes: at most 17179869184 (16 GiB)";
  if (!(o.min_time_per_point_s >= 0 && o.min_time_per_point_s <= 60)) return "--min-time: between 0 and 60 s";
  for (const auto& s : o.model_gemm_shapes)
    for (int d : s)
      if (d < 1 || d > 65536) return "--gemm-shapes: each of M, N, K between 1 and 65536";
  return "";
}

CalibrationOutcome run_calibration(Backend& be, Communicator& comm, const CalibrationOptions& opts) {
  if (const std::string err = check_calibration_options(opts); !err.empty()) throw std::invalid_argument(err);
  CalibrationOutcome outcome;
  const bool root = comm.rank() == 0;
  const bool cuda = be.name() == "cuda";
  const bool quick = opts.quick;
  const double mt = opts.min_time_per_point_s;
  std::ostringstream sum;
  JsonWriter w;
  w.begin_object();
  w.kv("format", "trainsim-calibration").kv("version", 1);
  w.kv("tool", "trainsim calibrate " + opts.tool_version);
  w.kv("backend", be.name()).kv("device", be.device_name()).kv("created_utc", now_utc());
  w.kv("ranks", comm.size()).kv("communicator", comm.name());

  // 1. Every op against the float64 reference (rank 0; the others wait).
  size_t wrong = 0;
  double peak_f32 = 0;  // shared with the op_rates section
  if (root) {
    auto checks = check_ops(be, {.seed = 11, .large = opts.large_checks});
    w.key("op_checks").begin_array();
    sum << "# op checks (" << be.name() << ", " << be.device_name() << ")\n"
        << "#  op                         shape                                elements   max_abs_err  #wrong\n";
    for (const auto& c : checks) {
      w.begin_object().kv("op", c.op).kv("shape", c.shape).kv("elements", uint64_t(c.elements))
          .kv("max_abs_error", c.max_abs_error).kv("wrong", uint64_t(c.wrong)).end_object();
      char line[256];
      std::snprintf(line, sizeof line, "  %-28s %-36s %9zu %12.3e %7zu\n", c.op.c_str(), c.shape.c_str(),
                    c.elements, c.max_abs_error, c.wrong);
      sum << line;
      wrong += c.wrong;
    }
    w.end_array();
  }

  // 2. Compute sweep (rank 0): peak by a large GEMM, then efficiency vs shape.
  if (root && !opts.check_only && wrong == 0) {
    std::vector<DType> types = cuda ? std::vector<DType>{DType::kBF16, DType::kF16, DType::kF32}
                                    : std::vector<DType>{DType::kF32, DType::kBF16};
    // Peak: measured, not a datasheet figure (the cpu's turbo and AVX clocks make its
    // datasheet useless; on a GPU the measured peak is what a well-shaped GEMM reaches). It is
    // the best FLOP/s of a large square GEMM and of every GEMM in the sweep, per dtype.
    std::vector<double> peak(3, 0.0);
    std::vector<GemmPoint> peak_points, points;
    for (DType t : types) {
      int n = cuda ? (t == DType::kF32 ? 4096 : 8192) : (t == DType::kF32 ? (quick ? 512 : 1024) : 512);
      peak_points.push_back(gemm_point(be, t, {n, n, n, "peak"}, mt, 100));
      wrong += peak_points.back().wrong;
      peak[int(t)] = std::max(peak[int(t)], peak_points.back().flop_per_s);
    }
    std::vector<GemmShape> shapes;
    std::vector<int> squares = cuda ? std::vector<int>{256, 512, 1024, 2048, 4096, 8192}
                                    : (quick ? std::vector<int>{64, 128, 256} : std::vector<int>{64, 128, 256, 512, 768});
    for (int n : squares) shapes.push_back({n, n, n, "square"});
    // Transformer shapes (tokens x hidden): QKV, attention out, MLP up, MLP down.
    int tok = cuda ? 8192 : (quick ? 256 : 512), h = cuda ? 4096 : (quick ? 256 : 512);
    shapes.push_back({tok, 3 * h, h, "qkv"});
    shapes.push_back({tok, h, h, "attn_out"});
    shapes.push_back({tok, 4 * h, h, "mlp_up"});
    shapes.push_back({tok, h, 4 * h, "mlp_down"});
    for (const auto& s : opts.model_gemm_shapes) shapes.push_back({s[0], s[1], s[2], "model"});
    for (DType t : types)
      for (const auto& s : shapes) {
        if (!cuda && t != DType::kF32 && s.m * double(s.n) * s.k > 3e7 && std::string(s.label) != "model")
          continue;  // emulated narrow GEMMs: small shapes only
        points.push_back(gemm_point(be, t, s, mt, 200 + s.m + s.n));
        wrong += points.back().wrong;
        peak[int(t)] = std::max(peak[int(t)], points.back().flop_per_s);
      }
    peak_f32 = peak[int(DType::kF32)];
    w.key("peak_flop_per_s").begin_object();
    sum << "# peak = best GEMM FLOP/s per dtype (large square GEMM and the sweep)\n";
    for (const auto& p : peak_points) {
      w.key(to_string(p.type)).begin_object().kv("flop_per_s", peak[int(p.type)])
          .kv("large_gemm_flop_per_s", p.flop_per_s).kv("large_gemm_n", p.shape.n)
          .kv("wrong", uint64_t(p.wrong)).end_object();
      char line[160];
      std::snprintf(line, sizeof line, "  %-5s peak %10.4f TFLOP/s (large gemm %d^3: %10.4f TFLOP/s, #wrong %zu)\n",
                    to_string(p.type), peak[int(p.type)] / 1e12, p.shape.n, p.flop_per_s / 1e12, p.wrong);
      sum << line;
    }
    w.end_object();
    w.key("gemm").begin_array();
    sum << "# gemm efficiency = achieved / peak of the same dtype\n";
    for (const auto& p : points) {
      const auto& s = p.shape;
      double eff = peak[int(p.type)] > 0 ? p.flop_per_s / peak[int(p.type)] : 0;
      w.begin_object().kv("dtype", to_string(p.type)).kv("label", s.label).kv("m", s.m).kv("n", s.n).kv("k", s.k)
          .kv("time_s", p.time_s).kv("flop", p.flop).kv("flop_per_s", p.flop_per_s).kv("efficiency", eff)
          .kv("sampled", uint64_t(p.sampled)).kv("wrong", uint64_t(p.wrong)).end_object();
      char line[200];
      std::snprintf(line, sizeof line, "  gemm %-5s %-8s m=%-5d n=%-5d k=%-5d %10.3f ms %9.4f TFLOP/s eff %5.3f #wrong %zu\n",
                    to_string(p.type), s.label, s.m, s.n, s.k, p.time_s * 1e3, p.flop_per_s / 1e12, eff, p.wrong);
      sum << line;
    }
    w.end_array();

    // Memory-bound and attention ops. Bytes are the minimum traffic (each input read once,
    // each output written once); efficiency is against the measured copy bandwidth.
    std::vector<MemOp> mem;
    std::vector<size_t> sizes = cuda ? std::vector<size_t>{size_t(1) << 24, size_t(1) << 27}
                                     : (quick ? std::vector<size_t>{size_t(1) << 18} : std::vector<size_t>{size_t(1) << 18, size_t(1) << 21});
    // Memory bandwidth: a copy larger than the last-level cache.
    double copy_bw = 0;
    {
      size_t n = cuda ? (size_t(1) << 28) : (quick ? (size_t(1) << 22) : (size_t(1) << 23));
      DeviceArray<float> x(be, n), y(be, n);
      x.zero();
      double t = median_time(be, [&] { be.copy_device(y.data(), x.data(), n * 4); }, mt);
      copy_bw = 8.0 * n / t;
      mem.push_back({"copy", "n=" + std::to_string(n), 8.0 * n, 0, t});
    }
    for (size_t n : sizes) {
      DeviceArray<float> x(be, n), y(be, n), g(be, n), m(be, n), v(be, n);
      auto hx = random_floats(n, 5);
      x.upload(hx);
      g.upload(hx);
      m.zero();
      v.zero();
      std::string sh = "n=" + std::to_string(n);
      auto add = [&](const std::string& op, double bytes, double flop, const std::function<void()>& fn) {
        mem.push_back({op, sh, bytes, flop, median_time(be, fn, mt)});
      };
      add("copy", 8.0 * n, 0, [&] { be.copy_device(y.data(), x.data(), n * 4); });
      add("gelu_fwd", 8.0 * n, 0, [&] { be.gelu_fwd(n, x.data(), y.data()); });
      add("gelu_bwd", 12.0 * n, 0, [&] { be.gelu_bwd(n, x.data(), g.data(), y.data()); });
      int cols = 1024, rows = int(n / cols);
      DeviceArray<float> gamma(be, cols), beta(be, cols), mean(be, rows), rstd(be, rows);
      gamma.upload(std::vector<float>(cols, 1.0f));
      beta.zero();
      add("layernorm_fwd", 8.0 * n, 0, [&] { be.layernorm_fwd(rows, cols, x.data(), gamma.data(), beta.data(), 1e-5f, y.data(), mean.data(), rstd.data()); });
      int f = 512, srows = int(n / (2 * f));
      add("swiglu_fwd", 6.0 * n, 0, [&] { be.swiglu_fwd(srows, f, x.data(), y.data()); });
      int vocab = cuda ? 50304 : 8192, xrows = int(n / vocab);
      if (xrows > 0) {
        DeviceArray<int32_t> tg(be, xrows);
        tg.zero();
        DeviceArray<float> losses(be, xrows);
        add("softmax_xent", 8.0 * xrows * vocab, 0, [&] { be.softmax_xent(xrows, vocab, x.data(), tg.data(), losses.data(), y.data(), 1.0f); });
      }
      add("adamw", 28.0 * n, 0, [&] { be.adamw(n, y.data(), g.data(), m.data(), v.data(), 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f, 1); });
      for (QuantFormat qf : {QuantFormat::kInt8, QuantFormat::kInt4, QuantFormat::kFp8E4M3}) {
        size_t pb = quant_payload_bytes(qf, n, 128);
        DeviceArray<uint8_t> payload(be, pb);
        add(std::string("quantize_") + to_string(qf), 4.0 * n + pb, 0, [&] { be.quantize(qf, n, 128, x.data(), payload.data()); });
        add(std::string("dequantize_") + to_string(qf), 4.0 * n + pb, 0, [&] { be.dequantize(qf, n, 128, payload.data(), y.data(), false); });
      }
      DeviceArray<uint8_t> sp(be, sparse24_payload_bytes(n));
      add("sparsify_2of4", 4.0 * n + sparse24_payload_bytes(n), 0, [&] { be.sparsify_2of4(n, x.data(), sp.data()); });
      size_t k = n / 100;
      DeviceArray<float> tv(be, k);
      DeviceArray<int32_t> ti(be, k);
      add("top_k_1pct", 4.0 * n + 8.0 * k, 0, [&] { be.top_k(n, k, x.data(), tv.data(), ti.data()); });
    }
    // Attention: causal FLOPs, fwd 2*b*h*s^2*d (two s x s x d matmuls, half masked),
    // bwd 2.5x fwd (five matmuls instead of two; FlashAttention-2 paper's convention).
    std::vector<int> seqs = cuda ? std::vector<int>{512, 1024, 2048} : (quick ? std::vector<int>{128} : std::vector<int>{128, 256, 512});
    for (int s : seqs) {
      int b = cuda ? 2 : 1, hh = cuda ? 16 : 4, d = cuda ? 128 : 64;
      size_t n = size_t(b) * s * hh * d;
      DeviceArray<float> q(be, n), kk(be, n), vv(be, n), o(be, n), lse(be, size_t(b) * hh * s), dq(be, n), dk(be, n), dv(be, n);
      auto hq = random_floats(n, 9);
      q.upload(hq);
      kk.upload(hq);
      vv.upload(hq);
      std::string sh = "batch=" + std::to_string(b) + " seq=" + std::to_string(s) + " heads=" + std::to_string(hh) +
                       " head_dim=" + std::to_string(d);
      double fl = 2.0 * b * hh * double(s) * s * d;
      mem.push_back({"attention_fwd", sh, 16.0 * n, fl,
                     median_time(be, [&] { be.attention_fwd(b, s, hh, d, q.data(), kk.data(), vv.data(), o.data(), lse.data()); }, mt)});
      mem.push_back({"attention_bwd", sh, 32.0 * n, 2.5 * fl,
                     median_time(be, [&] { be.attention_bwd(b, s, hh, d, q.data(), kk.data(), vv.data(), o.data(), lse.data(), o.data(), dq.data(), dk.data(), dv.data()); }, mt)});
    }
    w.kv("memory_bandwidth_bytes_per_s", copy_bw);
    w.key("ops").begin_array();
    sum << "# other ops (efficiency: bandwidth ops vs copy bandwidth " << copy_bw / 1e9
        << " GB/s; attention vs f32 peak)\n";
    for (const auto& m : mem) {
      w.begin_object().kv("op", m.op).kv("shape", m.shape).kv("time_s", m.time_s).kv("bytes", m.bytes);
      double eff;
      if (m.flop > 0) {
        double fps = m.flop / m.time_s;
        eff = peak[int(DType::kF32)] > 0 ? fps / peak[int(DType::kF32)] : 0;
        w.kv("flop", m.flop).kv("flop_per_s", fps).kv("efficiency", eff);
      } else {
        double bps = m.bytes / m.time_s;
        eff = copy_bw > 0 ? bps / copy_bw : 0;
        w.kv("bytes_per_s", bps).kv("efficiency", eff);
      }
      w.end_object();
      char line[220];
      std::snprintf(line, sizeof line, "  %-18s %-44s %10.3f ms  %8.2f GB/s  eff %5.3f\n", m.op.c_str(), m.shape.c_str(),
                    m.time_s * 1e3, m.bytes / m.time_s / 1e9, eff);
      sum << line;
    }
    w.end_array();
  }

  // 3. Collectives (all ranks), nccl-tests style, then an alpha-beta fit per op.
  comm.idle_barrier();  // the other ranks slept while rank 0 timed the ops
  double wrong_all = double(wrong);
  comm.all_reduce_f64(&wrong_all, 1, ReduceOp::kMax);  // ranks agree whether to go on
  comm.all_reduce_f64(&peak_f32, 1, ReduceOp::kMax);
  if (wrong_all == 0 && opts.model_shape.layers > 0 && peak_f32 > 0)
    time_model_ops(be, comm, opts.model_shape, peak_f32, mt, w, sum);
  if (wrong_all == 0) {
    size_t cap = opts.max_collective_bytes ? opts.max_collective_bytes
                                                 : (cuda ? (size_t(1) << 30) : (quick ? (size_t(1) << 20) : (size_t(1) << 24)));
    std::vector<size_t> sizes;
    if (opts.check_only) cap = std::min<size_t>(cap, 64u << 10);
    for (size_t b = 8; b <= cap; b *= (quick || opts.check_only ? 16 : 4)) sizes.push_back(b);
    if (sizes.back() != cap) sizes.push_back(cap);
    // And the messages the train job sends, so that its collectives are priced at sizes measured
    // rather than between the sweep's points: an activation (TP all-reduce, pipeline send) and a
    // stage's gradient (the DP reduction; ZeRO-1's reduce-scatter input and all-gather output).
    const ModelOpShape& ms = opts.model_shape;
    const size_t activation_size = ms.layers > 0 ? size_t(ms.micro_batch) * ms.seq * ms.hidden * sizeof(float) : 0;
    std::vector<size_t> gradient_sizes;
    if (!opts.check_only && ms.layers > 0) {
      sizes.push_back(activation_size);
      for (int st = 0; st < ms.pp; ++st) gradient_sizes.push_back(stage_param_count(ms, st) * sizeof(float));
      sizes.insert(sizes.end(), gradient_sizes.begin(), gradient_sizes.end());
      std::sort(sizes.begin(), sizes.end());
      sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    }
    // On the cpu backend the job's own messages are timed after the compute the trainer runs
    // before them: an activation after one layer's GEMMs, a gradient after a step's (the stage's
    // layers x micro-batches x 3 passes). A core's clock after sustained AVX-512 work slows the
    // communicator's copies and reductions until it recovers: a 3.45 MB reduce-scatter on 2 ranks
    // takes about 1.6 ms alone, 2.2 ms after 5 ms of GEMMs and 2.9 ms after 20 ms (Open MPI 4.1,
    // vader); the same holds for all-reduce and all-gather, small messages included.
    const bool job_bursts = !cuda && !opts.check_only && ms.layers > 0;
    const int bT = job_bursts ? ms.micro_batch * ms.seq : 1, bh = job_bursts ? ms.hidden : 1;
    const int bhl = job_bursts ? ms.hidden / ms.tp : 1, bfl = job_bursts ? 4 * ms.hidden / ms.tp : 1;
    DeviceArray<float> ba(be, size_t(bT) * bh), bwq(be, size_t(bh) * bhl), bq(be, size_t(bT) * bhl),
        bwo(be, size_t(bhl) * bh), by(be, size_t(bT) * bh), bw1(be, size_t(bh) * bfl), bu(be, size_t(bT) * bfl),
        bw2(be, size_t(bfl) * bh);
    for (DeviceArray<float>* a : {&ba, &bwq, &bq, &bwo, &by, &bw1, &bu, &bw2}) a->zero();
    const auto layer_gemms = [&](int times) {
      for (int t = 0; t < times; ++t)
        layer_forward_gemms(be, bT, bh, bhl, bfl, ba.data(), bwq.data(), bq.data(), bq.data(), bwo.data(), by.data(),
                            bw1.data(), bu.data(), bu.data(), bw2.data());
    };
    const int step_layers = std::max(1, ms.layers / std::max(1, ms.pp)) * ms.micro_batches * 3;
    auto burst_before = [&](size_t b) -> std::function<void()> {
      if (!job_bursts) return {};
      if (std::find(gradient_sizes.begin(), gradient_sizes.end(), b) != gradient_sizes.end())
        return [&, step_layers] { layer_gemms(step_layers); };
      if (b == activation_size) return [&] { layer_gemms(1); };
      return {};
    };
    const std::string fabric = fabric_of(comm);
    if (root) {
      w.key("collectives").begin_array();
      sum << "# collectives over " << comm.size() << " rank(s), " << comm.name() << ", fabric " << fabric << "\n"
          << "#  op                 size(B)     time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n";
    }
    auto emit = [&](const std::string& op, const std::vector<CollectiveRun>& runs, CollectiveKind kind,
                    const std::string& algorithm) {
      std::vector<double> xs, ts;
      for (const auto& r : runs) { xs.push_back(double(r.bytes)); ts.push_back(std::max(r.time_s, 1e-9)); }
      auto fit = fit_alpha_beta(xs, ts);
      if (!root) return;
      double bf = bus_bandwidth_factor(kind, comm.size());
      w.begin_object().kv("op", op).kv("algorithm", algorithm).kv("fabric", fabric).kv("ranks", comm.size())
          .kv("alpha_s", fit.alpha_s).kv("beta_s_per_byte", fit.beta_s_per_byte)
          .kv("bandwidth_bytes_per_s", fit.beta_s_per_byte > 0 ? 1.0 / fit.beta_s_per_byte : 0.0)
          .kv("bus_bandwidth_bytes_per_s", fit.beta_s_per_byte > 0 ? bf / fit.beta_s_per_byte : 0.0)
          .kv("fit_max_rel_error", fit.max_rel_error);
      w.key("samples").begin_array();
      for (const auto& r : runs) {
        w.begin_object().kv("bytes", uint64_t(r.bytes)).kv("time_s", r.time_s).kv("algbw_bytes_per_s", r.algbw_bytes_per_s)
            .kv("busbw_bytes_per_s", r.busbw_bytes_per_s).kv("wrong", uint64_t(r.wrong)).end_object();
        char line[200];
        std::snprintf(line, sizeof line, "  %-18s %11zu %12.2f %12.3f %12.3f %7zu\n", op.c_str(), r.bytes, r.time_s * 1e6,
                      r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9, r.wrong);
        sum << line;
      }
      w.end_array().end_object();
      char line[200];
      std::snprintf(line, sizeof line, "  fit %-14s [%s] alpha %.3f us  beta^-1 %.3f GB/s  busbw %.3f GB/s  (max rel err %.2f)\n",
                    op.c_str(), algorithm.c_str(), fit.alpha_s * 1e6, fit.beta_s_per_byte > 0 ? 1e-9 / fit.beta_s_per_byte : 0.0,
                    fit.beta_s_per_byte > 0 ? 1e-9 * bf / fit.beta_s_per_byte : 0.0, fit.max_rel_error);
      sum << line;
    };
    // On the cpu backend each call is timed alone, as the trainer issues it (see
    // CollectiveTiming); cuda keeps nccl-tests' back-to-back loop, so that its bus bandwidths
    // compare with nccl-tests reports.
    for (auto kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
                      CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
      std::vector<CollectiveRun> runs;
      for (size_t b : sizes) {
        int iters = b <= (64u << 10) ? 20 : (b <= (4u << 20) ? 5 : 2);
        runs.push_back(cuda ? run_collective(be, comm, kind, b, 2, iters, CollectiveTiming::kBackToBack)
                            : run_collective(be, comm, kind, b, 2, std::max(iters, 7), CollectiveTiming::kIsolated,
                                             burst_before(b)));
        wrong += root ? runs.back().wrong : 0;
      }
      emit(to_string(kind), runs, kind, comm.name());
    }
    // All-reduces we implement ourselves, checked against the exact sum within `tol` and timed
    // including everything they do: the ring over send/recv (algorithm "ring"), and the
    // compressed all-reduce (quantize, all-to-all, dequantize+sum, quantize, all-gather,
    // dequantize) with per-64 scales.
    const int p = comm.size();
    auto custom_all_reduce = [&](const std::string& op, size_t unit_elems, double tol,
                                 const std::function<void(float*, size_t)>& fn) {
      std::vector<CollectiveRun> runs;
      const size_t unit = unit_elems * sizeof(float);
      for (size_t b : sizes) {
        if (b < unit) continue;
        size_t n = b / unit * unit / sizeof(float);
        std::vector<float> h(n);
        for (size_t i = 0; i < n; ++i) h[i] = float((comm.rank() + 1) * int(i % 7 + 1));
        DeviceArray<float> x(be, n);
        x.upload(h);
        int iters = b <= (64u << 10) ? 10 : 2;  // in place: values grow by p per run, finite for these counts
        fn(x.data(), n);
        be.synchronize();
        comm.barrier();
        auto t0 = Clock::now();
        for (int i = 0; i < iters; ++i) fn(x.data(), n);
        be.synchronize();
        double t = std::chrono::duration<double>(Clock::now() - t0).count() / iters;
        comm.all_reduce_f64(&t, 1, ReduceOp::kMax);
        x.upload(h);  // the checked run starts from the inputs again
        fn(x.data(), n);
        auto got = x.download();
        double wr = 0;
        for (size_t i = 0; i < n; ++i) {
          double exact = double(p) * (p + 1) / 2 * double(i % 7 + 1);
          if (!(std::fabs(got[i] - exact) <= tol)) wr += 1;
        }
        comm.all_reduce_f64(&wr, 1, ReduceOp::kSum);
        CollectiveRun r;
        r.bytes = n * sizeof(float);
        r.time_s = t;
        r.wrong = size_t(wr);
        r.algbw_bytes_per_s = r.bytes / t;
        r.busbw_bytes_per_s = r.algbw_bytes_per_s * bus_bandwidth_factor(CollectiveKind::kAllReduce, p);
        runs.push_back(r);
        wrong += root ? r.wrong : 0;
      }
      if (!runs.empty()) emit(op, runs, CollectiveKind::kAllReduce, op == "all_reduce" ? "ring" : comm.name());
    };
    if (p > 1) custom_all_reduce("all_reduce", size_t(p), 0.0, [&](float* x, size_t n) { ring_all_reduce(be, comm, x, n); });
    for (auto ck : {CompressionKind::kInt8, CompressionKind::kFp8, CompressionKind::kInt4}) {
      CompressionSpec spec{ck, 64, 0.01};
      // Bound: each rank's quantization error plus the re-quantization of the sum.
      double rel = ck == CompressionKind::kInt8 ? 0.5 / 127 : ck == CompressionKind::kInt4 ? 0.5 / 7 : 1.0 / 16;
      double max_single = 7.0 * p, max_sum = 7.0 * p * (p + 1) / 2;
      double tol = rel * (p * max_single + max_sum) * 1.001;
      custom_all_reduce(std::string("all_reduce_compressed_") + to_string(ck), size_t(p) * 64, tol,
                        [&](float* x, size_t n) { compressed_all_reduce(be, comm, spec, x, n, nullptr); });
    }
    if (root) w.end_array();
  }
  w.kv("wrong", uint64_t(wrong));
  w.end_object();
  double total = double(wrong);
  comm.all_reduce_f64(&total, 1, ReduceOp::kSum);
  outcome.wrong = size_t(total);
  if (root) {
    outcome.json = w.str() + "\n";
    sum << "# total #wrong: " << outcome.wrong << "\n";
    outcome.summary = sum.str();
  }
  return outcome;
}

}  // namespace trainsim::kernels
