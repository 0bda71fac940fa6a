#include "gui/scenario_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>
#include <optional>

#include "models/schedules/pipeline_schedule.hpp"
#include "models/core/specs.hpp"

namespace trainsim::gui {
namespace {

constexpr const char* kErrorStyle = "border: 2px solid #d62728; background: #fde2e2;";
constexpr const char* kWarnStyle = "border: 2px solid #e07b00; background: #fff1dc;";

QString json_text(const nlohmann::json& j) { return QString::fromStdString(j.dump()); }

const QStringList kCompressionMethods = {"none", "int8", "int4", "fp8", "2:4", "topk", "powersgd"};

}  // namespace

ScenarioPanel::ScenarioPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  outer->addWidget(scroll);
  auto* body = new QWidget(scroll);
  scroll->setWidget(body);
  auto* col = new QVBoxLayout(body);
  col->setContentsMargins(6, 6, 6, 6);
  col->setSpacing(6);

  scenario_name_ = new QLabel(body);
  scenario_name_->setStyleSheet("font-weight: bold; font-size: 11pt;");
  scenario_name_->setWordWrap(true);
  col->addWidget(scenario_name_);
  message_ = new QLabel(body);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setVisible(false);
  col->addWidget(message_);

  // Model
  auto* model_box = add_group(QT_TR_NOOP("Model"));
  auto* model_form = new QFormLayout(model_box);
  model_combo_ = add_combo("model", {});
  model_form->addRow(add_label(QT_TR_NOOP("Preset")), model_combo_);
  model_form->addRow(add_label(QT_TR_NOOP("Layers")), add_spin(model_box, "model.layers", 1, 100000));
  model_form->addRow(add_label(QT_TR_NOOP("Hidden size")), add_spin(model_box, "model.hidden", 1, 1 << 20));
  model_form->addRow(add_label(QT_TR_NOOP("Attention heads")), add_spin(model_box, "model.heads", 1, 4096));
  model_form->addRow(add_label(QT_TR_NOOP("Sequence length")), add_spin(model_box, "model.seq_len", 1, 1 << 24));
  col->addWidget(model_box);

  // Cluster
  auto* cluster_box = add_group(QT_TR_NOOP("Cluster"));
  auto* cluster_form = new QFormLayout(cluster_box);
  cluster_combo_ = add_combo("cluster", {});
  cluster_form->addRow(add_label(QT_TR_NOOP("Preset")), cluster_combo_);
  gpu_combo_ = add_combo("cluster.gpu", {});
  cluster_form->addRow(add_label(QT_TR_NOOP("GPU")), gpu_combo_);
  cluster_form->addRow(add_label(QT_TR_NOOP("Nodes")), add_spin(cluster_box, "cluster.nodes", 1, 1000000));
  cluster_form->addRow(add_label(QT_TR_NOOP("GPUs per node")), add_spin(cluster_box, "cluster.gpus_per_node", 1, 256));
  cluster_summary_ = new QLabel(cluster_box);
  cluster_summary_->setWordWrap(true);
  cluster_summary_->setStyleSheet("color: #555;");
  cluster_form->addRow(cluster_summary_);
  col->addWidget(cluster_box);

