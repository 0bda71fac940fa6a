#include "gui/main_window.hpp"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include "gui/breakdown_view.hpp"
#include "gui/chrome_trace.hpp"
#include "gui/compare_view.hpp"
#include "gui/goodput_view.hpp"
#include "gui/estimate_timeline.hpp"
#include "gui/format.hpp"
#include "gui/language.hpp"
#include "gui/memory_view.hpp"
#include "gui/result_reader.hpp"
#include "gui/safe_application.hpp"
#include "gui/scenario_panel.hpp"
#include "gui/simulate_runner.hpp"
#include "gui/summary_bar.hpp"
#include "gui/sweep_view.hpp"
#include "gui/timeline_view.hpp"
#include "gui/topology_view.hpp"
#include "gui/validation_view.hpp"
#include "gui/view_export.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/input_file.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::gui {
namespace {

QStringList preset_names(const char* kind) {
  LoadOptions options;
  options.preset_dirs = gui_preset_dirs();
  QStringList out;
  for (const auto& n : list_presets(kind, options)) out << QString::fromStdString(n);
  return out;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  panel_ = new ScenarioPanel(splitter);
  panel_->setMinimumWidth(330);
  panel_->set_presets(preset_names("models"), preset_names("clusters"), preset_names("gpus"));
  auto* right = new QWidget(splitter);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  summary_ = new SummaryBar(right);
  right_layout->addWidget(summary_);
  tabs_ = new QTabWidget(right);
  timeline_ = new TimelineView(tabs_);
  memory_ = new MemoryView(tabs_);
  breakdown_ = new BreakdownView(tabs_);
  topology_ = new TopologyView(tabs_);
  sweep_ = new SweepView(tabs_);
  compare_ = new CompareView(tabs_);
  goodput_ = new GoodputView(tabs_);
  validation_ = new ValidationView(tabs_);
  for (QWidget* w : std::initializer_list<QWidget*>{timeline_, memory_, breakdown_, topology_, sweep_, compare_, goodput_,
                                                    validation_})
    tabs_->addTab(w, QString());
  right_layout->addWidget(tabs_, 1);
  splitter->addWidget(panel_);
  splitter->addWidget(right);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({360, 1120});
  setCentralWidget(splitter);

  status_label_ = new QLabel(this);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(180);
  progress_->setVisible(false);
  cancel_button_ = new QPushButton(this);
  cancel_button_->setVisible(false);
  statusBar()->addWidget(status_label_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_button_);

  runner_ = new SimulateRunner(this);
  connect(runner_, &SimulateRunner::finished_ok, this, &MainWindow::on_simulation_result);
  connect(runner_, &SimulateRunner::failed, this, &MainWindow::on_simulation_failed);
  connect(runner_, &SimulateRunner::cancelled, this, [this] {
    set_simulating(false);
    status_label_->setText(tr("Simulation cancelled."));
  });
  connect(runner_, &SimulateRunner::progress, this, [this](double fraction, const QString& message) {
    if (fraction < 0) progress_->setRange(0, 0);  // busy indicator
    else {
      progress_->setRange(0, 100);
      progress_->setValue(static_cast<int>(fraction * 100));
    }
    if (!message.isEmpty()) status_label_->setText(message);
  });
  connect(cancel_button_, &QPushButton::clicked, this, &MainWindow::cancel_simulation);

  connect(panel_, &ScenarioPanel::field_edited, this, &MainWindow::apply_field);
  connect(panel_, &ScenarioPanel::edit_json_requested, this, &MainWindow::edit_json_dialog);
  connect(sweep_, &SweepView::plan_selected, this, &MainWindow::apply_sweep_row);
  connect(compare_, &CompareView::reference_file_requested, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load plan A"), origin_dir_, tr("Scenario JSON (*.json)"));
    if (path.isEmpty()) return;
    try {
      const nlohmann::json raw = read_json_file(path.toStdString());
      compare_->set_reference(evaluate_scenario(raw, QFileInfo(path).absolutePath().toStdString()),
                              QFileInfo(path).fileName());
    } catch (const ScenarioError& e) {
      QMessageBox::warning(this, tr("Cannot load plan A"), QString::fromStdString(e.what()));
    }
  });

