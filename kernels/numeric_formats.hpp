// Software conversions between float and the narrow formats the ops use: bf16, fp16 and
// fp8 e4m3 (OCP "E4M3FN": bias 7, max 448, no infinities). The same functions run on the host
// and in CUDA kernels, so the cpu and cuda backends round bit-identically.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TRAINSIM_HD __host__ __device__ __forceinline__
#else
#define TRAINSIM_HD inline
#endif

namespace trainsim::kernels {

TRAINSIM_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
TRAINSIM_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// bf16 = the top 16 bits of an IEEE float, rounded to nearest even.
TRAINSIM_HD uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
TRAINSIM_HD float bf16_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }
TRAINSIM_HD float round_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }

// IEEE binary16, round to nearest even, with subnormals and overflow to infinity.
TRAINSIM_HD uint16_t float_to_fp16(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;              // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;             // >= 65520 rounds to infinity
  if (a < 0x38800000u) {                                   // below 2^-14: subnormal or zero
    if (a < 0x33000000u) return sign;                      // below half the smallest subnormal
    uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    int shift = 126 - static_cast<int>(a >> 23);           // 14 + 112 - exp
    uint32_t q = mant >> shift;  // value / 2^-24 = mant * 2^(exp-150+24)
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  uint32_t r = a - 0x38000000u;                            // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return sign | static_cast<uint16_t>(r >> 13);
}
TRAINSIM_HD float fp16_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float v = static_cast<float>(m) * 5.9604644775390625e-08f;  // m * 2^-24
    return bits_float(float_bits(v) | sign);
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}
TRAINSIM_HD float round_fp16(float f) { return fp16_to_float(float_to_fp16(f)); }

// fp8 e4m3fn: value = 2^(e-7) * (1 + m/8) for e > 0, 2^-6 * m/8 for e = 0; 0x7f is NaN.
// Out-of-range magnitudes saturate to 448 (the quantizers scale so this does not happen).
constexpr float kFp8E4M3Max = 448.0f;
TRAINSIM_HD uint8_t float_to_fp8_e4m3(float f) {
  uint8_t sign = (float_bits(f) >> 24) & 0x80u;
  float a = fabsf(f);
  if (a != a) return 0x7fu;
  if (a >= kFp8E4M3Max) return sign | 0x7eu;
  int e;
  frexpf(a, &e);  // a = fr * 2^e, fr in [0.5, 1): floor(log2 a) = e - 1
  int unbiased = e - 1;
  if (unbiased < -6) {  // subnormal: quantum 2^-9
    float m = rintf(ldexpf(a, 9));
    return sign | static_cast<uint8_t>(m);  // m == 8 is exactly the smallest normal's code
  }
  float m = rintf(ldexpf(a, 3 - unbiased));  // in [8, 16]
  int mi = static_cast<int>(m);
  if (mi == 16) { mi = 8; ++unbiased; }
  int code = ((unbiased + 7) << 3) | (mi - 8);
  if (code > 0x7e) code = 0x7e;
  return sign | static_cast<uint8_t>(code);
}
TRAINSIM_HD float fp8_e4m3_to_float(uint8_t c) {
  int e = (c >> 3) & 0xf, m = c & 7;
  if ((c & 0x7f) == 0x7f) return bits_float(0x7fc00000u);
  float v = e == 0 ? ldexpf(static_cast<float>(m), -9) : ldexpf(static_cast<float>(8 + m), e - 10);
  return (c & 0x80) ? -v : v;
}

}  // namespace trainsim::kernels
