#include "models/cost/compression.hpp"

#include <algorithm>

namespace trainsim {

std::vector<std::string> compression_method_names() {
  return {"none", "int8", "int4", "fp8", "2:4", "topk", "powersgd"};
}

namespace {

// Payload bytes per gradient value.
double payload_bytes_per_value(const CompressionStage& st, double grad_bytes) {
  const double scale = 4.0 / kQuantBlockValues;  // an fp32 scale per block
  if (st.method == "int8" || st.method == "fp8") return 1.0 + scale;
  if (st.method == "int4") return 0.5 + scale;
  // 2 of every 4 values at the gradient's precision + a 2-bit index each.
  if (st.method == "2:4") return (2 * grad_bytes + 2 * 2.0 / 8) / 4;
  // Value at the gradient's precision + a 32-bit index per kept value.
  if (st.method == "topk") return st.topk_ratio * (grad_bytes + 4);
  return grad_bytes;
}

}  // namespace

CompressionEffect compression_effect(const CompressionStage& st, double matrix_width, double grad_bytes) {
  CompressionEffect e;
  if (grad_bytes <= 0) grad_bytes = 2;
  if (st.method == "powersgd") {
    // Rank-r factors P (n x r) and Q (m x r) instead of n x m: (n + m) r / (n m).
    const double w = matrix_width > 0 ? matrix_width : 4096;
    e.wire_ratio = std::min(1.0, 2.0 * st.powersgd_rank / w);
    e.all_reduces = 2;
  } else {
    e.wire_ratio = payload_bytes_per_value(st, grad_bytes) / grad_bytes;
  }
  e.needs_allgather = st.method == "topk";
  e.error_feedback_buffer = st.method != "none" && st.error_feedback;
  return e;
}

double compression_kernel_time_s(const CompressionStage& st, const CompressionEffect& ce, double values, int ranks,
                                 double grad_bytes, const GpuSpec& gpu) {
  if (st.method == "none" || values <= 0 || ranks <= 1) return 0;
  const double hbm = gpu.hbm_bandwidth_bytes_per_s;
  if (st.method == "powersgd") {
    // Two GEMM-shaped projections and their error feedback: four read+write passes.
    return hbm > 0 ? 4 * 2 * values * grad_bytes / hbm : 0;
  }
  const double payload = ce.wire_ratio * grad_bytes;
  const CompressionKernelRates* measured = gpu.op_rates.compression_rates(st.method);
  // Memory-bound defaults: compress reads the value and writes its payload; decompress-add reads
  // the payload and the accumulator and writes the accumulator; an element-wise update reads two
  // values and writes one.
  auto at_hbm = [&](double bytes) { return hbm > 0 ? bytes / hbm : 0.0; };
  const double compress_s = measured ? measured->compress_s_per_element : at_hbm(grad_bytes + payload);
  // Top-k's scatter-add touches only the kept values of the accumulator.
  const double touched = ce.needs_allgather ? st.topk_ratio : 1.0;
  const double decompress_s =
      measured ? measured->decompress_add_s_per_element : at_hbm(payload + 2 * grad_bytes * touched);
  const double elementwise_s = gpu.op_rates.present() && gpu.op_rates.residual_add_s_per_element > 0
                                   ? gpu.op_rates.residual_add_s_per_element
                                   : at_hbm(3 * grad_bytes);
  const double p = ranks;
  double compressed, decompressed, updated = 0;
  if (ce.needs_allgather) {
    compressed = values;         // selection
    decompressed = p * values;   // scatter-add of every rank's payload into the full gradient
  } else {
    compressed = (1 + 1 / p) * values;
    decompressed = 2 * values;
  }
  if (st.error_feedback) {
    decompressed += compressed;  // residual = e - decompress(compress(e)), for each compression
    updated = 2 * compressed;
  }
  return compressed * compress_s + decompressed * decompress_s + updated * elementwise_s;
}

}  // namespace trainsim
