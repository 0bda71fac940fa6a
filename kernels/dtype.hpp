// Element types and compressed formats the ops understand, with their names and sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::kernels {

// Storage type of GEMM operands. Arithmetic is always fp32 accumulate (cuBLAS COMPUTE_32F;
// on the cpu backend narrow inputs are widened, multiplied by sgemm and the output rounded).
enum class DType { kF32, kBF16, kF16 };

// Gradient/activation compressors (REFERENCE.md "Gradient compression").
enum class QuantFormat { kInt8, kInt4, kFp8E4M3 };

const char* to_string(DType t);
const char* to_string(QuantFormat f);
// Lookups by name; throw std::invalid_argument listing the valid names.
DType dtype_from_string(const std::string& name);
QuantFormat quant_format_from_string(const std::string& name);

inline size_t dtype_bytes(DType t) { return t == DType::kF32 ? 4 : 2; }

// Largest code magnitude of each format (the per-block scale maps the block's absmax onto it).
float quant_max(QuantFormat f);

// Quantized payload layout: float scales[ceil(n/block)], then codes (int8/fp8: n bytes;
// int4: ceil(n/2) bytes, element 2i in the low nibble of byte i, two's complement).
size_t quant_blocks(size_t n, size_t block);
size_t quant_code_bytes(QuantFormat f, size_t n);
size_t quant_payload_bytes(QuantFormat f, size_t n, size_t block);

// 2:4 packed layout: float values[n/2] (the two kept values of each group of four, in order),
// then uint8 idx[n/4] (low 2 bits: index of the first kept value, bits 2-3: the second).
size_t sparse24_payload_bytes(size_t n);

}  // namespace trainsim::kernels
