#include "gui/breakdown_view.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/chart_style.hpp"
#include "gui/format.hpp"

namespace trainsim::gui {

std::vector<TimePart> time_parts(const TimeBreakdown& b) {
  return {{BreakdownView::tr("Compute"), palette::kCompute, b.compute_s},
          {BreakdownView::tr("TP communication"), palette::kTpComm, b.tp_comm_s},
          {BreakdownView::tr("PP communication"), palette::kPpComm, b.pp_comm_s},
          {BreakdownView::tr("DP communication"), palette::kDpComm, b.dp_comm_s},
          {BreakdownView::tr("EP communication"), palette::kEpComm, b.ep_comm_s},
          {BreakdownView::tr("CP communication"), palette::kCpComm, b.cp_comm_s},
          {BreakdownView::tr("Pipeline bubble"), palette::kBubble, b.bubble_s},
          {BreakdownView::tr("Optimizer"), palette::kOptimizer, b.optimizer_s},
          {BreakdownView::tr("Offload"), palette::kOffload, b.offload_s}};
}

BreakdownView::BreakdownView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  chart_view_ = new QChartView(new QChart, this);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  layout->addWidget(chart_view_, 3);
  auto* side = new QVBoxLayout;
  table_ = new QTableWidget(0, 3, this);
  table_->verticalHeader()->setVisible(false);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  side->addWidget(table_, 1);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setStyleSheet("color: #555;");
  side->addWidget(note_);
  layout->addLayout(side, 2);
}

void BreakdownView::redraw() {
  const Evaluation& ev = evaluation();
  auto* chart = new QChart;
  table_->setHorizontalHeaderLabels({tr("Part"), tr("Time"), tr("Share")});
  if (!has_figures(ev)) {
    chart->setTitle(ev.loaded ? tr("Step time breakdown: %1").arg(QString::fromStdString(infeasible_note(ev)))
                              : tr("Step time breakdown: no result (the scenario does not load)"));
    replace_chart(chart_view_, chart);
    table_->setRowCount(0);
    note_->clear();
    return;
  }
  const Result& r = ev.result;
  const auto parts = time_parts(r.breakdown);
  // One set per part, non-zero only in its own row: each part gets its own colour and legend entry.
  auto* series = new QHorizontalStackedBarSeries;
  QStringList cats;
  std::vector<const TimePart*> shown;
  for (const auto& p : parts)
    if (p.seconds > 0) shown.push_back(&p);
  std::reverse(shown.begin(), shown.end());  // Qt draws the first category at the bottom
  const TimeUnit unit = time_unit_for(r.step_time_s);
  double max_ms = 0;
  for (size_t i = 0; i < shown.size(); ++i) {
    cats << shown[i]->name;
    auto* set = new QBarSet(shown[i]->name);
    set->setColor(shown[i]->color);
    set->setBorderColor(shown[i]->color.darker(115));
    for (size_t j = 0; j < shown.size(); ++j) *set << (i == j ? shown[i]->seconds * unit.per_second : 0.0);
    series->append(set);
    max_ms = std::max(max_ms, shown[i]->seconds * unit.per_second);
  }
  series->setBarWidth(0.7);
  chart->addSeries(series);
  chart->legend()->setVisible(false);  // the category axis already names each bar
  auto* y = new QBarCategoryAxis;
  y->append(cats);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  auto* x = new QValueAxis;
  x->setRange(0, std::max(1e-9, max_ms * 1.08));
  x->setTitleText(unit.per_second == 1.0 ? tr("seconds per step") : tr("milliseconds per step"));
  x->setLabelFormat("%g");
  x->applyNiceNumbers();
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  chart->setTitle(tr("Where the step time goes (%1 per step, %2)")
                      .arg(format_seconds(r.step_time_s), QString::fromStdString(r.fidelity)));
  replace_chart(chart_view_, chart);

  double total = 0;
  for (const auto& p : parts) total += p.seconds;
  table_->setRowCount(static_cast<int>(parts.size()) + 1);
  int row = 0;
  for (const auto& p : parts) {
    auto* name = new QTableWidgetItem(p.name);
    QPixmap swatch(12, 12);
    swatch.fill(p.color);
    name->setIcon(QIcon(swatch));
    table_->setItem(row, 0, name);
    auto* t = new QTableWidgetItem(format_seconds(p.seconds));
    t->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table_->setItem(row, 1, t);
    auto* s = new QTableWidgetItem(total > 0 ? format_percent(p.seconds / total) : "-");
    s->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table_->setItem(row, 2, s);
    if (p.seconds <= 0)
      for (int c = 0; c < 3; ++c) table_->item(row, c)->setForeground(QColor(0x99, 0x99, 0x99));
    ++row;
  }
  auto* total_name = new QTableWidgetItem(tr("Step time"));
  QFont bold = total_name->font();
  bold.setBold(true);
  total_name->setFont(bold);
  table_->setItem(row, 0, total_name);
  auto* total_t = new QTableWidgetItem(format_seconds(r.step_time_s));
  total_t->setFont(bold);
  total_t->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  table_->setItem(row, 1, total_t);
  table_->setItem(row, 2, new QTableWidgetItem(""));
  note_->setText(tr("Critical pipeline stage, exposed time only: communication hidden behind compute is "
                    "not counted (%1 overlapped). MFU %2, HFU %3; over all stages, the mean bubble is %4 of the step.")
                     .arg(format_seconds(r.overlapped.total_s()), format_percent(r.mfu), format_percent(r.hfu),
                          format_percent(r.bubble_fraction)));
}

}  // namespace trainsim::gui
