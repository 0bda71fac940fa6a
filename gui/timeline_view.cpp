#include "gui/timeline_view.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <map>

#include "gui/chart_style.hpp"
#include "gui/chrome_trace.hpp"
#include "gui/estimate_timeline.hpp"
#include "gui/format.hpp"

namespace trainsim::gui {
namespace {

constexpr int kAxisHeight = 26;
constexpr int kLegendHeight = 26;

// A "nice" tick step (1, 2, 5 x 10^k) giving about `target` ticks over `span`.
double nice_step(double span, int target) {
  if (span <= 0) return 1;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

}  // namespace

QColor gantt_color(const QString& category) {
  static const std::map<QString, QColor> known = {
      {"F", palette::kForward},     {"B", palette::kBackward},      {"B+W", palette::kBackward},
      {"W", palette::kBackwardWeight}, {"p2p", palette::kPpComm},   {"dp", palette::kDpComm},
      {"optimizer", palette::kOptimizer}, {"offload", palette::kOffload}, {"tp", palette::kTpComm},
      {"ep", palette::kEpComm},     {"cp", palette::kCpComm},       {"compute", palette::kCompute}};
  if (auto it = known.find(category); it != known.end()) return it->second;
  // Unknown categories (Chrome traces) get a stable colour from their name.
  const uint h = qHash(category);
  return QColor::fromHsv(static_cast<int>(h % 360), 110 + static_cast<int>((h >> 9) % 80), 200);
}

GanttWidget::GanttWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumHeight(200);
  setBackgroundRole(QPalette::Base);
  setAutoFillBackground(true);
  setCursor(Qt::OpenHandCursor);
}

void GanttWidget::set_trace(const GanttTrace& trace) {
  trace_ = trace;
  by_lane_.assign(trace_.lanes.size(), {});
  for (int i = 0; i < static_cast<int>(trace_.events.size()); ++i) {
    const int lane = trace_.events[i].lane;
    if (lane >= 0 && lane < static_cast<int>(by_lane_.size())) by_lane_[lane].push_back(i);
  }
  for (auto& v : by_lane_)
    std::sort(v.begin(), v.end(), [this](int a, int b) { return trace_.events[a].start_s < trace_.events[b].start_s; });
  fit();
}

int GanttWidget::label_width() const {
  int w = 60;
  const QFontMetrics fm(font());
  for (const auto& l : trace_.lanes) w = std::max(w, fm.horizontalAdvance(l) + 14);
  return std::min(w, 260);
}

double GanttWidget::lane_height() const {
  const int n = std::max<qsizetype>(1, trace_.lanes.size());
  const double avail = height() - kAxisHeight - kLegendHeight - 4;
  return std::clamp(avail / n, 3.0, 36.0);
}

double GanttWidget::x_of(double t_s) const { return label_width() + (t_s - offset_s_) * px_per_s_; }

void GanttWidget::fit() {
  const double end = trace_.end_s();
  const double avail = std::max(50, width() - label_width() - 12);
  px_per_s_ = end > 0 ? avail / end : 1.0;
  offset_s_ = 0;
  fitted_ = true;
  update();
}

void GanttWidget::zoom(double factor, double anchor_x) {
  const double t_anchor = offset_s_ + (anchor_x - label_width()) / px_per_s_;
  const double end = std::max(1e-12, trace_.end_s());
  const double min_px = std::max(50, width() - label_width() - 12) / end * 0.5;
  px_per_s_ = std::clamp(px_per_s_ * factor, min_px, min_px * 1e6);
  offset_s_ = t_anchor - (anchor_x - label_width()) / px_per_s_;
  fitted_ = false;
  update();
}

void GanttWidget::resizeEvent(QResizeEvent* event) {
  if (fitted_) fit();
  QWidget::resizeEvent(event);
}

int GanttWidget::event_at(const QPoint& pos) const {
  const double lh = lane_height();
  const int lane = static_cast<int>((pos.y() - kAxisHeight) / lh);
  if (pos.y() < kAxisHeight || lane < 0 || lane >= static_cast<int>(by_lane_.size()) || pos.x() < label_width()) return -1;
  const double t = offset_s_ + (pos.x() - label_width()) / px_per_s_;
  const double slack = 2.0 / px_per_s_;  // two pixels, so that thin events can be hovered
  for (int i : by_lane_[lane]) {
    const auto& e = trace_.events[i];
    if (e.start_s - slack <= t && t <= e.start_s + e.duration_s + slack) return i;
  }
  return -1;
}

void GanttWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  const int lw = label_width();
  const double lh = lane_height();
  const int n = static_cast<int>(trace_.lanes.size());
  const QRect plot(lw, kAxisHeight, width() - lw, static_cast<int>(lh * n));
  if (n == 0) {
    p.setPen(QColor(0x66, 0x66, 0x66));
    p.drawText(rect(), Qt::AlignCenter, trace_.title.isEmpty() ? tr("No timeline") : trace_.title);
    return;
  }
  // Lanes: alternating bands; compute lanes hatched over the step so that gaps read as bubbles.
  const double end = trace_.end_s();
  for (int i = 0; i < n; ++i) {
    const QRectF band(0, kAxisHeight + i * lh, width(), lh);
    p.fillRect(band, (i / 2) % 2 ? QColor(0xf7, 0xf8, 0xfa) : QColor(0xff, 0xff, 0xff));
    if (i < static_cast<int>(trace_.hatch_idle.size()) && trace_.hatch_idle[i]) {
      const double x0 = std::max<double>(lw, x_of(0)), x1 = std::min<double>(width(), x_of(end));
      if (x1 > x0) p.fillRect(QRectF(x0, band.top() + 1, x1 - x0, lh - 2), QBrush(QColor(0xc8, 0xc8, 0xc8), Qt::BDiagPattern));
    }
  }
  // Time axis.
  const double visible_s = (width() - lw) / px_per_s_;
  const double step = nice_step(visible_s, std::max(2, (width() - lw) / 110));
  p.setPen(QColor(0x44, 0x44, 0x44));
  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.85);
  p.setFont(small);
  for (double t = std::ceil(offset_s_ / step) * step; t <= offset_s_ + visible_s; t += step) {
    const double x = x_of(t);
    p.setPen(QColor(0xe2, 0xe4, 0xe8));
    p.drawLine(QPointF(x, kAxisHeight), QPointF(x, plot.bottom()));
    p.setPen(QColor(0x44, 0x44, 0x44));
    p.drawLine(QPointF(x, kAxisHeight - 5), QPointF(x, kAxisHeight));
    p.drawText(QRectF(x - 60, 2, 120, kAxisHeight - 7), Qt::AlignHCenter | Qt::AlignBottom, format_seconds(t));
  }
  // Events, clipped to the plot.
  p.save();
  p.setClipRect(QRect(lw, kAxisHeight, width() - lw, plot.height()));
  const QFontMetrics fm(small);
  for (int lane = 0; lane < n; ++lane) {
    const double y = kAxisHeight + lane * lh + (lh >= 8 ? 2 : 0);
    const double h = lh >= 8 ? lh - 4 : lh;
    for (int i : by_lane_[lane]) {
      const auto& e = trace_.events[i];
      const double x0 = x_of(e.start_s), x1 = x_of(e.start_s + e.duration_s);
      if (x1 < lw || x0 > width()) continue;
      const QColor c = gantt_color(e.category);
      const QRectF r(x0, y, std::max(1.0, x1 - x0), h);
      p.fillRect(r, c);
      if (r.width() > 7 && h >= 8) {
        p.setPen(c.darker(130));
        p.drawRect(r);
      }
      if (r.width() > fm.horizontalAdvance(e.name) + 4 && h >= fm.height() - 2) {
        p.setPen(c.lightness() > 150 ? Qt::black : Qt::white);
        p.drawText(r, Qt::AlignCenter, e.name);
      }
    }
  }
  p.restore();
  // Lane labels over a solid column (so zoomed events never run under them).
  p.fillRect(QRect(0, kAxisHeight, lw, plot.bottom() + 1 - kAxisHeight), palette().base());
  p.setPen(QColor(0x33, 0x33, 0x33));
  const bool every_lane = lh >= fm.height() - 1;
  for (int i = 0; i < n; ++i) {
    if (!every_lane && i % std::max(1, static_cast<int>(std::ceil(fm.height() / lh))) != 0) continue;
    p.drawText(QRectF(4, kAxisHeight + i * lh, lw - 8, std::max(lh, double(fm.height()))),
               Qt::AlignVCenter | Qt::AlignLeft, trace_.lanes[i]);
  }
  p.setPen(QColor(0xb0, 0xb4, 0xbb));
  p.drawLine(lw, kAxisHeight, lw, plot.bottom());
  p.drawLine(lw, kAxisHeight, width(), kAxisHeight);
  // Legend: the categories that occur.
  QStringList cats;
  for (const auto& e : trace_.events)
    if (!cats.contains(e.category)) cats << e.category;
  std::sort(cats.begin(), cats.end(), [](const QString& a, const QString& b) {
    static const QStringList order = {"F", "B", "B+W", "W", "p2p", "dp", "offload", "optimizer"};
    const int ia = order.indexOf(a), ib = order.indexOf(b);
    return (ia < 0 ? 99 : ia) != (ib < 0 ? 99 : ib) ? (ia < 0 ? 99 : ia) < (ib < 0 ? 99 : ib) : a < b;
  });
  auto describe = [this](const QString& c) -> QString {
    if (c == "F") return tr("F forward");
    if (c == "B") return tr("B backward (input grad)");
    if (c == "B+W") return tr("B backward (input + weight grad)");
    if (c == "W") return tr("W weight grad");
    if (c == "p2p") return tr("p2p send");
    if (c == "dp") return tr("DP gradient sync");
    if (c == "optimizer") return tr("optimizer");
    if (c == "offload") return tr("offload");
    return c;
  };
  double x = lw;
  const double ly = height() - kLegendHeight + 6;
  p.setFont(small);
  for (const auto& c : cats.mid(0, 16)) {
    const QString text = describe(c);
    p.fillRect(QRectF(x, ly + 2, 12, 12), gantt_color(c));
    p.setPen(Qt::black);
    p.drawText(QPointF(x + 16, ly + 12), text);
    x += 16 + fm.horizontalAdvance(text) + 16;
  }
  if (!trace_.hatch_idle.empty()) {
    p.fillRect(QRectF(x, ly + 2, 12, 12), QBrush(QColor(0x90, 0x90, 0x90), Qt::BDiagPattern));
    p.drawRect(QRectF(x, ly + 2, 12, 12));
    p.drawText(QPointF(x + 16, ly + 12), tr("idle (bubble)"));
  }
}

