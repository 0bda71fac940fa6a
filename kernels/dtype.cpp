#include "kernels/dtype.hpp"

#include <stdexcept>

namespace trainsim::kernels {

const char* to_string(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
  }
  return "?";
}

const char* to_string(QuantFormat f) {
  switch (f) {
    case QuantFormat::kInt8: return "int8";
    case QuantFormat::kInt4: return "int4";
    case QuantFormat::kFp8E4M3: return "fp8_e4m3";
  }
  return "?";
}

DType dtype_from_string(const std::string& name) {
  if (name == "f32" || name == "fp32") return DType::kF32;
  if (name == "bf16") return DType::kBF16;
  if (name == "f16" || name == "fp16") return DType::kF16;
  throw std::invalid_argument("unknown dtype \"" + name + "\"; expected one of: f32 bf16 f16");
}

QuantFormat quant_format_from_string(const std::string& name) {
  if (name == "int8") return QuantFormat::kInt8;
  if (name == "int4") return QuantFormat::kInt4;
  if (name == "fp8" || name == "fp8_e4m3") return QuantFormat::kFp8E4M3;
  throw std::invalid_argument("unknown quantization format \"" + name +
                              "\"; expected one of: int8 int4 fp8_e4m3");
}

float quant_max(QuantFormat f) {
  switch (f) {
    case QuantFormat::kInt8: return 127.0f;
    case QuantFormat::kInt4: return 7.0f;
    case QuantFormat::kFp8E4M3: return 448.0f;
  }
  return 1.0f;
}

size_t quant_blocks(size_t n, size_t block) { return (n + block - 1) / block; }
size_t quant_code_bytes(QuantFormat f, size_t n) { return f == QuantFormat::kInt4 ? (n + 1) / 2 : n; }
size_t quant_payload_bytes(QuantFormat f, size_t n, size_t block) {
  return quant_blocks(n, block) * sizeof(float) + quant_code_bytes(f, n);
}
size_t sparse24_payload_bytes(size_t n) { return n / 2 * sizeof(float) + n / 4; }

}  // namespace trainsim::kernels
