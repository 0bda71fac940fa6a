// The closed form of a pass program (op_graph.hpp) on one GPU: compute ops one after another on
// the compute stream; each collective starts when the op it follows ends and its stream (one
// NCCL stream per kind, FIFO) is free, and lasts its contention-free time; an op waits for the
// collectives it needs. What the compute stream waits for is exposed communication; nothing is
// assumed hidden (no max(0, comm - compute)).
//
// Overlap slows compute: a collective running beside a kernel occupies SMs (one CTA per NCCL
// channel) and HBM bandwidth, so compute progresses at 1 / (1 + sigma * k) of its rate while k
// collectives of other streams run (a fluid model; sigma from overlap_slowdown()). The
// simulate tier applies the same rule to its compute timers, against the flows' real durations.
#pragma once

#include "models/core/specs.hpp"
#include "models/workload/op_graph.hpp"

namespace trainsim {

// Compute slowdown per concurrent collective: NCCL runs one CTA per channel, taking `channels`
// of the GPU's SMs from a GEMM that would fill them all, so compute runs at (S - c) / S of its
// rate: sigma = c / (S - c). Defaults: the SM count of the GPU's generation and NCCL's 16
// channels (NCCL's default maximum for ring/tree on NVLink + IB without NVLS; src/graph/
// search.cc, MAXCHANNELS/2). A forum measurement of an FSDP all-gather beside a one-wave H100
// GEMM (24 NCCL blocks on 132 SMs) shows the worst case, a second wave: up to 2x.
double overlap_slowdown(const GpuSpec& gpu);

// The pass's time on one GPU, starting with idle streams.
PassCost reduce_pass(const PassProgram& program, double overlap_slowdown);

}  // namespace trainsim
