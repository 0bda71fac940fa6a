// The expected number of distinct places a token's experts sit on, against an independent
// reference: the routing process itself, drawn at random (balanced routing: the token picks its
// groups uniformly, then its top_k distinct experts uniformly among theirs).
#include "models/cost/moe_routing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace trainsim {
namespace {

double sampled_places(const ExpertRouting& r, int places, int tokens = 200000) {
  std::mt19937 rng(12345);
  const bool limited = r.groups > 1 && r.groups_per_token > 0 && r.groups_per_token < r.groups;
  const int per_group = limited ? r.experts / r.groups : r.experts;
  std::vector<int> groups(limited ? r.groups : 1);
  std::iota(groups.begin(), groups.end(), 0);
  double sum = 0;
  for (int t = 0; t < tokens; ++t) {
    std::shuffle(groups.begin(), groups.end(), rng);
    std::vector<int> pool;
    for (int g = 0; g < (limited ? r.groups_per_token : 1); ++g)
      for (int e = 0; e < per_group; ++e) pool.push_back(groups[g] * per_group + e);
    std::shuffle(pool.begin(), pool.end(), rng);
    std::set<int> hit;
    for (int i = 0; i < r.top_k; ++i) hit.insert(pool[i] / (r.experts / places));
    sum += static_cast<double>(hit.size());
  }
  return sum / tokens;
}

TEST(MoeRouting, UnlimitedRoutingIsAHypergeometricDrawPerPlace) {
  // 256 experts, top 8, over 8 nodes: 8 (1 - C(224, 8) / C(256, 8)), not the with-replacement
  // 8 (1 - (7/8)^8) = 5.25.
  const ExpertRouting r{256, 8, 0, 0};
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (224.0 - i) / (256.0 - i);
  EXPECT_NEAR(expected_places_per_token(r, 8), 8 * (1 - miss), 1e-12);
  EXPECT_NEAR(expected_places_per_token(r, 8), sampled_places(r, 8), 0.01);
  EXPECT_GT(expected_places_per_token(r, 8), 8 * (1 - std::pow(7.0 / 8, 8)));
}

TEST(MoeRouting, NodeLimitedRoutingReachesAtMostItsGroupsPlaces) {
  // DeepSeek-V3: 8 groups of 32 experts, 4 groups a token, top 8 (arXiv:2412.19437 sec. 3.2.2:
  // "each token will be sent to at most 4 nodes"). EP 64 over 8 nodes: a group per node.
  const ExpertRouting v3{256, 8, 8, 4};
  const double nodes = expected_places_per_token(v3, 8);
  EXPECT_LE(nodes, 4.0);
  EXPECT_NEAR(nodes, sampled_places(v3, 8), 0.01);
  // Over its 64 GPUs (a group spans 8), over 4 nodes (two groups a node), over 16 (a group
  // spans 2): each against the drawn routing.
  for (int places : {64, 4, 16}) {
    SCOPED_TRACE(places);
    EXPECT_NEAR(expected_places_per_token(v3, places), sampled_places(v3, places), 0.01 * places / 4);
  }
  // The limit only ever lowers the count.
  for (int places : {4, 8, 16, 64})
    EXPECT_LT(expected_places_per_token(v3, places), expected_places_per_token({256, 8, 0, 0}, places));
}

TEST(MoeRouting, ManyGroupsStayFinite) {
  // 4096 single-expert groups, 2048 a token, top 8 over 64 places: the hypergeometric terms
  // would overflow as plain products; the count is the unlimited one's, as a draw would give.
  const double n = expected_places_per_token({4096, 8, 4096, 2048}, 64);
  EXPECT_TRUE(std::isfinite(n));
  EXPECT_NEAR(n, sampled_places({4096, 8, 4096, 2048}, 64, 5000), 0.05);
}

TEST(MoeRouting, OnePlaceHoldsEveryExpert) {
  EXPECT_EQ(expected_places_per_token({64, 8, 0, 0}, 1), 1.0);
  // top 2 of 8 experts on 8 GPUs: two GPUs, always.
  EXPECT_NEAR(expected_places_per_token({8, 2, 0, 0}, 8), 2.0, 1e-12);
}

}  // namespace
}  // namespace trainsim
