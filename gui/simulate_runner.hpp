// "Simulate": runs `trainsim run SCENARIO --json --fidelity simulate` as a child process
// (ARCHITECTURE.md: one SimGrid engine per process, so simulations never run inside the GUI).
// Asynchronous: the window keeps working; cancel kills the child.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>

#include <nlohmann/json.hpp>

namespace trainsim::gui {

class SimulateRunner : public QObject {
  Q_OBJECT

 public:
  explicit SimulateRunner(QObject* parent = nullptr);
  ~SimulateRunner() override;

  // The CLI binary: $TRAINSIM_CLI, else ../cli/trainsim next to this binary (the build tree),
  // else trainsim next to this binary, else trainsim on PATH. Empty if none.
  static QString find_cli();
  void set_program(const QString& program) { program_ = program; }
  QString program() const { return program_; }

  // raw: the scenario as the user edits it; origin_dir is passed as --presets so that presets
  // next to the scenario file resolve as they do in the GUI.
  bool start(const nlohmann::json& raw, const QString& origin_dir, const QString& fidelity = "simulate");
  void cancel();
  bool running() const { return process_ && process_->state() != QProcess::NotRunning; }

 signals:
  void progress(double fraction, const QString& message);  // fraction < 0: unknown
  // exit 0 (feasible) or 3 (infeasible): the result JSON (may carry a trace, see main_window).
  void finished_ok(const nlohmann::json& result);
  // any other exit, a crash, a missing binary, or unparsable output; message is for the user.
  void failed(const QString& message);
  void cancelled();

 private:
  void on_stdout();
  void on_finished(int exit_code, QProcess::ExitStatus status);
  QString program_;
  QProcess* process_ = nullptr;
  std::unique_ptr<QTemporaryDir> work_dir_;
  QByteArray stdout_;
  bool cancelling_ = false;
};

}  // namespace trainsim::gui
