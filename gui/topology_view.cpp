#include "gui/topology_view.hpp"

#include <QPainter>
#include <QPainterPath>
#include <QStringList>
#include <algorithm>
#include <cmath>

#include "gui/format.hpp"

namespace trainsim::gui {
namespace {

constexpr double kWidth = 1000, kHeight = 640;  // logical canvas, scaled to the widget

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

void link(QPainter& p, QPointF a, QPointF b, double load, double width = 2.0) {
  p.setPen(QPen(load_color(load), width, Qt::SolidLine, Qt::RoundCap));
  p.drawLine(a, b);
}

}  // namespace

LinkLoad link_load(const Scenario& sc, const Result& r) {
  LinkLoad l;
  const ParallelPlan& plan = sc.plan;
  const int gpn = std::max(1, sc.cluster.gpus_per_node);
  // Placement lists groups innermost first ("tp-cp-dp-pp"): a group stays inside a node when its
  // span (its size times the sizes of the groups inside it) fits in one node.
  QStringList order = QString::fromStdString(plan.placement).split('-', Qt::SkipEmptyParts);
  for (const char* g : {"tp", "cp", "dp", "pp"})
    if (!order.contains(g)) order << g;
  auto size_of = [&](const QString& g) {
    return g == "tp" ? plan.tp : g == "cp" ? plan.cp : g == "dp" ? plan.dp : g == "pp" ? plan.pp : 1;
  };
  auto bytes_of = [&](const QString& g) {
    return g == "tp" ? r.tp_bytes : g == "cp" ? r.cp_bytes : g == "dp" ? r.dp_bytes : g == "pp" ? r.pp_bytes : 0.0;
  };
  long long stride = 1;
  QStringList intra, inter;
  for (const QString& g : order) {
    const long long span = stride * size_of(g);
    const double bytes = bytes_of(g);
    if (size_of(g) > 1 && bytes > 0) {
      if (span <= gpn) {
        l.intra_bytes += bytes;
        intra << g.toUpper();
      } else {
        l.inter_bytes += bytes;
        inter << g.toUpper();
      }
    }
    stride = span;
  }
  // Expert parallelism spans DP x CP ranks; inside a node when TP·CP·EP fits in it.
  if (plan.ep > 1 && r.ep_bytes > 0) {
    if (static_cast<long long>(plan.tp) * plan.cp * plan.ep <= gpn) {
      l.intra_bytes += r.ep_bytes;
      intra << "EP";
    } else {
      l.inter_bytes += r.ep_bytes;
      inter << "EP";
    }
  }
  l.intra_groups = intra.join(", ");
  l.inter_groups = inter.join(", ");
  const double step = std::max(1e-12, r.step_time_s);
  // intra_node.bandwidth is both directions together; a GPU sends on half of it.
  const double nvlink_bw = std::max(1.0, sc.cluster.intra_node.bandwidth_bytes_per_s / 2.0);
  l.nvlink = l.intra_bytes / (nvlink_bw * step);
  const int nics = std::max(1, sc.cluster.network.nics_per_node);
  const double nic_bw = std::max(1.0, sc.cluster.network.nic_bandwidth_bytes_per_s);
  l.nic = l.inter_bytes * gpn / nics / (nic_bw * step);
  l.uplink = l.nic * std::max(1.0, sc.cluster.network.oversubscription);
  return l;
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
  if (!has_figures(ev)) {
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
  const LinkLoad load = link_load(ev.scenario, ev.result);
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

  // Nodes shown: up to four; the rest are summarised in one box.
  const int shown = std::min(c.nodes, 4);
  const bool more = c.nodes > shown;
  const double node_w = 190, node_h = 170, node_y = 300, gap = 20;
  const double row_w = shown * node_w + (shown - 1) * gap + (more ? gap + 110 : 0);
  const double x0 = (kWidth - row_w) / 2;
  const int gpus_drawn = std::min(c.gpus_per_node, 8);
  const int nics_drawn = std::min(std::max(net.nics_per_node, 0), 8);
  std::vector<std::vector<QPointF>> nic_ports(shown);  // top-of-link points of each NIC, per node

  for (int n = 0; n < shown; ++n) {
    const QRectF node(x0 + n * (node_w + gap), node_y, node_w, node_h);
    p.setPen(QPen(QColor(0x88, 0x8e, 0x99), 1.2));
    p.setBrush(QColor(0xf4, 0xf6, 0xf9));
    p.drawRoundedRect(node, 6, 6);
    QFont f = p.font();
    f.setPointSizeF(8);
    f.setBold(false);
    p.setFont(f);
    p.setPen(QColor(0x33, 0x33, 0x33));
    p.drawText(QRectF(node.left(), node.bottom() + 2, node.width(), 16), Qt::AlignCenter, tr("node %1").arg(n));
    // NICs on top (their links go straight up to the leaves), GPUs under them (PCIe, dotted),
    // the NVSwitch at the bottom with one NVLink per GPU.
    const double nw = (node_w - 16) / std::max(1, nics_drawn);
    const double gw = (node_w - 16) / std::max(1, gpus_drawn);
    const QRectF nvswitch(node.left() + 8, node.bottom() - 34, node_w - 16, 22);
    for (int g = 0; g < gpus_drawn; ++g) {
      const QRectF gpu(node.left() + 8 + g * gw + 2, node.top() + 62, gw - 4, 40);
      link(p, QPointF(gpu.center().x(), gpu.bottom()), QPointF(gpu.center().x(), nvswitch.top()), load.nvlink, 3);
      box(p, gpu, QColor(0x76, 0xb9, 0x00), QString("G%1").arg(g));
    }
    if (c.gpus_per_node > gpus_drawn)
      p.drawText(QRectF(node.left(), node.top() + 104, node_w - 8, 12), Qt::AlignRight, tr("+%1 GPUs").arg(c.gpus_per_node - gpus_drawn));
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
        link(p, nic_ports[n][k], top, load.nic, 1.6);
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
        for (const auto& spine : sp) link(p, QPointF(leaf.center().x(), leaf.top()), QPointF(spine.center().x(), spine.bottom()), load.uplink, 1.4);
      for (int i = 0; i < spines; ++i) box(p, sp[i], QColor(0x2f, 0x4b, 0x7c), tr("spine %1").arg(i));
    }
  } else {
    // Dragonfly, torus and other direct networks: one cloud standing for the router graph.
    const QRectF cloud(kWidth / 2 - 200, 90, 400, 90);
    for (int n = 0; n < shown; ++n)
      for (const auto& port : nic_ports[n]) {
        link(p, port, QPointF(cloud.center().x() + (port.x() - kWidth / 2) * 0.3, cloud.bottom()), load.nic, 1.4);
      }
    box(p, cloud, QColor(0x4e, 0x79, 0xa7), tr("%1 network (routers not drawn)").arg(topo), 9);
  }

  // Legend: the colour scale and what each link class carries.
  const double ly = 540;
  QFont f = p.font();
  f.setPointSizeF(8);
  f.setBold(false);
  p.setFont(f);
  for (int i = 0; i < 100; ++i) p.fillRect(QRectF(20 + i * 1.6, ly, 1.7, 12), load_color(i / 99.0));
  p.setPen(Qt::black);
  p.drawText(QPointF(20, ly + 26), "0%");
  p.drawText(QPointF(160, ly + 26), "100%");
  p.drawText(QRectF(20, ly - 18, 300, 16), Qt::AlignLeft, tr("link utilisation (estimated)"));
  auto line = [&](int row, const QString& text) { p.drawText(QRectF(220, ly - 18 + row * 17, 770, 16), Qt::AlignLeft, text); };
  line(0, tr("NVLink per GPU: %1 — %2 per step (%3)")
              .arg(format_percent(load.nvlink), format_bytes(load.intra_bytes),
                   load.intra_groups.isEmpty() ? tr("no intra-node groups") : load.intra_groups));
  line(1, tr("NIC: %1 — %2 per GPU per step (%3)")
              .arg(format_percent(load.nic), format_bytes(load.inter_bytes),
                   load.inter_groups.isEmpty() ? tr("no inter-node groups") : load.inter_groups));
  if (tree && !single)
    line(2, tr("Leaf–spine uplinks: %1 (NIC load × oversubscription %2)")
                .arg(format_percent(load.uplink))
                .arg(net.oversubscription));
  line(3, tr("Estimated from bytes per GPU per group over the step time; a simulation reports per-link values."));
}

}  // namespace trainsim::gui