  build_menus();
  retranslate_ui();
  resize(1480, 940);
  // An exception that reaches the event loop is shown here, and the window keeps its edits.
  SafeApplication::set_error_sink([this](const QString& what) {
    status_label_->setText(tr("Error: %1").arg(what));
    if (isVisible() && QApplication::platformName() != "offscreen")
      QMessageBox::warning(this, tr("trainsim-gui error"), what);
  });
}

MainWindow::~MainWindow() { SafeApplication::set_error_sink(nullptr); }

void MainWindow::build_menus() {
  file_menu_ = menuBar()->addMenu(QString());
  open_action_ = file_menu_->addAction(QString(), this, [this] {
    if (!maybe_save()) return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), origin_dir_,
                                                      tr("Scenario JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) open_scenario(path);
  });
  open_action_->setShortcut(QKeySequence::Open);
  save_action_ = file_menu_->addAction(QString(), this, [this] {
    if (file_path_.isEmpty()) return save_as_action_->trigger();
    QString error;
    if (!save_scenario(file_path_, &error)) QMessageBox::warning(this, tr("Save failed"), error);
  });
  save_action_->setShortcut(QKeySequence::Save);
  save_as_action_ = file_menu_->addAction(QString(), this, [this] {
    QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), file_path_.isEmpty() ? origin_dir_ : file_path_,
                                                tr("Scenario JSON (*.json)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += ".json";
    QString error;
    if (!save_scenario(path, &error)) QMessageBox::warning(this, tr("Save failed"), error);
  });
  save_as_action_->setShortcut(QKeySequence::SaveAs);
  file_menu_->addSeparator();
  open_sweep_action_ = file_menu_->addAction(QString(), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load sweep results"), origin_dir_,
                                                      tr("Sweep results (*.jsonl *.json *.csv);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !load_sweep(path, &error)) QMessageBox::warning(this, tr("Cannot load sweep"), error);
  });
  open_trace_action_ = file_menu_->addAction(QString(), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load Chrome/Perfetto trace"), origin_dir_,
                                                      tr("Trace JSON (*.json);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !load_trace(path, &error)) QMessageBox::warning(this, tr("Cannot load trace"), error);
  });
  open_report_action_ = file_menu_->addAction(QString(), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open validation report"), origin_dir_,
                                                      tr("Validation report (report.json index.html);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !load_validation_report(path, &error))
      QMessageBox::warning(this, tr("Cannot load validation report"), error);
  });
  file_menu_->addSeparator();
  export_view_action_ = file_menu_->addAction(QString(), this, &MainWindow::export_view);
  export_trace_action_ = file_menu_->addAction(QString(), this, &MainWindow::export_trace);
  file_menu_->addSeparator();
  quit_action_ = file_menu_->addAction(QString(), this, &QWidget::close);
  quit_action_->setShortcut(QKeySequence::Quit);

  run_menu_ = menuBar()->addMenu(QString());
  simulate_action_ = run_menu_->addAction(QString(), this, &MainWindow::simulate);
  simulate_action_->setShortcut(Qt::Key_F5);
  cancel_action_ = run_menu_->addAction(QString(), this, &MainWindow::cancel_simulation);
  cancel_action_->setEnabled(false);
  run_menu_->addSeparator();
  // Sweeps and plan searches run in the Sweep view (progress and cancel there).
  sweep_action_ = run_menu_->addAction(QString(), this, [this] {
    tabs_->setCurrentWidget(sweep_);
    sweep_->run_sweep_of_scenario();
  });
  plan_action_ = run_menu_->addAction(QString(), this, [this] {
    tabs_->setCurrentWidget(sweep_);
    sweep_->run_plan_search();
  });

  // Each language is named in itself, so that anyone can find their way back.
  language_menu_ = menuBar()->addMenu(QString());
  language_group_ = new QActionGroup(this);
  for (const auto& [code, name] : {std::pair<QString, QString>{"en", "English"}, {"zh_CN", QString::fromUtf8("简体中文")}}) {
    QAction* a = language_menu_->addAction(name);
    a->setCheckable(true);
    a->setData(code);
    a->setChecked(code == current_language());
    language_group_->addAction(a);
  }
  connect(language_group_, &QActionGroup::triggered, this, [](QAction* a) { set_language(a->data().toString()); });

  help_menu_ = menuBar()->addMenu(QString());
  about_action_ = help_menu_->addAction(QString(), this, [this] {
    QMessageBox::about(this, tr("About trainsim"),
                       tr("trainsim-gui: explore parallelism plans for large-model training.\n"
                          "Live numbers come from the estimate tier (closed form, in-process); "
                          "Simulate runs the trainsim command-line tool as a child process."));
  });
}