  // Parallelism: degrees in a two-column grid to keep the panel short.
  auto* par_box = add_group(QT_TR_NOOP("Parallelism"));
  controls_.insert("plan", par_box);
  auto* grid = new QGridLayout(par_box);
  struct Degree {
    const char* label;
    const char* path;
  };
  const Degree degrees[] = {{QT_TR_NOOP("TP"), "plan.tp"}, {QT_TR_NOOP("PP"), "plan.pp"},
                            {QT_TR_NOOP("DP"), "plan.dp"}, {QT_TR_NOOP("CP"), "plan.cp"},
                            {QT_TR_NOOP("EP"), "plan.ep"}, {QT_TR_NOOP("vpp"), "plan.vpp"}};
  for (int i = 0; i < 6; ++i) {
    auto* spin = add_spin(par_box, degrees[i].path, degrees[i].path == QString("plan.dp") ? 0 : 1, 1 << 20);
    grid->addWidget(add_label(degrees[i].label), i / 2, (i % 2) * 2);
    grid->addWidget(spin, i / 2, (i % 2) * 2 + 1);
  }
  auto* dp_spin = static_cast<QSpinBox*>(controls_.value("plan.dp"));
  dp_spin->setSpecialValueText("auto");  // 0 = derived from the GPU count (plan.dp omitted)
  grid->addWidget(add_label(QT_TR_NOOP("Schedule")), 3, 0);
  QStringList schedules;
  for (const PipelineSchedule* s : pipeline_schedules()) schedules << s->name();
  auto* schedule = add_combo("plan.schedule", schedules);
  grid->addWidget(schedule, 3, 1, 1, 3);
  grid->addWidget(add_check("plan.sp", QT_TR_NOOP("Sequence parallel (SP)")), 4, 0, 1, 4);
  // Not a scenario field: how edits of the other degrees treat DP.
  dp_lock_ = new QCheckBox(par_box);
  translated_.push_back({dp_lock_, QT_TR_NOOP("Hold DP when other degrees change")});
  grid->addWidget(dp_lock_, 5, 0, 1, 4);
  // How MoE tokens reach their experts (plan.moe_dispatcher); a dense model has nothing to send.
  grid->addWidget(add_label(QT_TR_NOOP("MoE dispatch")), 6, 0);
  grid->addWidget(add_combo("plan.moe_dispatcher", {"alltoall", "deepep"}), 6, 1, 1, 3);
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(3, 1);
  col->addWidget(par_box);

  // Batch
  auto* batch_box = add_group(QT_TR_NOOP("Batch"));
  auto* batch_form = new QFormLayout(batch_box);
  batch_form->addRow(add_label(QT_TR_NOOP("Micro-batch")), add_spin(batch_box, "plan.micro_batch", 1, 1 << 20));
  batch_form->addRow(add_label(QT_TR_NOOP("Global batch")), add_spin(batch_box, "plan.global_batch", 1, 1 << 30));
  col->addWidget(batch_box);

