#include "sim/topology.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "models/core/scenario_error.hpp"

namespace trainsim::sim {
namespace {

struct EdgeProps {
  int link = -1;  // TopologyLink index; -1 for a GPU-NIC attachment with no modelled link
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, EdgeProps>;

uint64_t mix(uint64_t x) {
  // splitmix64 finaliser: a cheap well-spread hash for ECMP choices.
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

struct Topology::Impl {
  Graph graph;
  // dist_to[dst switch] = hops from every vertex (switches only; others max) to dst, over the
  // surviving links; nominal_dist_to the same on the healthy fabric.
  mutable std::unordered_map<int, std::vector<uint16_t>> dist_to, nominal_dist_to;
  mutable std::vector<double> load;  // bytes in flight per directed link (adaptive routing)

  const std::vector<uint16_t>& distances(int dst, const std::vector<TopologyVertex>& vs,
                                         const std::vector<TopologyLink>& links,
                                         bool ignore_failures) const {
    auto& cache = ignore_failures ? nominal_dist_to : dist_to;
    auto it = cache.find(dst);
    if (it != cache.end()) return it->second;
    // BFS over switch vertices only (routes never transit a node).
    std::vector<uint16_t> d(vs.size(), std::numeric_limits<uint16_t>::max());
    std::vector<int> queue{dst};
    d[dst] = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const int u = queue[head];
      for (auto [e, end] = boost::out_edges(u, graph); e != end; ++e) {
        const int v = static_cast<int>(boost::target(*e, graph));
        if (vs[v].kind != VertexKind::kSwitch || d[v] != std::numeric_limits<uint16_t>::max())
          continue;
        const int l = graph[*e].link;
        if (!ignore_failures && l >= 0 && links[l].failed) continue;
        d[v] = d[u] + 1;
        queue.push_back(v);
      }
    }
    return cache.emplace(dst, std::move(d)).first->second;
  }
};

namespace {
// Deterministic draws for failed / degraded links (splitmix64 stream).
struct SeededStream {
  uint64_t state;
  uint64_t next() { return mix(state += 0x632be59bd9b4e019ull); }
  // k distinct picks from `pool` (partial Fisher-Yates), in draw order.
  std::vector<int> pick(std::vector<int> pool, int k) {
    k = std::min<int>(k, static_cast<int>(pool.size()));
    for (int i = 0; i < k; ++i) {
      const std::size_t j = i + next() % (pool.size() - i);
      std::swap(pool[i], pool[j]);
    }
    pool.resize(k);
    return pool;
  }
};
}  // namespace

LinkFaults link_faults(const FaultSpec& f) {
  LinkFaults lf;
  if (!f.enabled) return lf;
  lf.failed_links = f.failed_links;
  lf.failed_switch_links = f.failed_switch_links;
  lf.degraded_fraction = f.link_degradation.fraction;
  lf.degraded_bandwidth_factor = f.link_degradation.bandwidth_factor;
  lf.seed = f.seed;
  return lf;
}

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kNic:
      return "nic";
    case LinkKind::kSwitch:
      return "switch";
    case LinkKind::kPcie:
      return "pcie";
  }
  return "?";
}
const char* to_string(RoutingPolicy p) {
  return p == RoutingPolicy::kEcmpHash ? "ecmp" : p == RoutingPolicy::kDestinationMod ? "dmodk" : "adaptive";
}
RoutingPolicy routing_policy_from_string(const std::string& name, const std::string& path) {
  if (name == "ecmp") return RoutingPolicy::kEcmpHash;
  if (name == "dmodk") return RoutingPolicy::kDestinationMod;
  if (name == "adaptive") return RoutingPolicy::kAdaptive;
  throw ScenarioError(path, "unknown routing policy \"" + name + "\"; expected one of ecmp, dmodk, adaptive");
}

void Topology::add_load(const Route& route, double bytes) const {
  if (options_.routing != RoutingPolicy::kAdaptive) return;
  auto& load = impl_->load;
  if (load.empty()) load.assign(links_.size() * 2, 0.0);
  for (DirectedLink d : route.links) load[d] = std::max(0.0, load[d] + bytes);
}

Topology::Topology(const ClusterSpec& cluster, const TopologyOptions& options)
    : cluster_(cluster), options_(options), impl_(std::make_unique<Impl>()) {
  if (cluster_.nodes < 1 || cluster_.gpus_per_node < 1)
    throw ScenarioError("cluster", "a cluster needs at least one node and one GPU per node");
  if (options_.switch_radix < 2) throw ScenarioError("switch_radix", "must be at least 2");
  build();
  apply_faults();
}
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

int Topology::add_vertex(VertexKind kind, int node, int level, int index, std::string name) {
  vertices_.push_back(TopologyVertex{kind, node, level, index, std::move(name)});
  boost::add_vertex(impl_->graph);
  max_level_ = std::max(max_level_, level);
  return static_cast<int>(vertices_.size()) - 1;
}

int Topology::add_link(LinkKind kind, int a, int b, double bw, double latency, std::string name) {
  links_.push_back(TopologyLink{std::move(name), kind, a, b, bw, latency, false, bw});
  const int id = static_cast<int>(links_.size()) - 1;
  boost::add_edge(a, b, EdgeProps{id}, impl_->graph);
  return id;
}

int Topology::nic_index_of(int gpu) const {
  const int nics = std::max(1, cluster_.network.nics_per_node);
  return local_of(gpu) * nics / cluster_.gpus_per_node;
}
int Topology::cpu_vertex(int node) const { return cpu_of_node_.empty() ? -1 : cpu_of_node_[node]; }

int Topology::leaf_of_gpu(int gpu) const {
  if (nic_link_.empty()) return -1;
  const int nics = std::max(1, cluster_.network.nics_per_node);
  const int l = nic_link_[node_of(gpu) * nics + nic_index_of(gpu)];
  return l < 0 ? -1 : links_[l].b;
}

void Topology::build() {
  const int G = cluster_.total_gpus();
  for (int g = 0; g < G; ++g)
    add_vertex(VertexKind::kGpu, node_of(g), 0, local_of(g), "gpu" + std::to_string(g));
  build_node_local();
  const bool has_network = cluster_.network.nic_bandwidth_bytes_per_s > 0;
  if (!has_network) {
    if (cluster_.nodes > 1)
      throw ScenarioError("cluster.network", "a multi-node cluster needs a network");
    kind_ = "single-node";
    return;
  }
  const std::string& t = cluster_.network.topology;
  kind_ = t.empty() ? "fat-tree" : t;
  std::string names;
  for (const TopologyKind& k : topology_kinds()) {
    if (kind_ == k.name) {
      TopologyBuilder b(*this);
      k.build(b);
      return;
    }
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  }
  throw ScenarioError("cluster.network.topology",
                      "unknown topology \"" + kind_ + "\"; expected one of " + names);
}

void Topology::build_node_local() {
  const int N = cluster_.nodes, g = cluster_.gpus_per_node;
  nvlink_of_gpu_.assign(cluster_.total_gpus(), -1);
  pcie_of_gpu_.assign(cluster_.total_gpus(), -1);
  // NVLink figures count both directions; one direction of a GPU's NVSwitch link carries half,
  // times the sustained share (same as models' fabric_terms()).
  const double nvl_bw =
      cluster_.intra_node.bandwidth_bytes_per_s / 2 * cluster_.intra_node.efficiency;
  const double nvl_lat = cluster_.intra_node.latency_s / 2;  // GPU->switch->GPU = latency_s
  if (g > 1 && nvl_bw > 0) {
    nvswitch_base_ = static_cast<int>(vertices_.size());
    for (int n = 0; n < N; ++n)
      add_vertex(VertexKind::kNvSwitch, n, 0, 0, "node" + std::to_string(n) + "_nvswitch");
    for (int gpu = 0; gpu < N * g; ++gpu)
      nvlink_of_gpu_[gpu] = add_link(LinkKind::kNvlink, gpu, nvswitch_base_ + node_of(gpu), nvl_bw,
                                     nvl_lat, "nvlink_gpu" + std::to_string(gpu));
  }
  if (options_.pcie_links && cluster_.pcie_bandwidth_bytes_per_s > 0) {
    for (int n = 0; n < N; ++n)
      cpu_of_node_.push_back(
          add_vertex(VertexKind::kCpu, n, 0, 0, "node" + std::to_string(n) + "_cpu"));
    for (int gpu = 0; gpu < N * g; ++gpu)
      pcie_of_gpu_[gpu] =
          add_link(LinkKind::kPcie, gpu, cpu_of_node_[node_of(gpu)],
                   cluster_.pcie_bandwidth_bytes_per_s, 1e-6, "pcie_gpu" + std::to_string(gpu));
  }
  if (cluster_.network.nic_bandwidth_bytes_per_s > 0) {
    const int nics = std::max(1, cluster_.network.nics_per_node);
    nic_vertex_.resize(static_cast<std::size_t>(N) * nics);
    nic_link_.assign(static_cast<std::size_t>(N) * nics, -1);
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < nics; ++k)
        nic_vertex_[n * nics + k] = add_vertex(
            VertexKind::kNic, n, 0, k, "node" + std::to_string(n) + "_nic" + std::to_string(k));
    for (int gpu = 0; gpu < N * g; ++gpu)  // GPUDirect path via the PCIe switch: not a bottleneck
      for (int k = 0; k < nics_of_gpu(gpu); ++k)
        boost::add_edge(gpu, nic_vertex_[node_of(gpu) * nics + nic_index_of(gpu) + k], EdgeProps{-1},
                        impl_->graph);
  }
}

