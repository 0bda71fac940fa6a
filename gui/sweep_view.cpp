#include "gui/sweep_view.hpp"

#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/chart_style.hpp"
#include "gui/format.hpp"

namespace trainsim::gui {

SweepView::SweepView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  info_ = new QLabel(this);
  info_->setWordWrap(true);
  bar->addWidget(info_, 1);
  load_ = new QPushButton(this);
  bar->addWidget(load_);
  layout->addLayout(bar);
  chart_view_ = new QChartView(new QChart, this);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  layout->addWidget(chart_view_, 1);
  connect(load_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load sweep results"), QString(),
                                                      tr("Sweep results (*.jsonl *.json *.csv);;All files (*)"));
    if (path.isEmpty()) return;
    QString error;
    if (!load_file(path, &error)) info_->setText(tr("Cannot load %1: %2").arg(path, error));
  });
  retranslate_ui();
}

QWidget* SweepView::export_widget() { return chart_view_; }

void SweepView::retranslate_ui() { load_->setText(tr("Load sweep…")); }

bool SweepView::load_file(const QString& file_path, QString* error) {
  try {
    table_ = load_sweep_file(file_path);
    file_ = file_path;
    redraw();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

void SweepView::select_nearest(const QPointF& value) {
  int best = -1;
  double best_d = std::numeric_limits<double>::max();
  QChart* chart = chart_view_->chart();
  const QPointF target = chart->mapToPosition(value);
  for (int i = 0; i < static_cast<int>(table_.rows.size()); ++i) {
    const auto& r = table_.rows[i];
    const QPointF p = chart->mapToPosition(QPointF(bytes_to_gib(r.peak_bytes), r.tokens_per_s / y_scale_));
    const double d = std::hypot(p.x() - target.x(), p.y() - target.y());
    if (d < best_d) {
      best_d = d;
      best = i;
    }
  }
  if (best >= 0) {
    info_->setText(tr("Loaded plan %1 from the sweep").arg(table_.rows[best].label));
    emit plan_selected(table_.rows[best]);
  }
}

void SweepView::redraw() {
  auto* chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignBottom);
  if (table_.rows.empty()) {
    chart->setTitle(tr("No sweep loaded"));
    info_->setText(tr("Load sweep results (JSON Lines or CSV rows with plan fields and step_time_s, "
                      "tokens_per_s, memory.peak_bytes, feasible) to compare plans; click a point to load its plan."));
    replace_chart(chart_view_, chart);
    return;
  }
  double max_tps = 0, max_gib = 0;
  for (const auto& r : table_.rows) {
    max_tps = std::max(max_tps, r.tokens_per_s);
    max_gib = std::max(max_gib, bytes_to_gib(r.peak_bytes));
  }
  QString y_unit = tr("tokens/s");
  y_scale_ = 1;
  if (max_tps >= 1e6) {
    y_scale_ = 1e6;
    y_unit = tr("million tokens/s");
  } else if (max_tps >= 1e3) {
    y_scale_ = 1e3;
    y_unit = tr("thousand tokens/s");
  }
  auto* feasible = new QScatterSeries;
  feasible->setName(tr("feasible plans"));
  feasible->setMarkerSize(8);
  feasible->setColor(QColor(0x4e, 0x79, 0xa7, 170));
  feasible->setBorderColor(QColor(0x4e, 0x79, 0xa7));
  auto* infeasible = new QScatterSeries;
  infeasible->setName(tr("infeasible plans"));
  infeasible->setMarkerSize(7);
  infeasible->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  infeasible->setColor(QColor(0xbb, 0xbb, 0xbb, 160));
  infeasible->setBorderColor(QColor(0x99, 0x99, 0x99));
  auto* front = new QScatterSeries;
  front->setName(tr("Pareto front"));
  front->setMarkerSize(12);
  front->setColor(QColor(0xe1, 0x57, 0x59));
  front->setBorderColor(QColor(0x8b, 0x1a, 0x1a));
  auto* front_line = new QLineSeries;
  QPen pen(QColor(0xe1, 0x57, 0x59));
  pen.setWidth(2);
  front_line->setPen(pen);
  for (const auto& r : table_.rows)
    (r.feasible ? feasible : infeasible)->append(bytes_to_gib(r.peak_bytes), r.tokens_per_s / y_scale_);
  for (int i : table_.pareto) {
    const auto& r = table_.rows[i];
    front->append(bytes_to_gib(r.peak_bytes), r.tokens_per_s / y_scale_);
    front_line->append(bytes_to_gib(r.peak_bytes), r.tokens_per_s / y_scale_);
  }
  chart->addSeries(infeasible);
  chart->addSeries(feasible);
  chart->addSeries(front_line);
  chart->addSeries(front);
  QList<QAbstractSeries*> all{infeasible, feasible, front_line, front};

  const Evaluation& ev = evaluation();
  QLineSeries* hbm = nullptr;
  if (ev.loaded && ev.result.hbm_capacity_bytes > 0) {
    const double gib = bytes_to_gib(ev.result.hbm_capacity_bytes);
    max_gib = std::max(max_gib, gib);
    hbm = new QLineSeries;
    hbm->setName(tr("HBM capacity"));
    QPen dash(QColor(0xd6, 0x27, 0x28));
    dash.setStyle(Qt::DashLine);
    hbm->setPen(dash);
    hbm->append(gib, 0);
    hbm->append(gib, max_tps / y_scale_ * 1.1);
    chart->addSeries(hbm);
    all << hbm;
  }
  auto* x = new QValueAxis;
  x->setRange(0, max_gib * 1.08);
  x->setTitleText(tr("peak memory per GPU (GiB)"));
  x->applyNiceNumbers();
  x->setLabelFormat("%g");
  auto* y = new QValueAxis;
  y->setRange(0, max_tps / y_scale_ * 1.1);
  y->setTitleText(y_unit);
  y->applyNiceNumbers();
  y->setLabelFormat("%g");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (auto* s : all) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  // The legend entry of the connecting line would duplicate "Pareto front".
  for (auto* m : chart->legend()->markers(front_line)) m->setVisible(false);
  chart->setTitle(tr("Throughput against memory: %1 plans, %2 on the Pareto front").arg(table_.rows.size()).arg(table_.pareto.size()));
  for (auto* s : {feasible, infeasible, front}) {
    connect(s, &QScatterSeries::clicked, this, &SweepView::select_nearest);
    connect(s, &QScatterSeries::hovered, this, [this](const QPointF& p, bool state) {
      if (!state) return QToolTip::hideText();
      const auto& rows = table_.rows;
      for (const auto& r : rows)
        if (std::abs(bytes_to_gib(r.peak_bytes) - p.x()) < 1e-9 && std::abs(r.tokens_per_s / y_scale_ - p.y()) < 1e-9) {
          QToolTip::showText(QCursor::pos(), tr("%1\n%2, %3 per GPU, step %4%5")
                                                 .arg(r.label, format_rate(r.tokens_per_s, tr("tokens/s")),
                                                      format_bytes(r.peak_bytes), format_seconds(r.step_time_s),
                                                      r.feasible ? QString() : tr(" (infeasible)")));
          return;
        }
    });
  }
  replace_chart(chart_view_, chart);
  info_->setText(tr("%1: %2 rows (%3 infeasible%4). Click a point to load that plan.")
                     .arg(file_)
                     .arg(table_.rows.size())
                     .arg(std::count_if(table_.rows.begin(), table_.rows.end(), [](const SweepRow& r) { return !r.feasible; }))
                     .arg(table_.skipped_lines ? tr(", %1 lines skipped").arg(table_.skipped_lines) : QString()));
}

}  // namespace trainsim::gui