  // Memory and precision
  auto* mem_box = add_group(QT_TR_NOOP("Memory and precision"));
  auto* mem_form = new QFormLayout(mem_box);
  mem_form->addRow(add_label(QT_TR_NOOP("ZeRO stage")), add_combo("plan.zero_stage", {"0", "1", "2", "3"}));
  // plan.dp_shard: the model states sharded over this many DP ranks and replicated across the
  // rest (FSDP's HYBRID_SHARD, Megatron-Core's partial distributed optimizer); 0 shards over all.
  mem_form->addRow(add_label(QT_TR_NOOP("ZeRO shard group")), add_spin(mem_box, "plan.dp_shard", 0, 1 << 20));
  // ZeRO++ (ZeRO-3 only): hpZ's secondary partition (plan.zero_hpz_partition_size, 0 = off), and
  // qwZ's int8 weight gathers and qgZ's int4 gradient all-to-alls.
  mem_form->addRow(add_label(QT_TR_NOOP("ZeRO++ secondary partition")),
                   add_spin(mem_box, "plan.zero_hpz_partition_size", 0, 1 << 20));
  auto* zpp_row = new QWidget(mem_box);
  auto* zpp_layout = new QHBoxLayout(zpp_row);
  zpp_layout->setContentsMargins(0, 0, 0, 0);
  zpp_layout->addWidget(add_check("plan.zero_quantized_weights", QT_TR_NOOP("int8 weights (qwZ)")));
  zpp_layout->addWidget(add_check("plan.zero_quantized_gradients", QT_TR_NOOP("int4 gradients (qgZ)")));
  mem_form->addRow(add_label(QT_TR_NOOP("ZeRO++ quantization")), zpp_row);
  mem_form->addRow(add_label(QT_TR_NOOP("Recompute")), add_combo("plan.recompute", {"none", "selective", "full"}));
  // What selective recomputation rebuilds (plan.recompute_modules): one box per module, named as
  // the field's values are (Megatron-Core's names), so not translated.
  auto* modules_row = new QWidget(mem_box);
  auto* modules_grid = new QGridLayout(modules_row);
  modules_grid->setContentsMargins(0, 0, 0, 0);
  for (const std::string& name : recompute_module_names()) {
    auto* check = new QCheckBox(QString::fromStdString(name), modules_row);
    modules_grid->addWidget(check, static_cast<int>(recompute_modules_.size()) / 2, static_cast<int>(recompute_modules_.size()) % 2);
    recompute_modules_.push_back(check);
    connect(check, &QCheckBox::toggled, this, [this] {
      if (!populating_) emit_recompute_modules();
    });
  }
  controls_.insert("plan.recompute_modules", modules_row);
  mem_form->addRow(add_label(QT_TR_NOOP("Recomputed parts")), modules_row);
  mem_form->addRow(add_label(QT_TR_NOOP("Precision")), add_combo("plan.precision", {"fp32", "fp16", "bf16", "fp8"}));
  // plan.fp8_activation_cache: applies under fp8 only.
  mem_form->addRow(QString(), add_check("plan.fp8_activation_cache", QT_TR_NOOP("Keep linear inputs in fp8")));
  // plan.fused_loss: one cross-entropy kernel over the 16-bit logits, no fp32 copy of them.
  mem_form->addRow(QString(), add_check("plan.fused_loss", QT_TR_NOOP("Fused cross-entropy kernel")));
  auto* offload_row = new QWidget(mem_box);
  auto* offload_layout = new QHBoxLayout(offload_row);
  offload_layout->setContentsMargins(0, 0, 0, 0);
  offload_layout->addWidget(add_check("plan.offload.optimizer", QT_TR_NOOP("optimizer")));
  offload_layout->addWidget(add_check("plan.offload.params", QT_TR_NOOP("params")));
  offload_layout->addWidget(add_check("plan.offload.activations", QT_TR_NOOP("activations")));
  controls_.insert("plan.offload", offload_row);
  mem_form->addRow(add_label(QT_TR_NOOP("Offload")), offload_row);
  col->addWidget(mem_box);

  // Gradient compression stages (plan.compression, one row per stage).
  auto* comp_box = add_group(QT_TR_NOOP("Gradient compression stages"));
  auto* comp_layout = new QVBoxLayout(comp_box);
  compression_ = new QTableWidget(0, 4, comp_box);
  compression_->verticalHeader()->setVisible(false);
  compression_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  compression_->setSelectionBehavior(QAbstractItemView::SelectRows);
  compression_->setMinimumHeight(90);
  compression_->setMaximumHeight(140);
  controls_.insert("plan.compression", compression_);
  comp_layout->addWidget(compression_);
  auto* comp_buttons = new QHBoxLayout;
  add_stage_ = new QPushButton(comp_box);
  remove_stage_ = new QPushButton(comp_box);
  translated_.push_back({add_stage_, QT_TR_NOOP("Add stage")});
  translated_.push_back({remove_stage_, QT_TR_NOOP("Remove stage")});
  comp_buttons->addWidget(add_stage_);
  comp_buttons->addWidget(remove_stage_);
  comp_layout->addLayout(comp_buttons);
  col->addWidget(comp_box);
  connect(add_stage_, &QPushButton::clicked, this, [this] {
    nlohmann::json stages = shown_compression_;
    const int64_t from = stages.empty() ? 0 : stages.back().value("from_step", int64_t{0}) + 1000;
    stages.push_back({{"from_step", from}, {"method", stages.empty() ? "none" : "int8"}});
    emit field_edited("plan.compression", json_text(stages));
  });
  connect(remove_stage_, &QPushButton::clicked, this, [this] {
    nlohmann::json stages = shown_compression_;
    if (stages.empty()) return;
    int row = compression_->currentRow();
    if (row < 0 || row >= static_cast<int>(stages.size())) row = static_cast<int>(stages.size()) - 1;
    stages.erase(stages.begin() + row);
    emit field_edited("plan.compression", stages.empty() ? QString() : json_text(stages));
  });