int TopologyBuilder::nics_per_node() const { return std::max(1, t_.cluster_.network.nics_per_node); }
int TopologyBuilder::add_switch(int level, int index, std::string name) {
  return t_.add_vertex(VertexKind::kSwitch, -1, level, index, std::move(name));
}
int TopologyBuilder::add_link(LinkKind kind, int a, int b, double bw, double latency, std::string name) {
  return t_.add_link(kind, a, b, bw, latency, std::move(name));
}
double TopologyBuilder::port_bandwidth_bytes_per_s() const {
  return t_.cluster_.network.nic_bandwidth_bytes_per_s * t_.cluster_.network.efficiency;
}
void TopologyBuilder::attach_nic(int i, int switch_vertex) {
  const int nics = nics_per_node();
  t_.nic_link_[i] = t_.add_link(LinkKind::kNic, t_.nic_vertex_[i], switch_vertex, port_bandwidth_bytes_per_s(),
                                t_.cluster_.network.latency_s / 2,
                                "nic_node" + std::to_string(i / nics) + "_" + std::to_string(i % nics));
}

int Topology::nics_of_gpu(int) const {
  const int nics = std::max(1, cluster_.network.nics_per_node);
  return nics > cluster_.gpus_per_node ? nics / cluster_.gpus_per_node : 1;
}

