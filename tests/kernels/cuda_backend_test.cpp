// gpu: these skip without a CUDA device (GTEST_SKIP), so they are safe in CPU-only CI.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/backend.hpp"
#include "kernels/op_check.hpp"

namespace trainsim::kernels {
namespace {

std::unique_ptr<Backend> cuda_or_skip(std::string* why) {
  if (!cuda_compiled()) { *why = "built without CUDA"; return nullptr; }
  if (cuda_device_count(why) == 0) return nullptr;
  return make_backend("cuda");
}

TEST(CudaBackendGpu, EveryOpMatchesTheFloat64Reference) {
  std::string why;
  auto be = cuda_or_skip(&why);
  if (!be) GTEST_SKIP() << "no CUDA device: " << why;
  for (bool large : {false, true}) {
    for (const auto& r : check_ops(*be, {.seed = 7, .large = large})) {
      SCOPED_TRACE(r.op + " " + r.shape);
      EXPECT_EQ(r.wrong, 0u) << "max abs error " << r.max_abs_error;
    }
  }
}

// The quantizers share their element code with the cpu backend: payloads must be bit-identical.
TEST(CudaBackendGpu, QuantizedPayloadsMatchCpuBitForBit) {
  std::string why;
  auto gpu = cuda_or_skip(&why);
  if (!gpu) GTEST_SKIP() << "no CUDA device: " << why;
  auto cpu = make_backend("cpu");
  const size_t n = 100000, block = 128;
  auto x = random_floats(n, 3, -2, 2);
  for (QuantFormat f : {QuantFormat::kInt8, QuantFormat::kInt4, QuantFormat::kFp8E4M3}) {
    SCOPED_TRACE(to_string(f));
    size_t pb = quant_payload_bytes(f, n, block);
    std::vector<uint8_t> pc(pb), pg(pb);
    cpu->quantize(f, n, block, x.data(), pc.data());
    DeviceArray<float> dx(*gpu, n);
    dx.upload(x);
    DeviceArray<uint8_t> dp(*gpu, pb);
    gpu->quantize(f, n, block, dx.data(), dp.data());
    pg = dp.download();
    EXPECT_EQ(0, std::memcmp(pc.data(), pg.data(), pb));
  }
}

TEST(CudaBackend, DeviceCountIsZeroOrUsable) {
  std::string why;
  int n = cuda_device_count(&why);
  EXPECT_GE(n, 0);
  if (n == 0) { EXPECT_FALSE(why.empty()); }
}

}  // namespace
}  // namespace trainsim::kernels
