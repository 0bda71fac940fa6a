#include "models/workload/program_reduce.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <iterator>
#include <vector>

namespace trainsim {

const char* to_string(CommPurpose p) {
  switch (p) {
    case CommPurpose::kTp: return "tp";
    case CommPurpose::kCp: return "cp";
    case CommPurpose::kEp: return "ep";
    case CommPurpose::kDp: return "dp";
    case CommPurpose::kPp: return "pp";
  }
  return "?";
}

const char* to_string(CommGroup g) {
  switch (g) {
    case CommGroup::kTp: return "tp";
    case CommGroup::kCp: return "cp";
    case CommGroup::kEp: return "ep";
    case CommGroup::kDp: return "dp";
    case CommGroup::kExpertDp: return "expert_dp";
    case CommGroup::kEpInter: return "ep_inter";
    case CommGroup::kEpIntra: return "ep_intra";
    case CommGroup::kDpShard: return "dp_shard";
    case CommGroup::kDpReplicate: return "dp_replicate";
    case CommGroup::kDpSecondary: return "dp_secondary";
    case CommGroup::kDpShardIntra: return "dp_shard_intra";
    case CommGroup::kDpShardInter: return "dp_shard_inter";
  }
  return "?";
}

const char* to_string(PassKind k) {
  switch (k) {
    case PassKind::kForward: return "F";
    case PassKind::kBackward: return "B+W";
    case PassKind::kBackwardInput: return "B";
    case PassKind::kBackwardWeight: return "W";
  }
  return "?";
}

double OpBlock::compute_total_s() const {
  double s = 0;
  for (double c : compute_s) s += c;
  return s * repeat;
}

double PassProgram::compute_total_s() const {
  double s = 0;
  for (const OpBlock& b : blocks) s += b.compute_total_s();
  return s;
}

double PassCost::exposed_total_s() const {
  double s = 0;
  for (double e : exposed_s) s += e;
  return s;
}

double overlap_slowdown(const GpuSpec& gpu) {
  constexpr double kNcclChannels = kOverlapChannels;
  // SMs per generation when the preset does not say: V100 80, A100 108, Hopper 132 (NVIDIA
  // architecture whitepapers), told apart by their dense 16-bit peaks.
  double sms = gpu.kernel.sm_count;
  if (sms <= 0) {
    const double peak = std::max(gpu.peak_flops_bf16, gpu.peak_flops_fp16);
    sms = peak > 600e12 ? 132 : peak > 200e12 ? 108 : 80;
  }
  return kNcclChannels / (sms - kNcclChannels);
}

namespace {

// A block's state is compared from the state after this many repetitions on (the first
// repetition issues its own prefetches, so the state after it is not yet a repeating one).
constexpr int kSteadyCheckFrom = 2;
// Running collectives a player tracks one by one before it merges touching ones (run_beside).
constexpr std::size_t kMergeFrom = 64;
// Two states are the same when their times, seen from their clocks, differ by at most this
// share of a repetition: rounding of the clock's growing sum, far below any op.
constexpr double kSteadyTolerance = 1e-9;

// The layout save() writes: the clock and async_end_, the streams' free times, the costs
// (time, compute, slowdown, exposed by purpose, async tail, async busy), the prefetched copies,
// the count of running collectives and 4 doubles for each.
constexpr std::size_t kStreamsAt = 2;
constexpr std::size_t kCostsAt = kStreamsAt + kCommStreams;
constexpr std::size_t kPrefetchedAt = kCostsAt + 5 + kCommPurposes;

struct Interval {
  double start, end;
  CommPurpose purpose;
  double sm_share;  // CommOp::sm_share
};

class PassPlayer {
 public:
  // A new pass, keeping the buffers (one player per thread: no allocation per pass).
  void reset(double sigma, bool steady_jump = true) {
    sigma_ = sigma;
    steady_jump_ = steady_jump;
    t_ = 0;
    async_end_ = 0;
    stream_free_.fill(0.0);
    active_.clear();
    cost_ = PassCost{};
  }