int Topology::nic_of_channel(int gpu, int channel) const {
  const int first = nic_index_of(gpu);
  return channel < 0 ? first : first + channel % nics_of_gpu(gpu);
}

Route Topology::route(int src, int dst, uint64_t salt, bool ignore_failures, int channel) const {
  Route r;
  auto use = [&](int link, bool down) {
    if (!ignore_failures && links_[link].failed)
      throw std::logic_error("topology: the route from gpu" + std::to_string(src) + " to gpu" +
                             std::to_string(dst) + " needs failed link " + links_[link].name);
    r.links.push_back(directed(link, down));
    r.latency_s += links_[link].latency_s;
  };
  if (src == dst) return r;
  if (node_of(src) == node_of(dst)) {
    if (nvlink_of_gpu_[src] < 0) return r;  // no intra-node link modelled
    use(nvlink_of_gpu_[src], false);
    use(nvlink_of_gpu_[dst], true);
    return r;
  }
  const int nics = std::max(1, cluster_.network.nics_per_node);
  const int src_nic = nic_link_[node_of(src) * nics + nic_of_channel(src, channel)];
  const int dst_nic = nic_link_[node_of(dst) * nics + nic_of_channel(dst, channel)];
  use(src_nic, false);
  int u = links_[src_nic].b;
  const int target = links_[dst_nic].b;
  if (u != target) {
    const auto& dist = impl_->distances(target, vertices_, links_, ignore_failures);
    auto usable = [&](const auto& e) {
      const int l = impl_->graph[e].link;
      return ignore_failures || l < 0 || !links_[l].failed;
    };
    if (dist[u] == std::numeric_limits<uint16_t>::max())
      throw std::logic_error("topology: no route between switches " + vertices_[u].name + " and " +
                             vertices_[target].name);
    uint64_t key = options_.routing == RoutingPolicy::kEcmpHash
                       ? mix(mix(static_cast<uint64_t>(src) * 0x100000001b3ull + dst) ^ salt)
                       : static_cast<uint64_t>(dst);
    int hop = 0;
    while (u != target) {
      // Candidates: every edge to a switch one hop closer (parallel cables count separately).
      int chosen_edge_link = -1, chosen_v = -1, count = 0;
      for (auto [e, end] = boost::out_edges(u, impl_->graph); e != end; ++e) {
        const int v = static_cast<int>(boost::target(*e, impl_->graph));
        if (vertices_[v].kind == VertexKind::kSwitch && dist[v] + 1 == dist[u] && usable(*e)) ++count;
      }
      uint64_t pick;
      if (options_.routing == RoutingPolicy::kAdaptive) {
        // The candidate whose path looks least loaded: the link's bytes in flight, or those of
        // the best link one hop further when that is busier (a leaf-spine-leaf route is
        // balanced on both its switch links). Scanning starts at the hashed candidate so ties
        // spread.
        const auto& load = impl_->load;
        auto link_load = [&](int l, int from) {
          return load.empty() ? 0.0 : load[directed(l, links_[l].a != from)];
        };
        auto next_best = [&](int v) {
          if (v == target) return 0.0;
          double b = std::numeric_limits<double>::max();
          for (auto [e2, end2] = boost::out_edges(v, impl_->graph); e2 != end2; ++e2) {
            const int w = static_cast<int>(boost::target(*e2, impl_->graph));
            if (vertices_[w].kind != VertexKind::kSwitch || dist[w] + 1 != dist[v] || !usable(*e2)) continue;
            b = std::min(b, link_load(impl_->graph[*e2].link, v));
          }
          return b == std::numeric_limits<double>::max() ? 0.0 : b;
        };
        const uint64_t start = mix(key + hop) % count;
        double best = std::numeric_limits<double>::max();
        uint64_t best_rank = count;
        pick = start;
        uint64_t k = 0;
        for (auto [e, end] = boost::out_edges(u, impl_->graph); e != end; ++e) {
          const int v = static_cast<int>(boost::target(*e, impl_->graph));
          if (vertices_[v].kind != VertexKind::kSwitch || dist[v] + 1 != dist[u] || !usable(*e)) continue;
          const double score = std::max(link_load(impl_->graph[*e].link, u), next_best(v));
          const uint64_t rank = (k + count - start) % count;
          if (score < best || (score == best && rank < best_rank)) {
            best = score;
            best_rank = rank;
            pick = k;
          }
          ++k;
        }
      } else if (options_.routing == RoutingPolicy::kEcmpHash) {
        pick = mix(key + hop) % count;
      } else {
        pick = key % count;  // destination-mod-k: next digit of the destination at each level
        key /= count;
      }
      for (auto [e, end] = boost::out_edges(u, impl_->graph); e != end; ++e) {
        const int v = static_cast<int>(boost::target(*e, impl_->graph));
        if (vertices_[v].kind != VertexKind::kSwitch || dist[v] + 1 != dist[u] || !usable(*e)) continue;
        if (pick-- == 0) {
          chosen_edge_link = impl_->graph[*e].link;
          chosen_v = v;
          break;
        }
      }
      use(chosen_edge_link, links_[chosen_edge_link].a != u);
      u = chosen_v;
      ++hop;
    }
  }
  use(dst_nic, true);
  return r;
}

