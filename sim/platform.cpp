#include "sim/platform.hpp"

#include <xbt/log.h>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "sim/link_stats.hpp"

namespace trainsim::sim {
namespace sg4 = simgrid::s4u;
namespace {

Platform* g_platform = nullptr;

// A NetZone whose routes come from the Topology: one zone holds every host and link.
class TopologyZone : public simgrid::kernel::routing::NetZoneImpl {
 public:
  TopologyZone(const std::string& name, const Topology& topo) : NetZoneImpl(name), topo_(topo) {}

  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override {
    const int s = vertex_of_netpoint.at(src->id()), d = vertex_of_netpoint.at(dst->id());
    Route r;
    const auto& vs = topo_.vertices();
    if (vs[s].kind == VertexKind::kGpu && vs[d].kind == VertexKind::kGpu) {
      r = topo_.route(s, d, salt);
      if (!topo_.failed_links().empty() && topo_.route(s, d, salt, true).links != r.links) ++rerouted;
    } else {  // GPU <-> CPU over PCIe
      const int gpu = vs[s].kind == VertexKind::kGpu ? s : d;
      const int cpu = vs[s].kind == VertexKind::kGpu ? d : s;
      for (std::size_t i = 0; i < topo_.links().size(); ++i) {
        const auto& l = topo_.links()[i];
        if (l.kind == LinkKind::kPcie && l.a == gpu && l.b == cpu) {
          r.links.push_back(directed(static_cast<int>(i), s == cpu));
          r.latency_s = l.latency_s;
        }
      }
      if (r.links.empty())
        throw std::logic_error("no PCIe route between " + vs[s].name + " and " + vs[d].name);
    }
    for (DirectedLink dl : r.links) into->link_list_.push_back(sg_links[dl]);
    if (latency) *latency += r.latency_s;
    last_route = std::move(r);
  }

  const Topology& topo_;
  std::vector<int> vertex_of_netpoint;  // netpoint id -> topology vertex
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> sg_links;  // per DirectedLink
  uint64_t salt = 0;
  std::size_t rerouted = 0;
  Route last_route;  // the route of the comm being started (for link statistics)
};

struct Pending {
  sg4::CommPtr comm;
  std::function<void()> on_done;
  Route route;
  double bytes = 0;
  double last_remaining = 0;
  double last_sample_s = 0;
};

}  // namespace

struct Platform::Impl {
  std::unique_ptr<sg4::Engine> engine;
  std::unique_ptr<Topology> topo;
  TopologyZone* zone = nullptr;
  std::vector<sg4::Host*> hosts;  // per topology vertex (GPUs and CPUs), null otherwise
  std::unique_ptr<LinkStats> stats;
  std::unordered_set<Pending*> active;              // in flight (tracked only while sampling)
  std::vector<std::unique_ptr<Pending>> graveyard;  // completed; released at the next completion
  std::size_t started = 0;