void MainWindow::retranslate_ui() {
  tabs_->setTabText(0, tr("Timeline"));
  tabs_->setTabText(1, tr("Memory"));
  tabs_->setTabText(2, tr("Breakdown"));
  tabs_->setTabText(3, tr("Topology"));
  tabs_->setTabText(4, tr("Sweep"));
  tabs_->setTabText(5, tr("Compare"));
  tabs_->setTabText(6, tr("Goodput"));
  tabs_->setTabText(7, tr("Validation"));
  file_menu_->setTitle(tr("&File"));
  open_action_->setText(tr("&Open scenario…"));
  save_action_->setText(tr("&Save scenario"));
  save_as_action_->setText(tr("Save scenario &as…"));
  open_sweep_action_->setText(tr("Load s&weep results…"));
  open_trace_action_->setText(tr("Load &trace (Chrome/Perfetto)…"));
  open_report_action_->setText(tr("Open &validation report…"));
  export_view_action_->setText(svg_export_available() ? tr("&Export current view (PNG/SVG)…") : tr("&Export current view (PNG)…"));
  export_trace_action_->setText(tr("Export &Perfetto trace…"));
  quit_action_->setText(tr("&Quit"));
  run_menu_->setTitle(tr("&Run"));
  simulate_action_->setText(tr("&Simulate (child process)"));
  cancel_action_->setText(tr("&Cancel simulation"));
  sweep_action_->setText(tr("S&weep this scenario (child process)"));
  plan_action_->setText(tr("Search &plans (child process)"));
  cancel_button_->setText(tr("Cancel"));
  language_menu_->setTitle(tr("&Language"));
  help_menu_->setTitle(tr("&Help"));
  about_action_->setText(tr("&About"));
  update_title();
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate_ui();
  QMainWindow::changeEvent(event);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (maybe_save()) event->accept();
  else event->ignore();
}

bool MainWindow::maybe_save() {
  if (!modified_ || !isVisible() || QApplication::platformName() == "offscreen") return true;
  const auto answer = QMessageBox::question(this, tr("Unsaved changes"), tr("Save the changes to the scenario?"),
                                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) {
    save_action_->trigger();
    return !modified_;
  }
  return true;
}

void MainWindow::update_title() {
  const QString name = current_.raw.is_object() ? QString::fromStdString(current_.raw.value("name", std::string())) : QString();
  const QString file = file_path_.isEmpty() ? tr("untitled") : QFileInfo(file_path_).fileName();
  setWindowTitle(QString("%1%2 — %3 — trainsim").arg(file, modified_ ? "*" : "", name));
}

QList<QPair<QString, ScenarioView*>> MainWindow::views() const {
  return {{"timeline", timeline_}, {"memory", memory_},  {"breakdown", breakdown_},
          {"topology", topology_}, {"sweep", sweep_},    {"compare", compare_},
          {"goodput", goodput_},   {"validation", validation_}};
}

QString MainWindow::status_text() const { return status_label_->text(); }

