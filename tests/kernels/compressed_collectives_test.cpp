#include "kernels/compressed_collectives.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/collective_check.hpp"
#include "kernels/cpu_backend.hpp"
#include "kernels/op_check.hpp"

namespace trainsim::kernels {
namespace {

TEST(CompressedCollectives, SingleRankAllReduceIsCompressThenDecompress) {
  CpuBackend be;
  auto comm = make_self_communicator();
  const size_t n = 1024;
  auto x = random_floats(n, 5);
  for (auto kind : {CompressionKind::kNone, CompressionKind::kInt8, CompressionKind::kInt4,
                    CompressionKind::kFp8, CompressionKind::kSparse24, CompressionKind::kTopK}) {
    SCOPED_TRACE(to_string(kind));
    CompressionSpec spec{kind, 64, 0.1};
    auto y = x;
    std::vector<float> residual(n, 0.0f);
    compressed_all_reduce(be, *comm, spec, y.data(), n, residual.data());
    double err = 0, ref = 0;
    for (size_t i = 0; i < n; ++i) {
      err += (y[i] - x[i]) * (y[i] - x[i]);
      ref += x[i] * x[i];
      // error feedback: what was dropped in the first compression is in the residual
    }
    double rel = std::sqrt(err / ref);
    double bound = kind == CompressionKind::kNone ? 0 : kind == CompressionKind::kInt8 ? 0.02
                   : kind == CompressionKind::kFp8 ? 0.08 : kind == CompressionKind::kInt4 ? 0.2
                   : kind == CompressionKind::kSparse24 ? 0.6 : 1.0;
    EXPECT_LE(rel, bound);
    EXPECT_LT(compressed_bytes(spec, n), n * sizeof(float) + 1);
  }
}

TEST(CompressedCollectives, ErrorFeedbackResidualIsWhatWasDropped) {
  CpuBackend be;
  auto comm = make_self_communicator();
  const size_t n = 256;
  auto x = random_floats(n, 9);
  CompressionSpec spec{CompressionKind::kTopK, 64, 0.25};
  std::vector<float> residual(n, 0.0f), out(n);
  compressed_reduce_scatter(be, *comm, spec, x.data(), residual.data(), out.data(), n);
  for (size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(out[i] + residual[i], x[i]);
}

TEST(CompressedCollectives, UnknownNameListsTheValidOnes) {
  EXPECT_THROW(compression_from_string("zip"), std::invalid_argument);
  EXPECT_EQ(compression_from_string("2of4"), CompressionKind::kSparse24);
}

TEST(Collectives, SelfCommunicatorPassesTheChecks) {
  CpuBackend be;
  auto comm = make_self_communicator();
  for (auto kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
                    CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    SCOPED_TRACE(to_string(kind));
    auto run = run_collective(be, *comm, kind, 4096, 1, 2);
    EXPECT_EQ(run.wrong, 0u);
    EXPECT_EQ(run.bytes, 4096u);
  }
}

}  // namespace
}  // namespace trainsim::kernels
