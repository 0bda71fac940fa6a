#include "gui/summary_bar.hpp"

#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "gui/format.hpp"

namespace trainsim::gui {

SummaryBar::SummaryBar(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(4, 4, 4, 0);
  outer->setSpacing(2);
  auto* row = new QHBoxLayout;
  row->setSpacing(6);
  const char* titles[] = {QT_TR_NOOP("Step time"), QT_TR_NOOP("Throughput"),  QT_TR_NOOP("MFU"),
                          QT_TR_NOOP("HFU"),       QT_TR_NOOP("Bubble (stage mean)"), QT_TR_NOOP("Exposed comm"),
                          QT_TR_NOOP("Peak memory / HBM"), QT_TR_NOOP("GPUs")};
  for (const char* t : titles) {
    auto* frame = new QFrame(this);
    frame->setObjectName("card");
    frame->setStyleSheet("QFrame#card { background: #f4f6f9; border: 1px solid #d8dde6; border-radius: 4px; }");
    auto* v = new QVBoxLayout(frame);
    v->setContentsMargins(8, 3, 8, 3);
    v->setSpacing(0);
    auto* title = new QLabel(frame);
    title->setStyleSheet("color: #5a6270; font-size: 8pt;");
    auto* value = new QLabel("-", frame);
    value->setStyleSheet("font-size: 12pt; font-weight: bold; color: #1d2330;");
    value->setObjectName(QString("summary_%1").arg(cards_.size()));
    v->addWidget(title);
    v->addWidget(value);
    row->addWidget(frame, 1);
    cards_.push_back({title, value, t});
  }
  outer->addLayout(row);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(status_);
  retranslate_ui();
}

void SummaryBar::retranslate_ui() {
  for (auto& c : cards_) c.title->setText(tr(c.text));
}

void SummaryBar::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) {
    retranslate_ui();
    show_evaluation(last_);
  }
  QWidget::changeEvent(event);
}

QString SummaryBar::step_time_text() const { return cards_[0].value->text(); }
QString SummaryBar::status_text() const { return status_->text(); }

void SummaryBar::show_evaluation(const Evaluation& ev) {
  last_ = ev;
  if (!ev.loaded) {
    for (auto& c : cards_) c.value->setText("-");
    status_->setStyleSheet("color: #b00020;");
    status_->setText(ev.error_message.empty() ? QString()
                                              : tr("Bad input: %1").arg(QString::fromStdString(ev.error_message)));
    return;
  }
  const Result& r = ev.result;
  if (!has_figures(ev)) {
    // The plan's structure does not allow a step: no figures to show, only why.
    for (auto& c : cards_) c.value->setText("-");
    cards_[7].value->setText(QString::number(r.gpus));
    status_->setStyleSheet("color: #b05a00;");
    status_->setText(tr("Infeasible: %1").arg(QString::fromStdString(r.reason)));
    return;
  }
  cards_[0].value->setText(format_seconds(r.step_time_s));
  cards_[1].value->setText(format_rate(r.tokens_per_s, tr("tokens/s")));
  cards_[2].value->setText(format_percent(r.mfu));
  cards_[3].value->setText(format_percent(r.hfu));
  cards_[4].value->setText(format_percent(r.bubble_fraction));
  cards_[5].value->setText(format_seconds(r.exposed_comm_s));
  cards_[6].value->setText(QString("%1 / %2").arg(format_bytes(r.peak_memory_bytes), format_bytes(r.hbm_capacity_bytes)));
  cards_[6].value->setStyleSheet(QString("font-size: 12pt; font-weight: bold; color: %1;")
                                     .arg(r.peak_memory_bytes > r.hbm_capacity_bytes ? "#b00020" : "#1d2330"));
  cards_[7].value->setText(QString::number(r.gpus));
  QString status;
  // Name the tier and the timing of the result on screen: the live estimate, or a simulation.
  const QString source =
      !ev.simulated() ? tr("Estimate (closed form, in-process), computed in %1.").arg(format_seconds(ev.evaluate_s))
      : ev.simulate_s > 0 ? tr("Simulated (%1 tier, trainsim child process) in %2.")
                                .arg(QString::fromStdString(r.fidelity), format_seconds(ev.simulate_s))
                          : tr("Simulated (%1 tier, a saved trainsim run result).").arg(QString::fromStdString(r.fidelity));
  if (r.feasible) {
    status = tr("Feasible. %1").arg(source);
    status_->setStyleSheet("color: #2b6a2b;");
  } else {
    status = tr("Infeasible: %1 (figures show what the plan would need). %2").arg(QString::fromStdString(r.reason), source);
    status_->setStyleSheet("color: #b05a00;");
  }
  for (const auto& w : r.warnings) status += "\n" + tr("Warning: %1").arg(QString::fromStdString(w));
  status_->setText(status);
}

}  // namespace trainsim::gui
