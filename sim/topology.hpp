// The cluster's network as a graph (Boost.Graph), independent of SimGrid: every GPU, NVSwitch,
// NIC port and network switch is a vertex, every NVLink / NIC / switch-to-switch cable / PCIe
// lane group is an edge carrying one split-duplex link. The simulator turns the links into
// SimGrid links (platform.cpp); analysis (hop distances, switch levels, bisection bandwidth) and
// route choice (shortest paths, ECMP by flow hash or destination-mod-k) happen here, so they are
// unit-tested without an event engine (CONVENTIONS.md #2).
//
//   rail-optimized, 2 tiers (GPU i of every node on rail i's leaf):
//
//          spine0 ....... spineS            level 2
//          /    \          /   \            (every leaf to every spine)
//     leaf(r0) leaf(r1) ... leaf(r7)        level 1, one per rail (per 32 nodes)
//        |        |           |
//     nic0     nic1   ...   nic7            NIC links (one per GPU on DGX nodes)
//        |        |           |
//      gpu0 --- gpu1 -NVSwitch- gpu7        NVLink links to the node's NVSwitch
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/core/leaf_switch.hpp"
#include "models/core/specs.hpp"

namespace trainsim::sim {

enum class VertexKind { kGpu, kNvSwitch, kNic, kSwitch, kCpu };
enum class LinkKind { kNvlink, kNic, kSwitch, kPcie };
// How a flow picks among equal-cost next hops: a hash of (source, destination, flow salt) as
// switches' ECMP does, destination-mod-k (deterministic, conflict-free for shift patterns
// such as rings on fat-trees; what "topology-aware routing" means in scenarios/claims), or
// adaptive: the candidate carrying the fewest bytes in flight when the flow starts (InfiniBand /
// Spectrum-X adaptive routing, which AI fabrics run; ties broken by the ECMP hash).
enum class RoutingPolicy { kEcmpHash, kDestinationMod, kAdaptive };

const char* to_string(LinkKind kind);
const char* to_string(RoutingPolicy policy);
RoutingPolicy routing_policy_from_string(const std::string& name, const std::string& path);

// Links down or slow for the whole run (training.faults). Failed links carry nothing:
// routes (the per-destination BFS and the ECMP candidate set) skip them, so flows take the
// surviving equal-cost paths. Degraded links keep routing but run at bandwidth_factor.
struct LinkFaults {
  std::vector<std::string> failed_links;  // TopologyLink names (training.faults.failed_links)
  int failed_switch_links = 0;            // plus this many switch-to-switch links, drawn with seed
  double degraded_fraction = 0;           // share of the (surviving) switch-to-switch links ...
  double degraded_bandwidth_factor = 1;   // ... running at this share of their bandwidth
  uint64_t seed = 1;
  bool any() const {
    return !failed_links.empty() || failed_switch_links > 0 ||
           (degraded_fraction > 0 && degraded_bandwidth_factor < 1);
  }
};
// The link faults of a scenario's training.faults (none when the section is absent).
LinkFaults link_faults(const FaultSpec& faults);

// Knobs the ClusterSpec does not carry (yet): shapes of the switch fabric.
struct TopologyOptions {
  int switch_radix = kDefaultSwitchRadix;  // ports per network switch; half go down, half up in a fat-tree
  int fat_tree_tiers = 0;       // 0 = smallest that fits (2 or 3); 1 = all leaves on one switch
  std::vector<int> torus_dims;  // nodes per dimension; empty = near-square 2D (3D from 512 nodes)
  int dragonfly_nodes_per_router = 4;  // p; routers per group a = 2p (balanced dragonfly)
  double switch_hop_latency_s = 0;     // added per switch-to-switch link (0: all network latency
                                    // sits on the NIC links so any route costs network.latency_s)
  RoutingPolicy routing = RoutingPolicy::kEcmpHash;
  bool pcie_links = true;  // one GPU<->CPU PCIe link per GPU (for offload in the step simulator)
  LinkFaults faults;
};

struct TopologyVertex {
  VertexKind kind = VertexKind::kGpu;
  int node = -1;  // owning node (GPUs, NVSwitches, NICs, CPUs); -1 for network switches
  int level = 0;  // 0 for node-local vertices; 1 leaf / router, 2 spine, 3 core
  int index = 0;  // GPU local index, NIC index within the node, or switch number at its level
  std::string name;
};

// One split-duplex link; "up" is the direction from vertex a to vertex b.
struct TopologyLink {
  std::string name;
  LinkKind kind = LinkKind::kSwitch;
  int a = -1, b = -1;
  double bandwidth_bytes_per_s = 0;  // per direction, protocol efficiency already applied
  double latency_s = 0;
  bool failed = false;                       // LinkFaults: never routed
  double nominal_bandwidth_bytes_per_s = 0;  // before degradation (== bandwidth when healthy)
};

// A directed use of a link: link index * 2 + (0 = up a->b, 1 = down b->a).
using DirectedLink = int32_t;
inline DirectedLink directed(int link, bool down) { return link * 2 + (down ? 1 : 0); }
inline int link_of(DirectedLink d) { return d >> 1; }
inline bool is_down(DirectedLink d) { return (d & 1) != 0; }

struct Route {
  std::vector<DirectedLink> links;
  double latency_s = 0;
};

class TopologyBuilder;

class Topology {
 public:
  Topology(const ClusterSpec& cluster, const TopologyOptions& options = {});
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  const ClusterSpec& cluster() const { return cluster_; }
  const TopologyOptions& options() const { return options_; }
  const std::string& kind() const { return kind_; }  // "single-node", "fat-tree", ...
  int gpu_count() const { return cluster_.total_gpus(); }
  int node_of(int gpu) const { return gpu / cluster_.gpus_per_node; }
  int local_of(int gpu) const { return gpu % cluster_.gpus_per_node; }
  // NIC index (within the node) a GPU's network traffic leaves through: GPU i uses NIC
  // i * nics / gpus_per_node, so two GPUs share a NIC on a node with half as many NICs.
  int nic_index_of(int gpu) const;
  // The NICs a GPU reaches: its own (nic_index_of) and, on nodes with more NICs than GPUs, the
  // next nics_per_node / gpus_per_node ones. Channel c uses the (c mod count)-th (-1: the first).
  int nics_of_gpu(int gpu) const;
  int nic_of_channel(int gpu, int channel) const;
  int leaf_of_gpu(int gpu) const;  // vertex of the switch the GPU's NIC plugs into; -1 if none

