// Sweeps and plan searches from the GUI, each run by the CLI in a child process, as a user would
// run it: `trainsim sweep FILE --out DIR/sweep --progress` (the rows file is the result) or
// `trainsim plan --model M --cluster C --gpus N --global-batch B --seq S --json --progress` (the
// JSON of its best plans is the result). Progress comes from the child's progress lines; cancel
// stops the child.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <nlohmann/json.hpp>

#include "gui/cli_process.hpp"
#include "gui/evaluation.hpp"

namespace trainsim::gui {

// The sweep the GUI runs around the scenario being edited: the scenario as the base (resolved,
// so presets next to it need no search path), every factorisation of its GPU count into TP, PP
// and DP, micro-batches 1-8, ZeRO 0/1/3 and selective or full recompute; TP within a node.
nlohmann::json sweep_around(const Evaluation& ev);

class SearchRunner : public QObject {
  Q_OBJECT

 public:
  enum class Kind { kSweep, kPlan };
  explicit SearchRunner(QObject* parent = nullptr);

  void set_program(const QString& program) { process_->set_program(program); }
  QString program() const { return process_->program(); }
  CliProcess* process() const { return process_; }

  // Runs the sweep file (a path) or a sweep JSON written to the work folder.
  bool start_sweep_file(const QString& sweep_file);
  bool start_sweep(const nlohmann::json& sweep);
  // Searches the plans of the scenario's model on its cluster, GPU count and global batch.
  bool start_plan_search(const Evaluation& ev, int top = 50);
  void cancel() { process_->cancel(); }
  bool running() const { return process_->running(); }
  Kind kind() const { return kind_; }
  // The arguments of the last start (for the status line and tests).
  QStringList last_arguments() const { return args_; }

 signals:
  void progress(double fraction, const QString& message);
  // The file to load into the Sweep view (rows JSON lines, or the plan search's JSON), and what
  // the CLI printed (the sweep's summary).
  void finished_ok(const QString& result_file, const QString& summary);
  void failed(const QString& message);
  void cancelled();

 private:
  bool launch(Kind kind, const QStringList& args, const QString& busy);
  void on_exited(int exit_code, const QByteArray& out, const QString& err);
  CliProcess* process_ = nullptr;
  Kind kind_ = Kind::kSweep;
  QStringList args_;
  QString rows_file_;
};

}  // namespace trainsim::gui
