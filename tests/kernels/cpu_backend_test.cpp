#include "kernels/cpu_backend.hpp"

#include <gtest/gtest.h>

#include "kernels/op_check.hpp"

namespace trainsim::kernels {
namespace {

TEST(CpuBackend, EveryOpMatchesTheFloat64Reference) {
  CpuBackend be;
  auto results = check_ops(be);
  EXPECT_GE(results.size(), 30u);
  for (const auto& r : results) {
    SCOPED_TRACE(r.op + " " + r.shape);
    EXPECT_EQ(r.wrong, 0u) << "max abs error " << r.max_abs_error;
  }
}

// The large shapes calibrate --large-checks runs on a GPU, here on the cpu backend, whose codes are
// the same bytes: 4 Mi int8-quantized values put a few within float32 rounding of a half-step
// tie, which the check must accept (the H200 run of 2026-12-04 counted 5 such values as wrong).
TEST(CpuBackend, LargeShapesMatchTheFloat64ReferenceToo) {
  CpuBackend be;
  OpCheckOptions opts;
  opts.large = true;
  for (const auto& r : check_ops(be, opts)) {
    SCOPED_TRACE(r.op + " " + r.shape);
    EXPECT_EQ(r.wrong, 0u) << "max abs error " << r.max_abs_error;
  }
}

TEST(CpuBackend, TracksPeakMemory) {
  CpuBackend be;
  {
    DeviceArray<float> a(be, 1000), b(be, 500);
    EXPECT_EQ(be.current_bytes(), 6000u);
  }
  EXPECT_EQ(be.current_bytes(), 0u);
  EXPECT_EQ(be.peak_bytes(), 6000u);
}

TEST(CpuBackend, UnknownBackendNamesTheValidOnes) {
  try {
    make_backend("tpu");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos);
  }
}

TEST(CpuBackend, TopKReturnsAscendingIndices) {
  CpuBackend be;
  std::vector<float> x{0.1f, -5.0f, 0.3f, 4.0f, -0.2f, 3.0f};
  std::vector<float> v(3);
  std::vector<int32_t> i(3);
  be.top_k(x.size(), 3, x.data(), v.data(), i.data());
  EXPECT_EQ(i, (std::vector<int32_t>{1, 3, 5}));
  EXPECT_EQ(v, (std::vector<float>{-5.0f, 4.0f, 3.0f}));
}

}  // namespace
}  // namespace trainsim::kernels
