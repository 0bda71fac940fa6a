// The workload as ops (ARCHITECTURE.md "The workload is ops, not seconds"): what one pipeline
// device computes and communicates in each pass of each model chunk for one micro-batch. Every
// parallelism feature emits its ops here (layer_program.cpp) and nowhere else: TP/SP all-reduce,
// reduce-scatter and all-gather per layer, CP ring exchanges, EP dispatch and combine, ZeRO-3
// parameter gathers (prefetched) and gradient reduce-scatters. The estimate tier reduces these
// programs in closed form (program_reduce.hpp); the simulate tier plays every op, collectives as
// flows on the GPUs the placement gives each group (sim/step_player.cpp).
//
// A pass is a sequence of blocks; a block (one transformer layer, the embedding, the head) is a
// list of compute ops, run one after another on the compute stream, and communication ops, each
// issued after one compute op and waited for by a later one (or by the end of the step), on its
// own NCCL stream. A block runs `repeat` times (the device's layers of that kind).
#pragma once

#include <cstdint>
#include <vector>

#include "models/cost/collectives/collective_cost.hpp"
#include "models/cost/compute/compute_op.hpp"

namespace trainsim {

// What the bytes are for; simulation.traffic_bytes reports them under these names.
enum class CommPurpose : uint8_t { kTp, kCp, kEp, kDp, kPp };
constexpr int kCommPurposes = 5;
const char* to_string(CommPurpose purpose);

// Which of the device's groups a collective runs over (RankPlacement gives the ranks).
enum class CommGroup : uint8_t {
  kTp,        // the stage's TP group
  kCp,        // its CP group
  kEp,        // its EP group (MoE folding)
  kDp,        // its data-parallel group: dp x cp ranks holding the same dense shard
  kExpertDp,  // its expert-data-parallel group
  // DeepEP's two hops of an EP exchange: the EP members at this rank's in-node index on the EP
  // group's other nodes (the network hop, one GPU per node), and the EP members on this node
  // (the NVLink hop).
  kEpInter,
  kEpIntra,
  // ZeRO-3's dense parameter groups: the ranks a parameter is sharded over (its gathers and
  // gradient reduce-scatters), the whole DP group unless plan.dp_shard makes it part of it;
  // and, under a dp_shard, the ranks holding the same shard (the shard's gradient all-reduce).
  kDpShard,
  kDpReplicate,
  // ZeRO++'s hpZ: the secondary partition a layer's backward gathers its parameters over.
  kDpSecondary,
  // ZeRO++'s qgZ: the two hops of its hierarchical gradient all-to-all, the shard group's
  // members on this rank's node (NVLink), then its members at this rank's in-node index on the
  // group's other nodes (the network).
  kDpShardIntra,
  kDpShardInter,
};
constexpr int kCommGroups = 12;
const char* to_string(CommGroup group);
// The groups whose traffic is the data-parallel gradient and parameter exchange: played on every
// group of the stage at once (their flows share the NICs), and priced only under ZeRO-3 when
// they sit inside a layer's passes.
constexpr bool data_parallel_kind(CommGroup g) {
  return g == CommGroup::kDp || g == CommGroup::kExpertDp || g == CommGroup::kDpShard ||
         g == CommGroup::kDpReplicate || g == CommGroup::kDpSecondary || g == CommGroup::kDpShardIntra ||
         g == CommGroup::kDpShardInter;
}

// NCCL streams of a device. Collectives of one stream run one after another; kInline is the
// compute stream itself (Megatron's TP collectives without overlap): compute waits.
// kSharded: ZeRO-3's parameter gathers and gradient reduce-scatters, one stream because they
// run over one process group, whose collectives PyTorch's ProcessGroupNCCL issues on one NCCL
// stream per device (FSDP's and DeepSpeed's alike; NCCL runs a communicator's operations in
// the order they are issued). kGradients: a sharded gradient's all-reduce across its replicas
// (plan.dp_shard), over a process group of its own and so on a stream of its own (FSDP's
// HYBRID_SHARD all-reduces over its inter-node group after the reduce-scatter): the next
// module's gathers do not queue behind it. kEpForward: DeepEP's NVLink hop, which runs beside
// its network hop.
enum class CommStream : uint8_t { kInline, kTensor, kSharded, kGradients, kEpForward };
constexpr int kCommStreams = 5;

struct CommOp {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CommPurpose purpose = CommPurpose::kTp;
  CommGroup group = CommGroup::kTp;
  CommStream stream = CommStream::kInline;
  double bytes = 0;  // per rank, as nccl-tests counts it
  int after = -1;      // compute op (index in the block) after which it is issued; -1: block start
  int waited_by = -1;  // compute op that cannot start before it completes; -1: none in the block
                       // (it completes before the step's optimizer does)
  // ZeRO-3 prefetch: issued at the start of repetition r for repetition r + 1 (repetition 0's own
  // copy is issued at the block's start); waited_by refers to the repetition it is for.
  bool prefetch = false;
  double time_s = 0;  // closed form, contention-free (priced once), arrival_wait_s included
  // Of time_s: the expected wait for the group's last member (models/cost/arrival_wait.hpp),
  // from the block's ops since the group's previous collective; the simulate tier plays it as a
  // delay before the flows.
  double arrival_wait_s = 0;
  // Of time_s: the framework's own kernels beside the collective on its stream (the per-rank
  // copies of a collective on a list of views, layer_program.cpp); played as a delay as well.
  double local_s = 0;
  CollectiveAlgo algo = CollectiveAlgo::kAuto;                 // what runs (the tuner's choice)
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;  // what runs (the tuner's choice)
  double wire_bytes = 0;  // bytes each rank of the group sends (traffic accounting)
  // The SMs its kernels take from compute beside it, in units of an NCCL collective's
  // (program_reduce.hpp, kOverlapChannels): 1 for NCCL; DeepEP's hops share its SM budget.
  double sm_share = 1;
};

struct OpBlock {
  const char* name = "";
  int repeat = 1;
  std::vector<ComputeOp> compute;
  std::vector<double> compute_s;  // priced once, compute_op_time_s
  std::vector<CommOp> comm;
  // Parameters one repetition holds on one GPU (dense and routed-expert): their gradients are
  // final when a weight-gradient pass finishes the repetition.
  double dense_params = 0;
  double expert_params = 0;
  double compute_total_s() const;
};

struct PassProgram {
  std::vector<OpBlock> blocks;
  double compute_total_s() const;
  bool empty() const { return blocks.empty(); }
};

// The passes a schedule plays: F, and either B+W together (kBackward) or B and W apart.
enum class PassKind : uint8_t { kForward, kBackward, kBackwardInput, kBackwardWeight };
constexpr int kPassKinds = 4;
const char* to_string(PassKind kind);

// One model chunk on one device (interleaved: a virtual stage; DualPipe: one direction).
struct ChunkProgram {
  int layers = 0;
  int moe_layers = 0;
  bool first = false;  // holds the embedding
  bool last = false;   // holds the output layer and the loss
  double dense_params = 0;   // parameters on one GPU outside the experts
  double expert_params = 0;  // routed-expert parameters on one GPU
  PassProgram pass[kPassKinds];
  const PassProgram& program(PassKind k) const { return pass[static_cast<int>(k)]; }
  PassProgram& program(PassKind k) { return pass[static_cast<int>(k)]; }
};

struct DeviceProgram {
  std::vector<ChunkProgram> chunks;
  // A schedule that overlaps a forward with a backward (fb_overlap.hpp): the pair of chunk f's
  // forward and chunk b's backward at [2 f + b]; empty otherwise.
  std::vector<PassProgram> paired;
  const PassProgram& pair(int forward_chunk, int backward_chunk) const {
    return paired[static_cast<std::size_t>(2 * forward_chunk + backward_chunk)];
  }
};

// What a pass costs once reduced (program_reduce.hpp): its makespan on one GPU, the compute
// alone, and the communication the compute stream waited for (exposed) by purpose.
struct PassCost {
  double time_s = 0;
  double compute_s = 0;
  double slowdown_s = 0;  // compute stretched by concurrent collectives (SMs taken by NCCL)
  double exposed_s[kCommPurposes] = {0, 0, 0, 0, 0};
  double async_tail_s = 0;   // collectives not waited in the pass, finishing after it
  double async_busy_s = 0;   // their total busy time on their streams
  double exposed_total_s() const;
};

}  // namespace trainsim