  void play_block(const OpBlock& b) {
    begin_block(b);
    const int last = b.repeat - 1;
    // Repetitions that issue a prefetch (all but the last): played until the state repeats
    // (steady()), then the rest at once (advance()).
    std::vector<double>*prev = &prev_state_, *cur = &cur_state_;
    for (int r = 0; r < last; ++r) {
      play_repetition(b, r, true);
      if (!steady_jump_ || r + 1 < kSteadyCheckFrom) continue;
      cur->clear();
      save(*cur);
      if (r + 1 > kSteadyCheckFrom && steady(prev->data(), cur->data(), cur->size(), prev->size())) {
        advance(prev->data(), cur->data(), last - (r + 1));
        break;
      }
      std::swap(prev, cur);
    }
    play_repetition(b, last, false);
  }

  // Per block: the buffers of its repetitions, and the collectives issued after each op
  // (ascending index), listed once: each repetition issues them in the order a scan of b.comm
  // would.
  void begin_block(const OpBlock& b) {
    const int n = static_cast<int>(b.compute.size());
    ready_.resize(n + 1);
    binding_.resize(n + 1);
    prefetched_.assign(b.comm.size(), -1.0);  // end of the copy issued for the next repetition
    std::vector<int>& first_after = first_after_;  // [i, i+1): ops' ranges in issued_after
    std::vector<int>& issued_after = issued_after_;
    // A counting sort on `after`, stable in k: ascending k within each op's range.
    first_after.assign(n + 2, 0);
    int issued = 0;
    for (const CommOp& c : b.comm)
      if (!c.prefetch && c.after >= 0 && c.after < n) ++first_after[c.after + 1], ++issued;
    for (int i = 0; i < n; ++i) first_after[i + 1] += first_after[i];
    issued_after.resize(static_cast<std::size_t>(issued));
    fill_at_ = first_after;
    for (std::size_t k = 0; k < b.comm.size(); ++k) {
      const CommOp& c = b.comm[k];
      if (!c.prefetch && c.after >= 0 && c.after < n) issued_after[fill_at_[c.after]++] = static_cast<int>(k);
    }
  }

  // Repetition r of the block begun last; `more`: another repetition follows (this one issues
  // its prefetches).
  void play_repetition(const OpBlock& b, int r, bool more) {
    ++played_;
    const int n = static_cast<int>(b.compute.size());
    // When each op's inputs are ready and which collective held it last.
    std::vector<double>& ready = ready_;
    std::vector<int>& binding = binding_;
    std::vector<double>& prefetched = prefetched_;
    std::fill(ready.begin(), ready.end(), 0.0);
    std::fill(binding.begin(), binding.end(), -1);
    const double rep_start = t_;
    for (std::size_t k = 0; k < b.comm.size(); ++k) {
      const CommOp& c = b.comm[k];
      if (c.prefetch) {
        // This repetition's copy (issued one repetition ahead, or now for the first).
        const double end = r == 0 ? issue(c, rep_start) : prefetched[k];
        need(ready, binding, c, static_cast<int>(k), end);
        prefetched[k] = more ? issue(c, rep_start) : -1.0;
      } else if (c.after < 0) {
        need(ready, binding, c, static_cast<int>(k), issue(c, rep_start));
      }
    }
    for (int i = 0; i < n; ++i) {
      wait_for(b, ready[i], binding[i]);
      const double start = t_;
      t_ = stretched_end(start, b.compute_s[i]);
      cost_.compute_s += b.compute_s[i];
      cost_.slowdown_s += t_ - start - b.compute_s[i];
      for (int j = first_after_[i]; j < first_after_[i + 1]; ++j) {
        const int k = issued_after_[j];
        need(ready, binding, b.comm[k], k, issue(b.comm[k], t_));
      }
    }
    wait_for(b, ready[n], binding[n]);
    drop_finished(t_);
  }