void GanttWidget::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (event->modifiers() & Qt::ShiftModifier) {
    offset_s_ -= steps * 60.0 / px_per_s_;
    fitted_ = false;
    update();
  } else {
    zoom(std::pow(1.25, steps), event->position().x());
  }
  event->accept();
}

void GanttWidget::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    dragging_ = true;
    drag_from_ = event->pos();
    drag_offset_s_ = offset_s_;
    setCursor(Qt::ClosedHandCursor);
  }
}

void GanttWidget::mouseMoveEvent(QMouseEvent* event) {
  if (dragging_) {
    offset_s_ = drag_offset_s_ - (event->pos().x() - drag_from_.x()) / px_per_s_;
    fitted_ = false;
    update();
    return;
  }
  const int i = event_at(event->pos());
  if (i >= 0) QToolTip::showText(event->globalPosition().toPoint(), trace_.events[i].detail, this);
  else QToolTip::hideText();
}

void GanttWidget::mouseReleaseEvent(QMouseEvent*) {
  dragging_ = false;
  setCursor(Qt::OpenHandCursor);
}

TimelineView::TimelineView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  source_ = new QLabel(this);
  source_->setWordWrap(true);
  source_->setStyleSheet("font-weight: bold;");
  bar->addWidget(source_, 1);
  zoom_in_ = new QPushButton(this);
  zoom_out_ = new QPushButton(this);
  fit_ = new QPushButton(this);
  load_ = new QPushButton(this);
  back_to_estimate_ = new QPushButton(this);
  back_to_estimate_->setVisible(false);
  for (auto* b : {zoom_in_, zoom_out_, fit_, load_, back_to_estimate_}) bar->addWidget(b);
  layout->addLayout(bar);
  gantt_ = new GanttWidget(this);
  layout->addWidget(gantt_, 1);
  legend_ = new QLabel(this);
  legend_->setWordWrap(true);
  legend_->setStyleSheet("color: #555;");
  layout->addWidget(legend_);
  connect(zoom_in_, &QPushButton::clicked, this, [this] { gantt_->zoom(2.0, gantt_->width() / 2.0); });
  connect(zoom_out_, &QPushButton::clicked, this, [this] { gantt_->zoom(0.5, gantt_->width() / 2.0); });
  connect(fit_, &QPushButton::clicked, gantt_, &GanttWidget::fit);
  connect(load_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load Chrome/Perfetto trace"), QString(),
                                                      tr("Trace JSON (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    QString error;
    if (!load_trace_file(path, &error)) legend_->setText(tr("Cannot load %1: %2").arg(path, error));
  });
  connect(back_to_estimate_, &QPushButton::clicked, this, &TimelineView::show_estimate);
  retranslate_ui();
}

