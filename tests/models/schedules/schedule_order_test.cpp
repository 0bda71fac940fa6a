// PipeOpSet: the sorted-vector ready set keeps std::set's order; rank() counts the ops below a
// key as std::set::lower_bound does (what DualPipe's pick uses to find direction 1's first
// forward).
#include "models/schedules/schedule_order.hpp"

#include <gtest/gtest.h>

#include <iterator>
#include <set>

namespace trainsim {
namespace {

TEST(PipeOpSet, RankCountsTheOpsBelowAKeyAsASetDoes) {
  PipeOpSet fast;
  std::set<PipeOp> reference;
  // A deterministic mix of forwards of both DualPipe directions (chunk 0 below micro-batch 6,
  // chunk 1 from it), inserted out of order, some twice.
  for (int k = 0; k < 40; ++k) {
    const int mb = (k * 7) % 12;
    const PipeOp op{PipeOpKind::kForward, mb, mb >= 6 ? 1 : 0, false};
    fast.insert(op);
    reference.insert(op);
  }
  ASSERT_EQ(fast.size(), reference.size());
  for (int mb = 0; mb <= 12; ++mb)
    for (int chunk = 0; chunk < 2; ++chunk) {
      const PipeOp key{PipeOpKind::kForward, mb, chunk, false};
      const auto below = static_cast<std::size_t>(std::distance(reference.begin(), reference.lower_bound(key)));
      EXPECT_EQ(fast.rank(key), below) << "micro-batch " << mb << " chunk " << chunk;
      if (below < fast.size()) {
        EXPECT_FALSE(fast.ascending(below) < key);
      }
    }
  // The first op of direction 1 (micro-batches from 6) is found by its rank.
  const std::size_t i = fast.rank(PipeOp{PipeOpKind::kForward, 6, 0, false});
  ASSERT_LT(i, fast.size());
  EXPECT_EQ(fast.ascending(i).micro_batch, 6);
  EXPECT_EQ(fast.ascending(i).chunk, 1);
  EXPECT_EQ(i, 6u);
}

}  // namespace
}  // namespace trainsim