  // True when `cur`, the state save() wrote after a repetition, is `prev`, the state after the
  // one before, seen from each one's clock, to rounding: every later repetition then starts
  // where this one did and repeats its steps. Times that no later op can tell apart (a stream
  // free, a copy or a collective's end already past, a collective's start before the clock)
  // count as the clock. The accumulated costs are not compared: they only add up.
  bool steady(const double* prev, const double* cur, std::size_t cur_size, std::size_t prev_size) const {
    if (cur_size != prev_size) return false;
    const double dt = cur[0] - prev[0];
    if (!(dt > 0)) return false;
    const double tol = kSteadyTolerance * dt;
    auto same_time = [&](double a, double b) {
      return std::abs(std::max(0.0, b - cur[0]) - std::max(0.0, a - prev[0])) <= tol;
    };
    for (std::size_t i = 1; i < kCostsAt; ++i)  // async_end_ and the streams
      if (!same_time(prev[i], cur[i])) return false;
    std::size_t i = kPrefetchedAt;  // the costs are not compared
    for (std::size_t k = 0; k < prefetched_.size(); ++k, ++i)
      if ((prev[i] < 0) != (cur[i] < 0) || (cur[i] >= 0 && !same_time(prev[i], cur[i]))) return false;
    if (prev[i] != cur[i]) return false;  // collectives running
    for (++i; i < cur_size; i += 4)
      if (!same_time(prev[i], cur[i]) || !same_time(prev[i + 1], cur[i + 1]) || prev[i + 2] != cur[i + 2] ||
          prev[i + 3] != cur[i + 3])
        return false;
    return true;
  }

  // From the state `cur` (the player's now), `n` more repetitions of a steady block: each moves
  // every time by the last repetition's step and adds its costs again (prev: the state before it).
  void advance(const double* prev, const double* cur, int n) {
    if (n <= 0) return;
    const double k = n;
    const double dt = cur[0] - prev[0];
    t_ += k * dt;
    async_end_ += k * dt;
    for (double& f : stream_free_) f += k * dt;
    const double* d0 = prev + kCostsAt;
    const double* d1 = cur + kCostsAt;
    cost_.time_s += k * (d1[0] - d0[0]);
    cost_.compute_s += k * (d1[1] - d0[1]);
    cost_.slowdown_s += k * (d1[2] - d0[2]);
    for (int e = 0; e < kCommPurposes; ++e) cost_.exposed_s[e] += k * (d1[3 + e] - d0[3 + e]);
    cost_.async_tail_s += k * (d1[3 + kCommPurposes] - d0[3 + kCommPurposes]);
    cost_.async_busy_s += k * (d1[4 + kCommPurposes] - d0[4 + kCommPurposes]);
    for (double& p : prefetched_)
      if (p >= 0) p += k * dt;
    for (Interval& iv : active_) {
      iv.start += k * dt;
      iv.end += k * dt;
    }
  }

  // The state between two repetitions of the block begun last, appended to `out` as doubles:
  // the clock, the streams, the cost so far, the prefetched copies, the running collectives.
  void save(std::vector<double>& out) const {
    const std::size_t at = out.size();
    out.resize(at + kPrefetchedAt + prefetched_.size() + 1 + 4 * active_.size());
    double* o = out.data() + at;
    *o++ = t_;
    *o++ = async_end_;
    for (double f : stream_free_) *o++ = f;
    *o++ = cost_.time_s;
    *o++ = cost_.compute_s;
    *o++ = cost_.slowdown_s;
    for (double e : cost_.exposed_s) *o++ = e;
    *o++ = cost_.async_tail_s;
    *o++ = cost_.async_busy_s;
    for (double p : prefetched_) *o++ = p;
    *o++ = static_cast<double>(active_.size());
    for (const Interval& iv : active_) {
      *o++ = iv.start;
      *o++ = iv.end;
      *o++ = static_cast<double>(iv.purpose);
      *o++ = iv.sm_share;
    }
  }
  // Back to a state save() wrote for block b (begin_block(b) already called).
  void restore(const double* in) {
    t_ = *in++;
    async_end_ = *in++;
    for (double& f : stream_free_) f = *in++;
    cost_.time_s = *in++;
    cost_.compute_s = *in++;
    cost_.slowdown_s = *in++;
    for (double& e : cost_.exposed_s) e = *in++;
    cost_.async_tail_s = *in++;
    cost_.async_busy_s = *in++;
    for (double& p : prefetched_) p = *in++;
    const std::size_t active = static_cast<std::size_t>(*in++);
    active_.resize(active);
    for (Interval& iv : active_) {
      iv.start = in[0];
      iv.end = in[1];
      iv.purpose = static_cast<CommPurpose>(static_cast<int>(in[2]));
      iv.sm_share = in[3];
      in += 4;
    }
  }

