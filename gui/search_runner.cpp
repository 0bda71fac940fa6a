#include "gui/search_runner.hpp"

#include <QFile>

#include "models/scenario/scenario_loader.hpp"

namespace trainsim::gui {
namespace {

bool write_json(const QString& path, const nlohmann::json& j) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  const std::string text = j.dump(2) + "\n";
  return f.write(text.data(), static_cast<qint64>(text.size())) == static_cast<qint64>(text.size());
}

}  // namespace

nlohmann::json sweep_around(const Evaluation& ev) {
  nlohmann::json base = to_json(ev.scenario);
  // Stage layer counts belong to one PP degree; the sweep varies PP.
  if (base.contains("plan") && base["plan"].is_object()) base["plan"].erase("layers_per_stage");
  return {{"schema_version", 1},
          {"name", "gui-" + (ev.scenario.name.empty() ? std::string("scenario") : ev.scenario.name)},
          {"description", "TP x PP x DP, micro-batch, ZeRO and recompute around the scenario being edited"},
          {"base", base},
          {"axes",
           {{{"degrees", {"plan.tp", "plan.pp", "plan.dp"}}},
            {{"path", "plan.micro_batch"}, {"powers_of_two", {1, 8}}},
            {{"path", "plan.zero_stage"}, {"values", {0, 1, 3}}},
            {{"path", "plan.recompute"}, {"values", {"selective", "full"}}}}},
          {"constraints", {"plan.tp <= gpus_per_node"}},
          {"objective", {{"maximize", "tokens_per_s"}}},
          {"top_k", 10}};
}

SearchRunner::SearchRunner(QObject* parent) : QObject(parent), process_(new CliProcess(this)) {
  connect(process_, &CliProcess::progress, this, &SearchRunner::progress);
  connect(process_, &CliProcess::failed, this, &SearchRunner::failed);
  connect(process_, &CliProcess::cancelled, this, &SearchRunner::cancelled);
  connect(process_, &CliProcess::exited, this, &SearchRunner::on_exited);
}

bool SearchRunner::launch(Kind kind, const QStringList& args, const QString& busy) {
  kind_ = kind;
  args_ = args;
  return process_->start(args, busy);
}

bool SearchRunner::start_sweep_file(const QString& sweep_file) {
  if (running()) return false;
  QTemporaryDir* dir = process_->new_work_dir();
  if (!dir) {
    emit failed(tr("Cannot create a temporary folder for the sweep."));
    return false;
  }
  const QString prefix = dir->filePath("sweep");
  rows_file_ = prefix + ".rows.jsonl";
  return launch(Kind::kSweep, {"sweep", sweep_file, "--out", prefix, "--progress"}, tr("Sweeping…"));
}

bool SearchRunner::start_sweep(const nlohmann::json& sweep) {
  if (running()) return false;
  QTemporaryDir* dir = process_->new_work_dir();
  const QString file = dir ? dir->filePath("sweep.json") : QString();
  if (!dir || !write_json(file, sweep)) {
    emit failed(tr("Cannot write a temporary sweep file."));
    return false;
  }
  const QString prefix = dir->filePath("sweep");
  rows_file_ = prefix + ".rows.jsonl";
  return launch(Kind::kSweep, {"sweep", file, "--out", prefix, "--progress"}, tr("Sweeping…"));
}

bool SearchRunner::start_plan_search(const Evaluation& ev, int top) {
  if (running()) return false;
  if (!ev.loaded) {
    emit failed(tr("The scenario does not load: there is no model and cluster to search plans for."));
    return false;
  }
  QTemporaryDir* dir = process_->new_work_dir();
  // The model and cluster as the GUI resolved them, so presets next to the scenario need no
  // search path in the child.
  const nlohmann::json s = to_json(ev.scenario);
  const QString model = dir ? dir->filePath("model.json") : QString();
  const QString cluster = dir ? dir->filePath("cluster.json") : QString();
  if (!dir || !write_json(model, s["model"]) || !write_json(cluster, s["cluster"])) {
    emit failed(tr("Cannot write the model and cluster for the plan search."));
    return false;
  }
  rows_file_ = dir->filePath("plan.json");
  const std::string precision = s["plan"].value("precision", std::string("bf16"));
  return launch(Kind::kPlan,
                {"plan", "--model", model, "--cluster", cluster, "--gpus", QString::number(ev.scenario.cluster.total_gpus()),
                 "--global-batch", QString::number(ev.scenario.plan.global_batch), "--seq",
                 QString::number(ev.scenario.model.seq_len), "--precision", QString::fromStdString(precision), "--top",
                 QString::number(top), "--json", "--progress"},
                tr("Searching plans…"));
}

void SearchRunner::on_exited(int exit_code, const QByteArray& out, const QString& err) {
  if (exit_code != 0) {
    emit failed(tr("trainsim exited with code %1:\n%2").arg(exit_code).arg(err.isEmpty() ? tr("(no message)") : err));
    return;
  }
  if (kind_ == Kind::kPlan) {
    // The plan search prints one JSON object; the Sweep view reads it from a file like rows.
    QFile f(rows_file_);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(out) != out.size()) {
      emit failed(tr("Cannot keep the plan search's result in %1.").arg(rows_file_));
      return;
    }
    f.close();
    emit progress(1.0, tr("Done"));
    emit finished_ok(rows_file_, QString());
    return;
  }
  if (!QFile::exists(rows_file_)) {
    emit failed(tr("The sweep wrote no rows (%1).").arg(rows_file_) + (err.isEmpty() ? QString() : "\n" + err));
    return;
  }
  emit progress(1.0, tr("Done"));
  emit finished_ok(rows_file_, QString::fromUtf8(out));
}

}  // namespace trainsim::gui
