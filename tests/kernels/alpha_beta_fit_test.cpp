#include "kernels/alpha_beta_fit.hpp"

#include <gtest/gtest.h>

#include "kernels/bus_bandwidth.hpp"

namespace trainsim::kernels {
namespace {

TEST(AlphaBetaFit, RecoversAnExactLine) {
  std::vector<double> x, t;
  for (double b = 8; b <= (1 << 26); b *= 4) { x.push_back(b); t.push_back(5e-6 + b / 10e9); }
  auto f = fit_alpha_beta(x, t);
  EXPECT_NEAR(f.alpha_s, 5e-6, 1e-12);
  EXPECT_NEAR(f.beta_s_per_byte, 1e-10, 1e-16);
  EXPECT_LT(f.max_rel_error, 1e-9);
}

TEST(AlphaBetaFit, ClampsNegativeLatencyToZero) {
  auto f = fit_alpha_beta({1e3, 1e6, 1e9}, {0.9e-6, 1e-3, 1e0});
  EXPECT_GE(f.alpha_s, 0.0);
  EXPECT_GT(f.beta_s_per_byte, 0.0);
}

TEST(BusBandwidth, MatchesNcclTestsFactors) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllGather, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kSendRecv, 2), 1.0);
}

}  // namespace
}  // namespace trainsim::kernels
