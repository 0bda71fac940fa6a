#include "models/core/pareto.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace trainsim {
namespace {

std::vector<std::size_t> indexes(const std::vector<ParetoEntry>& front) {
  std::vector<std::size_t> out;
  for (const auto& e : front) out.push_back(e.index);
  return out;
}

TEST(Pareto, KeepsThePlansNoOtherBeatsOnThroughputMemoryAndGpus) {
  // tokens/s, peak bytes, GPUs, by hand:
  //   0 fast, big        on the front (fastest)
  //   1 slower, smaller  on the front (less memory than 0)
  //   2 slower than 1 and bigger: dominated by 1
  //   3 as fast as 1, same memory, more GPUs: dominated by 1
  //   4 slowest but fewest GPUs: on the front
  //   5 as fast as 0 and smaller: dominates 0
  const std::vector<ParetoPoint> points = {
      {100, 60, 64}, {80, 40, 64}, {70, 50, 64}, {80, 40, 128}, {10, 70, 8}, {100, 50, 64}};
  EXPECT_EQ(indexes(pareto_front(points)), (std::vector<std::size_t>{5, 1, 4}));
}

TEST(Pareto, PlansWithTheSameFiguresCountOnce) {
  // ZeRO-1 and ZeRO-2 at DP 1 hold the same memory and take the same time: one trade-off.
  const std::vector<ParetoPoint> points = {{50, 10, 8}, {50, 10, 8}, {60, 20, 8}, {50, 10, 8}};
  const auto front = pareto_front(points);
  ASSERT_EQ(front.size(), 2u);
  EXPECT_EQ(front[0].index, 2u);
  EXPECT_EQ(front[1].index, 0u);
  EXPECT_EQ(front[1].same, (std::vector<std::size_t>{1, 3}));
}

TEST(Pareto, AgreesWithTheDefinitionOnRandomPlans) {
  // The definition, applied pairwise (O(n^2)), against the function on random points with many
  // ties (figures drawn from small sets).
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(1, 6);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<ParetoPoint> pts(40);
    for (auto& p : pts) p = {10.0 * pick(rng), 1.0 * pick(rng), 8.0 * pick(rng)};
    auto dominates = [](const ParetoPoint& a, const ParetoPoint& b) {
      return a.tokens_per_s >= b.tokens_per_s && a.peak_bytes <= b.peak_bytes && a.gpus <= b.gpus &&
             (a.tokens_per_s > b.tokens_per_s || a.peak_bytes < b.peak_bytes || a.gpus < b.gpus);
    };
    auto same = [](const ParetoPoint& a, const ParetoPoint& b) {
      return a.tokens_per_s == b.tokens_per_s && a.peak_bytes == b.peak_bytes && a.gpus == b.gpus;
    };
    std::vector<std::size_t> expected;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      bool out = false;
      for (std::size_t j = 0; j < pts.size() && !out; ++j) out = dominates(pts[j], pts[i]) || (j < i && same(pts[j], pts[i]));
      if (!out) expected.push_back(i);
    }
    auto got = indexes(pareto_front(pts));
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected) << "trial " << trial;
    std::size_t counted = 0;
    for (const auto& e : pareto_front(pts)) counted += 1 + e.same.size();
    std::size_t on_front_points = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      bool dominated = false;
      for (std::size_t j = 0; j < pts.size() && !dominated; ++j) dominated = dominates(pts[j], pts[i]);
      on_front_points += !dominated;
    }
    EXPECT_EQ(counted, on_front_points) << "trial " << trial;
  }
}

}  // namespace
}  // namespace trainsim