  edit_json_ = new QPushButton(body);
  translated_.push_back({edit_json_, QT_TR_NOOP("Edit scenario JSON…")});
  connect(edit_json_, &QPushButton::clicked, this, &ScenarioPanel::edit_json_requested);
  col->addWidget(edit_json_);
  col->addStretch(1);

  retranslate_ui();
}

QGroupBox* ScenarioPanel::add_group(const char* title) {
  auto* box = new QGroupBox(this);
  translated_.push_back({box, title});
  return box;
}

QLabel* ScenarioPanel::add_label(const char* text) {
  auto* label = new QLabel(this);
  translated_.push_back({label, text});
  return label;
}

QSpinBox* ScenarioPanel::add_spin(QWidget* parent, const QString& path, int min, int max) {
  auto* spin = new QSpinBox(parent);
  spin->setRange(min, max);
  spin->setAccelerated(true);
  controls_.insert(path, spin);
  connect(spin, &QSpinBox::valueChanged, this, [this, path, spin](int v) {
    if (populating_) return;
    // DP 0 ("auto") removes plan.dp so the loader derives it from the GPU count.
    emit field_edited(path, (path == "plan.dp" && v == spin->minimum()) ? QString() : QString::number(v));
  });
  return spin;
}

QComboBox* ScenarioPanel::add_combo(const QString& path, const QStringList& items) {
  auto* combo = new QComboBox(this);
  combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  combo->setMinimumContentsLength(6);
  combo->addItems(items);
  controls_.insert(path, combo);
  connect(combo, &QComboBox::activated, this, [this, path, combo](int index) {
    if (populating_) return;
    const QString value = combo->itemData(index).isValid() ? combo->itemData(index).toString() : combo->itemText(index);
    if (value.isEmpty()) return;  // an inline definition: nothing to pick
    bool is_int = false;
    value.toInt(&is_int);
    emit field_edited(path, is_int ? value : json_text(value.toStdString()));
  });
  return combo;
}

QCheckBox* ScenarioPanel::add_check(const QString& path, const char* text) {
  auto* check = new QCheckBox(this);
  translated_.push_back({check, text});
  controls_.insert(path, check);
  connect(check, &QCheckBox::toggled, this, [this, path](bool on) {
    if (!populating_) emit field_edited(path, on ? "true" : "false");
  });
  return check;
}

void ScenarioPanel::retranslate_ui() {
  for (const auto& t : translated_) {
    const QString text = tr(t.text);
    if (auto* l = qobject_cast<QLabel*>(t.object)) l->setText(text);
    else if (auto* g = qobject_cast<QGroupBox*>(t.object)) g->setTitle(text);
    else if (auto* b = qobject_cast<QAbstractButton*>(t.object)) b->setText(text);
  }
  compression_->setHorizontalHeaderLabels({tr("From step"), tr("Method"), tr("Top-k ratio"), tr("Rank")});
  controls_.value("plan.dp")->setToolTip(tr("auto: derived from the GPU count / (TP·PP·CP)"));
  dp_lock_->setToolTip(tr("Off: changing TP, PP, CP or the GPU count sets DP to auto (GPUs / (TP·PP·CP)). On: DP stays as given."));
  auto* shard = static_cast<QSpinBox*>(controls_.value("plan.dp_shard"));
  shard->setSpecialValueText(tr("all DP ranks"));
  shard->setToolTip(tr("ZeRO 1-3: shard over this many data-parallel ranks and replicate across the rest (FSDP HYBRID_SHARD; 8 = one node)"));
  auto* hpz = static_cast<QSpinBox*>(controls_.value("plan.zero_hpz_partition_size"));
  hpz->setSpecialValueText(tr("off"));
  hpz->setToolTip(tr("ZeRO-3 only: keep a second copy of each layer sharded over this many data-parallel ranks and gather the backward's parameters from it (ZeRO++ hpZ; 8 = one node)"));
  controls_.value("plan.vpp")->setToolTip(tr("Virtual pipeline stages (model chunks per GPU); > 1 needs the interleaved schedule"));
  compression_->setToolTip(tr("Each row starts a compression stage at a training step (plan.compression)"));
}

void ScenarioPanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate_ui();
  QWidget::changeEvent(event);
}

void ScenarioPanel::set_presets(const QStringList& models, const QStringList& clusters, const QStringList& gpus) {
  populating_ = true;
  model_combo_->clear();
  model_combo_->addItems(models);
  cluster_combo_->clear();
  cluster_combo_->addItems(clusters);
  gpu_combo_->clear();
  gpu_combo_->addItems(gpus);
  populating_ = false;
}

void ScenarioPanel::set_combo_text(QComboBox* combo, const QString& text) {
  int i = combo->findText(text);
  if (i < 0) {
    combo->addItem(text);
    i = combo->count() - 1;
  }
  combo->setCurrentIndex(i);
}

QWidget* ScenarioPanel::control_for_path(const QString& json_path) const {
  QString p = json_path;
  while (!p.isEmpty()) {
    if (auto* w = controls_.value(p)) return w;
    const int cut = std::max(p.lastIndexOf('.'), p.lastIndexOf('['));
    if (cut <= 0) break;
    p = p.left(cut);
  }
  return nullptr;
}

bool ScenarioPanel::dp_locked() const { return dp_lock_->isChecked(); }

QString ScenarioPanel::message_text() const { return message_->isHidden() ? QString() : message_->text(); }

void ScenarioPanel::clear_flags() {
  for (QWidget* w : flagged_) {
    w->setStyleSheet(QString());
    w->setToolTip(w->property("normal_tooltip").toString());
  }
  flagged_.clear();
}

void ScenarioPanel::flag(const QString& json_path, const QString& message, bool is_error) {
  QWidget* w = control_for_path(json_path);
  if (!w || flagged_.contains(w)) return;
  if (!w->property("normal_tooltip").isValid()) w->setProperty("normal_tooltip", w->toolTip());
  // Group boxes would pass the style on to every child; flag only their frame.
  if (qobject_cast<QGroupBox*>(w))
    w->setStyleSheet(QString("QGroupBox { %1 }").arg(is_error ? kErrorStyle : kWarnStyle));
  else
    w->setStyleSheet(QString("%1 { %2 }").arg(w->metaObject()->className(), is_error ? kErrorStyle : kWarnStyle));
  w->setToolTip(message);
  flagged_.push_back(w);
}

void ScenarioPanel::show_evaluation(const Evaluation& ev) {
  populate(ev);
  clear_flags();
  if (!ev.loaded) {
    message_->setStyleSheet(QString("QLabel { %1 padding: 4px; }").arg(kErrorStyle));
    message_->setText(tr("Invalid scenario: %1").arg(QString::fromStdString(ev.error_message)));
    message_->setVisible(true);
    flag(QString::fromStdString(ev.error_path), QString::fromStdString(ev.error_message), true);
  } else if (!ev.result.feasible) {
    const QString reason = QString::fromStdString(ev.result.reason);
    message_->setStyleSheet(QString("QLabel { %1 padding: 4px; }").arg(kWarnStyle));
    message_->setText(tr("Infeasible plan: %1").arg(reason));
    message_->setVisible(true);
    // The estimate names the fields it checked ("plan.tp: 6 does not divide model.heads").
    static const QRegularExpression kPath(R"(\b(plan|model|cluster)\.[a-z_]+(\.[a-z_]+)?)");
    for (auto it = kPath.globalMatch(reason); it.hasNext();) flag(it.next().captured(0), reason, false);
  } else {
    message_->setVisible(false);
  }
}

