#include "kernels/numeric_formats.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/quant_codes.hpp"

namespace trainsim::kernels {
namespace {

TEST(NumericFormats, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(round_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(round_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(round_bf16(NAN)));
}

TEST(NumericFormats, Fp16MatchesIeeeBinary16) {
  struct Case { float in; uint16_t bits; };
  for (Case c : {Case{1.0f, 0x3c00}, Case{-2.0f, 0xc000}, Case{65504.0f, 0x7bff},
                 Case{65520.0f, 0x7c00}, Case{std::ldexp(1.0f, -24), 0x0001},
                 Case{std::ldexp(1.0f, -25), 0x0000}, Case{std::ldexp(3.0f, -25), 0x0002},
                 Case{std::ldexp(1.0f, -14), 0x0400}, Case{0.1f, 0x2e66}}) {
    SCOPED_TRACE(c.in);
    EXPECT_EQ(float_to_fp16(c.in), c.bits);
    if (c.bits != 0x7c00) { EXPECT_EQ(fp16_to_float(c.bits), round_fp16(c.in)); }
  }
}

TEST(NumericFormats, Fp8E4M3CodesRoundTrip) {
  // Every finite code decodes and re-encodes to itself.
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;
    float v = fp8_e4m3_to_float(uint8_t(c));
    if (v == 0.0f) continue;  // -0 and +0
    EXPECT_EQ(float_to_fp8_e4m3(v), c) << "code " << c << " value " << v;
  }
  EXPECT_EQ(fp8_e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(float_to_fp8_e4m3(1000.0f), 0x7e);  // saturates
  EXPECT_EQ(fp8_e4m3_to_float(float_to_fp8_e4m3(1.0625f)), 1.0f);  // tie to even
}

TEST(QuantCodes, Int4PacksTwosComplement) {
  EXPECT_EQ(encode_code(QuantFormat::kInt4, -7.0f, 1.0f), 0x9);
  EXPECT_EQ(decode_code(QuantFormat::kInt4, 0x9, 1.0f), -7.0f);
  EXPECT_EQ(decode_code(QuantFormat::kInt8, encode_code(QuantFormat::kInt8, -127.4f, 1.0f), 1.0f), -127.0f);
  EXPECT_EQ(encode_code(QuantFormat::kInt8, 5.0f, 0.0f), 0);
}

}  // namespace
}  // namespace trainsim::kernels
