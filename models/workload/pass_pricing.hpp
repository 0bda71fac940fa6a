// The passes of a plan's op graph priced for the estimate: each pass's program built from the
// layer programs (layer_program.hpp) and reduced in closed form (program_reduce.hpp), and the
// cost-only route that prices each distinct pass once per thread (memo.hpp) without keeping
// its program. build_workload sums these into a plan's stages.
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload/layer_program.hpp"
#include "models/workload/op_graph.hpp"

namespace trainsim {

// The blocks of one pass of a chunk, in the order the pass runs them.
PassProgram pass_program(const LayerContext& ctx, const ChunkLayers& cl, PassKind pass);

// What the step needs of one reduced pass: its cost, the wire bytes it sends per GPU by
// purpose, and (B+W passes) the compute of its weight-gradient ops.
struct PassSummary {
  PassCost cost;
  double traffic[kCommPurposes] = {0, 0, 0, 0, 0};
  double comm_busy_s[kCommPurposes] = {0, 0, 0, 0, 0};  // the collectives' closed-form times
  double wgrad_compute_s = 0;
  double compute_sq_s2 = 0;  // sum of the compute ops' squared times
};

PassSummary summarize_pass(const PassProgram& p, double sigma);

// A content id (>= 1) per pass kind of the plan's layer context: passes are keyed on it and the
// chunk, so one lookup of the large key per plan and pass kind, small keys per pass. Ids are
// never reused in a thread; 0 when the context cannot be keyed (an algorithm name longer than
// the key holds).
void context_ids(const LayerContext& ctx, const PassKind* kinds, int count, uint32_t* ids);

// The cost-only route: the same program's cost, once per distinct (pass context, chunk, pass);
// the program itself is not kept. 8192 slots of ~170 bytes (about 1.4 MB per thread).
PassSummary memo_pass(const LayerContext& ctx, uint32_t context, const ChunkLayers& cl, PassKind pass,
                      double sigma);

// layer_power_share (layer_program.hpp) on the cost-only route: one layer's forward and backward
// are built once per distinct pass context (at the benchmark share, 1) and moe flag, not once per
// plan. `memo_env` 0 computes it directly.
double memo_layer_power_share(const LayerContext& ctx, bool moe_layer);

// A device of a schedule that overlaps a forward with a backward: the pair of each direction's
// forward with each direction's backward (`backward`: the whole backward, B + W, which a pair
// runs: PipelineRunner::pick_partner), reduced as one
// program (fb_overlap.hpp), [forward's direction][backward's]. With `keep`, the merged programs
// are appended to it; without, the costs are memoised per (pass contexts, the two chunks'
// layouts), as memo_pass memoises passes: 1024 slots of ~80 bytes.
struct PairCosts {
  double s[2][2];
};
PairCosts pair_costs(const LayerContext& ctx, const uint32_t contexts[3], const ChunkLayers cl[2], PassKind backward,
                     double sigma, const DeviceProgram* programs, std::vector<PassProgram>* keep);

}  // namespace trainsim
