#include "gui/sweep_view.hpp"

#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "gui/chart_style.hpp"
#include "gui/format.hpp"
#include "gui/search_runner.hpp"

namespace trainsim::gui {

SweepView::SweepView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  sweep_here_ = new QPushButton(this);
  sweep_file_ = new QPushButton(this);
  plan_search_ = new QPushButton(this);
  cancel_ = new QPushButton(this);
  load_ = new QPushButton(this);
  for (auto* b : {sweep_here_, sweep_file_, plan_search_, cancel_}) bar->addWidget(b);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(220);
  progress_->setRange(0, 100);
  bar->addWidget(progress_);
  bar->addStretch(1);
  bar->addWidget(load_);
  layout->addLayout(bar);
  run_status_ = new QLabel(this);
  run_status_->setWordWrap(true);
  run_status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(run_status_);
  info_ = new QLabel(this);
  info_->setWordWrap(true);
  layout->addWidget(info_);
  chart_view_ = new QChartView(new QChart, this);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  layout->addWidget(chart_view_, 1);

  runner_ = new SearchRunner(this);
  connect(sweep_here_, &QPushButton::clicked, this, &SweepView::run_sweep_of_scenario);
  connect(sweep_file_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Run a sweep file"), QString(), tr("Sweep JSON (*.json)"));
    if (!path.isEmpty()) run_sweep_file(path);
  });
  connect(plan_search_, &QPushButton::clicked, this, &SweepView::run_plan_search);
  connect(cancel_, &QPushButton::clicked, runner_, &SearchRunner::cancel);
  connect(load_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load sweep results"), QString(),
                                                      tr("Sweep results (*.jsonl *.json *.csv);;All files (*)"));
    if (path.isEmpty()) return;
    QString error;
    if (!load_file(path, &error)) info_->setText(tr("Cannot load %1: %2").arg(path, error));
  });
  connect(runner_, &SearchRunner::progress, this, [this](double fraction, const QString& message) {
    if (fraction < 0) progress_->setRange(0, 0);  // busy indicator
    else {
      progress_->setRange(0, 100);
      progress_->setValue(static_cast<int>(std::lround(fraction * 100)));
    }
    if (!message.isEmpty()) run_status_->setText(message);
  });
  connect(runner_, &SearchRunner::finished_ok, this, [this](const QString& file, const QString&) {
    set_running(false);
    const QString what = runner_->kind() == SearchRunner::Kind::kPlan ? tr("plan search") : tr("sweep");
    QString error;
    if (!load_file(file, &error)) {
      run_status_->setText(tr("The %1 finished, but its results could not be read: %2").arg(what, error));
      return;
    }
    source_ = runner_->kind() == SearchRunner::Kind::kPlan ? tr("plan search (trainsim plan)") : tr("sweep (trainsim sweep)");
    run_status_->setText(tr("The %1 finished: %2 plans, %3 on the Pareto front.")
                             .arg(what)
                             .arg(table_.rows.size())
                             .arg(table_.pareto.size()));
    redraw();
  });
  connect(runner_, &SearchRunner::failed, this, [this](const QString& message) {
    set_running(false);
    run_status_->setText(tr("Failed: %1").arg(QString(message).replace('\n', ' ')));
  });
  connect(runner_, &SearchRunner::cancelled, this, [this] {
    set_running(false);
    run_status_->setText(tr("Cancelled."));
  });
  set_running(false);
  retranslate_ui();
}

QWidget* SweepView::export_widget() { return chart_view_; }

void SweepView::retranslate_ui() {
  sweep_here_->setText(tr("Sweep this scenario"));
  sweep_here_->setToolTip(tr("trainsim sweep over TP × PP × DP, micro-batch 1-8, ZeRO 0/1/3 and recompute, "
                             "with the scenario being edited as the base"));
  sweep_file_->setText(tr("Run sweep file…"));
  plan_search_->setText(tr("Search plans"));
  plan_search_->setToolTip(tr("trainsim plan: every plan of this model on this cluster, GPU count and global batch"));
  cancel_->setText(tr("Cancel"));
  load_->setText(tr("Load results…"));
}

QString SweepView::info_text() const { return info_->text(); }
QString SweepView::run_status() const { return run_status_->text(); }

void SweepView::set_running(bool on) {
  const bool can = evaluation().loaded && !on;
  sweep_here_->setEnabled(can);
  plan_search_->setEnabled(can);
  sweep_file_->setEnabled(!on);
  cancel_->setEnabled(on);
  progress_->setVisible(on);
  if (on) {
    progress_->setRange(0, 0);
    progress_->setValue(0);
  }
}