int Topology::switch_hops(int src, int dst) const {
  if (node_of(src) == node_of(dst)) return -1;
  const int a = leaf_of_gpu(src), b = leaf_of_gpu(dst);
  if (a == b) return 0;
  return impl_->distances(b, vertices_, links_, false)[a];
}

int Topology::lowest_common_switch(int src, int dst) const {
  if (node_of(src) == node_of(dst)) return nvswitch_base_ < 0 ? -1 : nvswitch_base_ + node_of(src);
  const Route r = route(src, dst, 0);
  // The highest vertex on the route (by level) is where the two branches meet.
  int best = -1;
  for (DirectedLink d : r.links) {
    const auto& l = links_[link_of(d)];
    for (int v : {l.a, l.b})
      if (vertices_[v].kind == VertexKind::kSwitch &&
          (best < 0 || vertices_[v].level > vertices_[best].level))
        best = v;
  }
  return best;
}

double Topology::bisection_bandwidth_bytes_per_s() const {
  using namespace boost;
  using Traits = adjacency_list_traits<vecS, vecS, directedS>;
  using FlowGraph =
      adjacency_list<vecS, vecS, directedS, no_property,
                     property<edge_capacity_t, double,
                              property<edge_residual_capacity_t, double,
                                       property<edge_reverse_t, Traits::edge_descriptor>>>>;
  const int V = static_cast<int>(vertices_.size());
  FlowGraph fg(V + 2);
  auto cap = get(edge_capacity, fg);
  auto rev = get(edge_reverse, fg);
  auto add = [&](int a, int b, double c) {
    auto e1 = boost::add_edge(a, b, fg).first;
    auto e2 = boost::add_edge(b, a, fg).first;
    cap[e1] = c;
    cap[e2] = 0;
    rev[e1] = e2;
    rev[e2] = e1;
  };
  const double inf = 1e30;
  for (const auto& l : links_) {
    if (l.kind == LinkKind::kPcie || l.failed) continue;
    add(l.a, l.b, l.bandwidth_bytes_per_s);
    add(l.b, l.a, l.bandwidth_bytes_per_s);
  }
  for (auto [e, end] = boost::edges(impl_->graph); e != end; ++e)
    if (impl_->graph[*e].link < 0) {
      const int a = static_cast<int>(source(*e, impl_->graph)),
                b = static_cast<int>(target(*e, impl_->graph));
      add(a, b, inf);
      add(b, a, inf);
    }
  const int G = gpu_count(), s = V, t = V + 1;
  for (int g = 0; g < G; ++g) {
    if (g < G / 2)
      add(s, g, inf);
    else
      add(g, t, inf);
  }
  return push_relabel_max_flow(fg, s, t);
}

