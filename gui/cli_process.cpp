#include "gui/cli_process.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include <nlohmann/json.hpp>

namespace trainsim::gui {

double progress_fraction(const QString& line) {
  const QString t = line.trimmed();
  if (t.startsWith("{\"progress\"")) {
    const QByteArray bytes = t.toUtf8();
    const auto j = nlohmann::json::parse(bytes.constBegin(), bytes.constEnd(), nullptr, false);
    if (j.is_object() && j["progress"].is_number()) return std::clamp(j["progress"].get<double>(), 0.0, 1.0);
    return -1;
  }
  // cli/progress.cpp: "WHAT: DONE/TOTAL UNIT ( PCT%)  ..." or "WHAT: PCT%  ...".
  static const QRegularExpression with_unit(R"(^[^:]+: [\d,.]+/[\d,.]+ \S+ \(\s*(\d+)%\))");
  static const QRegularExpression fraction(R"(^[^:]+:\s+(\d+)%\s)");
  for (const auto* re : {&with_unit, &fraction}) {
    const auto m = re->match(t);
    if (m.hasMatch()) return std::clamp(m.captured(1).toDouble() / 100.0, 0.0, 1.0);
  }
  return -1;
}

CliProcess::CliProcess(QObject* parent) : QObject(parent), program_(find_cli()) {}

CliProcess::~CliProcess() {
  if (running()) {
    process_->kill();
    process_->waitForFinished(2000);
  }
}

QString CliProcess::find_cli() {
  const QString env = qEnvironmentVariable("TRAINSIM_CLI");
  if (!env.isEmpty() && QFileInfo(env).isExecutable()) return env;
  const QDir app_dir(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {app_dir.filePath("../cli/trainsim"), app_dir.filePath("../../cli/trainsim"),
                                   app_dir.filePath("trainsim")})
    if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
  return QStandardPaths::findExecutable("trainsim");
}

QTemporaryDir* CliProcess::new_work_dir() {
  if (running()) return nullptr;
  work_dir_ = std::make_unique<QTemporaryDir>();
  return work_dir_->isValid() ? work_dir_.get() : nullptr;
}

bool CliProcess::start(const QStringList& args, const QString& busy_message) {
  if (running()) return false;
  if (program_.isEmpty()) {
    emit failed(tr("The trainsim command-line tool was not found (set TRAINSIM_CLI to its path)."));
    return false;
  }
  if (!work_dir_ && !new_work_dir()) {
    emit failed(tr("Cannot create a temporary folder for the child process."));
    return false;
  }
  stdout_.clear();
  stdout_buffer_.clear();
  stderr_buffer_.clear();
  stderr_text_.clear();
  cancelling_ = false;
  delete process_;
  process_ = new QProcess(this);
  process_->setWorkingDirectory(work_dir_->path());
  connect(process_, &QProcess::readyReadStandardOutput, this, [this] {
    const QByteArray more = process_->readAllStandardOutput();
    stdout_ += more;
    read_lines(stdout_buffer_, more, false);
  });
  connect(process_, &QProcess::readyReadStandardError, this,
          [this] { read_lines(stderr_buffer_, process_->readAllStandardError(), true); });
  connect(process_, &QProcess::finished, this, &CliProcess::on_finished);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) emit failed(tr("Cannot start %1: %2").arg(program_, process_->errorString()));
  });
  emit progress(-1, busy_message);
  process_->start(program_, args);
  return true;
}

void CliProcess::cancel() {
  if (!running()) return;
  cancelling_ = true;
  // SIGTERM first: a sweep removes its children's folders on a signal; SIGKILL if it lingers.
  process_->terminate();
  QProcess* p = process_;
  QTimer::singleShot(3000, p, [p] {
    if (p->state() != QProcess::NotRunning) p->kill();
  });
}

void CliProcess::read_lines(QByteArray& buffer, const QByteArray& more, bool is_stderr) {
  buffer += more;
  for (int nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    // A terminal's redrawn line ends in \r; the last redraw is the current state.
    QString line = QString::fromUtf8(buffer.left(nl));
    buffer.remove(0, nl + 1);
    if (const int cr = line.lastIndexOf('\r'); cr >= 0) line = line.mid(cr + 1);
    const double f = progress_fraction(line);
    if (f >= 0) emit progress(f, line.startsWith('{') ? QString() : line.trimmed());
    else if (is_stderr) stderr_text_ += line + "\n";
  }
}

void CliProcess::on_finished(int exit_code, QProcess::ExitStatus status) {
  stdout_ += process_->readAllStandardOutput();
  read_lines(stderr_buffer_, process_->readAllStandardError() + "\n", true);
  if (cancelling_) {
    emit cancelled();
    return;
  }
  const QString err = stderr_text_.trimmed();
  if (status != QProcess::NormalExit) {
    emit failed(tr("The child process crashed.") + (err.isEmpty() ? QString() : "\n" + err));
    return;
  }
  emit exited(exit_code, stdout_, err);
}

}  // namespace trainsim::gui
