#include "kernels/compressed_collectives.hpp"

#include <cmath>
#include <stdexcept>

namespace trainsim::kernels {

const char* to_string(CompressionKind k) {
  switch (k) {
    case CompressionKind::kNone: return "none";
    case CompressionKind::kInt8: return "int8";
    case CompressionKind::kInt4: return "int4";
    case CompressionKind::kFp8: return "fp8";
    case CompressionKind::kSparse24: return "2of4";
    case CompressionKind::kTopK: return "topk";
  }
  return "?";
}

std::vector<std::string> compression_names() { return {"none", "int8", "int4", "fp8", "2of4", "topk"}; }

CompressionKind compression_from_string(const std::string& name) {
  for (auto k : {CompressionKind::kNone, CompressionKind::kInt8, CompressionKind::kInt4,
                 CompressionKind::kFp8, CompressionKind::kSparse24, CompressionKind::kTopK})
    if (name == to_string(k)) return k;
  std::string valid;
  for (const auto& n : compression_names()) valid += " " + n;
  throw std::invalid_argument("unknown compression \"" + name + "\"; expected one of:" + valid);
}

namespace {
QuantFormat quant_of(CompressionKind k) {
  return k == CompressionKind::kInt8 ? QuantFormat::kInt8
         : k == CompressionKind::kInt4 ? QuantFormat::kInt4 : QuantFormat::kFp8E4M3;
}
bool is_quant(CompressionKind k) {
  return k == CompressionKind::kInt8 || k == CompressionKind::kInt4 || k == CompressionKind::kFp8;
}
}  // namespace

size_t compression_granule(const CompressionSpec& spec) {
  if (is_quant(spec.kind)) return spec.block;
  if (spec.kind == CompressionKind::kSparse24) return 4;
  return 1;
}

size_t topk_count(const CompressionSpec& spec, size_t n) {
  size_t k = static_cast<size_t>(std::ceil(spec.topk_ratio * double(n)));
  return std::min(n, std::max<size_t>(1, k));
}

// Payloads are padded to 4 bytes so the chunks of an all-to-all stay float aligned.
size_t compressed_bytes(const CompressionSpec& spec, size_t n) {
  size_t b = 0;
  switch (spec.kind) {
    case CompressionKind::kNone: b = n * sizeof(float); break;
    case CompressionKind::kSparse24: b = sparse24_payload_bytes(n); break;
    case CompressionKind::kTopK: b = topk_count(spec, n) * (sizeof(float) + sizeof(int32_t)); break;
    default: b = quant_payload_bytes(quant_of(spec.kind), n, spec.block);
  }
  return (b + 3) / 4 * 4;
}

void compress(Backend& be, const CompressionSpec& spec, const float* x, size_t n, void* payload) {
  switch (spec.kind) {
    case CompressionKind::kNone: be.copy_device(payload, x, n * sizeof(float)); break;
    case CompressionKind::kSparse24: be.sparsify_2of4(n, x, payload); break;
    case CompressionKind::kTopK: {
      size_t k = topk_count(spec, n);
      float* vals = static_cast<float*>(payload);
      be.top_k(n, k, x, vals, reinterpret_cast<int32_t*>(vals + k));
      break;
    }
    default: be.quantize(quant_of(spec.kind), n, spec.block, x, payload);
  }
}

void decompress_add(Backend& be, const CompressionSpec& spec, const void* payload, size_t n, float* y) {
  switch (spec.kind) {
    case CompressionKind::kNone: be.axpy(n, 1.0f, static_cast<const float*>(payload), y); break;
    case CompressionKind::kSparse24: be.densify_2of4(n, payload, y, true); break;
    case CompressionKind::kTopK: {
      size_t k = topk_count(spec, n);
      const float* vals = static_cast<const float*>(payload);
      be.scatter_add(k, vals, reinterpret_cast<const int32_t*>(vals + k), y);
      break;
    }
    default: be.dequantize(quant_of(spec.kind), n, spec.block, payload, y, true);
  }
}

void compressed_reduce_scatter(Backend& be, Communicator& comm, const CompressionSpec& spec,
                               const float* grad, float* residual, float* out, size_t chunk) {
  const int p = comm.size();
  const size_t n = chunk * p;
  if (spec.kind == CompressionKind::kNone) {
    comm.reduce_scatter(grad, out, chunk);
    return;
  }
  if (chunk % compression_granule(spec))
    throw std::invalid_argument("compressed_reduce_scatter: chunk not a multiple of the granule");
  const size_t cb = compressed_bytes(spec, chunk);
  DeviceArray<float> corrected(be, n), decoded(be, n);
  DeviceArray<uint8_t> send(be, cb * p), recv(be, cb * p);
  // e = g + residual
  be.copy_device(corrected.data(), grad, n * sizeof(float));
  if (residual) be.axpy(n, 1.0f, residual, corrected.data());
  for (int j = 0; j < p; ++j)
    compress(be, spec, corrected.data() + j * chunk, chunk, send.data() + j * cb);
  if (residual) {  // residual = e - decompress(compress(e))
    decoded.zero();
    for (int j = 0; j < p; ++j) decompress_add(be, spec, send.data() + j * cb, chunk, decoded.data() + j * chunk);
    be.copy_device(residual, corrected.data(), n * sizeof(float));
    be.axpy(n, -1.0f, decoded.data(), residual);
  }
  comm.all_to_all(send.data(), recv.data(), cb);
  be.fill_zero(out, chunk * sizeof(float));
  for (int j = 0; j < p; ++j) decompress_add(be, spec, recv.data() + j * cb, chunk, out);
}

void compressed_all_reduce(Backend& be, Communicator& comm, const CompressionSpec& spec,
                           float* data, size_t n, float* residual, float* residual_shard) {
  const int p = comm.size();
  if (spec.kind == CompressionKind::kNone) {
    comm.all_reduce(data, data, n, ReduceOp::kSum);
    return;
  }
  if (n % (p * compression_granule(spec)))
    throw std::invalid_argument("compressed_all_reduce: n not a multiple of ranks * granule");
  const size_t chunk = n / p, cb = compressed_bytes(spec, chunk);
  DeviceArray<float> shard(be, chunk);
  compressed_reduce_scatter(be, comm, spec, data, residual, shard.data(), chunk);
  DeviceArray<uint8_t> mine(be, cb), all(be, cb * p);
  if (residual_shard) be.axpy(chunk, 1.0f, residual_shard, shard.data());
  compress(be, spec, shard.data(), chunk, mine.data());
  if (residual_shard) {  // residual_shard = shard - decompress(compress(shard))
    be.copy_device(residual_shard, shard.data(), chunk * sizeof(float));
    be.scale(chunk, -1.0f, residual_shard);
    decompress_add(be, spec, mine.data(), chunk, residual_shard);
    be.scale(chunk, -1.0f, residual_shard);
  }
  comm.all_gather(mine.data(), all.data(), cb);
  be.fill_zero(data, n * sizeof(float));
  for (int j = 0; j < p; ++j) decompress_add(be, spec, all.data() + j * cb, chunk, data + j * chunk);
}

}  // namespace trainsim::kernels
