// "Simulate": runs `trainsim run SCENARIO --json --fidelity simulate --trace FILE --progress` as a
// child process (ARCHITECTURE.md: one SimGrid engine per process, so simulations never run inside
// the GUI). Asynchronous: the window keeps working; cancel stops the child.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <nlohmann/json.hpp>

#include "gui/cli_process.hpp"

namespace trainsim::gui {

class SimulateRunner : public QObject {
  Q_OBJECT

 public:
  explicit SimulateRunner(QObject* parent = nullptr);

  static QString find_cli() { return CliProcess::find_cli(); }
  void set_program(const QString& program) { process_->set_program(program); }
  QString program() const { return process_->program(); }

  // raw: the scenario as the user edits it; origin_dir is passed as --presets so that presets
  // next to the scenario file resolve as they do in the GUI.
  bool start(const nlohmann::json& raw, const QString& origin_dir, const QString& fidelity = "simulate");
  void cancel() { process_->cancel(); }
  bool running() const { return process_->running(); }
  // Wall time of the last finished run (start to result), seconds.
  double last_wall_s() const { return last_wall_s_; }

 signals:
  void progress(double fraction, const QString& message);  // fraction < 0: unknown
  // exit 0 (feasible) or 3 (infeasible): the result JSON (may carry a trace, see main_window).
  void finished_ok(const nlohmann::json& result);
  // any other exit, a crash, a missing binary, or unparsable output; message is for the user.
  void failed(const QString& message);
  void cancelled();

 private:
  void on_exited(int exit_code, const QByteArray& out, const QString& err);
  CliProcess* process_ = nullptr;
  QElapsedTimer clock_;
  double last_wall_s_ = 0;
};

}  // namespace trainsim::gui