void ScenarioPanel::populate(const Evaluation& ev) {
  populating_ = true;
  auto set_spin = [this](const char* path, long long v) {
    if (auto* s = qobject_cast<QSpinBox*>(controls_.value(path)))
      s->setValue(static_cast<int>(std::clamp<long long>(v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max())));
  };
  auto set_check = [this](const char* path, bool on) {
    if (auto* c = qobject_cast<QCheckBox*>(controls_.value(path))) c->setChecked(on);
  };
  auto set_combo = [this](const char* path, const QString& text) {
    if (auto* c = qobject_cast<QComboBox*>(controls_.value(path))) set_combo_text(c, text);
  };
  scenario_name_->setText(QString::fromStdString(ev.raw.value("name", std::string())));

  // Preset pickers show the raw choice: a preset name, {"base": name, ...}, or inline.
  auto preset_of = [](const nlohmann::json& part) -> QString {
    if (part.is_string()) return QString::fromStdString(part.get<std::string>());
    if (part.is_object() && part.contains("base") && part["base"].is_string())
      return QString::fromStdString(part["base"].get<std::string>());
    return QString();
  };
  auto show_preset = [&](QComboBox* combo, const nlohmann::json& part, const std::string& resolved_name) {
    QString name = preset_of(part);
    if (name.isEmpty()) {
      const QString label = tr("inline: %1").arg(QString::fromStdString(resolved_name));
      int i = combo->findText(label);
      if (i < 0) {
        combo->addItem(label, QString());
        i = combo->count() - 1;
      }
      combo->setCurrentIndex(i);
    } else {
      set_combo_text(combo, name);
    }
  };
  const nlohmann::json empty;
  const auto& raw_cluster = ev.raw.contains("cluster") ? ev.raw["cluster"] : empty;
  if (ev.loaded) {
    const Scenario& sc = ev.scenario;
    show_preset(model_combo_, ev.raw.contains("model") ? ev.raw["model"] : empty, sc.model.name);
    show_preset(cluster_combo_, raw_cluster, sc.cluster.name);
    const nlohmann::json raw_gpu = raw_cluster.is_object() && raw_cluster.contains("gpu") ? raw_cluster["gpu"] : nlohmann::json(sc.cluster.gpu.name);
    show_preset(gpu_combo_, raw_gpu, sc.cluster.gpu.name);
    set_spin("model.layers", sc.model.layers);
    set_spin("model.hidden", sc.model.hidden);
    set_spin("model.heads", sc.model.heads);
    set_spin("model.seq_len", sc.model.seq_len);
    set_spin("cluster.nodes", sc.cluster.nodes);
    set_spin("cluster.gpus_per_node", sc.cluster.gpus_per_node);
    cluster_summary_->setText(tr("%1 GPUs, %2, %3 NICs per node")
                                  .arg(sc.cluster.total_gpus())
                                  .arg(QString::fromStdString(sc.cluster.network.topology))
                                  .arg(sc.cluster.network.nics_per_node));
    const ParallelPlan& p = sc.plan;
    set_spin("plan.tp", p.tp);
    set_spin("plan.pp", p.pp);
    set_spin("plan.dp", p.dp_from_gpus ? 0 : p.dp);
    if (p.dp_from_gpus)
      static_cast<QSpinBox*>(controls_.value("plan.dp"))->setSpecialValueText(QString("auto (%1)").arg(p.dp));
    else
      static_cast<QSpinBox*>(controls_.value("plan.dp"))->setSpecialValueText("auto");
    set_spin("plan.cp", p.cp);
    set_spin("plan.ep", p.ep);
    set_spin("plan.vpp", p.vpp);
    set_combo("plan.schedule", QString::fromStdString(p.schedule));
    set_check("plan.sp", p.sp);
    set_combo("plan.moe_dispatcher", to_string(p.moe_dispatcher));
    controls_.value("plan.moe_dispatcher")->setEnabled(sc.model.moe.has_value());
    set_spin("plan.micro_batch", p.micro_batch);
    set_spin("plan.global_batch", p.global_batch);
    set_combo("plan.zero_stage", QString::number(p.zero_stage));
    set_spin("plan.dp_shard", p.dp_shard);
    controls_.value("plan.dp_shard")->setEnabled(p.zero_stage >= 1);
    set_spin("plan.zero_hpz_partition_size", p.zero_hpz_partition_size);
    set_check("plan.zero_quantized_weights", p.zero_quantized_weights);
    set_check("plan.zero_quantized_gradients", p.zero_quantized_gradients);
    for (const char* zpp : {"plan.zero_hpz_partition_size", "plan.zero_quantized_weights", "plan.zero_quantized_gradients"})
      controls_.value(zpp)->setEnabled(p.zero_stage >= 3);
    set_combo("plan.recompute", to_string(p.recompute));
    const std::vector<std::string> listed = to_strings(p.recompute_modules);
    for (QCheckBox* check : recompute_modules_)
      check->setChecked(std::find(listed.begin(), listed.end(), check->text().toStdString()) != listed.end());
    controls_.value("plan.recompute_modules")->setEnabled(p.recompute == Recompute::kSelective);
    set_combo("plan.precision", to_string(p.precision));
    set_check("plan.fp8_activation_cache", p.fp8_activation_cache);
    controls_.value("plan.fp8_activation_cache")->setEnabled(p.precision == Precision::kFp8);
    set_check("plan.fused_loss", p.fused_loss);
    set_check("plan.offload.optimizer", p.offload.optimizer);
    set_check("plan.offload.params", p.offload.params);
    set_check("plan.offload.activations", p.offload.activations);
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& st : p.compression)
      stages.push_back({{"from_step", st.from_step}, {"method", st.method}, {"ratio", st.topk_ratio},
                        {"rank", st.powersgd_rank}});
    rebuild_compression(stages);
  } else {
    // Not parsed: show what can be known so that the panel does not show stale values. Presets
    // by name from the raw JSON, shapes from the resolved JSON when resolution got that far.
    show_preset(model_combo_, ev.raw.contains("model") ? ev.raw["model"] : empty, "?");
    show_preset(cluster_combo_, raw_cluster, "?");
    const auto& res = ev.resolved;
    // The resolved part where resolution got that far, else what the raw part writes itself
    // (a cluster's "nodes" beside a model that did not load).
    auto int_at = [&ev](const char* part, const char* key) -> std::optional<long long> {
      for (const nlohmann::json* j : {&ev.resolved, &ev.raw}) {
        if (!j->is_object() || !j->contains(part) || !(*j)[part].is_object()) continue;
        const auto& o = (*j)[part];
        if (o.contains(key) && o[key].is_number_integer()) return o[key].get<long long>();
      }
      return std::nullopt;
    };
    for (const char* key : {"layers", "hidden", "heads", "seq_len"})
      if (auto v = int_at("model", key)) set_spin((std::string("model.") + key).c_str(), *v);
    for (const char* key : {"nodes", "gpus_per_node"})
      if (auto v = int_at("cluster", key)) set_spin((std::string("cluster.") + key).c_str(), *v);
    if (res.is_object() && res.contains("cluster") && res["cluster"].is_object() && res["cluster"].contains("gpu") &&
        res["cluster"]["gpu"].is_object())
      set_combo_text(gpu_combo_, QString::fromStdString(res["cluster"]["gpu"].value("name", std::string())));
    else if (raw_cluster.is_object() && raw_cluster.contains("gpu") && raw_cluster["gpu"].is_string())
      set_combo_text(gpu_combo_, QString::fromStdString(raw_cluster["gpu"].get<std::string>()));
    cluster_summary_->clear();
  }
  if (!ev.loaded && ev.raw.contains("plan") && ev.raw["plan"].is_object()) {
    // Keep what the user typed visible next to the error: plan values straight from the raw JSON.
    for (auto it = ev.raw["plan"].begin(); it != ev.raw["plan"].end(); ++it) {
      const std::string path = "plan." + it.key();
      QWidget* w = controls_.value(QString::fromStdString(path));
      // Beyond an int, the spin box shows its end, never a wrapped value.
      const long long whole = !it->is_number_integer() ? 0
                              : it->is_number_unsigned() && it->get<unsigned long long>() > std::numeric_limits<long long>::max()
                                  ? std::numeric_limits<long long>::max()
                                  : it->get<long long>();
      if (auto* s = qobject_cast<QSpinBox*>(w); s && it->is_number_integer()) set_spin(path.c_str(), whole);
      if (auto* c = qobject_cast<QComboBox*>(w); c && it->is_string()) set_combo_text(c, QString::fromStdString(it->get<std::string>()));
      if (auto* c = qobject_cast<QComboBox*>(w); c && it->is_number_integer()) set_combo_text(c, QString::number(whole));
      if (auto* c = qobject_cast<QCheckBox*>(w); c && it->is_boolean()) c->setChecked(it->get<bool>());
    }
  }
  populating_ = false;
}

