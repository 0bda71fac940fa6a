// The headline numbers above the views: step time, throughput, MFU/HFU, bubble, exposed comm,
// peak memory against HBM, and the result's warnings.
#pragma once

#include <QWidget>
#include <vector>

#include "gui/evaluation.hpp"

class QLabel;

namespace trainsim::gui {

class SummaryBar : public QWidget {
  Q_OBJECT

 public:
  explicit SummaryBar(QWidget* parent = nullptr);
  // The status line names the tier and timing of the result shown (estimate or simulation).
  void show_evaluation(const Evaluation& ev);
  QString step_time_text() const;
  QString status_text() const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslate_ui();
  struct Card {
    QLabel* title;
    QLabel* value;
    const char* text;
  };
  std::vector<Card> cards_;
  QLabel* status_ = nullptr;
  Evaluation last_;
};

}  // namespace trainsim::gui