int Topology::find_link(const std::string& name) const {
  for (std::size_t i = 0; i < links_.size(); ++i)
    if (links_[i].name == name) return static_cast<int>(i);
  return -1;
}

void Topology::apply_faults() {
  const LinkFaults& f = options_.faults;
  if (!f.any()) return;
  std::vector<bool> down(links_.size(), false);
  for (std::size_t i = 0; i < f.failed_links.size(); ++i) {
    const int l = find_link(f.failed_links[i]);
    if (l < 0) {
      // A few valid names: switch-to-switch links first (what usually fails over), then a NIC.
      std::string examples;
      int shown = 0;
      for (LinkKind want : {LinkKind::kSwitch, LinkKind::kNic, LinkKind::kNvlink}) {
        int of_kind = 0;
        for (const auto& link : links_) {
          if (link.kind != want || shown >= 5 || of_kind >= (want == LinkKind::kSwitch ? 3 : 1)) continue;
          examples += (shown++ ? ", " : "") + link.name;
          ++of_kind;
        }
      }
      throw ScenarioError("training.faults.failed_links[" + std::to_string(i) + "]",
                          "no link \"" + f.failed_links[i] + "\" in this " + kind_ + " of " +
                              std::to_string(links_.size()) + " links; names look like " +
                              examples);
    }
    if (!down[l]) failed_.push_back(l);
    down[l] = true;
  }
  std::vector<int> pool;
  for (std::size_t i = 0; i < links_.size(); ++i)
    if (links_[i].kind == LinkKind::kSwitch && !down[i]) pool.push_back(static_cast<int>(i));
  if (f.failed_switch_links > static_cast<int>(pool.size()))
    throw ScenarioError("training.faults.failed_switch_links",
                        std::to_string(f.failed_switch_links) + " exceeds the " +
                            std::to_string(pool.size()) +
                            " switch-to-switch links of this " + kind_ + " that are up");
  SeededStream failures{f.seed};
  for (int l : failures.pick(pool, f.failed_switch_links)) {
    failed_.push_back(l);
    down[l] = true;
  }
  for (int l : failed_) links_[l].failed = true;
  if (f.degraded_fraction > 0 && f.degraded_bandwidth_factor < 1) {
    pool.clear();
    for (std::size_t i = 0; i < links_.size(); ++i)
      if (links_[i].kind == LinkKind::kSwitch && !down[i]) pool.push_back(static_cast<int>(i));
    // round(fraction x links): 10% of 16 uplinks degrades 2 of them.
    const int count = static_cast<int>(std::lround(f.degraded_fraction * pool.size()));
    SeededStream degradations{f.seed ^ 0x5bd1e995ull};
    degraded_ = degradations.pick(pool, count);
    for (int l : degraded_) links_[l].bandwidth_bytes_per_s *= f.degraded_bandwidth_factor;
  }
  impl_->dist_to.clear();
}