void ScenarioPanel::rebuild_compression(const nlohmann::json& stages) {
  if (stages == shown_compression_) return;  // rebuilding would steal focus from the edited cell
  shown_compression_ = stages;
  compression_->setRowCount(static_cast<int>(stages.size()));
  for (int row = 0; row < static_cast<int>(stages.size()); ++row) {
    const auto& st = stages[row];
    auto* from = new QSpinBox;
    from->setRange(0, 2000000000);
    from->setValue(static_cast<int>(st.value("from_step", int64_t{0})));
    auto* method = new QComboBox;
    method->addItems(kCompressionMethods);
    method->setCurrentText(QString::fromStdString(st.value("method", std::string("none"))));
    auto* ratio = new QDoubleSpinBox;
    ratio->setDecimals(4);
    ratio->setRange(0.0001, 1.0);
    ratio->setSingleStep(0.01);
    ratio->setValue(st.value("ratio", 0.01));
    auto* rank = new QSpinBox;
    rank->setRange(1, 4096);
    rank->setValue(st.value("rank", 4));
    compression_->setCellWidget(row, 0, from);
    compression_->setCellWidget(row, 1, method);
    compression_->setCellWidget(row, 2, ratio);
    compression_->setCellWidget(row, 3, rank);
    connect(from, &QSpinBox::valueChanged, this, &ScenarioPanel::emit_compression);
    connect(method, &QComboBox::currentIndexChanged, this, &ScenarioPanel::emit_compression);
    connect(ratio, &QDoubleSpinBox::valueChanged, this, &ScenarioPanel::emit_compression);
    connect(rank, &QSpinBox::valueChanged, this, &ScenarioPanel::emit_compression);
  }
}

