// Hand-built blocks and collectives for the tests of pass programs (program_reduce_test.cpp,
// fb_overlap_test.cpp).
#pragma once

#include <vector>

#include "models/workload/op_graph.hpp"

namespace trainsim::test {

// A block of compute ops of the given seconds, repeated `repeat` times.
inline OpBlock block_of(const std::vector<double>& ops, int repeat = 1) {
  OpBlock b;
  b.name = "test";
  b.repeat = repeat;
  for (double c : ops) {
    b.compute.push_back(ComputeOp{});
    b.compute_s.push_back(c);
  }
  return b;
}

inline CommOp comm(CommStream stream, double t, int after, int waited_by, CommPurpose p = CommPurpose::kTp) {
  CommOp c;
  c.stream = stream;
  c.time_s = t;
  c.after = after;
  c.waited_by = waited_by;
  c.purpose = p;
  return c;
}

}  // namespace trainsim::test
