// Timeline: a Gantt chart per pipeline stage of F/B/W compute, p2p sends, DP sync and optimizer,
// with idle time (bubbles) hatched; zoom with the wheel, pan by dragging, hover for the op. It
// shows the estimate's played schedule, or a Chrome/Perfetto trace loaded from a file (what the
// simulate tier writes).
#pragma once

#include <QWidget>
#include <vector>

#include "gui/gantt_trace.hpp"
#include "gui/scenario_view.hpp"

class QLabel;
class QPushButton;

namespace trainsim::gui {

class GanttWidget : public QWidget {
  Q_OBJECT

 public:
  explicit GanttWidget(QWidget* parent = nullptr);
  void set_trace(const GanttTrace& trace);
  const GanttTrace& trace() const { return trace_; }
  void zoom(double factor, double anchor_x);
  void fit();
  // The event under a widget position, or -1; for tooltips and tests.
  int event_at(const QPoint& pos) const;
  QSize sizeHint() const override { return {900, 420}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  double lane_height() const;
  int label_width() const;
  double x_of(double t_s) const;
  GanttTrace trace_;
  std::vector<std::vector<int>> by_lane_;  // event indices per lane, by start time
  double offset_s_ = 0;
  double px_per_s_ = 1;
  bool fitted_ = false;
  bool dragging_ = false;
  QPoint drag_from_;
  double drag_offset_s_ = 0;
};

class TimelineView : public ScenarioView {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);
  QWidget* export_widget() override { return gantt_; }
  GanttWidget* gantt() const { return gantt_; }
  // Shows a trace (from a simulation or a file) instead of the estimate until "Show estimate".
  void show_trace(const GanttTrace& trace);
  bool load_trace_file(const QString& file_path, QString* error);
  // Back to the estimate's pipeline (what "Show estimate" does).
  void show_estimate();
  const GanttTrace& current_trace() const { return gantt_->trace(); }
  QString title_text() const;

 protected:
  void redraw() override;
  void retranslate_ui() override;
  void showEvent(QShowEvent* event) override;

 private:
  void update_legend();
  GanttWidget* gantt_ = nullptr;
  QLabel* source_ = nullptr;
  QLabel* legend_ = nullptr;
  QPushButton* zoom_in_ = nullptr;
  QPushButton* zoom_out_ = nullptr;
  QPushButton* fit_ = nullptr;
  QPushButton* load_ = nullptr;
  QPushButton* back_to_estimate_ = nullptr;
  bool showing_file_ = false;
  bool dirty_ = true;
};

QColor gantt_color(const QString& category);

}  // namespace trainsim::gui
