#include "models/workload/memo.hpp"

namespace trainsim::memo {

uint64_t hash_bytes(const void* data, std::size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ size;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, size - i);
  h = (h ^ tail) * 0x94D049BB133111EBull;
  return h ^ (h >> 29);
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
  char algo[24];  // the registry key, by content
};

}  // namespace

CollectiveCost collective_cost(uint32_t env, CollectiveOp op, CollectiveAlgo algo, double bytes,
                               const GroupShape& group, const FabricTerms& fabric) {
  if (env == 0) return trainsim::collective_cost(op, algo, bytes, group, fabric);
  // 4096 slots of ~100 bytes: the collectives of every plan of a large search.
  thread_local Table<CollectiveKey, CollectiveCost, 4096> table;
  CollectiveKey k = zeroed<CollectiveKey>();
  k.env = env;
  k.op = static_cast<int32_t>(op);
  k.group = group;
  k.bytes = bytes;
  const char* name = algo.name();
  const std::size_t n = std::strlen(name);
  if (n >= sizeof k.algo) return trainsim::collective_cost(op, algo, bytes, group, fabric);
  std::memcpy(k.algo, name, n);
  return table.get(k, [&] { return trainsim::collective_cost(op, algo, bytes, group, fabric); });
}

}  // namespace trainsim::memo
