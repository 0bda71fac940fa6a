// Training data for `trainsim train`: a byte-level tokenizer (token = byte, vocab 256) over a
// small corpus that is either read from a file or generated deterministically from a seed
// (sentences from fixed word lists: enough structure for the loss to fall within steps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::kernels {

constexpr int kByteVocab = 256;

std::string generate_corpus(size_t bytes, uint64_t seed);
std::vector<int32_t> tokenize_bytes(const std::string& text);

// Sequence `index` of step `step`: tokens[0..seq) and targets (the next byte) from an offset
// drawn by a counter-based hash of (seed, step, index), so every rank and every parallel
// layout sees the same sequence for the same global index.
void sample_sequence(const std::vector<int32_t>& corpus, uint64_t seed, int step, int64_t index,
                     int seq, int32_t* tokens, int32_t* targets);

// splitmix64 (Steele et al. 2014): the counter-based hash behind sampling and initialisation.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace trainsim::kernels
