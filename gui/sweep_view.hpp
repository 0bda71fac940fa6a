// Sweep: throughput against peak memory for every plan of a sweep or a plan search, the Pareto
// front (models/core/pareto.hpp, the CLI's definition) highlighted; click a point to load its
// plan. The axes span the feasible plans: plans that cannot run are drawn only where they fall
// inside them, and counted by reason. Runs a sweep (of the scenario being edited, or a sweep
// file) or a plan search in a child `trainsim` process, with progress and cancel.
#pragma once

#include <QPointF>
#include <QStringList>

#include "gui/scenario_view.hpp"
#include "gui/sweep_table.hpp"

class QChartView;
class QLabel;
class QProgressBar;
class QPushButton;

namespace trainsim::gui {

class SearchRunner;

class SweepView : public ScenarioView {
  Q_OBJECT

 public:
  explicit SweepView(QWidget* parent = nullptr);
  QWidget* export_widget() override;
  bool load_file(const QString& file_path, QString* error);
  const SweepTable& table() const { return table_; }
  // Emits plan_selected for the drawn row nearest to a point in chart coordinates (GiB, tokens/s unit).
  void select_nearest(const QPointF& value);

  // What the chart shows (for tests): the axes' upper ends (GiB; tokens/s) and the rows drawn.
  double x_max_gib() const { return x_max_gib_; }
  double y_max_tokens_per_s() const { return y_max_tps_; }
  const std::vector<int>& drawn_rows() const { return drawn_; }
  int infeasible_outside_axes() const { return outside_; }
  QString info_text() const;

  SearchRunner* runner() const { return runner_; }
  QPushButton* sweep_button() const { return sweep_here_; }
  QPushButton* sweep_file_button() const { return sweep_file_; }
  QPushButton* plan_button() const { return plan_search_; }
  QPushButton* cancel_button() const { return cancel_; }
  QProgressBar* progress_bar() const { return progress_; }
  QString run_status() const;
  // Starts a run (the buttons call these; a sweep file from a file dialog).
  void run_sweep_of_scenario();
  void run_sweep_file(const QString& file);
  void run_plan_search();

 signals:
  void plan_selected(const trainsim::gui::SweepRow& row);

 protected:
  void redraw() override;
  void retranslate_ui() override;

 private:
  void set_running(bool on);
  QChartView* chart_view_ = nullptr;
  QLabel* info_ = nullptr;
  QLabel* run_status_ = nullptr;
  QPushButton* load_ = nullptr;
  QPushButton* sweep_here_ = nullptr;
  QPushButton* sweep_file_ = nullptr;
  QPushButton* plan_search_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  SearchRunner* runner_ = nullptr;
  SweepTable table_;
  QString file_;
  QString source_;  // what produced the table: a file name, "sweep of <scenario>", "plan search"
  double y_scale_ = 1;  // tokens/s per axis unit
  double x_max_gib_ = 0, y_max_tps_ = 0;
  std::vector<int> drawn_;
  int outside_ = 0;
};

}  // namespace trainsim::gui
