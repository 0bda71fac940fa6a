#include "models/cost/arrival_wait.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(ArrivalWait, ExpectedMaximaOfNormalsAreTheTabulatedOnes) {
  // Closed forms for 2 and 3 (1/sqrt(pi), 3/(2 sqrt(pi))); 4, 5 and 10 from the tables of the
  // expected values of normal order statistics (Harter 1961; Tippett 1925).
  EXPECT_EQ(expected_max_of_normals(1), 0.0);
  EXPECT_NEAR(expected_max_of_normals(2), 1 / std::sqrt(M_PI), 1e-9);
  EXPECT_NEAR(expected_max_of_normals(3), 3 / (2 * std::sqrt(M_PI)), 1e-9);
  EXPECT_NEAR(expected_max_of_normals(4), 1.02938, 1e-5);
  EXPECT_NEAR(expected_max_of_normals(5), 1.16296, 1e-5);
  EXPECT_NEAR(expected_max_of_normals(10), 1.53875, 1e-5);
}

TEST(ArrivalWait, GrowsWithTheSegmentsSpreadAndTheGroup) {
  // Two ranks after ops whose squared times sum to (2 ms)^2, each varying by 10%: sigma 0.2 ms,
  // the wait 0.2 ms / sqrt(pi).
  EXPECT_NEAR(arrival_wait_s(0.1, 4e-6, 2), 2e-4 / std::sqrt(M_PI), 1e-12);
  EXPECT_GT(arrival_wait_s(0.1, 4e-6, 8), arrival_wait_s(0.1, 4e-6, 2));
  EXPECT_EQ(arrival_wait_s(0, 4e-6, 8), 0.0);  // not measured: no wait
  EXPECT_EQ(arrival_wait_s(0.1, 4e-6, 1), 0.0);
}

}  // namespace
}  // namespace trainsim