bool MainWindow::open_scenario(const QString& file_path) {
  const QString origin = QFileInfo(file_path).absolutePath();
  file_path_ = file_path;
  try {
    raw_ = read_json_file(file_path.toStdString());
  } catch (const ScenarioError& e) {
    // Not JSON (or unreadable): nothing to edit, but the error is shown where edits would be.
    raw_ = nlohmann::json::object();
    Evaluation ev;
    ev.raw = raw_;
    ev.error_path = e.path();
    ev.error_message = e.what();
    current_ = ev;
    origin_dir_ = origin;
    show_evaluation(ev);
    status_label_->setText(tr("Cannot read %1").arg(file_path));
    return false;
  }
  set_raw_scenario(raw_, origin);
  modified_ = false;
  update_title();
  // The plan as opened is the default reference of the Compare view.
  if (current_.loaded) compare_->set_reference(current_, tr("as opened"));
  status_label_->setText(tr("Opened %1").arg(file_path));
  return current_.loaded;
}

bool MainWindow::save_scenario(const QString& file_path, QString* error) {
  QFile f(file_path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error) *error = f.errorString();
    return false;
  }
  const std::string text = raw_.dump(2) + "\n";
  f.write(text.data(), static_cast<qint64>(text.size()));
  file_path_ = file_path;
  modified_ = false;
  update_title();
  status_label_->setText(tr("Saved %1").arg(file_path));
  return true;
}

void MainWindow::set_raw_scenario(const nlohmann::json& raw, const QString& origin_dir) {
  raw_ = raw;
  origin_dir_ = origin_dir;
  reevaluate();
}

void MainWindow::apply_field(const QString& json_path, const QString& value) {
  if (!raw_.is_object()) raw_ = nlohmann::json::object();
  try {
    if (value.isEmpty()) {
      // Remove the key (plan.dp "auto", no compression stages).
      const QStringList parts = json_path.split('.');
      nlohmann::json* node = &raw_;
      for (int i = 0; i + 1 < parts.size() && node->is_object(); ++i) {
        auto it = node->find(parts[i].toStdString());
        if (it == node->end()) {
          node = nullptr;
          break;
        }
        node = &*it;
      }
      if (node && node->is_object()) node->erase(parts.back().toStdString());
    } else {
      apply_override(raw_, json_path.toStdString(), value.toStdString());
    }
    // DP follows the GPU count unless held: TP 8 -> 4 on 1536 GPUs makes DP 48, not an
    // impossible 4 x 8 x 24. plan.dp omitted = derived by the loader.
    static const QStringList kDerivesDp = {"plan.tp", "plan.pp", "plan.cp", "cluster", "cluster.nodes",
                                           "cluster.gpus_per_node"};
    if (kDerivesDp.contains(json_path) && !panel_->dp_locked() && raw_.contains("plan") &&
        raw_["plan"].is_object())
      raw_["plan"].erase("dp");
    // ZeRO-0 shards nothing: choosing it drops the shard group; ZeRO++ is ZeRO-3's, so a lower
    // stage drops its fields (their controls are disabled there).
    if (json_path == "plan.zero_stage" && raw_.contains("plan") && raw_["plan"].is_object()) {
      if (value.toInt() < 1) raw_["plan"].erase("dp_shard");
      if (value.toInt() < 3)
        for (const char* zpp : {"zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_gradients"})
          raw_["plan"].erase(zpp);
    }
  } catch (const ScenarioError& e) {
    status_label_->setText(QString::fromStdString(e.what()));
  }
  modified_ = true;
  reevaluate();
}

void MainWindow::reevaluate() {
  // A simulation describes the plan it ran, not the edited one: its timeline goes too.
  if (simulated_trace_) timeline_->show_estimate();
  simulated_trace_.reset();
  current_ = evaluate_scenario(raw_, origin_dir_.toStdString());
  try {
    show_evaluation(current_);
  } catch (const std::exception& e) {
    SafeApplication::report_error(tr("drawing the result failed: %1").arg(QString::fromUtf8(e.what())));
  }
}

void MainWindow::show_evaluation(const Evaluation& ev) {
  panel_->show_evaluation(ev);
  summary_->show_evaluation(ev);
  for (const auto& [name, view] : views()) view->show_evaluation(ev);
  update_title();
}

