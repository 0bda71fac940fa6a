// Per-thread memo tables of the estimate tier (docs/performance.md "Memoisation"). A sweep or a
// plan search evaluates plans that share most of their parts: the same layer programs priced on
// the same GPU, the same collectives on the same group shapes, the same pipeline played with the
// same stage-cost ratios. Each part's result is stored under a key holding exactly what it
// depends on, by content (scenarios are copied per plan, so pointers say nothing), and reused.
//
// Keys and values are plain bytes (trivially copyable): a key's bytes are zeroed in place
// (zero(k)) before its members are set, so that padding compares equal, then hashed, compared
// with memcmp and stored with memcpy (an assignment or a returned copy need not keep padding). The model,
// the GPU and the fabric are too large to hash per lookup: environment_id() gives each distinct
// (ModelSpec, GpuSpec, FabricTerms) a small id by content, and keys carry the id.
//
// Bounds: every table has a fixed number of slots, allocated on first use; when it is three
// quarters full it is cleared and refilled (clear-when-full). Lookups that hit never allocate.
// Tables are thread_local: threads never share an entry and need no lock (sweeps run children
// in processes anyway).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "models/core/specs.hpp"
#include "models/cost/collectives/collective_cost.hpp"

namespace trainsim::memo {

template <class T>
void zero(T& t) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::memset(static_cast<void*>(&t), 0, sizeof t);
}

// Stores a key's bytes, padding included.
template <class T>
void copy_bytes(T& to, const T& from) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::memcpy(static_cast<void*>(&to), &from, sizeof to);
}

// 64-bit hash of a key's bytes (multiply-rotate over 8-byte words).
uint64_t hash_bytes(const void* data, std::size_t size);

// Hits and misses of every table of this thread (bench/ prints them).
struct Stats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t clears = 0;
};
Stats& stats();

template <class Key, class Value, std::size_t kSlots>
class Table {
  static_assert(std::is_trivially_copyable_v<Key> && std::is_trivially_copyable_v<Value>);
  static_assert(kSlots >= 16 && (kSlots & (kSlots - 1)) == 0, "kSlots: a power of two");

 public:
  static constexpr std::size_t kCapacity = kSlots / 4 * 3;  // entries before clear-when-full

  // The value stored for `key`, computing and storing it with compute() on a miss.
  template <class F>
  Value get(const Key& key, F&& compute) {
    if (!slots_) slots_ = std::make_unique<Slot[]>(kSlots);
    const uint64_t h = hash_bytes(&key, sizeof key);
    std::size_t i = probe(key, h);
    if (slots_[i].used) {
      ++stats().hits;
      return slots_[i].value;
    }
    ++stats().misses;
    const Value v = compute();
    if (size_ >= kCapacity) {
      clear();
      i = probe(key, h);
    }
    Slot& s = slots_[i];
    s.used = true;
    s.hash = h;
    copy_bytes(s.key, key);
    s.value = v;
    ++size_;
    return v;
  }

  void clear() {
    if (!slots_) return;
    for (std::size_t i = 0; i < kSlots; ++i) slots_[i].used = false;
    size_ = 0;
    ++stats().clears;
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    bool used = false;
    uint64_t hash = 0;
    Key key;
    Value value;
  };
  // The slot holding `key`, or the empty slot where it goes (linear probing; never full).
  std::size_t probe(const Key& key, uint64_t h) const {
    for (std::size_t i = h & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      const Slot& s = slots_[i];
      if (!s.used || (s.hash == h && std::memcmp(&s.key, &key, sizeof key) == 0)) return i;
    }
  }
  std::unique_ptr<Slot[]> slots_;
  std::size_t size_ = 0;
};

// A content id (>= 1) for the parts of a scenario that every priced op depends on. Ids are never
// reused within a thread: the last kEnvironments distinct environments keep theirs, an older one
// coming back gets a new id (its old entries are never found again and age out).
constexpr int kEnvironments = 8;
uint32_t environment_id(const ModelSpec& model, const GpuSpec& gpu, const FabricTerms& fabric);

// collective_cost, memoised per environment; env 0 calls it directly.
CollectiveCost collective_cost(uint32_t env, CollectiveOp op, CollectiveAlgo algo, CollectiveProtocol protocol,
                               double bytes,
                               const GroupShape& group, const FabricTerms& fabric);

}  // namespace trainsim::memo
