// Runs under mpiexec (ctest label "mpi"): collectives, compressed all-reduce and the parallel
// trainer against single-rank training, on however many ranks it is launched with.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/collective_check.hpp"
#include "kernels/compressed_collectives.hpp"
#include "kernels/cpu_backend.hpp"
#include "kernels/ring_collectives.hpp"
#include "kernels/trainer.hpp"

namespace trainsim::kernels {
namespace {

Communicator* g_world = nullptr;

TEST(MpiCollectives, EveryCollectiveIsCorrectAtEverySize) {
  CpuBackend be;
  for (auto kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
                    CollectiveKind::kAllToAll, CollectiveKind::kSendRecv})
    for (size_t bytes : {8ul, 1000ul, 65536ul, 1ul << 20})
      for (auto timing : {CollectiveTiming::kBackToBack, CollectiveTiming::kIsolated}) {
        SCOPED_TRACE(std::string(to_string(kind)) + " " + std::to_string(bytes) +
                     (timing == CollectiveTiming::kIsolated ? " isolated" : " back to back"));
        auto run = run_collective(be, *g_world, kind, bytes, 1, 3, timing);
        EXPECT_EQ(run.wrong, 0u);
        EXPECT_GT(run.time_s, 0.0);
      }
}

TEST(MpiCollectives, CompressedAllReduceIsCloseToTheExactSum) {
  CpuBackend be;
  const int p = g_world->size(), r = g_world->rank();
  const size_t n = size_t(p) * 64 * 16;
  for (auto kind : {CompressionKind::kInt8, CompressionKind::kFp8, CompressionKind::kInt4}) {
    SCOPED_TRACE(to_string(kind));
    std::vector<float> x(n), exact(n, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      for (int q = 0; q < p; ++q) exact[i] += std::sin(0.01f * i * (q + 1));
      x[i] = std::sin(0.01f * i * (r + 1));
    }
    compressed_all_reduce(be, *g_world, {kind, 64, 0.01}, x.data(), n, nullptr);
    double err = 0, ref = 0;
    for (size_t i = 0; i < n; ++i) { err += (x[i] - exact[i]) * (x[i] - exact[i]); ref += exact[i] * exact[i]; }
    double bound = kind == CompressionKind::kInt8 ? 0.01 : kind == CompressionKind::kFp8 ? 0.05 : 0.15;
    EXPECT_LT(std::sqrt(err / ref), bound);
  }
}

TEST(MpiCollectives, RingAllReduceSumsExactly) {
  CpuBackend be;
  const int p = g_world->size(), r = g_world->rank();
  for (size_t n : {1ul, 7ul, 1000ul, 65537ul}) {
    SCOPED_TRACE(n);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = float((r + 1) * int(i % 5 + 1));
    ring_all_reduce(be, *g_world, x.data(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(x[i], float(p * (p + 1) / 2 * int(i % 5 + 1))) << "element " << i;
  }
}

struct Layout { int tp, pp, dp, zero; };

TEST(MpiTrainer, ParallelLossCurveMatchesSingleRank) {
  const int n = g_world->size();
  std::vector<Layout> layouts;
  if (n == 8) layouts = {{2, 2, 2, 1}, {2, 2, 2, 0}};
  if (n == 4) layouts = {{2, 2, 1, 1}, {2, 1, 2, 1}, {1, 2, 2, 0}, {1, 4, 1, 1}};
  if (n == 2) layouts = {{2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 2, 0}};
  if (layouts.empty()) GTEST_SKIP() << "run with 2, 4 or 8 ranks";
  TrainConfig c;
  c.model = {.layers = 4, .hidden = 32, .heads = 4, .seq = 16, .vocab = 256, .seed = 99};
  c.global_batch = 8;
  c.micro_batch = 2;
  c.steps = 6;
  c.compression = parse_compression_schedule("none", 1, 64, 0.01);
  std::vector<double> single;
  if (g_world->rank() == 0) {
    CpuBackend be;
    auto self = make_self_communicator();
    for (const auto& l : train_gpt(be, *self, c)) single.push_back(l.loss);
  }
  for (const auto& lay : layouts) {
    SCOPED_TRACE("tp " + std::to_string(lay.tp) + " pp " + std::to_string(lay.pp) + " dp " + std::to_string(lay.dp) +
                 " zero " + std::to_string(lay.zero));
    auto pc = c;
    pc.tp = lay.tp;
    pc.pp = lay.pp;
    pc.dp = lay.dp;
    pc.zero = lay.zero;
    CpuBackend be;
    auto logs = train_gpt(be, *g_world, pc);
    if (g_world->rank() != 0) continue;
    ASSERT_EQ(logs.size(), single.size());
    for (size_t i = 0; i < logs.size(); ++i) {
      // fp32 with a different summation order (TP partial sums, DP reduction): ~1e-7 relative
      // per step, growing slowly with steps.
      EXPECT_NEAR(logs[i].loss, single[i], 1e-5 * single[i]) << "step " << i;
      if (lay.tp > 1) { EXPECT_GT(logs[i].bytes_tp, 0.0); }
      if (lay.pp > 1) { EXPECT_GT(logs[i].bytes_pp, 0.0); }
      if (lay.dp > 1) { EXPECT_GT(logs[i].bytes_dp, 0.0); }
    }
  }
}

}  // namespace
}  // namespace trainsim::kernels

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc;
  {
    auto world = trainsim::kernels::make_world_communicator();
    trainsim::kernels::g_world = world.get();
    if (world->rank() != 0) {  // one rank reports
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    rc = RUN_ALL_TESTS();
    double bad = rc;
    world->all_reduce_f64(&bad, 1, trainsim::kernels::ReduceOp::kMax);
    rc = bad != 0;
  }
  trainsim::kernels::finalize_world();
  return rc;
}
