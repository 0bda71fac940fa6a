#include "gui/simulate_runner.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

namespace trainsim::gui {

SimulateRunner::SimulateRunner(QObject* parent) : QObject(parent), program_(find_cli()) {}

SimulateRunner::~SimulateRunner() {
  if (running()) {
    process_->kill();
    process_->waitForFinished(2000);
  }
}

QString SimulateRunner::find_cli() {
  const QString env = qEnvironmentVariable("TRAINSIM_CLI");
  if (!env.isEmpty() && QFileInfo(env).isExecutable()) return env;
  const QDir app_dir(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {app_dir.filePath("../cli/trainsim"), app_dir.filePath("../../cli/trainsim"),
                                   app_dir.filePath("trainsim")})
    if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
  return QStandardPaths::findExecutable("trainsim");
}

bool SimulateRunner::start(const nlohmann::json& raw, const QString& origin_dir, const QString& fidelity) {
  if (running()) return false;
  if (program_.isEmpty()) {
    emit failed(tr("The trainsim command-line tool was not found (set TRAINSIM_CLI to its path)."));
    return false;
  }
  work_dir_ = std::make_unique<QTemporaryDir>();
  const QString scenario_path = work_dir_->filePath("scenario.json");
  QFile f(scenario_path);
  if (!work_dir_->isValid() || !f.open(QIODevice::WriteOnly)) {
    emit failed(tr("Cannot write a temporary scenario file."));
    return false;
  }
  const std::string text = raw.dump(2);
  f.write(text.data(), static_cast<qint64>(text.size()));
  f.close();

  QStringList args{"run", scenario_path, "--json", "--fidelity", fidelity};
  if (!origin_dir.isEmpty()) args << "--presets" << origin_dir;
  stdout_.clear();
  cancelling_ = false;
  delete process_;
  process_ = new QProcess(this);
  process_->setWorkingDirectory(work_dir_->path());
  connect(process_, &QProcess::readyReadStandardOutput, this, &SimulateRunner::on_stdout);
  connect(process_, &QProcess::finished, this, &SimulateRunner::on_finished);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) emit failed(tr("Cannot start %1: %2").arg(program_, process_->errorString()));
  });
  emit progress(-1, tr("Simulating…"));
  process_->start(program_, args);
  return true;
}

void SimulateRunner::cancel() {
  if (!running()) return;
  cancelling_ = true;
  process_->kill();
}

void SimulateRunner::on_stdout() {
  stdout_ += process_->readAllStandardOutput();
  // Progress lines, when the child streams them: {"progress": 0.4, "message": "..."} per line.
  int start = 0;
  for (int nl = stdout_.indexOf('\n', start); nl >= 0; nl = stdout_.indexOf('\n', start)) {
    const QByteArray line = stdout_.mid(start, nl - start).trimmed();
    start = nl + 1;
    if (!line.startsWith("{\"progress\"")) continue;
    const auto j = nlohmann::json::parse(line.constBegin(), line.constEnd(), nullptr, false);
    if (j.is_object() && j["progress"].is_number())
      emit progress(j["progress"].get<double>(), QString::fromStdString(j.value("message", std::string())));
  }
}

void SimulateRunner::on_finished(int exit_code, QProcess::ExitStatus status) {
  on_stdout();
  if (cancelling_) {
    emit cancelled();
    return;
  }
  const QString err = QString::fromUtf8(process_->readAllStandardError()).trimmed();
  if (status != QProcess::NormalExit) {
    emit failed(tr("The simulation crashed.") + (err.isEmpty() ? QString() : "\n" + err));
    return;
  }
  if (exit_code != 0 && exit_code != 3) {  // 3 = infeasible plan: still a result
    emit failed(tr("trainsim exited with code %1:\n%2").arg(exit_code).arg(err.isEmpty() ? tr("(no message)") : err));
    return;
  }
  // The result is the one JSON object that is not a progress line: try the whole output, then
  // the last line that parses.
  nlohmann::json result = nlohmann::json::parse(stdout_.constBegin(), stdout_.constEnd(), nullptr, false);
  if (!result.is_object()) {
    const QList<QByteArray> lines = stdout_.split('\n');
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      result = nlohmann::json::parse(it->constBegin(), it->constEnd(), nullptr, false);
      if (result.is_object() && !result.contains("progress")) break;
    }
  }
  if (!result.is_object() || !result.contains("step_time_s")) {
    emit failed(tr("trainsim printed no result JSON.") + (err.isEmpty() ? QString() : "\n" + err));
    return;
  }
  emit progress(1.0, tr("Done"));
  emit finished_ok(result);
}

}  // namespace trainsim::gui
