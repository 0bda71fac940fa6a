#include "gui/goodput_view.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "gui/chart_style.hpp"
#include "gui/format.hpp"
#include "models/reliability/goodput.hpp"

namespace trainsim::gui {
namespace {

// MTBFs and intervals run to hours: minutes and hours read better than thousands of seconds.
QString duration(double s) {
  if (!std::isfinite(s)) return GoodputView::tr("never");
  if (s >= 7200) return GoodputView::tr("%1 h").arg(s / 3600, 0, 'f', 2);
  if (s >= 120) return GoodputView::tr("%1 min").arg(s / 60, 0, 'f', 1);
  return format_seconds(s);
}

}  // namespace

GoodputView::GoodputView(QWidget* parent) : ScenarioView(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(summary_);
  auto* charts = new QHBoxLayout;
  lost_view_ = new QChartView(new QChart, this);
  lost_view_->setRenderHint(QPainter::Antialiasing);
  interval_view_ = new QChartView(new QChart, this);
  interval_view_->setRenderHint(QPainter::Antialiasing);
  charts->addWidget(lost_view_, 1);
  charts->addWidget(interval_view_, 1);
  layout->addLayout(charts, 1);
}

void GoodputView::redraw() {
  const Evaluation& ev = evaluation();
  auto* lost_chart = new QChart;
  auto* interval_chart = new QChart;
  const GoodputReport& g = ev.goodput;
  if (!ev.loaded || !ev.result.feasible || !g.enabled) {
    summary_->setText(!ev.loaded ? tr("No result: the scenario does not load.")
                      : !ev.result.feasible
                          ? tr("The plan is infeasible: no goodput.")
                          : tr("Goodput needs training.faults in the scenario (component MTBFs, "
                               "stragglers, checkpoint policy; see docs/faults.md)."));
    replace_chart(lost_view_, lost_chart);
    replace_chart(interval_view_, interval_chart);
    lost_view_->setVisible(false);  // no empty frames where there is nothing to draw
    interval_view_->setVisible(false);
    return;
  }
  lost_view_->setVisible(true);
  interval_view_->setVisible(true);
  const double hours = ev.scenario.training.faults.horizon_s / 3600;
  QString text = tr("Goodput %1 = %2 of %3 over a %4 h run; job MTBF %5, %6 failures expected. "
                    "Checkpoint %7 blocks %8 every %9 (optimum %10; Young %11, Daly %12).")
                     .arg(format_rate(g.goodput_tokens_per_s, tr("tokens/s")),
                          format_percent(g.goodput_fraction),
                          format_rate(g.tokens_per_s_nominal, tr("tokens/s")))
                     .arg(hours, 0, 'f', 0)
                     .arg(duration(g.system_mtbf_s))
                     .arg(g.expected_failures, 0, 'f', 1)
                     .arg(format_bytes(g.checkpoint.size_bytes), duration(g.checkpoint.blocking_s),
                          duration(g.interval_s), duration(g.optimal_interval_closed_form_s),
                          duration(g.young_interval_s), duration(g.daly_interval_s));
  const SlowParts& s = g.slow;
  if (s.straggler_stage >= 0) {
    text += " " + tr("Straggler on stage %1: step %2 → %3.")
                      .arg(s.straggler_stage)
                      .arg(format_seconds(s.nominal_step_s), format_seconds(s.straggler_step_s));
    if (s.rebalanced_step_s > 0)
      text += " " + tr("Rebalanced: %1.").arg(format_seconds(s.rebalanced_step_s));
  }
  // Which step the long run is built on, and the Monte Carlo behind the figures: the same
  // goodput() on the same inputs as `trainsim run` (the estimate live; the simulation's own
  // report after Simulate).
  const FaultSpec& faults = ev.scenario.training.faults;
  text += "\n" + (ev.simulated() ? tr("From the simulated step (the goodput of trainsim run --fidelity simulate).")
                                  : tr("From the estimated step (as trainsim run --fidelity estimate reports it)."));
  text += " " + tr("Monte Carlo of %1 runs (seed %2): useful time %3 (p10 %4, p90 %5); closed form (Daly) %6. "
                   "Time lost: %7 h in all.")
                    .arg(faults.trials)
                    .arg(static_cast<qulonglong>(faults.seed))
                    .arg(format_percent(g.run.useful_fraction_mean), format_percent(g.run.useful_fraction_p10),
                         format_percent(g.run.useful_fraction_p90), format_percent(g.useful_fraction_closed_form))
                    .arg(g.lost.total() / 3600, 0, 'f', 2);
  summary_->setText(text);

  // Time lost per cause.
  struct Cause {
    QString name;
    QColor color;
    double seconds;
  };
  const Cause causes[] = {{tr("Checkpoint writes"), palette::kOptimizer, g.lost.checkpoint_s},
                          {tr("Lost work"), palette::kDpComm, g.lost.lost_work_s},
                          {tr("Restarts"), palette::kTpComm, g.lost.restart_s},
                          {tr("Waiting for repair"), palette::kBubble, g.lost.repair_wait_s},
                          {tr("Stragglers"), palette::kCpComm, g.lost.stragglers_s},
                          {tr("Degraded links"), palette::kPpComm, g.lost.degraded_links_s}};
  auto* bars = new QHorizontalBarSeries;
  QStringList cats;
  double max_h = 0;
  auto* set = new QBarSet(tr("hours lost"));
  set->setColor(palette::kDpComm);
  for (int i = static_cast<int>(std::size(causes)) - 1; i >= 0; --i) {
    cats << causes[i].name;
    *set << causes[i].seconds / 3600;
    max_h = std::max(max_h, causes[i].seconds / 3600);
  }
  bars->append(set);
  lost_chart->addSeries(bars);
  auto* cat_axis = new QBarCategoryAxis;
  cat_axis->append(cats);
  lost_chart->addAxis(cat_axis, Qt::AlignLeft);
  bars->attachAxis(cat_axis);
  auto* h_axis = new QValueAxis;
  h_axis->setRange(0, std::max(1e-3, max_h * 1.1));
  h_axis->setTitleText(tr("hours lost over the run"));
  lost_chart->addAxis(h_axis, Qt::AlignBottom);
  bars->attachAxis(h_axis);
  lost_chart->legend()->hide();
  lost_chart->setTitle(tr("Time lost per cause"));
  replace_chart(lost_view_, lost_chart);

  // Useful fraction against the interval: Daly's g(tau), log-spaced over four decades.
  const double M = g.system_mtbf_s;
  const double delta = g.checkpoint.blocking_s;
  const double R = g.checkpoint.restart_s;
  const double centre = std::isfinite(g.optimal_interval_closed_form_s) ? g.optimal_interval_closed_form_s
                                                                         : std::max(g.interval_s, 1.0);
  auto* curve = new QLineSeries;
  curve->setName(tr("closed form (Daly)"));
  double lo = centre / 100, hi = centre * 100, y_min = 1;
  for (int i = 0; i <= 200; ++i) {
    const double tau = lo * std::pow(hi / lo, i / 200.0);
    const double y = 100 * daly_useful_fraction(tau, delta, R, M);
    y_min = std::min(y_min, y);
    curve->append(tau / 60, y);
  }
  interval_chart->addSeries(curve);
  auto mark = [&](const QString& name, double tau, const QColor& color) {
    if (!(tau > 0) || !std::isfinite(tau)) return;
    auto* p = new QScatterSeries;
    p->setName(name);
    p->setColor(color);
    p->setMarkerSize(10);
    p->append(std::clamp(tau, lo, hi) / 60, 100 * daly_useful_fraction(tau, delta, R, M));
    interval_chart->addSeries(p);
  };
  mark(tr("Young"), g.young_interval_s, palette::kTpComm);
  mark(tr("Daly"), g.daly_interval_s, palette::kOptimizerState);
  mark(tr("Monte Carlo optimum"), g.optimal_interval_monte_carlo_s, palette::kDpComm);
  mark(tr("policy"), g.interval_s, palette::kCompute);
  auto* x_axis = new QLogValueAxis;
  x_axis->setBase(10);
  x_axis->setRange(lo / 60, hi / 60);
  x_axis->setTitleText(tr("checkpoint interval (minutes)"));
  auto* y_axis = new QValueAxis;
  y_axis->setRange(std::max(0.0, std::floor(y_min)), 100);
  y_axis->setTitleText(tr("useful time (%)"));
  interval_chart->addAxis(x_axis, Qt::AlignBottom);
  interval_chart->addAxis(y_axis, Qt::AlignLeft);
  for (auto* series : interval_chart->series()) {
    series->attachAxis(x_axis);
    series->attachAxis(y_axis);
  }
  interval_chart->legend()->setAlignment(Qt::AlignBottom);
  interval_chart->setTitle(tr("Useful time against the checkpoint interval"));
  replace_chart(interval_view_, interval_chart);
}

}  // namespace trainsim::gui
