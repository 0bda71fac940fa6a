#include "models/cost/compression.hpp"

#include <algorithm>

namespace trainsim {

std::vector<std::string> compression_method_names() {
  return {"none", "int8", "int4", "fp8", "2:4", "topk", "powersgd"};
}

CompressionEffect compression_effect(const CompressionStage& st, double matrix_width) {
  CompressionEffect e;
  const double scale_ratio = 4.0 / kQuantBlockValues / 2.0;  // fp32 scale per block, vs 2 B/value
  if (st.method == "int8" || st.method == "fp8") {
    e.wire_ratio = 0.5 + scale_ratio;
    e.hbm_passes = 2;  // quantize before, dequantize-accumulate after (RS + AG in low precision)
  } else if (st.method == "int4") {
    e.wire_ratio = 0.25 + scale_ratio;
    e.hbm_passes = 2;
  } else if (st.method == "2:4") {
    // 2 of every 4 values (16-bit) + 2-bit index each: (2*16 + 2*2) / (4*16) = 56.25%.
    e.wire_ratio = 0.5625;
    e.hbm_passes = 2;
  } else if (st.method == "topk") {
    // Value (16-bit) + index (32-bit) per kept value; gathered, not reduced.
    e.wire_ratio = st.topk_ratio * 3.0;
    e.needs_allgather = true;
    e.hbm_passes = 3;  // selection + scatter-add of the gathered values
  } else if (st.method == "powersgd") {
    // Rank-r factors P (n x r) and Q (m x r) instead of n x m: (n + m) r / (n m).
    const double w = matrix_width > 0 ? matrix_width : 4096;
    e.wire_ratio = std::min(1.0, 2.0 * st.powersgd_rank / w);
    e.all_reduces = 2;
    e.hbm_passes = 4;
  }
  e.error_feedback_buffer = st.method != "none" && st.error_feedback;
  return e;
}

}  // namespace trainsim
