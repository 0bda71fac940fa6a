#include "models/workload/memo.hpp"

namespace trainsim::memo {

uint64_t hash_bytes(const void* data, std::size_t size) {
  // Two lanes over alternate words (the multiplies of one do not wait on the other), folded at
  // the end; keys are a few hundred bytes, so the chain of multiplies is what costs.
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h0 = 0x9E3779B97F4A7C15ull ^ size, h1 = 0xD6E8FEB86659FD93ull;
  std::size_t i = 0;
  for (; i + 16 <= size; i += 16) {
    uint64_t w0, w1;
    std::memcpy(&w0, p + i, 8);
    std::memcpy(&w1, p + i + 8, 8);
    h0 = (h0 ^ w0) * 0xBF58476D1CE4E5B9ull;
    h1 = (h1 ^ w1) * 0xBF58476D1CE4E5B9ull;
    h0 ^= h0 >> 31;
    h1 ^= h1 >> 31;
  }
  uint64_t tail[2] = {0, 0};
  std::memcpy(tail, p + i, size - i);
  h0 = (h0 ^ tail[0]) * 0x94D049BB133111EBull;
  h1 = (h1 ^ tail[1]) * 0x94D049BB133111EBull;
  const uint64_t h = (h0 ^ (h0 >> 29)) + 0x9E3779B97F4A7C15ull * (h1 ^ (h1 >> 29));
  return h ^ (h >> 32);
}

Stats& stats() {
  thread_local Stats s;
  return s;
}

namespace {

struct Environment {
  uint32_t id = 0;
  ModelSpec model;
  GpuSpec gpu;
  FabricTerms fabric;
};

}  // namespace

uint32_t environment_id(const ModelSpec& model, const GpuSpec& gpu, const FabricTerms& fabric) {
  thread_local Environment envs[kEnvironments];
  thread_local int last = 0;
  thread_local int next_slot = 0;
  thread_local uint32_t next_id = 1;
  auto same = [&](const Environment& e) {
    return e.id != 0 && e.fabric == fabric && e.model == model && e.gpu == gpu;
  };
  if (same(envs[last])) return envs[last].id;
  for (int i = 0; i < kEnvironments; ++i)
    if (same(envs[i])) {
      last = i;
      return envs[i].id;
    }
  Environment& e = envs[next_slot];
  last = next_slot;
  next_slot = (next_slot + 1) % kEnvironments;
  e.id = next_id++;
  e.model = model;
  e.gpu = gpu;
  e.fabric = fabric;
  return e.id;
}

namespace {

struct CollectiveKey {
  uint32_t env;
  int32_t op;
  GroupShape group;
  double bytes;
  int32_t protocol;
  char algo[24];  // the registry key, by content
};

}  // namespace

CollectiveCost collective_cost(uint32_t env, CollectiveOp op, CollectiveAlgo algo, CollectiveProtocol protocol,
                               double bytes, const GroupShape& group, const FabricTerms& fabric) {
  if (env == 0) return trainsim::collective_cost(op, algo, protocol, bytes, group, fabric);
  // 4096 slots of ~100 bytes: the collectives of every plan of a large search.
  thread_local Table<CollectiveKey, CollectiveCost, 4096> table;
  CollectiveKey k;
  zero(k);
  k.env = env;
  k.op = static_cast<int32_t>(op);
  k.group = group;
  k.bytes = bytes;
  k.protocol = static_cast<int32_t>(protocol);
  const char* name = algo.name();
  const std::size_t n = std::strlen(name);
  if (n >= sizeof k.algo) return trainsim::collective_cost(op, algo, protocol, bytes, group, fabric);
  std::memcpy(k.algo, name, n);
  return table.get(k, [&] { return trainsim::collective_cost(op, algo, protocol, bytes, group, fabric); });
}

}  // namespace trainsim::memo
