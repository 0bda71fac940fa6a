#include "gui/topology_view.hpp"

#include <QPainter>
#include <QPainterPath>
#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <map>

#include "gui/chart_style.hpp"
#include "gui/format.hpp"

namespace trainsim::gui {
namespace {

constexpr double kWidth = 1000, kHeight = 720;  // logical canvas, scaled to the widget

QColor load_color(double u) {
  // Green (idle) -> yellow -> red (saturated).
  const double c = std::clamp(u, 0.0, 1.0);
  return QColor::fromHsvF((1.0 - c) * 0.33, 0.85, 0.85);
}

void box(QPainter& p, const QRectF& r, const QColor& fill, const QString& text, double font_pt = 7.5) {
  p.setPen(QPen(fill.darker(160), 1));
  p.setBrush(fill);
  p.drawRoundedRect(r, 3, 3);
  if (!text.isEmpty()) {
    QFont f = p.font();
    f.setPointSizeF(font_pt);
    p.setFont(f);
    p.setPen(fill.lightness() > 140 ? Qt::black : Qt::white);
    p.drawText(r, Qt::AlignCenter, text);
  }
}


}  // namespace

namespace {

QString gpu_list(const std::vector<int>& gpus, int shown = 4) {
  QStringList parts;
  for (std::size_t i = 0; i < gpus.size() && static_cast<int>(i) < shown; ++i) parts << QString::number(gpus[i]);
  if (static_cast<int>(gpus.size()) > shown) parts << QString::fromUtf8("…");
  return parts.join(", ");
}

// The link's utilisation in the simulation's list (the larger direction), or -1.
double listed(const std::vector<HotLink>& hot, const QString& prefix) {
  double u = -1;
  for (const auto& l : hot)
    if (l.name == prefix + ":up" || l.name == prefix + ":down" || l.name == prefix) u = std::max(u, l.utilisation);
  return u;
}

}  // namespace

LinkLoad link_load(const Scenario& sc, const Result& r, const RankPlacement& place) {
  LinkLoad l;
  const ParallelPlan& plan = sc.plan;
  QStringList intra, inter;
  auto add = [&](const char* name, int size, const std::vector<int>& group, double bytes) {
    if (size <= 1 || bytes <= 0 || group.size() < 2) return;
    if (place.shape(group).nodes > 1) {
      l.inter_bytes += bytes;
      inter << name;
    } else {
      l.intra_bytes += bytes;
      intra << name;
    }
  };
  add("TP", plan.tp, place.tp_group(0), r.tp_bytes);
  add("CP", plan.cp, place.cp_group(0), r.cp_bytes);
  if (plan.ep > 1) add("EP", plan.ep, place.ep_group(0), r.ep_bytes);
  const auto dp = place.dp_groups(0);
  if (!dp.empty()) add("DP", plan.dp, dp.front(), r.dp_bytes);
  if (plan.pp > 1) add("PP", plan.pp, place.pp_pair(0, 1), r.pp_bytes);
  l.intra_groups = intra.join(", ");
  l.inter_groups = inter.join(", ");
  const double step = std::max(1e-12, r.step_time_s);
  // intra_node.bandwidth is both directions together; a GPU sends on half of it.
  const double nvlink_bw = std::max(1.0, sc.cluster.intra_node.bandwidth_bytes_per_s / 2.0);
  l.nvlink = l.intra_bytes / (nvlink_bw * step);
  const int gpn = std::max(1, sc.cluster.gpus_per_node);
  const int nics = std::max(1, sc.cluster.network.nics_per_node);
  const double nic_bw = std::max(1.0, sc.cluster.network.nic_bandwidth_bytes_per_s);
  l.nic = l.inter_bytes * gpn / nics / (nic_bw * step);
  l.uplink = l.nic * std::max(1.0, sc.cluster.network.oversubscription);
  return l;
}

double TopologyPicture::nvlink_utilisation(int gpu) const {
  if (!simulated) return estimate.nvlink;
  return listed(hottest, QString("nvlink_gpu%1").arg(gpu));
}

double TopologyPicture::nic_utilisation(int node, int nic) const {
  if (!simulated) return estimate.nic;
  return listed(hottest, QString("nic_node%1_%2").arg(node).arg(nic));
}

double TopologyPicture::uplink_utilisation() const {
  if (!simulated) return estimate.uplink;
  // Switch links are not named by leaf and spine in a way the drawing maps: the busiest listed.
  double u = -1;
  for (const auto& l : hottest)
    if (l.kind == "switch") u = std::max(u, l.utilisation);
  return u;
}

TopologyPicture topology_picture(const Evaluation& ev) {
  TopologyPicture pic;
  if (!has_figures(ev)) return pic;
  const Scenario& sc = ev.scenario;
  const RankPlacement& place = ev.placement;
  const ClusterSpec& c = sc.cluster;
  const int gpn = std::max(1, c.gpus_per_node);
  if (place.gpus() != static_cast<long long>(sc.plan.tp) * sc.plan.cp * sc.plan.dp * sc.plan.pp) return pic;
  pic.drawable = true;
  pic.gpus_per_node_drawn = std::min(gpn, 8);
  const Result& r = ev.result;
  pic.estimate = link_load(sc, r, place);

  // GPU 0's groups, as the tiers place them.
  auto add = [&](const char* kind, std::vector<int> gpus, double bytes, const QColor& colour) {
    if (gpus.size() < 2) return;
    DrawnGroup g;
    g.kind = kind;
    g.nodes = place.shape(gpus).nodes;
    g.over_nics = g.nodes > 1;
    g.bytes_per_gpu = bytes;
    g.colour = colour;
    g.gpus = std::move(gpus);
    pic.groups.push_back(std::move(g));
  };
  const ParallelPlan& plan = sc.plan;
  if (plan.tp > 1) add("TP", place.tp_group(0), r.tp_bytes, palette::kTpComm);
  if (plan.cp > 1) add("CP", place.cp_group(0), r.cp_bytes, palette::kCpComm);
  if (plan.ep > 1) add("EP", place.ep_group(0), r.ep_bytes, palette::kEpComm);
  if (const auto dp = place.dp_groups(0); !dp.empty() && plan.dp > 1) add("DP", dp.front(), r.dp_bytes, palette::kDpComm);
  if (plan.pp > 1) {
    std::vector<int> stages;
    for (int s = 0; s < plan.pp; ++s) stages.push_back(place.gpu(0, 0, 0, s));
    add("PP", stages, r.pp_bytes, palette::kPpComm);
  }

  if (ev.simulated() && ev.simulation.contains("hottest_links") && ev.simulation["hottest_links"].is_array()) {
    pic.simulated = true;
    for (const auto& l : ev.simulation["hottest_links"]) {
      if (!l.is_object()) continue;
      pic.hottest.push_back({QString::fromStdString(l.value("link", std::string())),
                             QString::fromStdString(l.value("kind", std::string())), l.value("utilisation", 0.0),
                             l.value("bytes", 0.0)});
    }
  }

  // Nodes drawn: node 0 (GPU 0's); after a simulation, the node of its hottest link; then, in
  // turn, the next node each group reaches (PP's next stage, DP's next replica, ...), up to
  // four; then the following nodes.
  const int limit = std::min(c.nodes, 4);
  pic.nodes.push_back(0);
  auto drawn = [&](int n) { return std::find(pic.nodes.begin(), pic.nodes.end(), n) != pic.nodes.end(); };
  static const QRegularExpression kNvlink(R"(^nvlink_gpu(\d+))"), kNic(R"(^nic_node(\d+)_)");
  for (const auto& l : pic.hottest) {
    int node = -1;
    if (const auto m = kNvlink.match(l.name); m.hasMatch()) node = m.captured(1).toInt() / gpn;
    else if (const auto m2 = kNic.match(l.name); m2.hasMatch()) node = m2.captured(1).toInt();
    if (node >= 0 && node < c.nodes && static_cast<int>(pic.nodes.size()) < limit) {
      if (!drawn(node)) pic.nodes.push_back(node);
      break;
    }
  }
  std::vector<std::vector<int>> reach;
  for (const char* kind : {"PP", "DP", "EP", "CP", "TP"})
    for (const auto& g : pic.groups)
      if (g.kind == kind && g.over_nics) {
        std::vector<int> nodes;
        for (int gpu : g.gpus)
          if (std::find(nodes.begin(), nodes.end(), gpu / gpn) == nodes.end()) nodes.push_back(gpu / gpn);
        reach.push_back(nodes);
      }
  for (bool added = true; added && static_cast<int>(pic.nodes.size()) < limit;) {
    added = false;
    for (const auto& nodes : reach) {
      if (static_cast<int>(pic.nodes.size()) >= limit) break;
      for (int n : nodes)
        if (!drawn(n)) {
          pic.nodes.push_back(n);
          added = true;
          break;
        }
    }
  }
  for (int n = 1; static_cast<int>(pic.nodes.size()) < limit && n < c.nodes; ++n)
    if (!drawn(n)) pic.nodes.push_back(n);
  return pic;
}

TopologyView::TopologyView(QWidget* parent) : ScenarioView(parent) {
  setBackgroundRole(QPalette::Base);
  setAutoFillBackground(true);
  setMinimumSize(400, 300);
}

void TopologyView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const Evaluation& ev = evaluation();
  if (!ev.loaded) {
    p.setPen(QColor(0x66, 0x66, 0x66));
    p.drawText(rect(), Qt::AlignCenter, tr("No topology: the scenario does not load"));
    return;
  }
  const TopologyPicture& pic = picture_;
  if (!pic.drawable) {
    // The cluster is known, but the plan has no placement to draw.
    p.setPen(QColor(0x99, 0x55, 0x00));
    p.drawText(rect().adjusted(20, 0, -20, 0), Qt::AlignCenter | Qt::TextWordWrap,
               tr("No placement: %1").arg(QString::fromStdString(infeasible_note(ev))));
    return;
  }
  const double s = std::min(width() / kWidth, height() / kHeight);
  p.translate((width() - kWidth * s) / 2, (height() - kHeight * s) / 2);
  p.scale(s, s);

