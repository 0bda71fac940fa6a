#include "gui/memory_view.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/chart_style.hpp"
#include "gui/format.hpp"

namespace trainsim::gui {

MemoryView::MemoryView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  chart_view_ = new QChartView(new QChart, this);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  layout->addWidget(chart_view_);
}

QWidget* MemoryView::export_widget() { return chart_view_; }

void MemoryView::redraw() {
  const Evaluation& ev = evaluation();
  auto* chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignBottom);
  if (!has_figures(ev) || ev.result.per_stage.empty()) {
    chart->setTitle(ev.loaded ? tr("Memory per GPU: %1").arg(QString::fromStdString(infeasible_note(ev)))
                              : tr("Memory per GPU: no result (the scenario does not load)"));
    replace_chart(chart_view_, chart);
    return;
  }
  const Result& r = ev.result;
  const int stages = static_cast<int>(r.per_stage.size());
  struct Part {
    QString name;
    QColor color;
    double MemoryBreakdown::*field;
  };
  const Part parts[] = {{tr("Parameters"), palette::kParams, &MemoryBreakdown::params_bytes},
                        {tr("Gradients"), palette::kGrads, &MemoryBreakdown::grads_bytes},
                        {tr("Optimizer state"), palette::kOptimizerState, &MemoryBreakdown::optimizer_bytes},
                        {tr("Activations"), palette::kActivations, &MemoryBreakdown::activations_bytes},
                        {tr("Buffers and other"), palette::kOther, &MemoryBreakdown::other_bytes}};
  auto* bars = new QStackedBarSeries;
  double max_total = 0;
  for (const auto& part : parts) {
    auto* set = new QBarSet(part.name);
    set->setColor(part.color);
    set->setBorderColor(part.color.darker(115));
    for (const auto& s : r.per_stage) *set << bytes_to_gib(s.breakdown.*(part.field));
    bars->append(set);
  }
  for (const auto& s : r.per_stage) max_total = std::max(max_total, bytes_to_gib(s.total_bytes));
  bars->setBarWidth(stages > 24 ? 0.9 : 0.6);
  chart->addSeries(bars);

  const double hbm_gib = bytes_to_gib(r.hbm_capacity_bytes);
  auto* hbm = new QLineSeries;
  hbm->setName(tr("HBM capacity (%1)").arg(format_bytes(r.hbm_capacity_bytes)));
  QPen pen(QColor(0xd6, 0x27, 0x28));
  pen.setWidth(2);
  pen.setStyle(Qt::DashLine);
  hbm->setPen(pen);
  *hbm << QPointF(-0.5, hbm_gib) << QPointF(stages - 0.5, hbm_gib);
  chart->addSeries(hbm);

  auto* x = new QBarCategoryAxis;
  QStringList cats;
  // Label every stage while they fit; with many stages label every k-th to stay readable.
  const int every = std::max(1, stages / 16);
  for (int i = 0; i < stages; ++i) cats << ((i % every == 0) ? QString::number(i) : QString(i, QChar(' ')));
  x->append(cats);
  x->setTitleText(tr("Pipeline stage"));
  chart->addAxis(x, Qt::AlignBottom);
  bars->attachAxis(x);
  auto* x_line = new QValueAxis;  // hidden: lets the HBM line span the category axis
  x_line->setRange(-0.5, stages - 0.5);
  x_line->setVisible(false);
  chart->addAxis(x_line, Qt::AlignBottom);
  hbm->attachAxis(x_line);

  auto* y = new QValueAxis;
  y->setRange(0, std::max(max_total, hbm_gib) * 1.12);
  y->setLabelFormat("%.0f");
  y->setTitleText(tr("GiB per GPU"));
  y->applyNiceNumbers();
  chart->addAxis(y, Qt::AlignLeft);
  bars->attachAxis(y);
  hbm->attachAxis(y);

  const bool fits = r.peak_memory_bytes <= r.hbm_capacity_bytes;
  chart->setTitle(tr("Memory per GPU by pipeline stage: peak %1 of %2 HBM%3")
                      .arg(format_bytes(r.peak_memory_bytes), format_bytes(r.hbm_capacity_bytes),
                           fits ? QString() : tr(" (does not fit)")));
  replace_chart(chart_view_, chart);
}

}  // namespace trainsim::gui