void TimelineView::retranslate_ui() {
  zoom_in_->setText(tr("Zoom in"));
  zoom_out_->setText(tr("Zoom out"));
  fit_->setText(tr("Fit"));
  load_->setText(tr("Load trace…"));
  back_to_estimate_->setText(tr("Show estimate"));
  gantt_->setToolTip(QString());
  zoom_in_->setToolTip(tr("Mouse wheel zooms around the cursor; drag or Shift+wheel pans"));
}

void TimelineView::showEvent(QShowEvent* event) {
  if (dirty_) redraw();
  ScenarioView::showEvent(event);
}

void TimelineView::redraw() {
  if (showing_file_) return;
  // Playing the schedule costs O(ops); do it only when the tab is on screen.
  if (!isVisible()) {
    dirty_ = true;
    return;
  }
  dirty_ = false;
  const GanttTrace g = estimate_timeline(evaluation());
  gantt_->set_trace(g);
  source_->setText(g.title);
  legend_->setText(g.legend_note);
}

void TimelineView::show_estimate() {
  showing_file_ = false;
  back_to_estimate_->setVisible(false);
  dirty_ = true;
  redraw();
}

QString TimelineView::title_text() const { return source_->text(); }

void TimelineView::show_trace(const GanttTrace& trace) {
  showing_file_ = true;
  back_to_estimate_->setVisible(true);
  gantt_->set_trace(trace);
  source_->setText(trace.title);
  legend_->setText(trace.legend_note.isEmpty() ? tr("%1 events on %2 lanes").arg(trace.events.size()).arg(trace.lanes.size())
                                               : trace.legend_note);
}

bool TimelineView::load_trace_file(const QString& file_path, QString* error) {
  try {
    GanttTrace g = load_chrome_trace_file(file_path);
    g.title = tr("Trace: %1").arg(file_path);
    show_trace(g);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

}  // namespace trainsim::gui
