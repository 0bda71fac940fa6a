// The collective algorithms, one line each (CONVENTIONS.md #17). Adding one: a new file in this
// folder defining `const CollectiveAlgorithm& NAME_algorithm()`, and its line below. Order is
// the tuner's tie-break order (NCCL's algorithm index order first).
#include <string>

#include "models/cost/collectives/collective_algorithm.hpp"

#define TRAINSIM_COLLECTIVE_ALGORITHMS(X) \
  X(tree)                                 \
  X(ring)                                 \
  X(collnet_direct)                       \
  X(collnet_chain)                        \
  X(nvls)                                 \
  X(nvls_tree)                            \
  X(pat)                                  \
  X(direct)                               \
  X(halving_doubling)                     \
  X(hierarchical)

namespace trainsim {

#define TRAINSIM_DECLARE(name) const CollectiveAlgorithm& name##_algorithm();
TRAINSIM_COLLECTIVE_ALGORITHMS(TRAINSIM_DECLARE)
#undef TRAINSIM_DECLARE

const std::vector<const CollectiveAlgorithm*>& collective_algorithms() {
#define TRAINSIM_ENTRY(name) &name##_algorithm(),
  static const std::vector<const CollectiveAlgorithm*> all = {TRAINSIM_COLLECTIVE_ALGORITHMS(TRAINSIM_ENTRY)};
#undef TRAINSIM_ENTRY
  return all;
}

const CollectiveAlgorithm* find_collective_algorithm(const std::string& name) {
  for (const CollectiveAlgorithm* a : collective_algorithms())
    if (name == a->name()) return a;
  return nullptr;
}

}  // namespace trainsim