  void sample_active(double now) {
    for (Pending* p : active) {
      const double rem = p->comm->get_remaining();
      const double moved = p->last_remaining - rem;
      if (moved > 0 && now > p->last_sample_s)
        for (DirectedLink l : p->route.links) stats->add_interval(l, p->last_sample_s, now, moved);
      p->last_remaining = rem;
      p->last_sample_s = now;
    }
  }
};

Platform::Platform() : impl_(std::make_unique<Impl>()) {}
Platform::~Platform() = default;

bool Platform::exists() { return g_platform != nullptr; }

Platform& Platform::create(const ClusterSpec& cluster, const TopologyOptions& options) {
  if (g_platform)
    throw std::logic_error(
        "sim::Platform::create: SimGrid allows one engine per process; run "
        "another platform in a child process");
  auto* p = new Platform();  // lives until the process ends, as the s4u::Engine does
  auto& im = *p->impl_;
  im.topo = std::make_unique<Topology>(cluster, options);
  static int argc = 1;
  static char name[] = "trainsim";
  static char* argv[] = {name, nullptr};
  xbt_log_control_set("xbt_cfg.thres:warning");
  im.engine = std::make_unique<sg4::Engine>(&argc, argv);
  // Ideal alpha-beta (ARCHITECTURE.md): protocol efficiency is in the link bandwidths instead.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");

  const Topology& topo = *im.topo;
  im.zone = new TopologyZone("trainsim", topo);  // the first zone becomes the root
  auto* z = im.zone->get_iface();
  const auto& vs = topo.vertices();
  im.hosts.assign(vs.size(), nullptr);
  for (std::size_t v = 0; v < vs.size(); ++v) {
    if (vs[v].kind != VertexKind::kGpu && vs[v].kind != VertexKind::kCpu) continue;
    sg4::Host* h = z->create_host(vs[v].name, 1e12);
    im.hosts[v] = h;
    const auto id = h->get_netpoint()->id();
    if (im.zone->vertex_of_netpoint.size() <= id) im.zone->vertex_of_netpoint.resize(id + 1, -1);
    im.zone->vertex_of_netpoint[id] = static_cast<int>(v);
  }
  im.zone->sg_links.resize(topo.links().size() * 2);
  for (std::size_t i = 0; i < topo.links().size(); ++i) {
    const auto& l = topo.links()[i];
    sg4::SplitDuplexLink* link = z->create_split_duplex_link(l.name, l.bandwidth_bytes_per_s);
    link->set_latency(l.latency_s);
    link->seal();
    im.zone->sg_links[directed(static_cast<int>(i), false)] = link->get_link_up()->get_impl();
    im.zone->sg_links[directed(static_cast<int>(i), true)] = link->get_link_down()->get_impl();
  }
  z->seal();
  im.stats = std::make_unique<LinkStats>(topo);

  sg4::Activity::on_completion_cb([p](sg4::Activity const& a) {
    auto& im = *p->impl_;
    auto* pending = a.get_data<Pending>();
    if (!pending) return;
    im.graveyard.clear();  // earlier completions are fully done with their s4u objects
    if (im.stats->sampling()) {
      im.sample_active(sg4::Engine::get_clock());
      im.active.erase(pending);
    }
    // Take ownership so the CommPtr outlives this callback (released at the next completion).
    im.graveyard.emplace_back(pending);
    const_cast<sg4::Activity&>(a).set_data(nullptr);
    auto done = std::move(pending->on_done);
    if (done) done();
  });
  g_platform = p;
  return *p;
}

const Topology& Platform::topology() const { return *impl_->topo; }
double Platform::now_s() const { return sg4::Engine::get_clock(); }
LinkStats& Platform::link_stats() { return *impl_->stats; }
std::size_t Platform::transfers_started() const { return impl_->started; }
std::size_t Platform::transfers_rerouted() const { return impl_->zone->rerouted; }

void Platform::start_transfer(int src, int dst, double bytes, std::function<void()> on_done,
                              uint64_t salt) {
  auto& im = *impl_;
  if (src == dst || bytes <= 0) {  // nothing crosses a link: complete now (from a timer)
    after(0, std::move(on_done));
    return;
  }
  auto* pending = new Pending;
  pending->on_done = std::move(on_done);
  pending->bytes = bytes;
  const auto payload = static_cast<uint64_t>(bytes + 0.5);
  pending->comm = sg4::Comm::sendto_init(im.hosts[src], im.hosts[dst]);
  pending->comm->set_payload_size(payload > 0 ? payload : 1);
  pending->comm->set_data(pending);
  im.zone->salt = salt;
  pending->comm->start();  // the zone computes the route now
  pending->route = std::move(im.zone->last_route);
  im.stats->add_transfer(pending->route, bytes, src);
  if (im.stats->sampling()) {
    im.sample_active(now_s());
    pending->last_remaining = static_cast<double>(payload);
    pending->last_sample_s = now_s() + pending->route.latency_s;
    im.active.insert(pending);
  }
  ++im.started;
}

void Platform::after(double delay_s, std::function<void()> fn) {
  simgrid::kernel::timer::Timer::set(now_s() + std::max(0.0, delay_s),
                                     [f = std::move(fn)]() { f(); });
}

void Platform::run() {
  impl_->engine->run();
  impl_->graveyard.clear();
}

}  // namespace trainsim::sim