std::string Topology::disconnection(const std::vector<int>& gpus) const {
  if (failed_.empty() || gpus.empty()) return "";
  std::vector<int> per_node(cluster_.nodes, 0);
  for (int g : gpus) ++per_node[node_of(g)];
  int nodes_used = 0;
  for (int c : per_node) nodes_used += c > 0;
  for (int g : gpus) {
    const int nv = nvlink_of_gpu_.empty() ? -1 : nvlink_of_gpu_[g];
    if (nv >= 0 && links_[nv].failed && per_node[node_of(g)] > 1)
      return "link " + links_[nv].name + " failed: GPU " + std::to_string(g) +
             " is cut off from the other GPUs of node " + std::to_string(node_of(g));
  }
  if (nodes_used <= 1) return "";
  const int nics = std::max(1, cluster_.network.nics_per_node);
  for (int g : gpus) {
    const int l = nic_link_.empty() ? -1 : nic_link_[node_of(g) * nics + nic_index_of(g)];
    if (l < 0) continue;
    if (links_[l].failed)
      return "link " + links_[l].name + " failed: GPU " + std::to_string(g) + " (node " +
             std::to_string(node_of(g)) + ") has no network path to the job's other nodes";
  }
  // One connected switch fabric between the GPUs' leaves.
  const int first_leaf = leaf_of_gpu(gpus.front());
  if (first_leaf < 0) return "";
  const auto& dist = impl_->distances(first_leaf, vertices_, links_, false);
  for (int g : gpus) {
    const int leaf = leaf_of_gpu(g);
    if (leaf < 0 || dist[leaf] != std::numeric_limits<uint16_t>::max()) continue;
    // The cut: failed links with exactly one end among the switches that still reach `leaf`.
    const auto& side = impl_->distances(leaf, vertices_, links_, false);
    std::string cut;
    int named = 0, total = 0;
    for (int l : failed_) {
      const bool a_in = side[links_[l].a] != std::numeric_limits<uint16_t>::max();
      const bool b_in = side[links_[l].b] != std::numeric_limits<uint16_t>::max();
      if (a_in == b_in) continue;
      ++total;
      if (named < 6) {
        cut += (cut.empty() ? "" : ", ") + links_[l].name;
        ++named;
      }
    }
    if (total > named) cut += ", ...";
    return "failed link" + std::string(total == 1 ? " " : "s ") + cut + " cut " +
           vertices_[leaf].name + " (GPU " + std::to_string(g) + ") off from " +
           vertices_[first_leaf].name + " (GPU " + std::to_string(gpus.front()) + ")";
  }
  return "";
}

}  // namespace trainsim::sim
