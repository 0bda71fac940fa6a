#include "models/workload/fb_overlap.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace trainsim {
namespace {

// ops[i] ends a segment: a collective is issued after it.
std::vector<char> segment_ends(const OpBlock& b) {
  const int n = static_cast<int>(b.compute.size());
  std::vector<char> ends(static_cast<std::size_t>(n), 0);
  for (const CommOp& c : b.comm)
    if (!c.prefetch && c.after >= 0 && c.after < n) ends[c.after] = 1;
  return ends;
}

// Takes one segment of `x` from op `k` on into `out`, recording where each op went.
void take_segment(const OpBlock& x, const std::vector<char>& ends, std::size_t& k, std::vector<int>& at,
                  OpBlock& out) {
  while (k < x.compute.size()) {
    at[k] = static_cast<int>(out.compute.size());
    out.compute.push_back(x.compute[k]);
    out.compute_s.push_back(x.compute_s[k]);
    if (ends[k++]) return;
  }
}

// x's collectives with their ops renumbered; an index past x's ops (the repetition's end, or
// never issued) stays past the merged block's.
void add_comms(const OpBlock& x, const std::vector<int>& at, OpBlock& out) {
  const int n = static_cast<int>(at.size());
  const int merged_n = static_cast<int>(out.compute.size());
  for (CommOp c : x.comm) {
    // Beside the other pass's compute, not on the compute stream.
    if (c.stream == CommStream::kInline) c.stream = CommStream::kTensor;
    if (c.after >= 0) c.after = c.after < n ? at[c.after] : merged_n;
    if (c.waited_by >= 0) c.waited_by = c.waited_by < n ? at[c.waited_by] : merged_n;
    out.comm.push_back(c);
  }
}

OpBlock paired_block(const OpBlock& f, const OpBlock& b, int repeat) {
  OpBlock out;
  out.name = "F&B";
  out.repeat = repeat;
  // Gradients a repetition makes final are the backward's (the forward makes none).
  out.dense_params = b.dense_params;
  out.expert_params = b.expert_params;
  out.compute.reserve(f.compute.size() + b.compute.size());
  out.compute_s.reserve(f.compute.size() + b.compute.size());
  const std::vector<char> f_ends = segment_ends(f), b_ends = segment_ends(b);
  std::vector<int> f_at(f.compute.size()), b_at(b.compute.size());
  std::size_t i = 0, j = 0;
  while (i < f.compute.size() || j < b.compute.size()) {
    take_segment(f, f_ends, i, f_at, out);
    take_segment(b, b_ends, j, b_at, out);
  }
  add_comms(f, f_at, out);
  add_comms(b, b_at, out);
  return out;
}

}  // namespace

PassProgram overlap_forward_backward(const PassProgram& forward, const PassProgram& backward) {
  PassProgram out;
  const std::vector<OpBlock>& f = forward.blocks;
  const std::vector<OpBlock>& b = backward.blocks;
  std::size_t i = 0, j = 0;
  int f_left = f.empty() ? 0 : f[0].repeat, b_left = b.empty() ? 0 : b[0].repeat;
  while (i < f.size() && j < b.size()) {
    const int k = std::min(f_left, b_left);
    out.blocks.push_back(paired_block(f[i], b[j], k));
    f_left -= k;
    b_left -= k;
    if (f_left == 0 && ++i < f.size()) f_left = f[i].repeat;
    if (b_left == 0 && ++j < b.size()) b_left = b[j].repeat;
  }
  // What one side has beyond the other runs alone, the forward's first.
  for (; i < f.size(); f_left = ++i < f.size() ? f[i].repeat : 0) {
    out.blocks.push_back(f[i]);
    out.blocks.back().repeat = f_left;
  }
  for (; j < b.size(); b_left = ++j < b.size() ? b[j].repeat : 0) {
    out.blocks.push_back(b[j]);
    out.blocks.back().repeat = b_left;
  }
  return out;
}

}  // namespace trainsim
