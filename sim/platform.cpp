#include "sim/platform.hpp"

#include <sys/mman.h>
#include <ucontext.h>
#include <xbt/log.h>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <exception>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "sim/link_stats.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define TRAINSIM_ASAN_FIBERS 1
#endif

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
    if (forced_route) {  // a bundle of hops (Platform::start_bundle): its route is computed already
      r = *forced_route;
    } else if (vs[s].kind == VertexKind::kGpu && vs[d].kind == VertexKind::kGpu) {
      r = topo_.route(s, d, salt, false, channel);
      if (!topo_.failed_links().empty() && topo_.route(s, d, salt, true, channel).links != r.links)
        ++rerouted;
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
  int channel = -1;
  const Route* forced_route = nullptr;
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
    if (!im.stats->sampling()) im.active.clear();  // sampling stopped (its budget): track nothing
    // Take ownership so the CommPtr outlives this callback (released at the next completion).
    im.topo->add_load(pending->route, -pending->bytes);
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
                              uint64_t salt, int channel) {
  start_bundle({{src, dst, channel}}, bytes, std::move(on_done), salt);
}

double Platform::start_bundle(const std::vector<Hop>& hops, double bytes, std::function<void()> on_done,
                              uint64_t salt) {
  auto& im = *impl_;
  const Topology& topo = *im.topo;
  Route route;
  int src = -1, dst = -1;
  const bool host_to_cpu = hops.size() == 1 && (hops[0].src_gpu >= topo.gpu_count() || hops[0].dst_gpu >= topo.gpu_count());
  if (host_to_cpu && hops[0].src_gpu != hops[0].dst_gpu) {  // PCIe: the zone routes it
    src = hops[0].src_gpu;
    dst = hops[0].dst_gpu;
  }
  for (std::size_t i = 0; i < hops.size() && !host_to_cpu; ++i) {
    const Hop& h = hops[i];
    if (h.src_gpu == h.dst_gpu) continue;
    const uint64_t hop_salt = salt + 0x9e3779b97f4a7c15ull * i;
    Route r = topo.route(h.src_gpu, h.dst_gpu, hop_salt, false, h.channel);
    if (!topo.failed_links().empty() &&
        topo.route(h.src_gpu, h.dst_gpu, hop_salt, true, h.channel).links != r.links)
      ++im.zone->rerouted;
    topo.add_load(r, bytes);  // adaptive routing sees the earlier hops of this bundle too
    route.links.insert(route.links.end(), r.links.begin(), r.links.end());
    route.latency_s = std::max(route.latency_s, r.latency_s);
    if (src < 0) {
      src = h.src_gpu;
      dst = h.dst_gpu;
    }
  }
  if (src < 0 || bytes <= 0) {  // nothing crosses a link: complete now (from a timer)
    after(0, std::move(on_done));
    return 0;
  }
  auto* pending = new Pending;
  pending->on_done = std::move(on_done);
  pending->bytes = bytes;
  const auto payload = static_cast<uint64_t>(bytes + 0.5);
  pending->comm = sg4::Comm::sendto_init(im.hosts[src], im.hosts[dst]);
  pending->comm->set_payload_size(payload > 0 ? payload : 1);
  pending->comm->set_data(pending);
  im.zone->forced_route = host_to_cpu ? nullptr : &route;
  pending->comm->start();  // the zone hands SimGrid the route now
  im.zone->forced_route = nullptr;
  pending->route = std::move(im.zone->last_route);
  im.stats->add_transfer(pending->route, bytes, src);
  if (im.stats->sampling()) {
    im.sample_active(now_s());
    pending->last_remaining = static_cast<double>(payload);
    pending->last_sample_s = now_s() + pending->route.latency_s;
    im.active.insert(pending);
  }
  ++im.started;
  return pending->route.latency_s;
}

void Platform::after(double delay_s, std::function<void()> fn) {
  simgrid::kernel::timer::Timer::set(now_s() + std::max(0.0, delay_s),
                                     [f = std::move(fn)]() { f(); });
}

namespace {

// SimGrid's max-min solver walks the constraints a change touches recursively
// (lmm::System::update_modified_cnst_set_rec): on a platform of 24k+ GPUs one solve goes
// ~100k frames deep, past the 8 MiB main stack. The engine therefore runs on a large stack of
// its own, entered with swapcontext on the same thread (SimGrid's maestro state is thread-local,
// so another thread would not do). The stack is reserved, not committed: only the pages the
// recursion touches cost memory.
constexpr std::size_t kEngineStackBytes = std::size_t{4} << 30;

struct StackRun {
  std::function<void()> body;
  std::exception_ptr error;
  ucontext_t caller{}, callee{};
  const void* caller_bottom = nullptr;  // AddressSanitizer's view of the caller's stack
  std::size_t caller_size = 0;
};
StackRun* g_stack_run = nullptr;

void stack_trampoline() {
  StackRun& r = *g_stack_run;
#ifdef TRAINSIM_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(nullptr, &r.caller_bottom, &r.caller_size);
#endif
  try {
    r.body();
  } catch (...) {
    r.error = std::current_exception();  // rethrown on the caller's stack
  }
#ifdef TRAINSIM_ASAN_FIBERS
  __sanitizer_start_switch_fiber(nullptr, r.caller_bottom, r.caller_size);
#endif
  // returning resumes r.caller through uc_link
}

void run_on_large_stack(const std::function<void()>& body) {
  // Where the address space is capped (ulimit -v), the largest of 4 GiB, 1 GiB, 256 MiB and
  // 64 MiB that maps: SimGrid's constraint updates recurse past the thread's own 8 MiB in a
  // 65,536-rank collective.
  std::size_t stack_bytes = kEngineStackBytes;
  void* stack = MAP_FAILED;
  for (; stack_bytes >= (std::size_t{64} << 20); stack_bytes /= 4) {
    stack = mmap(nullptr, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                 -1, 0);
    if (stack != MAP_FAILED) break;
  }
  if (stack == MAP_FAILED) {  // not even 64 MiB of address space left: the thread's own stack
    body();
    return;
  }
  StackRun r;
  r.body = body;
  getcontext(&r.callee);
  r.callee.uc_stack.ss_sp = stack;
  r.callee.uc_stack.ss_size = stack_bytes;
  r.callee.uc_link = &r.caller;
  makecontext(&r.callee, stack_trampoline, 0);
  StackRun* outer = g_stack_run;
  g_stack_run = &r;
#ifdef TRAINSIM_ASAN_FIBERS
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, stack, stack_bytes);
#endif
  swapcontext(&r.caller, &r.callee);
#ifdef TRAINSIM_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  g_stack_run = outer;
  munmap(stack, stack_bytes);
  if (r.error) std::rethrow_exception(r.error);
}

}  // namespace

void Platform::run() {
  run_on_large_stack([this] { impl_->engine->run(); });
  impl_->graveyard.clear();
}

}  // namespace trainsim::sim
