// One run of the trainsim command-line tool as a child process (ARCHITECTURE.md: simulations,
// sweeps and plan searches never run inside the GUI): a private work folder, progress read from
// the child's progress lines as they come, cancel that stops the child (SIGTERM, then SIGKILL),
// and the exit code with the child's stdout and its stderr (progress lines removed).
#pragma once

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <memory>

namespace trainsim::gui {

// A progress line of the CLI (cli/progress.cpp's "sweep: 1,234/5,000 plans ( 25%)  ..." or
// "plan search:  42%  ...", or the simulate tier's {"progress": 0.4}): the fraction done, or
// a negative value when the line is no progress line.
double progress_fraction(const QString& line);

class CliProcess : public QObject {
  Q_OBJECT

 public:
  explicit CliProcess(QObject* parent = nullptr);
  ~CliProcess() override;

  // The CLI binary: $TRAINSIM_CLI, else ../cli/trainsim next to this binary (the build tree),
  // else trainsim next to this binary, else trainsim on PATH. Empty if none.
  static QString find_cli();
  void set_program(const QString& program) { program_ = program; }
  QString program() const { return program_; }

  // A fresh work folder for the next run (the previous one and its files are removed); null
  // when none can be made. The child runs in it.
  QTemporaryDir* new_work_dir();
  QTemporaryDir* work_dir() const { return work_dir_.get(); }
  // Starts `program args` in the work folder. False (and failed() emitted) when no program.
  bool start(const QStringList& args, const QString& busy_message);
  void cancel();
  bool running() const { return process_ && process_->state() != QProcess::NotRunning; }

 signals:
  void progress(double fraction, const QString& message);  // fraction < 0: unknown
  // The child exited on its own: its exit code, stdout, and stderr without progress lines.
  void exited(int exit_code, const QByteArray& out, const QString& err);
  // It crashed or could not start; message is for the user.
  void failed(const QString& message);
  void cancelled();

 private:
  void read_lines(QByteArray& buffer, const QByteArray& more, bool is_stderr);
  void on_finished(int exit_code, QProcess::ExitStatus status);
  QString program_;
  QProcess* process_ = nullptr;
  std::unique_ptr<QTemporaryDir> work_dir_;
  QByteArray stdout_, stderr_buffer_, stdout_buffer_;
  QString stderr_text_;
  bool cancelling_ = false;
};

}  // namespace trainsim::gui
