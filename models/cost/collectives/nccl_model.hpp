// NCCL's tuning constants and the terms every algorithm's cost reads. Constants are NCCL 2.30.7
// (NVIDIA/nccl@5067397c, src/graph/tuning.cc ncclTunerConstantsDefaults, nvlsEfficiency,
// treeCorrectionFactor; src/graph/search.cc speed arrays), the same values as the
// nccl_tuning records of ../shared/data/kernel_benchmarks_visible.json. Latencies in us and
// bandwidths in GB/s as NCCL writes them; converted to SI at the point of use.
#pragma once

#include "models/cost/collectives/collective_cost.hpp"

namespace trainsim::nccl {

// Table indices (src/include/plugin/nccl_tuner.h).
enum Algo { kTree = 0, kRing = 1, kCollnetDirect = 2, kCollnetChain = 3, kNvls = 4, kNvlsTree = 5,
            kPat = 6, kAlgoCount = 7 };
enum Proto { kLL = 0, kLL128 = 1, kSimple = 2 };
enum Hw { kNvlink = 0, kPci = 1, kNet = 2 };

// baseLatencies[algorithm][protocol], us.
inline constexpr double kBaseLatencyUs[kAlgoCount][3] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
// hwLatencies[NVLINK | PCI | NET][algorithm][protocol], us per step / hop.
inline constexpr double kHwLatencyUs[3][kAlgoCount][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
// Columns: 1 node, 2 nodes, more. llMaxBws rows: GPU arch on one node; on several nodes the CPU
// vendor (row 0 Intel, row 1 AMD); trainsim assumes Intel hosts for the multi-node rows.
inline constexpr double kLlMaxBwGBs[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
inline constexpr double kPerChMaxRingLL128GBs[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
inline constexpr double kPerChMaxTreeLL128GBs[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
inline constexpr double kPerChMaxTreeGBs[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
inline constexpr double kPerChMaxNvlsTreeGBs[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
inline constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// Protocol refinements of ncclTopoTuneModel ("Various model refinements").
inline constexpr double kRingLLFactor = 0.5;
inline constexpr double kRingLL128Factor = 0.92;
inline constexpr double kTreeFactor = 0.92;
inline constexpr double kTreeLLDivisor = 3.8;
inline constexpr double kTreeLL128FactorOneNode = 7.0 / 9.0;
inline constexpr double kTreeLL128FactorMultiNode = 120.0 / 128.0;
inline constexpr double kPatFactor = 0.75;
inline constexpr double kCollnetDirectHopperFactor = 0.85;
// Latency terms: network post overhead (x86 Intel; x3 for Simple), CollNet Direct arity
// serialisation, PAT's linear and log terms, the multi-node ring plateau for Simple.
inline constexpr double kNetOverheadUs = 1.0;
inline constexpr double kNetOverheadSimpleFactor = 3.0;
inline constexpr double kCollnetArityUs = 0.4;
inline constexpr double kPatUsPerRank = 2.8;
inline constexpr double kPatLogDivisor = 3.5;
inline constexpr double kRingPlateauFactor = 1.4;       // sm80 and later
inline constexpr double kRingPlateauFactorOld = 1.9;    // before sm80
// treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B .. 512 MiB.
inline constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
inline constexpr int kMaxRingChannels = 32;  // MAXCHANNELS / 2 (src/init.cc ringGraph)
inline constexpr int kMaxNvlsArity = 32;     // NCCL_MAX_NVLS_ARITY (src/include/device.h)
// The NET latencies above were tuned on InfiniBand fabrics whose one-way latency the loader's
// default network.latency (5 us) stands for; a cluster declaring another latency shifts every
// inter-node step by the difference (NCCL's graph latencyInter, added once more for Simple's
// flush). NCCL's NVLink / PCI step latencies are used as they are: they are what NCCL's
// kernels take per step, not a link's propagation delay (intra_node.latency, which the
// simulator's links carry).
inline constexpr double kReferenceNetLatencyS = 5e-6;

int proto_index(CollectiveProtocol p);  // kLL / kLL128 / kSimple
int arch_index(GpuArch a);
// floor(log2(n)) for n >= 1 (NCCL's log2i), 0 below.
int log2i(double n);

// What every algorithm reads about one group on one fabric, derived once.
struct Terms {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 1, nodes = 1;
  double ppn = 1;          // ranks per node, as NCCL's float nRanks / nNodes
  int max_ppn = 1;         // the busiest node
  int nics = 1;            // NICs the group reaches per node
  int arch = 1;            // table row
  int node_index = 0;      // table column: 1 node, 2 nodes, more
  bool nvlink = true;      // NVLink (else PCI) latency table inside a node
  bool nvls = false, collnet = false, ll128 = true;
  double intra_bytes_per_s = 0;    // per GPU per direction; infinite with one rank per node
  double net_node_bytes_per_s = 0; // per node per direction into the fabric, taper applied
  int ring_channels = 1;           // NCCL's ring / tree channel count (search.cc emulation)
  double net_offset_us = 0;
  FabricTerms fabric;

  // Per-step latency inside a node (NVLink or PCI table) for algorithm a, protocol p.
  double intra_lat_us(int a, int p) const;
  // Per-step latency across nodes: the NET table (Tree's entry with one rank per node, as NCCL
  // does), plus latencyInter (twice for Simple).
  double inter_lat_us(int a, int p) const;
  // Bus bandwidth of a Simple ring (bytes/s): NVLink per GPU inside a node, the node's share
  // of the fabric across nodes, whichever is lower.
  double ring_bus_bytes_per_s() const;
  double llmax_bytes_per_s() const;  // llMaxBws for this arch / node count
};
Terms make_terms(CollectiveOp op, const GroupShape& group, const FabricTerms& fabric);

}  // namespace trainsim::nccl
