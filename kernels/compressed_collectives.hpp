// Compressed collectives built from the plain ones (REFERENCE.md "Gradient compression").
// Reduction cannot run on int8/int4/fp8 codes or sparse payloads, so the reduce-scatter phase is
// an all-to-all of compressed chunks, each rank decompressing and summing the chunk it owns
// (ZeRO++ qgZ does the same); the all-gather phase sends the compressed reduced chunk.
// Error feedback (Seide et al. 2014; Karimireddy et al. 2019): the part a rank's compressor
// dropped is kept in `residual` and added to the next step's gradient.
#pragma once

#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

enum class CompressionKind { kNone, kInt8, kInt4, kFp8, kSparse24, kTopK };

struct CompressionSpec {
  CompressionKind kind = CompressionKind::kNone;
  size_t block = 64;          // quantization block (elements per scale)
  double topk_ratio = 0.01;   // top-k keeps ceil(ratio * chunk) values per chunk
};

const char* to_string(CompressionKind k);
// "none", "int8", "int4", "fp8", "2of4", "topk"; throws std::invalid_argument listing them.
CompressionKind compression_from_string(const std::string& name);
std::vector<std::string> compression_names();

// Elements every chunk must be a multiple of (block for quantizers, 4 for 2:4).
size_t compression_granule(const CompressionSpec& spec);
size_t compressed_bytes(const CompressionSpec& spec, size_t n);
size_t topk_count(const CompressionSpec& spec, size_t n);
void compress(Backend& be, const CompressionSpec& spec, const float* x, size_t n, void* payload);
// y += decompress(payload)
void decompress_add(Backend& be, const CompressionSpec& spec, const void* payload, size_t n, float* y);

// Sum over the group of `grad` (size() * chunk elements per rank), this rank receiving chunk
// rank() in `out`. With residual != nullptr (size() * chunk elements) error feedback is applied
// and the residual updated. kNone falls through to the plain reduce_scatter.
void compressed_reduce_scatter(Backend& be, Communicator& comm, const CompressionSpec& spec,
                               const float* grad, float* residual, float* out, size_t chunk);
// In-place all-reduce of `data` (n elements, n % (size() * granule) == 0): compressed
// reduce-scatter, then the compressed reduced chunks all-gathered and decompressed.
// residual_shard (n / size() elements) adds error feedback to the second compression too.
void compressed_all_reduce(Backend& be, Communicator& comm, const CompressionSpec& spec,
                           float* data, size_t n, float* residual, float* residual_shard = nullptr);

}  // namespace trainsim::kernels