  std::size_t played() const { return played_; }

  PassCost finish(double t0) {
    cost_.time_s = t_ - t0;
    cost_.async_tail_s = std::max(0.0, async_end_ - t_);
    return cost_;
  }

 private:
  // Starts collective c at `at` on its stream; returns when it ends.
  double issue(const CommOp& c, double at) {
    double& free = stream_free_[static_cast<int>(c.stream)];
    const double begin = std::max(at, free);
    const double end = begin + c.time_s;
    free = end;
    if (c.stream != CommStream::kInline && c.time_s > 0) run_beside(begin, end, c);
    if (c.waited_by < 0) {
      async_end_ = std::max(async_end_, end);
      cost_.async_busy_s += c.time_s;
    }
    return end;
  }

  // Records collective c as running over [begin, end). Where collectives are issued faster than
  // their streams run them (a backlog: ZeRO-3's reduce-scatters behind a short W pass), the
  // running set would grow by a few each repetition, and with it every state kept and every
  // compute op's stretch (quadratic in the layers). Past kMergeFrom running collectives, one
  // that starts the instant another of the same purpose and SM share ends extends it instead:
  // the two load the SMs exactly as the one does (the same share over the same span).
  void run_beside(double begin, double end, const CommOp& c) {
    if (active_.size() >= kMergeFrom)
      for (auto it = active_.rbegin(); it != active_.rend(); ++it)
        if (it->end == begin && it->purpose == c.purpose && it->sm_share == c.sm_share) {
          it->end = end;
          return;
        }
    active_.push_back({begin, end, c.purpose, c.sm_share});
  }

  static void need(std::vector<double>& ready, std::vector<int>& binding, const CommOp& c, int k, double end) {
    if (c.waited_by < 0) return;
    const int i = std::min<int>(c.waited_by, static_cast<int>(ready.size()) - 1);
    if (end > ready[i]) {
      ready[i] = end;
      binding[i] = k;
    }
  }

  void wait_for(const OpBlock& b, double ready, int binding) {
    if (ready > t_) {
      cost_.exposed_s[static_cast<int>(b.comm[binding].purpose)] += ready - t_;
      t_ = ready;
    }
  }

  // Compute of `work` seconds from `start` at 1 / (1 + sigma k) while collectives of other
  // streams run, k the sum of their SM shares (k collectives of NCCL's default channels).
  double stretched_end(double start, double work) {
    if (work <= 0) return start;
    // The collectives still running, in issue order (the order their shares are charged in).
    std::size_t kept = 0;
    for (std::size_t i = 0; i < active_.size(); ++i)
      if (active_[i].end > start) active_[kept++] = active_[i];
    if (kept < active_.size()) active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(kept), active_.end());
    if (active_.empty() || sigma_ <= 0) return start + work;
    std::vector<double>& cuts = cuts_;
    cuts.clear();
    for (const Interval& iv : active_) {
      if (iv.start > start) cuts.push_back(iv.start);
      cuts.push_back(iv.end);
    }
    // A handful of instants: insertion sort (the same ascending sequence std::sort gives).
    for (std::size_t i = 1; i < cuts.size(); ++i) {
      const double c = cuts[i];
      std::size_t j = i;
      for (; j > 0 && cuts[j - 1] > c; --j) cuts[j] = cuts[j - 1];
      cuts[j] = c;
    }
    double t = start, left = work;
    for (double cut : cuts) {
      if (cut <= t) continue;
      double k = 0;
      for (const Interval& iv : active_)
        if (iv.start <= t && iv.end > t) k += iv.sm_share;
      const double rate = 1.0 / (1.0 + sigma_ * k);
      const double done = (cut - t) * rate;
      const double seg = done >= left ? left / rate : cut - t;
      // The time beyond the work is what the concurrent collectives cost: theirs, by SM share.
      if (k > 0) {
        const double extra = seg - seg * rate;
        for (const Interval& iv : active_)
          if (iv.start <= t && iv.end > t)
            cost_.exposed_s[static_cast<int>(iv.purpose)] += extra * iv.sm_share / k;
      }
      if (done >= left) return t + seg;
      left -= done;
      t = cut;
    }
    return t + left;
  }