bool MainWindow::load_sweep(const QString& file_path, QString* error) {
  const bool ok = sweep_->load_file(file_path, error);
  if (ok) tabs_->setCurrentWidget(sweep_);
  return ok;
}

bool MainWindow::load_trace(const QString& file_path, QString* error) {
  const bool ok = timeline_->load_trace_file(file_path, error);
  if (ok) tabs_->setCurrentWidget(timeline_);
  return ok;
}

bool MainWindow::load_validation_report(const QString& path, QString* error) {
  if (!validation_->load_report(path, error)) return false;
  QString trace_error;
  if (!validation_->trace_path().isEmpty() && !timeline_->load_trace_file(validation_->trace_path(), &trace_error))
    status_label_->setText(tr("Validation report loaded; its trace did not: %1").arg(trace_error));
  else
    status_label_->setText(tr("Validation report loaded: %1").arg(path));
  tabs_->setCurrentWidget(validation_);
  return true;
}

void MainWindow::apply_sweep_row(const SweepRow& row) {
  // One evaluation for the whole row, not one per field.
  for (const auto& [path, value] : row.plan) {
    try {
      apply_override(raw_, path, value);
    } catch (const ScenarioError&) {
    }
  }
  // A sweep row that names dp explicitly replaces a derived one; one that does not leaves it derived.
  modified_ = true;
  reevaluate();
  status_label_->setText(tr("Loaded plan from sweep: %1").arg(row.label));
}

void MainWindow::simulate() {
  if (runner_->running()) return;
  simulated_raw_ = raw_;
  if (runner_->start(raw_, origin_dir_)) set_simulating(true);
}

void MainWindow::cancel_simulation() { runner_->cancel(); }

void MainWindow::set_simulating(bool on) {
  progress_->setVisible(on);
  cancel_button_->setVisible(on);
  cancel_action_->setEnabled(on);
  simulate_action_->setEnabled(!on);
}

void MainWindow::on_simulation_result(const nlohmann::json& result) {
  set_simulating(false);
  if (simulated_raw_ != raw_) {
    // Edited while it ran: the result describes a plan no longer on screen.
    status_label_->setText(tr("Simulation finished for the scenario as it was before your edits; "
                              "not shown (Simulate again for the edited one)."));
    return;
  }
  show_simulation(result, runner_->last_wall_s());
}

