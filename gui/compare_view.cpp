#include "gui/compare_view.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStackedBarSeries>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>
#include <functional>

#include "gui/breakdown_view.hpp"
#include "gui/chart_style.hpp"
#include "gui/format.hpp"

namespace trainsim::gui {

CompareView::CompareView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  header_ = new QLabel(this);
  header_->setWordWrap(true);
  bar->addWidget(header_, 1);
  pin_ = new QPushButton(this);
  load_ = new QPushButton(this);
  bar->addWidget(pin_);
  bar->addWidget(load_);
  layout->addLayout(bar);
  auto* body = new QHBoxLayout;
  table_ = new QTableWidget(0, 4, this);
  table_->verticalHeader()->setVisible(false);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideMiddle);
  body->addWidget(table_, 3);
  chart_view_ = new QChartView(new QChart, this);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  body->addWidget(chart_view_, 2);
  layout->addLayout(body, 1);
  connect(pin_, &QPushButton::clicked, this, [this] { set_reference(evaluation(), tr("pinned plan")); });
  connect(load_, &QPushButton::clicked, this, &CompareView::reference_file_requested);
  retranslate_ui();
}

void CompareView::retranslate_ui() {
  pin_->setText(tr("Pin current as A"));
  load_->setText(tr("Load A from file…"));
}

void CompareView::set_reference(const Evaluation& ev, const QString& label) {
  reference_ = ev;
  reference_label_ = label;
  redraw();
}

