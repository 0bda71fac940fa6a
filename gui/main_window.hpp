// The trainsim-gui window: scenario panel on the left, headline numbers and tabbed views on the
// right. Holds the raw scenario JSON (what Save writes, what the CLI reads) and re-evaluates it
// in-process on every edit; "Simulate" runs the CLI as a child process.
#pragma once

#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <optional>

#include <nlohmann/json.hpp>

#include "gui/evaluation.hpp"
#include "gui/gantt_trace.hpp"

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace trainsim::gui {

class CompareView;
class GoodputView;
class MemoryView;
class BreakdownView;
class ScenarioPanel;
class ScenarioView;
class SimulateRunner;
class SummaryBar;
class SweepView;
struct SweepRow;
class TimelineView;
class TopologyView;
class ValidationView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a scenario file. A file that is not JSON still "opens": the error shows in the panel.
  bool open_scenario(const QString& file_path);
  bool save_scenario(const QString& file_path, QString* error = nullptr);
  void set_raw_scenario(const nlohmann::json& raw, const QString& origin_dir);
  // Applies one edit ("plan.tp", "4"; empty value removes the key) and re-evaluates.
  void apply_field(const QString& json_path, const QString& value);
  bool load_sweep(const QString& file_path, QString* error = nullptr);
  bool load_trace(const QString& file_path, QString* error = nullptr);
  // A `trainsim validate --report DIR` report (the directory, report.json or index.html): the
  // Validation view shows it and its trace goes to the Timeline view.
  bool load_validation_report(const QString& path, QString* error = nullptr);
  void simulate();
  void cancel_simulation();
  // Shows a `trainsim run --json` result (a simulation) as if Simulate had produced it.
  bool load_result(const QString& file_path, QString* error = nullptr);
  void show_simulation(const nlohmann::json& result, double wall_s);

  const Evaluation& evaluation() const { return current_; }
  const nlohmann::json& raw_scenario() const { return raw_; }
  ScenarioPanel* panel() const { return panel_; }
  SummaryBar* summary() const { return summary_; }
  QTabWidget* tabs() const { return tabs_; }
  SimulateRunner* runner() const { return runner_; }
  // Views in tab order with file-name keys ("timeline", "memory", ...), for --screenshot.
  QList<QPair<QString, ScenarioView*>> views() const;
  QString status_text() const;

 protected:
  void changeEvent(QEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();
  void retranslate_ui();
  void reevaluate();
  void show_evaluation(const Evaluation& ev);
  void on_simulation_result(const nlohmann::json& result);
  void on_simulation_failed(const QString& message);
  void set_simulating(bool on);
  void apply_sweep_row(const SweepRow& row);
  void edit_json_dialog();
  void export_view();
  void export_trace();
  bool maybe_save();
  void update_title();
  GanttTrace trace_for_export() const;

  ScenarioPanel* panel_ = nullptr;
  SummaryBar* summary_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  TimelineView* timeline_ = nullptr;
  MemoryView* memory_ = nullptr;
  BreakdownView* breakdown_ = nullptr;
  TopologyView* topology_ = nullptr;
  SweepView* sweep_ = nullptr;
  CompareView* compare_ = nullptr;
  GoodputView* goodput_ = nullptr;
  ValidationView* validation_ = nullptr;
  SimulateRunner* runner_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QLabel* status_label_ = nullptr;

  QMenu* file_menu_ = nullptr;
  QMenu* run_menu_ = nullptr;
  QMenu* language_menu_ = nullptr;
  QMenu* help_menu_ = nullptr;
  QAction* open_action_ = nullptr;
  QAction* save_action_ = nullptr;
  QAction* save_as_action_ = nullptr;
  QAction* open_sweep_action_ = nullptr;
  QAction* open_trace_action_ = nullptr;
  QAction* open_report_action_ = nullptr;
  QAction* export_view_action_ = nullptr;
  QAction* export_trace_action_ = nullptr;
  QAction* quit_action_ = nullptr;
  QAction* simulate_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QAction* sweep_action_ = nullptr;
  QAction* plan_action_ = nullptr;
  QAction* about_action_ = nullptr;
  QActionGroup* language_group_ = nullptr;

  nlohmann::json raw_;
  nlohmann::json simulated_raw_;  // the scenario the running simulation was started on
  QString file_path_;
  QString origin_dir_;
  Evaluation current_;
  std::optional<GanttTrace> simulated_trace_;
  bool modified_ = false;
};

}  // namespace trainsim::gui