  // Collectives that ended by `t` slow no compute from then on (stretched_end skips them).
  void drop_finished(double t) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < active_.size(); ++i)
      if (active_[i].end > t) active_[kept++] = active_[i];
    active_.resize(kept);
  }

  double sigma_ = 0;
  bool steady_jump_ = true;
  double t_ = 0;
  double async_end_ = 0;
  std::array<double, kCommStreams> stream_free_{};
  std::vector<Interval> active_;
  PassCost cost_;
  std::vector<double> ready_, prefetched_, cuts_, prev_state_, cur_state_;
  std::vector<int> binding_, first_after_, issued_after_, fill_at_;
  std::size_t played_ = 0;  // repetitions played, over the thread's life
};

PassPlayer& player() {
  thread_local PassPlayer p;
  return p;
}

}  // namespace

std::size_t repetitions_played() { return player().played(); }

PassCost reduce_pass(const PassProgram& program, double sigma, bool steady_jump) {
  PassPlayer& p = player();
  p.reset(sigma, steady_jump);
  for (const OpBlock& b : program.blocks) p.play_block(b);
  return p.finish(0.0);
}

void RepeatedPass::start(const OpBlock* lead, const OpBlock& block, double sigma) {
  block_ = block;
  sigma_ = sigma;
  states_.clear();
  at_.clear();
  steady_at_ = 0;
  // The state after 0 repetitions: the lead played from idle streams.
  PassPlayer& p = player();
  p.reset(sigma_);
  if (lead) p.play_block(*lead);
  p.begin_block(block_);
  at_.push_back(states_.size());
  p.save(states_);
}

PassCost RepeatedPass::reduce(int repeat, const OpBlock* const* tail, std::size_t tails) {
  PassPlayer& p = player();
  const std::size_t before = static_cast<std::size_t>(std::max(1, repeat)) - 1;  // repetitions before the last
  p.reset(sigma_);
  p.begin_block(block_);
  auto state = [&](std::size_t k) { return states_.data() + at_[k]; };
  auto state_size = [&](std::size_t k) { return (k + 1 < at_.size() ? at_[k + 1] : states_.size()) - at_[k]; };
  if (steady_at_ > 0 && before > steady_at_) {
    // Past the repetition where the states began to repeat: from there at once, as play_block.
    p.restore(state(steady_at_));
    p.advance(state(steady_at_ - 1), state(steady_at_), static_cast<int>(before - steady_at_));
  } else {
    p.restore(state(std::min(before, at_.size() - 1)));
    // Repetitions not played yet by any reduce since start(): each one issues its prefetches (a
    // repetition follows it), and its state is kept, until the states repeat (play_block's test).
    for (std::size_t r = at_.size() - 1; r < before; ++r) {
      p.play_repetition(block_, static_cast<int>(r), true);
      at_.push_back(states_.size());
      p.save(states_);
      const std::size_t k = r + 1;
      if (k > static_cast<std::size_t>(kSteadyCheckFrom) &&
          p.steady(state(k - 1), state(k), state_size(k), state_size(k - 1))) {
        steady_at_ = k;
        p.advance(state(k - 1), state(k), static_cast<int>(before - k));
        break;
      }
    }
  }
  p.play_repetition(block_, static_cast<int>(before), false);
  for (std::size_t i = 0; i < tails; ++i) p.play_block(*tail[i]);
  return p.finish(0.0);
}

}  // namespace trainsim
