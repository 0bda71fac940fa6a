#include "gui/simulate_runner.hpp"

#include <QFile>

namespace trainsim::gui {

SimulateRunner::SimulateRunner(QObject* parent) : QObject(parent), process_(new CliProcess(this)) {
  connect(process_, &CliProcess::progress, this, &SimulateRunner::progress);
  connect(process_, &CliProcess::failed, this, &SimulateRunner::failed);
  connect(process_, &CliProcess::cancelled, this, &SimulateRunner::cancelled);
  connect(process_, &CliProcess::exited, this, &SimulateRunner::on_exited);
}

bool SimulateRunner::start(const nlohmann::json& raw, const QString& origin_dir, const QString& fidelity) {
  if (running()) return false;
  QTemporaryDir* dir = process_->new_work_dir();
  const QString scenario_path = dir ? dir->filePath("scenario.json") : QString();
  QFile f(scenario_path);
  if (!dir || !f.open(QIODevice::WriteOnly)) {
    emit failed(tr("Cannot write a temporary scenario file."));
    return false;
  }
  const std::string text = raw.dump(2);
  f.write(text.data(), static_cast<qint64>(text.size()));
  f.close();

  QStringList args{"run", scenario_path, "--json", "--fidelity", fidelity, "--progress"};
  // The simulated timeline comes back as a Chrome trace file ("trace" in the result).
  if (fidelity != "estimate") args << "--trace" << dir->filePath("trace.json");
  if (!origin_dir.isEmpty()) args << "--presets" << origin_dir;
  clock_.start();
  return process_->start(args, tr("Simulating…"));
}

void SimulateRunner::on_exited(int exit_code, const QByteArray& out, const QString& err) {
  last_wall_s_ = clock_.isValid() ? clock_.nsecsElapsed() * 1e-9 : 0;
  if (exit_code != 0 && exit_code != 3) {  // 3 = infeasible plan: still a result
    emit failed(tr("trainsim exited with code %1:\n%2").arg(exit_code).arg(err.isEmpty() ? tr("(no message)") : err));
    return;
  }
  // The result is the one JSON object that is not a progress line: try the whole output, then
  // the last line that parses.
  nlohmann::json result = nlohmann::json::parse(out.constBegin(), out.constEnd(), nullptr, false);
  if (!result.is_object()) {
    const QList<QByteArray> lines = out.split('\n');
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