void SweepView::run_sweep_of_scenario() {
  if (runner_->running() || !evaluation().loaded) return;
  if (runner_->start_sweep(sweep_around(evaluation()))) {
    set_running(true);
    run_status_->setText(tr("Sweeping the plans around %1…").arg(QString::fromStdString(evaluation().scenario.name)));
  }
}

void SweepView::run_sweep_file(const QString& file) {
  if (runner_->running()) return;
  if (runner_->start_sweep_file(file)) {
    set_running(true);
    run_status_->setText(tr("Running the sweep %1…").arg(QFileInfo(file).fileName()));
  }
}

void SweepView::run_plan_search() {
  if (runner_->running() || !evaluation().loaded) return;
  if (runner_->start_plan_search(evaluation())) {
    set_running(true);
    run_status_->setText(tr("Searching the plans of %1 on %2 GPUs…")
                             .arg(QString::fromStdString(evaluation().scenario.model.name))
                             .arg(evaluation().scenario.cluster.total_gpus()));
  }
}

bool SweepView::load_file(const QString& file_path, QString* error) {
  try {
    table_ = load_sweep_file(file_path);
    file_ = file_path;
    source_ = QFileInfo(file_path).fileName();
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
  for (int i : drawn_) {
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
  if (!runner_->running()) set_running(false);
  auto* chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignBottom);
  drawn_.clear();
  outside_ = 0;
  x_max_gib_ = y_max_tps_ = 0;
  if (table_.rows.empty()) {
    chart->setTitle(tr("No sweep loaded"));
    info_->setText(tr("Run a sweep of this scenario, a sweep file or a plan search (each in a trainsim child process), "
                      "or load results (trainsim sweep rows, trainsim plan --json, or CSV); click a point to load its plan."));
    replace_chart(chart_view_, chart);
    return;
  }
  // The axes span the feasible plans (and the HBM line): a plan that does not fit in memory
  // would otherwise stretch them and squeeze the plans that run into a sliver.
  double max_tps = 0, max_gib = 0;
  int feasible_count = 0, competing = 0;
  std::map<std::string, int> reasons;
  for (const auto& r : table_.rows) {
    if (r.feasible && r.has_metrics()) {
      ++feasible_count;
      competing += r.meets_constraints;
      max_tps = std::max(max_tps, r.tokens_per_s);
      max_gib = std::max(max_gib, bytes_to_gib(r.peak_bytes));
    } else if (!r.feasible) {
      ++reasons[r.reason_code.empty() ? std::string("infeasible") : r.reason_code];
    }
  }
  const Evaluation& ev = evaluation();
  const double hbm_gib = ev.loaded && ev.result.hbm_capacity_bytes > 0 ? bytes_to_gib(ev.result.hbm_capacity_bytes) : 0;
  if (feasible_count == 0) {
    max_gib = std::max(hbm_gib, 1.0);
    max_tps = 1;
  }
  max_gib = std::max(max_gib, hbm_gib);
  QString y_unit = tr("tokens/s");
  y_scale_ = 1;
  if (max_tps >= 1e6) {
    y_scale_ = 1e6;
    y_unit = tr("million tokens/s");
  } else if (max_tps >= 1e3) {
    y_scale_ = 1e3;
    y_unit = tr("thousand tokens/s");
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
  x_max_gib_ = x->max();
  y_max_tps_ = y->max() * y_scale_;

  auto* within = new QScatterSeries;
  within->setName(tr("feasible plans"));
  within->setMarkerSize(8);
  within->setColor(QColor(0x4e, 0x79, 0xa7, 170));
  within->setBorderColor(QColor(0x4e, 0x79, 0xa7));
  auto* outside_constraints = new QScatterSeries;
  outside_constraints->setName(tr("outside the constraints"));
  outside_constraints->setMarkerSize(8);
  outside_constraints->setColor(QColor(0xff, 0xff, 0xff, 0));
  outside_constraints->setBorderColor(QColor(0x4e, 0x79, 0xa7));
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
  for (int i = 0; i < static_cast<int>(table_.rows.size()); ++i) {
    const auto& r = table_.rows[i];
    if (!r.has_metrics()) continue;  // an infeasible row with only its reason
    const double gib = bytes_to_gib(r.peak_bytes);
    if (!r.feasible && (gib > x_max_gib_ || r.tokens_per_s > y_max_tps_)) {
      ++outside_;
      continue;
    }
    QScatterSeries* s = !r.feasible ? infeasible : r.meets_constraints ? within : outside_constraints;
    s->append(gib, r.tokens_per_s / y_scale_);
    drawn_.push_back(i);
  }
  // The front as a staircase from the least memory to the most.
  std::vector<int> by_memory = table_.pareto;
  std::sort(by_memory.begin(), by_memory.end(),
            [&](int a, int b) { return table_.rows[a].peak_bytes < table_.rows[b].peak_bytes; });
  for (int i : by_memory) {
    const auto& r = table_.rows[i];
    front->append(bytes_to_gib(r.peak_bytes), r.tokens_per_s / y_scale_);
    front_line->append(bytes_to_gib(r.peak_bytes), r.tokens_per_s / y_scale_);
  }
  chart->addSeries(infeasible);
  chart->addSeries(outside_constraints);
  chart->addSeries(within);
  chart->addSeries(front_line);
  chart->addSeries(front);
  QList<QAbstractSeries*> all{infeasible, outside_constraints, within, front_line, front};
  if (hbm_gib > 0) {
    auto* hbm = new QLineSeries;
    hbm->setName(tr("HBM capacity"));
    QPen dash(QColor(0xd6, 0x27, 0x28));
    dash.setStyle(Qt::DashLine);
    hbm->setPen(dash);
    hbm->append(hbm_gib, 0);
    hbm->append(hbm_gib, y->max());
    chart->addSeries(hbm);
    all << hbm;
  }
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (auto* s : all) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  // The legend entry of the connecting line would duplicate "Pareto front".
  for (auto* m : chart->legend()->markers(front_line)) m->setVisible(false);
  for (auto* s : {infeasible, outside_constraints}) {
    if (s->count() == 0)
      for (auto* m : chart->legend()->markers(s)) m->setVisible(false);
  }
  chart->setTitle(feasible_count == 0
                      ? tr("No feasible plan among %1").arg(table_.rows.size())
                      : tr("Throughput against memory: %1 plans, %2 on the Pareto front").arg(table_.rows.size()).arg(table_.pareto.size()));
  for (auto* s : {within, outside_constraints, infeasible, front}) {
    connect(s, &QScatterSeries::clicked, this, &SweepView::select_nearest);
    connect(s, &QScatterSeries::hovered, this, [this](const QPointF& p, bool state) {
      if (!state) return QToolTip::hideText();
      for (int i : drawn_) {
        const auto& r = table_.rows[i];
        if (std::abs(bytes_to_gib(r.peak_bytes) - p.x()) < 1e-9 && std::abs(r.tokens_per_s / y_scale_ - p.y()) < 1e-9) {
          QToolTip::showText(QCursor::pos(), tr("%1\n%2, %3 per GPU, step %4%5")
                                                 .arg(r.label, format_rate(r.tokens_per_s, tr("tokens/s")),
                                                      format_bytes(r.peak_bytes), format_seconds(r.step_time_s),
                                                      r.feasible ? QString() : tr(" (infeasible)")));
          return;
        }
      }
    });
  }
  replace_chart(chart_view_, chart);

  // Why plans were rejected, most common first.
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [code, n] : reasons) sorted.emplace_back(n, code);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  QStringList why;
  for (std::size_t k = 0; k < sorted.size() && k < 4; ++k)
    why << QString("%1 %2").arg(QString::fromStdString(sorted[k].second)).arg(sorted[k].first);
  const int infeasible_count = static_cast<int>(std::count_if(table_.rows.begin(), table_.rows.end(),
                                                              [](const SweepRow& r) { return !r.feasible; }));
  QString text = tr("%1: %2 plans: %3 feasible (%4 within the constraints, %5 on the Pareto front), %6 infeasible")
                     .arg(source_)
                     .arg(table_.rows.size())
                     .arg(feasible_count)
                     .arg(competing)
                     .arg(table_.pareto.size())
                     .arg(infeasible_count);
  if (!why.isEmpty()) text += " (" + why.join(", ") + ")";
  if (outside_ > 0) text += tr("; %1 infeasible plans lie outside the axes, which span the feasible ones").arg(outside_);
  if (table_.skipped_lines) text += tr("; %1 lines skipped").arg(table_.skipped_lines);
  info_->setText(text + ". " + tr("Click a point to load that plan."));
}

}  // namespace trainsim::gui