  const ClusterSpec& c = ev.scenario.cluster;
  const NetworkSpec& net = c.network;
  const QString topo = QString::fromStdString(net.topology);
  QFont title_font = p.font();
  title_font.setPointSizeF(10);
  title_font.setBold(true);
  p.setFont(title_font);
  p.setPen(Qt::black);
  p.drawText(QRectF(10, 4, kWidth - 20, 22), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1: %2 nodes × %3 %4 = %5 GPUs, %6 network, %7 × %8 NICs per node")
                 .arg(QString::fromStdString(c.name))
                 .arg(c.nodes)
                 .arg(c.gpus_per_node)
                 .arg(QString::fromStdString(c.gpu.name))
                 .arg(c.total_gpus())
                 .arg(topo)
                 .arg(net.nics_per_node)
                 .arg(QString::number(net.nic_bandwidth_bytes_per_s * 8 / 1e9, 'g', 4) + " Gb/s"));

  // A link coloured by its utilisation; one a simulation did not list is grey and dotted.
  auto draw_link = [&](QPointF a, QPointF b, double u, double w) {
    if (u < 0) p.setPen(QPen(QColor(0xc8, 0xc8, 0xc8), w * 0.7, Qt::DotLine, Qt::RoundCap));
    else p.setPen(QPen(load_color(u), w, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(a, b);
  };

  const int shown = static_cast<int>(pic.nodes.size());
  const bool more = c.nodes > shown;
  const double node_w = 190, node_h = 170, node_y = 300, gap = 20;
  const double row_w = shown * node_w + (shown - 1) * gap + (more ? gap + 110 : 0);
  const double x0 = (kWidth - row_w) / 2;
  const int gpn = std::max(1, c.gpus_per_node);
  const int gpus_drawn = pic.gpus_per_node_drawn;
  const int nics_drawn = std::min(std::max(net.nics_per_node, 0), 8);
  std::vector<std::vector<QPointF>> nic_ports(shown);  // top-of-link points of each NIC, per node
  std::map<int, QRectF> gpu_boxes;                      // global GPU index -> its box
  auto member = [&](const DrawnGroup& g, int gpu) { return std::find(g.gpus.begin(), g.gpus.end(), gpu) != g.gpus.end(); };

  for (int n = 0; n < shown; ++n) {
    const int node_index = pic.nodes[n];
    const QRectF node(x0 + n * (node_w + gap), node_y, node_w, node_h);
    p.setPen(QPen(QColor(0x88, 0x8e, 0x99), 1.2));
    p.setBrush(QColor(0xf4, 0xf6, 0xf9));
    p.drawRoundedRect(node, 6, 6);
    QFont f = p.font();
    f.setPointSizeF(8);
    f.setBold(false);
    p.setFont(f);
    p.setPen(QColor(0x33, 0x33, 0x33));
    p.drawText(QRectF(node.left(), node.bottom() + 2, node.width(), 16), Qt::AlignCenter, tr("node %1").arg(node_index));
    // NICs on top (their links go straight up to the leaves), GPUs under them (PCIe, dotted),
    // the NVSwitch at the bottom with one NVLink per GPU.
    const double nw = (node_w - 16) / std::max(1, nics_drawn);
    const double gw = (node_w - 16) / std::max(1, gpus_drawn);
    const QRectF nvswitch(node.left() + 8, node.bottom() - 34, node_w - 16, 22);
    for (int g = 0; g < gpus_drawn; ++g) {
      const int gpu_index = node_index * gpn + g;
      const QRectF gpu(node.left() + 8 + g * gw + 2, node.top() + 62, gw - 4, 40);
      gpu_boxes[gpu_index] = gpu;
      draw_link(QPointF(gpu.center().x(), gpu.bottom() + 14), QPointF(gpu.center().x(), nvswitch.top()),
                pic.nvlink_utilisation(gpu_index), 3);
      // The GPU's global index; long ones drop the "G" and shrink to fit the box.
      const QString label = gpu_index < 100 ? QString("G%1").arg(gpu_index) : QString::number(gpu_index);
      box(p, gpu, QColor(0x76, 0xb9, 0x00), label, gpu_index < 100 ? 7.0 : gpu_index < 1000 ? 6.0 : gpu_index < 10000 ? 5.0 : 4.2);
      // One coloured tick per group of GPU 0 this GPU belongs to.
      int k = 0;
      for (const auto& grp : pic.groups)
        if (member(grp, gpu_index)) {
          p.setPen(Qt::NoPen);
          p.setBrush(grp.colour);
          p.drawRect(QRectF(gpu.left() + 1 + k * 4.5, gpu.bottom() + 2, 4, 10));
          ++k;
        }
      if (gpu_index == 0) {
        p.setPen(QPen(Qt::black, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(gpu.adjusted(-1.5, -1.5, 1.5, 1.5), 3, 3);
      }
    }
    if (c.gpus_per_node > gpus_drawn)
      p.drawText(QRectF(node.left(), node.top() + 118, node_w - 8, 12), Qt::AlignRight, tr("+%1 GPUs").arg(c.gpus_per_node - gpus_drawn));
    box(p, nvswitch, QColor(0x3b, 0x4a, 0x5e), tr("NVSwitch / NVLink"));
    for (int k = 0; k < nics_drawn; ++k) {
      const QRectF nic(node.left() + 8 + k * nw + 3, node.top() + 12, nw - 6, 22);
      // PCIe from NIC k to the GPU below it (one NIC per GPU on rail-optimised nodes).
      const int gpu = std::min(gpus_drawn - 1, k * gpus_drawn / std::max(1, nics_drawn));
      p.setPen(QPen(QColor(0xaa, 0xaa, 0xaa), 1, Qt::DotLine));
      p.drawLine(QPointF(nic.center().x(), nic.bottom()), QPointF(node.left() + 8 + (gpu + 0.5) * gw, node.top() + 62));
      box(p, nic, QColor(0x5b, 0x8d, 0xd6), QString("N%1").arg(k), 6.5);
      nic_ports[n].push_back(QPointF(nic.center().x(), nic.top()));
    }
  }
  // Groups inside a node: an outline around their GPUs in the node.
  for (const auto& grp : pic.groups) {
    if (grp.kind == "PP") continue;
    std::map<int, QRectF> per_node;
    for (int gpu : grp.gpus)
      if (auto it = gpu_boxes.find(gpu); it != gpu_boxes.end()) {
        QRectF& r = per_node[gpu / gpn];
        r = r.isNull() ? it->second : r.united(it->second);
      }
    const int index = static_cast<int>(&grp - pic.groups.data());
    for (const auto& [node, r] : per_node) {
      p.setPen(QPen(grp.colour, 1.8, Qt::DashLine));
      p.setBrush(Qt::NoBrush);
      p.drawRoundedRect(r.adjusted(-3 - 2.5 * index, -14 - 2.5 * index, 3 + 2.5 * index, 3), 4, 4);
    }
  }
  // Groups across nodes: arcs below the nodes between the members drawn (PP in stage order).
  int arc_row = 0;
  for (const auto& grp : pic.groups) {
    if (!grp.over_nics) continue;
    std::vector<QPointF> pts;
    for (int gpu : grp.gpus)
      if (auto it = gpu_boxes.find(gpu); it != gpu_boxes.end()) pts.push_back({it->second.center().x(), node_y + node_h});
    const double depth = 16 + 10 * arc_row++;
    p.setPen(QPen(grp.colour, 2));
    p.setBrush(Qt::NoBrush);
    for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
      if (std::abs(pts[i].x() - pts[i + 1].x()) < 1) continue;
      QPainterPath path(pts[i]);
      path.cubicTo(pts[i] + QPointF(0, depth + 10), pts[i + 1] + QPointF(0, depth + 10), pts[i + 1]);
      p.drawPath(path);
    }
    // The name at the bottom of its first arc.
    for (std::size_t i = 0; i + 1 < pts.size(); ++i)
      if (std::abs(pts[i].x() - pts[i + 1].x()) >= 1) {
        const double mid = (pts[i].x() + pts[i + 1].x()) / 2;
        p.drawText(QRectF(mid - 30, node_y + node_h + 0.75 * (depth + 10) - 2, 60, 14), Qt::AlignCenter, grp.kind);
        break;
      }
  }
  if (more) {
    const QRectF rest(x0 + shown * (node_w + gap), node_y + 40, 110, node_h - 80);
    p.setPen(QPen(QColor(0x88, 0x8e, 0x99), 1.2, Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    p.drawRoundedRect(rest, 6, 6);
    p.setPen(QColor(0x33, 0x33, 0x33));
    p.drawText(rest, Qt::AlignCenter | Qt::TextWordWrap, tr("… %1 more nodes").arg(c.nodes - shown));
  }

  // Network above the nodes. Leaf switches connect to the NICs from below; spines on top.
  const double leaf_y = 200, spine_y = 70;
  const bool rail = topo == "rail-optimized";
  const bool single = topo == "single-switch";
  const bool tree = rail || topo == "fat-tree" || single;
  std::vector<QRectF> leaves;
  if (tree) {
    const int leaf_count = single ? 1 : rail ? std::max(1, nics_drawn) : std::max(1, (shown + 1) / 2);
    const double lw = single ? 240 : std::min(110.0, (kWidth - 80) / leaf_count - 10);
    const double total = leaf_count * lw + (leaf_count - 1) * 10;
    for (int i = 0; i < leaf_count; ++i)
      leaves.push_back(QRectF((kWidth - total) / 2 + i * (lw + 10), leaf_y, lw, 30));
    // NIC -> leaf: rail k goes to leaf k (rail-optimised), else every NIC of a node to its leaf.
    for (int n = 0; n < shown; ++n)
      for (int k = 0; k < static_cast<int>(nic_ports[n].size()); ++k) {
        const QRectF& leaf = leaves[single ? 0 : rail ? std::min<int>(k, leaf_count - 1) : std::min(n / 2, leaf_count - 1)];
        const QPointF top(leaf.center().x() + (n - (shown - 1) / 2.0) * 6, leaf.bottom());
        draw_link(nic_ports[n][k], top, pic.nic_utilisation(pic.nodes[n], k), 1.6);
      }
    for (int i = 0; i < leaf_count; ++i)
      box(p, leaves[i], QColor(0x4e, 0x79, 0xa7),
          single ? tr("switch") : rail ? tr("rail %1 leaf").arg(i) : tr("leaf %1").arg(i));
    if (!single) {
      const int spines = 4;
      const double sw = 120, stotal = spines * sw + (spines - 1) * 30;
      std::vector<QRectF> sp;
      for (int i = 0; i < spines; ++i) sp.push_back(QRectF((kWidth - stotal) / 2 + i * (sw + 30), spine_y, sw, 30));
      for (const auto& leaf : leaves)
        for (const auto& spine : sp)
          draw_link(QPointF(leaf.center().x(), leaf.top()), QPointF(spine.center().x(), spine.bottom()), pic.uplink_utilisation(), 1.4);
      for (int i = 0; i < spines; ++i) box(p, sp[i], QColor(0x2f, 0x4b, 0x7c), tr("spine %1").arg(i));
    }
  } else {
    // Dragonfly, torus and other direct networks: one cloud standing for the router graph.
    const QRectF cloud(kWidth / 2 - 200, 90, 400, 90);
    for (int n = 0; n < shown; ++n)
      for (int k = 0; k < static_cast<int>(nic_ports[n].size()); ++k) {
        const QPointF& port = nic_ports[n][k];
        draw_link(port, QPointF(cloud.center().x() + (port.x() - kWidth / 2) * 0.3, cloud.bottom()),
                  pic.nic_utilisation(pic.nodes[n], k), 1.4);
      }
    box(p, cloud, QColor(0x4e, 0x79, 0xa7), tr("%1 network (routers not drawn)").arg(topo), 9);
  }

  // Legend: the groups of GPU 0, the colour scale, and what each link class carries.
  double ly = 560;
  QFont f = p.font();
  f.setPointSizeF(8);
  f.setBold(false);
  p.setFont(f);
  auto text_line = [&](double x, const QString& text, const QColor& colour = Qt::black) {
    p.setPen(colour);
    p.drawText(QRectF(x, ly, kWidth - x - 10, 15), Qt::AlignLeft | Qt::AlignVCenter, text);
    ly += 15;
  };
  text_line(20, pic.groups.empty() ? tr("One GPU: no parallel groups.")
                                   : tr("Groups of GPU 0 (outlined in black), placed as the estimate and the simulation place them (%1):")
                                         .arg(QString::fromStdString(ev.scenario.plan.placement)));
  for (const auto& g : pic.groups) {
    p.fillRect(QRectF(24, ly + 3, 10, 10), g.colour);
    const QString where = g.over_nics ? tr("across %1 nodes, over the NICs").arg(g.nodes) : tr("inside one node, over NVLink");
    text_line(40, g.kind == "PP"
                      ? tr("PP: %1 stages on GPUs %2 — %3; %4 per GPU per step")
                            .arg(g.gpus.size())
                            .arg(gpu_list(g.gpus), where, format_bytes(g.bytes_per_gpu))
                      : tr("%1: %2 GPUs (%3) — %4; %5 per GPU per step")
                            .arg(g.kind)
                            .arg(g.gpus.size())
                            .arg(gpu_list(g.gpus, 8), where, format_bytes(g.bytes_per_gpu)));
  }
  ly += 4;
  for (int i = 0; i < 100; ++i) p.fillRect(QRectF(20 + i * 1.6, ly, 1.7, 12), load_color(i / 99.0));
  p.setPen(Qt::black);
  p.drawText(QPointF(20, ly + 24), "0%");
  p.drawText(QPointF(160, ly + 24), "100%");
  const LinkLoad& load = pic.estimate;
  auto line = [&](int row, const QString& text) { p.drawText(QRectF(220, ly - 4 + row * 15, 770, 15), Qt::AlignLeft, text); };
  if (pic.simulated) {
    QStringList hot;
    for (std::size_t k = 0; k < pic.hottest.size() && k < 4; ++k)
      hot << QString("%1 %2").arg(pic.hottest[k].name, format_percent(pic.hottest[k].utilisation));
    line(0, tr("Link utilisation simulated over the step (the simulation's hottest links; dotted grey: not among them)."));
    line(1, tr("Hottest: %1").arg(hot.isEmpty() ? tr("none reported") : hot.join(", ")));
    line(2, tr("Estimate for comparison: NVLink %1, NIC %2 per GPU per step.")
                .arg(format_percent(load.nvlink), format_percent(load.nic)));
  } else {
    line(0, tr("Link utilisation estimated from the bytes each group moves per GPU per step over the step time (Simulate for per-link values)."));
    line(1, tr("NVLink per GPU: %1 — %2 per step (%3)")
                .arg(format_percent(load.nvlink), format_bytes(load.intra_bytes),
                     load.intra_groups.isEmpty() ? tr("no intra-node groups") : load.intra_groups));
    line(2, tr("NIC: %1 — %2 per GPU per step (%3)")
                .arg(format_percent(load.nic), format_bytes(load.inter_bytes),
                     load.inter_groups.isEmpty() ? tr("no inter-node groups") : load.inter_groups));
    if (tree && !single)
      line(3, tr("Leaf–spine uplinks: %1 (NIC load × oversubscription %2)")
                  .arg(format_percent(load.uplink))
                  .arg(net.oversubscription));
  }
}

}  // namespace trainsim::gui
