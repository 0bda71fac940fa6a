// Element-wise codes of the per-block quantizers, shared by the cpu backend and the CUDA kernels
// so both produce the same bytes. scale = absmax(block) / quant_max(format); code = x / scale
// rounded to nearest even (ints, clamped) or to the nearest fp8 e4m3 value.
#pragma once

#include "kernels/dtype.hpp"
#include "kernels/numeric_formats.hpp"

namespace trainsim::kernels {

TRAINSIM_HD float block_scale(float absmax, float qmax) { return absmax > 0.0f ? absmax / qmax : 0.0f; }

// Returns the code as a byte (int8: two's complement; int4: low nibble; fp8: e4m3 bits).
TRAINSIM_HD uint8_t encode_code(QuantFormat f, float x, float scale) {
  if (scale == 0.0f) return 0;
  float y = x / scale;
  if (f == QuantFormat::kFp8E4M3) return float_to_fp8_e4m3(y);
  float qmax = f == QuantFormat::kInt8 ? 127.0f : 7.0f;
  float r = rintf(y);
  r = r > qmax ? qmax : (r < -qmax ? -qmax : r);
  int q = static_cast<int>(r);
  return static_cast<uint8_t>(f == QuantFormat::kInt8 ? q & 0xff : q & 0xf);
}

TRAINSIM_HD float decode_code(QuantFormat f, uint8_t code, float scale) {
  if (f == QuantFormat::kFp8E4M3) return fp8_e4m3_to_float(code) * scale;
  int q = f == QuantFormat::kInt8 ? static_cast<int>(static_cast<int8_t>(code))
                                  : ((code & 0x8) ? static_cast<int>(code) - 16 : static_cast<int>(code));
  return static_cast<float>(q) * scale;
}

}  // namespace trainsim::kernels
