#include "kernels/byte_corpus.hpp"

#include <stdexcept>

namespace trainsim::kernels {

std::string generate_corpus(size_t bytes, uint64_t seed) {
  static const char* kSubjects[] = {"the cluster", "a gpu", "the model", "every rank", "the pipeline",
                                    "our scheduler", "the network", "a tensor", "the optimizer", "each node"};
  static const char* kVerbs[] = {"sends", "reduces", "gathers", "trains", "splits", "waits for",
                                 "computes", "stores", "shards", "overlaps"};
  static const char* kObjects[] = {"the gradients", "a micro-batch", "the activations", "its weights",
                                   "the loss", "eight layers", "the next stage", "all the bytes",
                                   "a checkpoint", "the attention scores"};
  static const char* kEnds[] = {".", " quickly.", " again.", " in order.", " on time."};
  std::string out;
  uint64_t state = seed;
  while (out.size() < bytes) {
    auto pick = [&](size_t n) { state = splitmix64(state); return size_t(state % n); };
    out += kSubjects[pick(10)];
    out += ' ';
    out += kVerbs[pick(10)];
    out += ' ';
    out += kObjects[pick(10)];
    out += kEnds[pick(5)];
    out += pick(4) == 0 ? '\n' : ' ';
  }
  out.resize(bytes);
  return out;
}

std::vector<int32_t> tokenize_bytes(const std::string& text) {
  std::vector<int32_t> t(text.size());
  for (size_t i = 0; i < text.size(); ++i) t[i] = static_cast<unsigned char>(text[i]);
  return t;
}

void sample_sequence(const std::vector<int32_t>& corpus, uint64_t seed, int step, int64_t index,
                     int seq, int32_t* tokens, int32_t* targets) {
  if (corpus.size() < size_t(seq) + 2) throw std::invalid_argument("corpus shorter than one sequence");
  uint64_t h = splitmix64(seed ^ splitmix64(uint64_t(step) * 0x100000001b3ull ^ splitmix64(uint64_t(index))));
  size_t start = size_t(h % (corpus.size() - seq - 1));
  for (int i = 0; i < seq; ++i) {
    tokens[i] = corpus[start + i];
    targets[i] = corpus[start + i + 1];
  }
}

}  // namespace trainsim::kernels