// No box ticked removes the field: selective recomputation's default (core_attn) applies.
void ScenarioPanel::emit_recompute_modules() {
  nlohmann::json listed = nlohmann::json::array();
  for (QCheckBox* check : recompute_modules_)
    if (check->isChecked()) listed.push_back(check->text().toStdString());
  emit field_edited("plan.recompute_modules", listed.empty() ? QString() : json_text(listed));
}

void ScenarioPanel::emit_compression() {
  if (populating_) return;
  nlohmann::json stages = nlohmann::json::array();
  for (int row = 0; row < compression_->rowCount(); ++row) {
    auto* from = qobject_cast<QSpinBox*>(compression_->cellWidget(row, 0));
    auto* method = qobject_cast<QComboBox*>(compression_->cellWidget(row, 1));
    auto* ratio = qobject_cast<QDoubleSpinBox*>(compression_->cellWidget(row, 2));
    auto* rank = qobject_cast<QSpinBox*>(compression_->cellWidget(row, 3));
    if (!from || !method || !ratio || !rank) continue;
    stages.push_back({{"from_step", from->value()}, {"method", method->currentText().toStdString()},
                      {"ratio", ratio->value()}, {"rank", rank->value()}});
  }
  shown_compression_ = stages;
  emit field_edited("plan.compression", json_text(stages));
}

}  // namespace trainsim::gui
