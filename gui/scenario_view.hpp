// Base of the tabbed views: each is a pure function of the latest Evaluation, redrawn when the
// evaluation or the language changes.
#pragma once

#include <QEvent>
#include <QWidget>
#include <vector>
#include <QColor>
#include <QString>

#include "gui/evaluation.hpp"

namespace trainsim::gui {

class ScenarioView : public QWidget {
  Q_OBJECT

 public:
  using QWidget::QWidget;
  void show_evaluation(const Evaluation& ev) {
    last_ = ev;
    redraw();
  }
  const Evaluation& evaluation() const { return last_; }
  // The widget that "Export view" renders (the chart or canvas, without tool buttons).
  virtual QWidget* export_widget() { return this; }

 protected:
  virtual void redraw() = 0;
  void changeEvent(QEvent* event) override {
    if (event->type() == QEvent::LanguageChange) {
      retranslate_ui();
      redraw();
    }
    QWidget::changeEvent(event);
  }
  virtual void retranslate_ui() {}

 private:
  Evaluation last_;
};

}  // namespace trainsim::gui
