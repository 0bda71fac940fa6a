// Drives the main window the way a person would: edit a degree and see the estimate follow;
// open a bad scenario and see the error at the control; switch language; load a sweep point;
// run "Simulate" against stand-in child processes (failure with stderr, success, cancel).
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "gui/format.hpp"
#include "gui/goodput_view.hpp"
#include "gui/language.hpp"
#include "gui/main_window.hpp"
#include "gui/scenario_panel.hpp"
#include "gui/simulate_runner.hpp"
#include "gui/summary_bar.hpp"
#include "gui/sweep_table.hpp"
#include "gui/sweep_view.hpp"
#include "gui/timeline_view.hpp"

using trainsim::gui::MainWindow;

namespace {

const QString kDefault = QString(TRAINSIM_TEST_SCENARIOS) + "/default.json";

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& text, bool executable = false) {
  const QString path = dir.filePath(name);
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write(text);
  f.close();
  if (executable) f.setPermissions(f.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeUser);
  return path;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void changing_a_degree_updates_the_estimate() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    QVERIFY(w.evaluation().loaded);
    QVERIFY(w.evaluation().result.feasible);
    const double before = w.evaluation().result.step_time_s;
    const QString shown_before = w.summary()->step_time_text();

    // TP 8 -> 4 and PP 8 -> 16 keep 4·16·24 = 1536 GPUs, through the spin boxes as a user would.
    auto* tp = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.tp"));
    auto* pp = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.pp"));
    QVERIFY(tp && pp);
    tp->setValue(4);
    pp->setValue(16);
    QCOMPARE(w.raw_scenario()["plan"]["tp"].get<int>(), 4);
    QCOMPARE(w.evaluation().scenario.plan.tp, 4);
    QCOMPARE(w.evaluation().scenario.plan.pp, 16);
    QVERIFY(w.evaluation().loaded);
    QVERIFY(w.evaluation().result.step_time_s != before);
    QVERIFY(w.summary()->step_time_text() != shown_before);
  }

  // The summary's bubble is the mean over the stages (Result::bubble_fraction), the breakdown's
  // "Pipeline bubble" row the critical stage's share: on the default plan (PP 8, 1F1B) the two
  // differ, so each says which it is, and the note under the breakdown names the mean a mean.
  void the_two_bubble_figures_say_which_stages_they_describe() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    const trainsim::Result& r = w.evaluation().result;
    QVERIFY(r.feasible && r.bubble_fraction > 0);
    const QString mean = trainsim::gui::format_percent(r.bubble_fraction);
    QLabel* value = w.summary()->findChild<QLabel*>("summary_4");
    QVERIFY(value);
    QCOMPARE(value->text(), mean);
    QStringList titles;
    for (QLabel* l : w.summary()->findChildren<QLabel*>()) titles << l->text();
    QVERIFY2(titles.contains("Bubble (stage mean)"), qPrintable(titles.join(", ")));

    trainsim::gui::ScenarioView* breakdown = nullptr;
    for (const auto& [name, view] : w.views())
      if (name == "breakdown") breakdown = view;
    QVERIFY(breakdown);
    auto* table = breakdown->findChild<QTableWidget*>();
    QVERIFY(table);
    QString critical;
    for (int row = 0; row < table->rowCount(); ++row)
      if (table->item(row, 0) && table->item(row, 0)->text() == "Pipeline bubble") critical = table->item(row, 2)->text();
    QVERIFY(!critical.isEmpty());
    QVERIFY2(critical != mean, qPrintable(critical + " vs " + mean));  // the critical stage's share differs
    QString note;
    for (QLabel* l : breakdown->findChildren<QLabel*>())
      if (l->text().startsWith("Critical pipeline stage")) note = l->text();
    QVERIFY2(note.contains("the mean bubble is " + mean), qPrintable(note));
  }

  void an_infeasible_plan_flags_the_controls_named_in_the_reason() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    auto* tp = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.tp"));
    tp->setValue(5);  // 5 does not divide 96 heads, nor the GPU count
    QVERIFY(w.evaluation().loaded);
    QVERIFY(!w.evaluation().result.feasible);
    QVERIFY(w.panel()->message_text().contains("plan.tp"));
    QVERIFY(w.panel()->flagged_controls().contains(tp));
    tp->setValue(8);
    QVERIFY(w.evaluation().result.feasible);
    QVERIFY(w.panel()->flagged_controls().isEmpty());
  }

  void an_invalid_scenario_shows_the_loader_error_at_its_path() {
    QTemporaryDir dir;
    const QString path = write_file(dir, "bad.json", R"({
      "schema_version": 1, "name": "bad", "model": "gpt3-175b",
      "cluster": {"base": "dgx-a100-superpod", "nodes": 192},
      "plan": {"tp": 8, "pp": 8, "schedule": "zigzag", "micro_batch": 1, "global_batch": 1536}
    })");
    MainWindow w;
    QVERIFY(!w.open_scenario(path));
    QVERIFY(!w.evaluation().loaded);
    QCOMPARE(QString::fromStdString(w.evaluation().error_path), QString("plan.schedule"));
    QVERIFY(w.panel()->message_text().contains("plan.schedule"));
    QWidget* schedule = w.panel()->control_for_path("plan.schedule");
    QVERIFY(schedule);
    QVERIFY(w.panel()->flagged_controls().contains(schedule));
    QVERIFY(schedule->toolTip().contains("plan.schedule"));

    // Picking a valid schedule clears the error.
    auto* combo = qobject_cast<QComboBox*>(schedule);
    const int i = combo->findText("1f1b");
    QVERIFY(i >= 0);
    combo->setCurrentIndex(i);
    emit combo->activated(i);
    QVERIFY(w.evaluation().loaded);
    QVERIFY(w.panel()->flagged_controls().isEmpty());
  }

  // A model named by a file beside the scenario: missing, the panel still shows what the file
  // writes of the other parts (192 nodes, not a stale value; TP 8 beyond any int clamps, never
  // wraps); written, the scenario loads with it.
  void a_model_file_beside_the_scenario_loads_or_says_it_is_missing() {
    QTemporaryDir dir;
    const QString path = write_file(dir, "filed.json", R"({
      "schema_version": 1, "name": "filed", "model": "my-model.json",
      "cluster": {"base": "dgx-a100-superpod", "nodes": 192, "gpu": "H100-SXM-80GB"},
      "plan": {"tp": 8, "pp": 8, "micro_batch": 10000000000, "global_batch": 1536}
    })");
    MainWindow w;
    QVERIFY(!w.open_scenario(path));
    QVERIFY(w.panel()->message_text().contains("model: "));
    QVERIFY(w.panel()->message_text().contains("my-model.json: cannot open the model file: not found"));
    auto spin = [&](const char* p) { return qobject_cast<QSpinBox*>(w.panel()->control_for_path(p))->value(); };
    QCOMPARE(spin("cluster.nodes"), 192);
    QCOMPARE(spin("plan.tp"), 8);
    QCOMPARE(spin("plan.micro_batch"), qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.micro_batch"))->maximum());

    write_file(dir, "my-model.json", R"({"base": "gpt-1.7b", "layers": 16, "name": "mine"})");
    const QString fixed = write_file(dir, "filed-ok.json", R"({
      "schema_version": 1, "name": "filed", "model": "my-model.json",
      "cluster": {"base": "dgx-a100-superpod", "nodes": 192},
      "plan": {"tp": 8, "pp": 8, "micro_batch": 1, "global_batch": 1536}
    })");
    QVERIFY(w.open_scenario(fixed));
    QVERIFY(w.evaluation().loaded);
    QCOMPARE(w.evaluation().scenario.model.layers, 16);
    QCOMPARE(spin("model.layers"), 16);
  }

  // The recomputed-parts boxes as a user ticks them: they apply under selective recomputation,
  // write plan.recompute_modules, and what a ticked part rebuilds is no longer kept.
  void ticking_a_recomputed_part_edits_the_plan_and_frees_its_activations() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    QWidget* parts = w.panel()->control_for_path("plan.recompute_modules");
    QVERIFY(parts);
    auto* mode = qobject_cast<QComboBox*>(w.panel()->control_for_path("plan.recompute"));
    const int selective = mode->findText("selective");
    mode->setCurrentIndex(selective);
    emit mode->activated(selective);
    QVERIFY(w.evaluation().loaded);
    QVERIFY(parts->isEnabled());
    const auto boxes = parts->findChildren<QCheckBox*>();
    QCOMPARE(boxes.size(), 5);
    QCheckBox* core = nullptr;
    QCheckBox* norms = nullptr;
    for (QCheckBox* b : boxes) {
      if (b->text() == "core_attn") core = b;
      if (b->text() == "layernorm") norms = b;
    }
    QVERIFY(core && norms);
    QVERIFY(core->isChecked());  // the default
    QVERIFY(!norms->isChecked());
    const double before = w.evaluation().result.per_stage.at(0).breakdown.activations_bytes;
    QTest::mouseClick(norms, Qt::LeftButton, {}, QPoint(4, norms->height() / 2));
    QCOMPARE(QString::fromStdString(w.raw_scenario()["plan"]["recompute_modules"].dump()),
             QString(R"(["core_attn","layernorm"])"));
    QVERIFY(w.evaluation().loaded);
    QVERIFY(w.evaluation().scenario.plan.recompute_modules.layernorm);
    QVERIFY(w.evaluation().result.per_stage.at(0).breakdown.activations_bytes < before);
    // Unticking every part removes the field: the default applies again.
    norms->click();
    core->click();
    QVERIFY(!w.raw_scenario()["plan"].contains("recompute_modules"));
    QVERIFY(w.evaluation().scenario.plan.recompute_modules == trainsim::RecomputeModules{});
    // Under full recomputation the boxes do not apply.
    const int full = mode->findText("full");
    mode->setCurrentIndex(full);
    emit mode->activated(full);
    QVERIFY(!parts->isEnabled());
  }

  // Sharding within a node (FSDP's HYBRID_SHARD) as a user sets it: the shard group's spin box
  // writes plan.dp_shard, ZeRO-3's model states grow from 1/32 to 1/8 of the model; under ZeRO-1
  // the optimizer states are sharded 8 ways instead of 32 and the field stays; ZeRO-0 disables
  // the box and drops the field.
  void the_zero_shard_group_edits_the_plan_and_the_model_states() {
    QTemporaryDir dir;
    const QString path = write_file(dir, "fsdp.json", R"({
      "schema_version": 1, "name": "fsdp", "model": "gpt-1.7b",
      "cluster": {"base": "dgx-a100-superpod", "nodes": 4},
      "plan": {"tp": 1, "pp": 1, "dp": 32, "zero_stage": 3, "micro_batch": 4, "global_batch": 128}
    })");
    MainWindow w;
    QVERIFY(w.open_scenario(path));
    auto* shard = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.dp_shard"));
    QVERIFY(shard);
    QVERIFY(shard->isEnabled());
    QCOMPARE(shard->text(), QString("all DP ranks"));
    const double full = w.evaluation().result.per_stage.at(0).breakdown.params_bytes;
    shard->setFocus();
    shard->selectAll();
    QTest::keyClicks(shard, "8");
    QTest::keyClick(shard, Qt::Key_Return);
    QCOMPARE(w.raw_scenario()["plan"]["dp_shard"].get<int>(), 8);
    QVERIFY(w.evaluation().loaded);
    QVERIFY(w.evaluation().result.feasible);
    QCOMPARE(w.evaluation().scenario.plan.dp_shard, 8);
    QCOMPARE(w.evaluation().result.per_stage.at(0).breakdown.params_bytes, 4 * full);
    auto* zero = qobject_cast<QComboBox*>(w.panel()->control_for_path("plan.zero_stage"));
    auto pick = [&](const char* stage) {
      const int i = zero->findText(stage);
      zero->setCurrentIndex(i);
      emit zero->activated(i);
    };
    pick("1");
    QCOMPARE(w.raw_scenario()["plan"]["dp_shard"].get<int>(), 8);
    QVERIFY(w.evaluation().result.feasible);
    QVERIFY(shard->isEnabled());
    const double optimizer_8 = w.evaluation().result.per_stage.at(0).breakdown.optimizer_bytes;
    pick("0");
    QVERIFY(!w.raw_scenario()["plan"].contains("dp_shard"));
    QVERIFY(w.evaluation().result.feasible);
    QVERIFY(!shard->isEnabled());
    pick("1");
    QCOMPARE(w.evaluation().result.per_stage.at(0).breakdown.optimizer_bytes, optimizer_8 / 4);
  }

  // ZeRO++'s controls, as a user sets them on a ZeRO-3 plan over 4 nodes with one slow NIC each:
  // the secondary partition of a node adds 2/8 bytes a parameter, the quantized gathers and
  // gradients shorten the communication-bound step, and a lower ZeRO stage drops all three.
  void the_zero_plus_plus_controls_edit_the_plan() {
    QTemporaryDir dir;
    const QString path = write_file(dir, "zpp.json", R"({
      "schema_version": 1, "name": "zpp", "model": "gpt-1.7b",
      "cluster": {"base": "dgx-a100-superpod", "nodes": 4,
                  "network": {"nics_per_node": 1, "nic_bandwidth": "100Gbps"}},
      "plan": {"tp": 1, "pp": 1, "dp": 32, "zero_stage": 3, "micro_batch": 1, "global_batch": 32,
               "recompute": "none"}
    })");
    MainWindow w;
    QVERIFY(w.open_scenario(path));
    auto* hpz = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.zero_hpz_partition_size"));
    auto* qwz = qobject_cast<QCheckBox*>(w.panel()->control_for_path("plan.zero_quantized_weights"));
    auto* qgz = qobject_cast<QCheckBox*>(w.panel()->control_for_path("plan.zero_quantized_gradients"));
    QVERIFY(hpz && qwz && qgz);
    QVERIFY(hpz->isEnabled() && qwz->isEnabled() && qgz->isEnabled());
    QCOMPARE(hpz->text(), QString("off"));
    const double params = w.evaluation().result.per_stage.at(0).breakdown.params_bytes;
    const double step = w.evaluation().result.step_time_s;
    hpz->setFocus();
    hpz->selectAll();
    QTest::keyClicks(hpz, "8");
    QTest::keyClick(hpz, Qt::Key_Return);
    QCOMPARE(w.raw_scenario()["plan"]["zero_hpz_partition_size"].get<int>(), 8);
    QVERIFY(w.evaluation().result.feasible);
    // The dense parameters are sharded over 32 ranks at 2 bytes: 2/32 a parameter, and the
    // secondary copy over 8 adds 2/8, five times as much.
    QVERIFY(std::abs(w.evaluation().result.per_stage.at(0).breakdown.params_bytes / (5 * params) - 1) < 1e-9);
    QTest::mouseClick(qwz, Qt::LeftButton);
    QTest::mouseClick(qgz, Qt::LeftButton);
    QCOMPARE(w.raw_scenario()["plan"]["zero_quantized_weights"].get<bool>(), true);
    QCOMPARE(w.raw_scenario()["plan"]["zero_quantized_gradients"].get<bool>(), true);
    QVERIFY(w.evaluation().result.feasible);
    QVERIFY(w.evaluation().result.step_time_s < 0.8 * step);
    auto* zero = qobject_cast<QComboBox*>(w.panel()->control_for_path("plan.zero_stage"));
    const int two = zero->findText("2");
    zero->setCurrentIndex(two);
    emit zero->activated(two);
    for (const char* key : {"zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_gradients"})
      QVERIFY2(!w.raw_scenario()["plan"].contains(key), key);
    QVERIFY(w.evaluation().result.feasible);
    QVERIFY(!hpz->isEnabled() && !qwz->isEnabled() && !qgz->isEnabled());
    QVERIFY(!qwz->isChecked() && !qgz->isChecked());
  }

  // The MoE dispatcher and the fp8 activation cache as a user picks them: DeepEP's deduplicated exchange writes
  // plan.moe_dispatcher and shortens the exposed expert traffic; a dense model has none to pick.
  void the_deepep_dispatcher_and_the_fp8_cache_edit_the_plan_and_cut_what_they_should() {
    QTemporaryDir dir;
    const QString path = write_file(dir, "moe.json", R"({
      "schema_version": 1, "name": "moe",
      "model": {"name": "moe-grouped", "layers": 4, "hidden": 2048, "heads": 16, "ffn_hidden": 4096,
                "ffn_act": "swiglu", "vocab": 32000, "seq_len": 2048,
                "moe": {"experts": 64, "top_k": 8, "expert_ffn_hidden": 1024, "groups": 8, "groups_per_token": 4}},
      "cluster": {"base": "h800-cluster", "nodes": 4},
      "plan": {"tp": 1, "pp": 1, "dp": 32, "ep": 32, "micro_batch": 1, "global_batch": 64}
    })");
    MainWindow w;
    QVERIFY(w.open_scenario(path));
    auto* dispatcher = qobject_cast<QComboBox*>(w.panel()->control_for_path("plan.moe_dispatcher"));
    QVERIFY(dispatcher);
    QVERIFY(dispatcher->isEnabled());
    QCOMPARE(dispatcher->currentText(), QString("alltoall"));
    const double before = w.evaluation().result.breakdown.ep_comm_s;
    QVERIFY(before > 0);
    const int deepep = dispatcher->findText("deepep");
    dispatcher->setCurrentIndex(deepep);
    emit dispatcher->activated(deepep);
    QCOMPARE(QString::fromStdString(w.raw_scenario()["plan"]["moe_dispatcher"].get<std::string>()), QString("deepep"));
    QVERIFY(w.evaluation().loaded);
    QVERIFY(w.evaluation().scenario.plan.moe_dispatcher == trainsim::MoeDispatcher::kDeepEp);
    QVERIFY(w.evaluation().result.breakdown.ep_comm_s < 0.6 * before);
    MainWindow dense;
    QVERIFY(dense.open_scenario(kDefault));
    QVERIFY(!dense.panel()->control_for_path("plan.moe_dispatcher")->isEnabled());

    // The fp8 activation cache: only under fp8, and it shrinks the kept activations.
    auto* cache = qobject_cast<QCheckBox*>(w.panel()->control_for_path("plan.fp8_activation_cache"));
    QVERIFY(cache);
    QVERIFY(!cache->isEnabled());
    auto* precision = qobject_cast<QComboBox*>(w.panel()->control_for_path("plan.precision"));
    const int fp8 = precision->findText("fp8");
    precision->setCurrentIndex(fp8);
    emit precision->activated(fp8);
    QVERIFY(w.evaluation().loaded);
    QVERIFY(cache->isEnabled());
    const double kept = w.evaluation().result.per_stage.at(0).breakdown.activations_bytes;
    cache->click();
    QVERIFY(w.raw_scenario()["plan"]["fp8_activation_cache"].get<bool>());
    QVERIFY(w.evaluation().scenario.plan.fp8_activation_cache);
    QVERIFY(w.evaluation().result.per_stage.at(0).breakdown.activations_bytes < 0.9 * kept);

    // The fused loss: one kernel over the 16-bit logits, so the last stage keeps no fp32 copy of
    // them (2 bytes a logit fewer) and the step moves fewer bytes.
    MainWindow g;
    QVERIFY(g.open_scenario(kDefault));
    auto* fused = qobject_cast<QCheckBox*>(g.panel()->control_for_path("plan.fused_loss"));
    QVERIFY(fused);
    QVERIFY(fused->isEnabled());
    QVERIFY(!fused->isChecked());
    const trainsim::Result unfused = g.evaluation().result;
    fused->click();
    QVERIFY(g.raw_scenario()["plan"]["fused_loss"].get<bool>());
    QVERIFY(g.evaluation().scenario.plan.fused_loss);
    const trainsim::Scenario& sc = g.evaluation().scenario;
    const double logits = static_cast<double>(sc.plan.micro_batch) * sc.model.seq_len * sc.model.vocab / sc.plan.tp;
    const double saved = unfused.per_stage.back().breakdown.activations_bytes -
                         g.evaluation().result.per_stage.back().breakdown.activations_bytes;
    QVERIFY2(std::abs(saved - 2 * logits) <= 1e-9 * saved, qPrintable(QString::number(saved)));
    QVERIFY(g.evaluation().result.step_time_s < unfused.step_time_s);
  }

  void an_unknown_key_is_flagged_with_its_path() {
    QTemporaryDir dir;
    const QString path = write_file(dir, "typo.json", R"({
      "schema_version": 1, "name": "typo", "model": "gpt3-175b", "cluster": "dgx-a100-superpod",
      "plan": {"tp": 8, "pp": 8, "global_batch": 1536, "micro_bach": 1}
    })");
    MainWindow w;
    w.open_scenario(path);
    QVERIFY(!w.evaluation().loaded);
    QVERIFY(QString::fromStdString(w.evaluation().error_message).contains("micro_bach"));
    QVERIFY(!w.panel()->flagged_controls().isEmpty());  // the Parallelism group ("plan")
  }

  void save_writes_the_json_the_cli_reads() {
    QTemporaryDir dir;
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.micro_batch"))->setValue(2);
    const QString out = dir.filePath("saved.json");
    QVERIFY(w.save_scenario(out));
    MainWindow again;
    // Presets resolve from the default search path ($TRAINSIM_SCENARIOS), as for the CLI.
    QVERIFY(again.open_scenario(out));
    QCOMPARE(again.evaluation().scenario.plan.micro_batch, 2);
    QCOMPARE(again.raw_scenario(), w.raw_scenario());
  }

  void dp_auto_removes_the_key() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.dp"))->setValue(0);
    QVERIFY(!w.raw_scenario()["plan"].contains("dp"));
    QVERIFY(w.evaluation().scenario.plan.dp_from_gpus);
    QCOMPARE(w.evaluation().scenario.plan.dp, 24);
  }

  void switching_language_retranslates_the_window() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    QCOMPARE(w.tabs()->tabText(1), QString("Memory"));
    QVERIFY(trainsim::gui::set_language("zh_CN"));
    QCOMPARE(w.tabs()->tabText(1), QString::fromUtf8("内存"));
    QVERIFY(trainsim::gui::set_language("en"));
    QCOMPARE(w.tabs()->tabText(1), QString("Memory"));
  }

  void clicking_a_sweep_point_loads_its_plan() {
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    QString error;
    QVERIFY2(w.load_sweep(QString(TRAINSIM_GUI_TEST_DATA) + "/sweep_gpt3.jsonl", &error), qPrintable(error));
    auto* sweep = qobject_cast<trainsim::gui::SweepView*>(w.views()[4].second);
    QVERIFY(sweep);
    QVERIFY(!sweep->table().pareto.empty());
    const auto& row = sweep->table().rows[sweep->table().pareto.back()];
    emit sweep->plan_selected(row);
    for (const auto& [path, value] : row.plan) {
      const auto key = QString::fromStdString(path).mid(5).toStdString();
      QCOMPARE(QString::fromStdString(w.raw_scenario()["plan"][key].dump()), QString::fromStdString(value));
    }
    QVERIFY(w.evaluation().loaded);
    QVERIFY(w.evaluation().result.feasible);
  }

  void the_goodput_view_follows_training_faults() {
    MainWindow w;
    QVERIFY(w.open_scenario(QString(TRAINSIM_TEST_SCENARIOS) + "/examples/llama3-405b-16k-goodput.json"));
    const auto& g = w.evaluation().goodput;
    QVERIFY(g.enabled);
    // The example's MTBFs: 16384/86000 + 2048/19200 + 16384/607000 failures per hour.
    QVERIFY(std::abs(g.rates.total_per_s() * 3600 - (16384 / 86000.0 + 2048 / 19200.0 + 16384 / 607000.0)) < 1e-9);
    QVERIFY(g.goodput_fraction > 0.5 && g.goodput_fraction < 1.0);
    auto* view = qobject_cast<trainsim::gui::GoodputView*>(w.views()[6].second);
    QVERIFY(view);
    QCOMPARE(w.views()[6].first, QString("goodput"));
    auto* summary = view->findChild<QLabel*>();
    QVERIFY(summary && summary->text().contains("Goodput"));
    // Without training.faults the view says how to enable it.
    QVERIFY(w.open_scenario(kDefault));
    QVERIFY(!w.evaluation().goodput.enabled);
    QVERIFY(summary->text().contains("training.faults"));
  }

  void simulate_failure_shows_the_child_stderr() {
    QTemporaryDir dir;
    const QString fake = write_file(dir, "trainsim", "#!/bin/sh\necho 'error: --fidelity: \"simulate\" is not available in this build' >&2\nexit 2\n", true);
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    w.runner()->set_program(fake);
    QSignalSpy failed(w.runner(), &trainsim::gui::SimulateRunner::failed);
    w.simulate();
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.first().first().toString().contains("not available"));
    QVERIFY(w.status_text().contains("not available"));
    QVERIFY(w.evaluation().loaded);  // the estimate stays on screen
  }

  void simulate_success_shows_the_child_result() {
    QTemporaryDir dir;
    const QString fake = write_file(dir, "trainsim",
                                    "#!/bin/sh\necho '{\"progress\": 0.5}'\n"
                                    "echo '{\"feasible\": true, \"fidelity\": \"simulate\", \"step_time_s\": 12.5, \"tokens_per_s\": 1000}'\n",
                                    true);
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    w.runner()->set_program(fake);
    QSignalSpy done(w.runner(), &trainsim::gui::SimulateRunner::finished_ok);
    w.simulate();
    QVERIFY(done.wait(10000));
    QCOMPARE(w.summary()->step_time_text(), QString("12.500 s"));
  }

  void labels_follow_the_simulated_result() {
    // A stand-in simulation that writes the trace it is asked for (--trace FILE), as the
    // simulate tier does, and names it in its result.
    QTemporaryDir dir;
    const QString with_trace = write_file(
        dir, "trainsim",
        "#!/bin/sh\n"
        "while [ $# -gt 0 ]; do [ \"$1\" = \"--trace\" ] && trace=\"$2\"; shift; done\n"
        "echo '{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"F0\", \"cat\": \"F\", \"ts\": 0, \"dur\": 1000000, "
        "\"pid\": 1, \"tid\": 1}]}' > \"$trace\"\n"
        "echo '{\"progress\": 0.5}' >&2\n"
        "echo \"{\\\"feasible\\\": true, \\\"fidelity\\\": \\\"simulate\\\", \\\"step_time_s\\\": 12.5, "
        "\\\"tokens_per_s\\\": 1000, \\\"bubble_fraction\\\": 0.2, \\\"trace\\\": \\\"$trace\\\"}\"\n",
        true);
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* timeline = qobject_cast<trainsim::gui::TimelineView*>(w.views()[0].second);
    QVERIFY(w.summary()->status_text().contains("Estimate (closed form, in-process), computed in"));
    QVERIFY(timeline->title_text().contains("(estimate "));
    w.runner()->set_program(with_trace);
    QSignalSpy done(w.runner(), &trainsim::gui::SimulateRunner::finished_ok);
    QTest::keyClick(&w, Qt::Key_F5);  // Run > Simulate
    QVERIFY(done.wait(10000));
    QCOMPARE(w.summary()->step_time_text(), QString("12.500 s"));
    const QString status = w.summary()->status_text();
    QVERIFY2(status.contains("Simulated (simulate tier"), qPrintable(status));
    QVERIFY2(!status.contains("computed in") && !status.contains("Estimate"), qPrintable(status));
    QVERIFY2(timeline->title_text().startsWith("Simulated timeline: step 12.500 s"), qPrintable(timeline->title_text()));
    QVERIFY(w.status_text().contains("Simulation finished (simulate"));

    // Without a timeline from the simulation the estimate's pipeline stays, and says so.
    const QString no_trace = write_file(dir, "no_trace",
                                        "#!/bin/sh\necho '{\"feasible\": true, \"fidelity\": \"simulate\", "
                                        "\"step_time_s\": 13, \"tokens_per_s\": 900, \"bubble_fraction\": 0.25}'\n",
                                        true);
    QTest::mouseClick(w.tabs()->tabBar(), Qt::LeftButton, {}, w.tabs()->tabBar()->tabRect(1).center());
    auto* mb = qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.micro_batch"));
    mb->setValue(2);
    QVERIFY(w.summary()->status_text().contains("computed in"));  // an edit: the estimate again
    QTest::mouseClick(w.tabs()->tabBar(), Qt::LeftButton, {}, w.tabs()->tabBar()->tabRect(0).center());
    QVERIFY(timeline->title_text().contains("(estimate "));  // the simulated trace went with the edit
    w.runner()->set_program(no_trace);
    QSignalSpy again(w.runner(), &trainsim::gui::SimulateRunner::finished_ok);
    w.simulate();
    QVERIFY(again.wait(10000));
    const QString title = timeline->title_text();
    QVERIFY2(title.startsWith("The estimate's pipeline (the simulation sent no timeline)"), qPrintable(title));
    QVERIFY2(title.contains("simulated bubble 25.0%") && !title.contains("(estimate "), qPrintable(title));
  }

  void simulate_can_be_cancelled() {
    QTemporaryDir dir;
    const QString fake = write_file(dir, "trainsim", "#!/bin/sh\nexec sleep 30\n", true);
    MainWindow w;
    QVERIFY(w.open_scenario(kDefault));
    w.runner()->set_program(fake);
    QSignalSpy cancelled(w.runner(), &trainsim::gui::SimulateRunner::cancelled);
    w.simulate();
    QTRY_VERIFY_WITH_TIMEOUT(w.runner()->running(), 5000);
    // The window still answers while the child runs.
    qobject_cast<QSpinBox*>(w.panel()->control_for_path("plan.micro_batch"))->setValue(2);
    QCOMPARE(w.evaluation().scenario.plan.micro_batch, 2);
    w.cancel_simulation();
    QVERIFY(cancelled.wait(10000));
    QVERIFY(!w.runner()->running());
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