  const std::vector<TopologyVertex>& vertices() const { return vertices_; }
  const std::vector<TopologyLink>& links() const { return links_; }
  int gpu_vertex(int gpu) const { return gpu; }  // GPUs are vertices 0..G-1
  int cpu_vertex(int node) const;                // -1 without PCIe links

  // The links a transfer from GPU src to GPU dst crosses. flow_salt varies the ECMP choice
  // between flows of the same pair. Cost O(hops) after a per-destination-switch BFS (cached).
  // Failed links are skipped; ignore_failures routes as on the healthy fabric (to count the
  // flows a failure rerouted). Throws std::logic_error when no surviving path exists (callers
  // check disconnection() first).
  Route route(int src_gpu, int dst_gpu, uint64_t flow_salt = 0, bool ignore_failures = false,
              int channel = -1) const;
  // Bytes in flight on a route's links, for adaptive routing (the platform adds a flow's bytes
  // when it starts and removes them when it completes).
  void add_load(const Route& route, double bytes) const;

  // Link faults as applied (options().faults resolved to link indices).
  bool has_link_faults() const { return !failed_.empty() || !degraded_.empty(); }
  const std::vector<int>& failed_links() const { return failed_; }
  const std::vector<int>& degraded_links() const { return degraded_; }
  // Why the failed links keep some of `gpus` from reaching the others (naming the link); empty
  // when every pair still has a path. A job spanning nodes needs every GPU's NIC link and one
  // connected switch fabric between their leaves; GPUs sharing a node need their NVLinks.
  std::string disconnection(const std::vector<int>& gpus) const;
  // Index of the link with this name, -1 if none.
  int find_link(const std::string& name) const;
  // Switch-to-switch hops between the two GPUs' leaves (0 under one leaf; -1 same node).
  int switch_hops(int src_gpu, int dst_gpu) const;
  // Vertex of the lowest switch above both GPUs (the NVSwitch for one node); -1 if none.
  int lowest_common_switch(int src_gpu, int dst_gpu) const;
  // Highest switch level in the fabric (0 single node, 1 one leaf, 2 leaf-spine, 3 three-tier).
  int levels() const { return max_level_; }
  // Max-flow / min-cut bandwidth (bytes/s, one direction) between GPUs [0, G/2) and [G/2, G)
  // over NIC and switch links (Boost push-relabel): the fabric's bisection bandwidth.
  // Failed links count as cut.
  double bisection_bandwidth_bytes_per_s() const;