bool MainWindow::load_result(const QString& file_path, QString* error) {
  try {
    const nlohmann::json result = read_json_file(file_path.toStdString(), "result");
    if (const std::string problem = result_json_problem(result); !problem.empty())
      throw std::runtime_error(file_path.toStdString() + ": " + problem);
    show_simulation(result, 0);
    status_label_->setText(tr("Showing the result in %1 (%2).")
                               .arg(file_path, QString::fromStdString(result.value("fidelity", std::string("?")))));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

void MainWindow::show_simulation(const nlohmann::json& result, double wall_s) {
  // The simulated step replaces the estimate everywhere it is shown (figures, goodput, links,
  // the labels naming the tier and its timing) until the next edit.
  Evaluation ev = current_;
  ev.result = result_from_json(result);
  ev.simulation = result;
  ev.simulate_s = wall_s;
  ev.goodput = goodput_from_json(result.contains("goodput") ? result["goodput"] : nlohmann::json());
  current_ = ev;
  show_evaluation(ev);
  // The simulate tier may attach its timeline: an inline Chrome trace, or the file it wrote.
  try {
    std::optional<GanttTrace> trace;
    if (auto t = result.find("trace"); t != result.end() && (t->is_object() || t->is_array()))
      trace = gantt_from_chrome_trace(*t);
    else if (t != result.end() && t->is_string())
      trace = load_chrome_trace_file(QString::fromStdString(t->get<std::string>()));
    else if (auto f = result.find("trace_file"); f != result.end() && f->is_string())
      trace = load_chrome_trace_file(QString::fromStdString(f->get<std::string>()));
    if (trace) {
      trace->title = ev.simulate_s > 0 ? tr("Simulated timeline: step %1 (simulate tier, child process, %2)")
                                             .arg(format_seconds(ev.result.step_time_s), format_seconds(ev.simulate_s))
                                       : tr("Simulated timeline: step %1 (simulate tier, a saved result)")
                                             .arg(format_seconds(ev.result.step_time_s));
      simulated_trace_ = trace;
      timeline_->show_trace(*trace);
    }
  } catch (const std::exception& e) {
    status_label_->setText(tr("Simulated, but its trace could not be read: %1").arg(e.what()));
    return;
  }
  status_label_->setText(tr("Simulation finished (%1, %2).")
                             .arg(QString::fromStdString(ev.result.fidelity), format_seconds(ev.simulate_s)));
}

void MainWindow::on_simulation_failed(const QString& message) {
  set_simulating(false);
  status_label_->setText(tr("Simulation failed: %1").arg(QString(message).replace('\n', ' ')));
  if (isVisible() && QApplication::platformName() != "offscreen")
    QMessageBox::warning(this, tr("Simulation failed"), message);
}

void MainWindow::edit_json_dialog() {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Scenario JSON"));
  auto* layout = new QVBoxLayout(&dialog);
  auto* note = new QLabel(tr("The scenario as the command-line tool reads it; presets by name, any field may be added."), &dialog);
  note->setWordWrap(true);
  layout->addWidget(note);
  auto* edit = new QPlainTextEdit(QString::fromStdString(raw_.dump(2)), &dialog);
  edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  layout->addWidget(edit, 1);
  auto* error = new QLabel(&dialog);
  error->setStyleSheet("color: #b00020;");
  layout->addWidget(error);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, [&] {
    const std::string text = edit->toPlainText().toStdString();
    nlohmann::json parsed;
    try {
      parsed = trainsim::parse_json_text(text, "scenario");  // the CLI's depth cap and messages
    } catch (const trainsim::ScenarioError& e) {
      error->setText(QString::fromStdString(e.what()));
      return;
    }
    if (!parsed.is_object()) {
      error->setText(tr("Not a JSON object."));
      return;
    }
    raw_ = parsed;
    dialog.accept();
  });
  dialog.resize(640, 720);
  if (dialog.exec() == QDialog::Accepted) {
    modified_ = true;
    reevaluate();
  }
}

void MainWindow::export_view() {
  auto* view = qobject_cast<ScenarioView*>(tabs_->currentWidget());
  if (!view) return;
  const QString key = views().value(tabs_->currentIndex()).first;
  const QString filter = svg_export_available() ? tr("PNG image (*.png);;SVG drawing (*.svg)") : tr("PNG image (*.png)");
  QString path = QFileDialog::getSaveFileName(this, tr("Export view"), QDir(origin_dir_).filePath(key + ".png"), filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += ".png";
  QString error;
  if (!export_widget(view->export_widget(), path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
  else status_label_->setText(tr("Exported %1").arg(path));
}

GanttTrace MainWindow::trace_for_export() const {
  if (simulated_trace_) return *simulated_trace_;
  GanttTrace g = estimate_timeline(current_);
  g.title = QString("trainsim estimate: %1").arg(QString::fromStdString(current_.scenario.name));
  return g;
}

void MainWindow::export_trace() {
  const GanttTrace g = trace_for_export();
  if (g.events.empty()) {
    QMessageBox::information(this, tr("Export Perfetto trace"), tr("There is no timeline to export (the scenario does not load)."));
    return;
  }
  const QString what = simulated_trace_ ? tr("the simulated timeline") : tr("the estimate's timeline (no simulation has run)");
  QString path = QFileDialog::getSaveFileName(this, tr("Export Perfetto trace: %1").arg(what),
                                              QDir(origin_dir_).filePath("trace.json"), tr("Chrome trace JSON (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!save_chrome_trace_file(g, path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
  else status_label_->setText(tr("Exported %1 (open it in ui.perfetto.dev or chrome://tracing)").arg(path));
}

}  // namespace trainsim::gui