void CompareView::redraw() {
  const Evaluation& a = reference_;
  const Evaluation& b = evaluation();
  table_->setHorizontalHeaderLabels({tr("Quantity"), tr("A: %1").arg(reference_label_), tr("B: current"), tr("Change B vs A")});
  header_->setText(a.loaded ? tr("A = %1 (%2), B = the plan being edited.")
                                  .arg(QString::fromStdString(a.scenario.name), reference_label_)
                            : tr("Pin a plan as A (or load one from a file), then edit the plan: B follows your edits."));
  struct Row {
    QString name;
    std::function<QString(const Evaluation&)> text;
    std::function<double(const Evaluation&)> value;  // for the change column; empty: text diff
    bool higher_is_better = true;
  };
  auto plan_int = [](int ParallelPlan::*f) {
    return [f](const Evaluation& e) { return e.loaded ? QString::number(e.scenario.plan.*f) : QString("-"); };
  };
  std::vector<Row> rows = {
      {tr("Scenario"), [](const Evaluation& e) { return QString::fromStdString(e.scenario.name); }, {}},
      {tr("Model"), [](const Evaluation& e) { return QString::fromStdString(e.scenario.model.name); }, {}},
      {tr("Cluster"), [](const Evaluation& e) {
         return QString("%1 (%2 GPUs)").arg(QString::fromStdString(e.scenario.cluster.name)).arg(e.scenario.cluster.total_gpus());
       }, {}},
      {"TP", plan_int(&ParallelPlan::tp), {}},
      {"PP", plan_int(&ParallelPlan::pp), {}},
      {"DP", plan_int(&ParallelPlan::dp), {}},
      {"CP", plan_int(&ParallelPlan::cp), {}},
      {"EP", plan_int(&ParallelPlan::ep), {}},
      {"vpp", plan_int(&ParallelPlan::vpp), {}},
      {tr("Schedule"), [](const Evaluation& e) { return QString::fromStdString(e.scenario.plan.schedule); }, {}},
      {tr("Micro / global batch"), [](const Evaluation& e) {
         return QString("%1 / %2").arg(e.scenario.plan.micro_batch).arg(e.scenario.plan.global_batch);
       }, {}},
      {tr("ZeRO, recompute, precision"), [](const Evaluation& e) {
         return QString("ZeRO-%1, %2, %3").arg(e.scenario.plan.zero_stage).arg(to_string(e.scenario.plan.recompute), to_string(e.scenario.plan.precision));
       }, {}},
      {tr("Feasible"), [this](const Evaluation& e) {
         return e.result.feasible ? tr("yes") : tr("no: %1").arg(QString::fromStdString(e.result.reason));
       }, {}},
      {tr("Step time"), [](const Evaluation& e) { return format_seconds(e.result.step_time_s); },
       [](const Evaluation& e) { return e.result.step_time_s; }, false},
      {tr("Throughput"), [this](const Evaluation& e) { return format_rate(e.result.tokens_per_s, tr("tokens/s")); },
       [](const Evaluation& e) { return e.result.tokens_per_s; }, true},
      {"MFU", [](const Evaluation& e) { return format_percent(e.result.mfu); }, [](const Evaluation& e) { return e.result.mfu; }, true},
      {"HFU", [](const Evaluation& e) { return format_percent(e.result.hfu); }, [](const Evaluation& e) { return e.result.hfu; }, true},
      {tr("Bubble (stage mean)"), [](const Evaluation& e) { return format_percent(e.result.bubble_fraction); },
       [](const Evaluation& e) { return e.result.bubble_fraction; }, false},
      {tr("Exposed comm"), [](const Evaluation& e) { return format_seconds(e.result.exposed_comm_s); },
       [](const Evaluation& e) { return e.result.exposed_comm_s; }, false},
      {tr("Peak memory per GPU"), [](const Evaluation& e) { return format_bytes(e.result.peak_memory_bytes); },
       [](const Evaluation& e) { return e.result.peak_memory_bytes; }, false},
  };
  table_->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const Row& r = rows[i];
    table_->setItem(i, 0, new QTableWidgetItem(r.name));
    const QString ta = a.loaded ? r.text(a) : QString("-");
    const QString tb = b.loaded ? r.text(b) : QString("-");
    auto* ia = new QTableWidgetItem(ta);
    auto* ib = new QTableWidgetItem(tb);
    ia->setToolTip(ta);
    ib->setToolTip(tb);
    table_->setItem(i, 1, ia);
    table_->setItem(i, 2, ib);
    auto* change = new QTableWidgetItem;
    if (a.loaded && b.loaded) {
      if (r.value) {
        const double va = r.value(a), vb = r.value(b);
        if (va != 0) {
          const double rel = (vb - va) / std::abs(va);
          change->setText(QString("%1%2").arg(rel >= 0 ? "+" : "").arg(format_percent(rel)));
          if (std::abs(rel) > 1e-9)
            change->setForeground((rel > 0) == r.higher_is_better ? QColor(0x2b, 0x7a, 0x2b) : QColor(0xb0, 0x20, 0x20));
        }
      } else if (ta != tb) {
        change->setText(tr("differs"));
        QFont f = change->font();
        f.setBold(true);
        change->setFont(f);
      }
    }
    table_->setItem(i, 3, change);
  }

  // Step-time composition of A and B as two stacked bars.
  auto* chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignRight);
  auto* series = new QStackedBarSeries;
  const auto pa = time_parts(a.result.breakdown);
  const auto pb = time_parts(b.result.breakdown);
  const double max_s = std::max(a.loaded ? a.result.step_time_s : 0.0, b.loaded ? b.result.step_time_s : 0.0);
  const TimeUnit unit = time_unit_for(max_s);
  for (size_t k = 0; k < pa.size(); ++k) {
    const double va = a.loaded ? pa[k].seconds * unit.per_second : 0, vb = b.loaded ? pb[k].seconds * unit.per_second : 0;
    if (va <= 0 && vb <= 0) continue;
    auto* set = new QBarSet(pa[k].name);
    set->setColor(pa[k].color);
    *set << va << vb;
    series->append(set);
  }
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append({tr("A"), tr("B")});
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  auto* y = new QValueAxis;
  y->setRange(0, std::max(1e-6, max_s * unit.per_second * 1.1));
  y->setTitleText(unit.per_second == 1.0 ? tr("seconds per step") : tr("milliseconds per step"));
  y->setLabelFormat("%g");
  y->applyNiceNumbers();
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  chart->setTitle(tr("Step time: A vs B"));
  replace_chart(chart_view_, chart);
}

}  // namespace trainsim::gui