 private:
  friend class TopologyBuilder;
  struct Impl;
  void build();
  int add_vertex(VertexKind kind, int node, int level, int index, std::string name);
  int add_link(LinkKind kind, int a, int b, double bw, double latency, std::string name);
  void build_node_local();
  void apply_faults();

  ClusterSpec cluster_;
  TopologyOptions options_;
  std::string kind_;
  std::vector<TopologyVertex> vertices_;
  std::vector<TopologyLink> links_;
  std::vector<int> nvlink_of_gpu_;  // link index or -1
  std::vector<int> nic_link_;       // per (node * nics + nic): link index NIC<->leaf, or -1
  std::vector<int> nic_vertex_;     // per (node * nics + nic)
  std::vector<int> pcie_of_gpu_;
  std::vector<int> cpu_of_node_;
  int nvswitch_base_ = -1;  // vertex of node 0's NVSwitch (nodes consecutive), -1 if none
  int max_level_ = 0;
  std::vector<int> failed_, degraded_;
  std::unique_ptr<Impl> impl_;
};

// What a topology file sees while it builds the switch fabric above the nodes (the GPUs,
// NVSwitches, NICs and PCIe links exist already): add switches and links, plug each NIC into
// a switch. One file per topology (sim/topology_<name>.cpp) and one line in
// sim/topology_registry.cpp (CONVENTIONS.md #17).
class TopologyBuilder {
 public:
  explicit TopologyBuilder(Topology& topo) : t_(topo) {}
  const ClusterSpec& cluster() const { return t_.cluster_; }
  const TopologyOptions& options() const { return t_.options_; }
  int nics_per_node() const;
  int nic_count() const { return static_cast<int>(t_.nic_vertex_.size()); }  // nodes x NICs
  int add_switch(int level, int index, std::string name);
  int add_link(LinkKind kind, int a, int b, double bandwidth_bytes_per_s, double latency_s,
               std::string name);
  // Plugs NIC i (node i / nics_per_node, NIC i % nics_per_node) into `switch_vertex` with one
  // NIC link at the sustained port rate and half the network latency.
  void attach_nic(int i, int switch_vertex);
  double port_bandwidth_bytes_per_s() const;  // one NIC port, sustained
  const std::string& vertex_name(int v) const { return t_.vertices_[v].name; }
  const std::vector<TopologyLink>& links() const { return t_.links_; }

 private:
  Topology& t_;
};

// The switch tiers above a set of leaves (shared by fat-tree and rail-optimized): one switch
// over all leaves (tiers 1), leaf-spine (2) or pods of leaves under aggregation switches and a
// core (3). Each leaf gets as many uplinks as its attached NIC ports divided by the
// oversubscription (rounded up, one at least, at most the radix's upper half), each at the port
// rate, so a small cluster's leaf is not narrowed to a sliver of a port per spine.
void build_switch_tiers(TopologyBuilder& b, const std::vector<int>& leaves, int tiers);

struct TopologyKind {
  const char* name;  // cluster.network.topology
  void (*build)(TopologyBuilder&);
};
// Every topology, in registry order (sim/topology_registry.cpp).
const std::vector<TopologyKind>& topology_kinds();

}  // namespace trainsim::sim
