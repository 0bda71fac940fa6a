// The GUI's pure pieces: Pareto front, sweep parsing (JSONL and CSV), Chrome trace round trip,
// the estimate timeline, result JSON read-back.
#include <QtTest>

#include "gui/chrome_trace.hpp"
#include "gui/estimate_timeline.hpp"
#include "gui/evaluation.hpp"
#include "gui/result_reader.hpp"
#include "gui/sweep_table.hpp"
#include "gui/topology_view.hpp"
#include "models/core/result_json.hpp"
#include "models/scenario/scenario_loader.hpp"

using namespace trainsim::gui;

namespace {

Evaluation default_evaluation() {
  const auto raw = trainsim::read_json_file(std::string(TRAINSIM_TEST_SCENARIOS) + "/default.json");
  return evaluate_scenario(raw, TRAINSIM_TEST_SCENARIOS);
}

}  // namespace

class GuiUnitsTest : public QObject {
  Q_OBJECT

 private slots:
  void pareto_front_keeps_only_undominated_feasible_rows() {
    std::vector<SweepRow> rows(5);
    // (memory, throughput, feasible)
    const double data[5][2] = {{10, 100}, {20, 90}, {20, 150}, {30, 140}, {5, 500}};
    for (int i = 0; i < 5; ++i) {
      rows[i].peak_bytes = data[i][0];
      rows[i].tokens_per_s = data[i][1];
    }
    rows[4].feasible = false;  // best of all, but cannot run
    for (auto& r : rows) r.step_time_s = 1;
    // Most throughput first (models/core/pareto.hpp's order, the CLI's).
    QCOMPARE(pareto_front(rows), (std::vector<int>{2, 0}));
    // A row outside the sweep's constraints does not compete, however good.
    rows[2].meets_constraints = false;
    QCOMPARE(pareto_front(rows), (std::vector<int>{3, 0}));
  }

  void sweep_rows_parse_from_jsonl_and_csv() {
    const SweepTable j = parse_sweep_text(
        "{\"plan\": {\"tp\": 8, \"pp\": 4}, \"step_time_s\": 2, \"tokens_per_s\": 10, \"memory\": {\"peak_bytes\": 5}, \"feasible\": true}\n"
        "not json\n"
        "{\"tp\": 4, \"pp\": 8, \"step_time_s\": 3, \"tokens_per_s\": 7, \"peak_bytes\": 3, \"feasible\": false}\n",
        false);
    QCOMPARE(j.rows.size(), size_t(2));
    QCOMPARE(j.skipped_lines, 1);
    QCOMPARE(j.kind, QString("sweep"));
    QCOMPARE(QString::fromStdString(j.rows[0].plan.at("plan.tp")), QString("8"));
    QCOMPARE(j.rows[0].peak_bytes, 5.0);
    QVERIFY(!j.rows[1].feasible);
    QCOMPARE(QString::fromStdString(j.rows[1].plan.at("plan.pp")), QString("8"));

    const SweepTable c = parse_sweep_text(
        "plan.tp,plan.schedule,step_time_s,tokens_per_s,memory.peak_bytes,feasible\n"
        "8,\"interleaved\",1.5,100,7e10,true\n"
        "2,1f1b,2.5,60,9e10,false\n",
        true);
    QCOMPARE(c.rows.size(), size_t(2));
    QCOMPARE(QString::fromStdString(c.rows[0].plan.at("plan.schedule")), QString("\"interleaved\""));
    QCOMPARE(QString::fromStdString(c.rows[1].plan.at("plan.schedule")), QString("\"1f1b\""));
    QCOMPARE(c.rows[0].peak_bytes, 7e10);
    QCOMPARE(c.pareto, (std::vector<int>{0}));
  }

  void sweep_rows_of_the_cli_keep_infeasible_rows_and_skip_the_header() {
    // trainsim sweep's rows file: a header, a feasible row outside the constraints, an
    // out-of-memory row with no metrics (only the memory it would need and its reason).
    const SweepTable t = parse_sweep_text(
        "{\"trainsim_sweep\": {\"format\": 1, \"fingerprint\": \"f\", \"plans\": 2}}\n"
        "{\"index\": 0, \"gpus\": 64, \"plan\": {\"tp\": 8}, \"feasible\": true, \"meets_constraints\": false, "
        "\"step_time_s\": 2, \"tokens_per_s\": 10, \"memory\": {\"peak_bytes\": 5}}\n"
        "{\"index\": 1, \"gpus\": 64, \"plan\": {\"tp\": 1}, \"feasible\": false, \"meets_constraints\": false, "
        "\"objective\": null, \"reason_code\": \"out_of_memory\", \"reason\": \"out of memory: 90 GB\", "
        "\"memory\": {\"peak_bytes\": 9e10}}\n",
        false);
    QCOMPARE(t.skipped_lines, 0);
    QCOMPARE(t.rows.size(), size_t(2));
    QCOMPARE(t.rows[0].gpus, 64.0);
    QVERIFY(!t.rows[0].meets_constraints);
    QVERIFY(!t.rows[1].feasible && !t.rows[1].has_metrics());
    QCOMPARE(QString::fromStdString(t.rows[1].reason_code), QString("out_of_memory"));
    QVERIFY(t.pareto.empty());  // nothing competes: one is outside the constraints, one cannot run

    // trainsim plan --json: the plans under "best", their plan under "scenario".
    const SweepTable p = parse_sweep_text(
        "{\"searched\": 5, \"best\": [{\"feasible\": true, \"gpus\": 8, \"step_time_s\": 1, \"tokens_per_s\": 9, "
        "\"memory\": {\"peak_bytes\": 3}, \"scenario\": {\"model\": {\"layers\": 2}, \"plan\": {\"tp\": 2, \"pp\": 4}}}]}",
        false);
    QCOMPARE(p.kind, QString("plan"));
    QCOMPARE(p.rows.size(), size_t(1));
    QCOMPARE(QString::fromStdString(p.rows[0].plan.at("plan.pp")), QString("4"));
    QVERIFY(!p.rows[0].plan.count("plan.layers"));
    QCOMPARE(p.pareto, (std::vector<int>{0}));
  }

  void estimate_timeline_plays_the_schedule() {
    const Evaluation ev = default_evaluation();
    QVERIFY(ev.loaded);
    const GanttTrace g = estimate_timeline(ev);
    QCOMPARE(g.lanes.size(), 2 * ev.scenario.plan.pp);
    int forwards = 0;
    for (const auto& e : g.events) forwards += e.category == "F";
    // One F per micro-batch per chunk per stage.
    QCOMPARE(forwards, ev.result.micro_batches * ev.scenario.plan.vpp * ev.scenario.plan.pp);
    // The played step is close to the estimate's (same costs; p2p and the tail differ a little).
    QVERIFY(std::abs(g.end_s() - ev.result.step_time_s) < 0.15 * ev.result.step_time_s);
  }

  void estimate_timeline_of_a_plan_too_large_to_play_says_why() {
    // 24 x 2^25 sequences at micro-batch 1 over DP24: 3.4e7 micro-batches x 8 stages x 2 chunks, far
    // beyond the playback bound (models/workload/cost_bounds.hpp): the step is estimated, the
    // timeline is not played op by op (which would take minutes and gigabytes).
    auto raw = trainsim::read_json_file(std::string(TRAINSIM_TEST_SCENARIOS) + "/default.json");
    raw["plan"]["global_batch"] = 24 << 25;
    QElapsedTimer clock;
    clock.start();
    const Evaluation ev = evaluate_scenario(raw, TRAINSIM_TEST_SCENARIOS);
    QVERIFY(ev.loaded);
    QVERIFY(ev.result.step_time_s > 0);
    QVERIFY(ev.timeline.ops.empty());
    QVERIFY(ev.timeline_skipped.find("pipeline ops") != std::string::npos);
    const GanttTrace g = estimate_timeline(ev);
    QVERIFY(g.events.empty());
    QVERIFY(g.title.contains("micro-batches"));
    QVERIFY2(clock.elapsed() < 10000, "bounded work: no op-by-op playback");
  }

  void chrome_trace_round_trips() {
    const GanttTrace g = estimate_timeline(default_evaluation());
    const GanttTrace back = gantt_from_chrome_trace(chrome_trace_from_gantt(g));
    QCOMPARE(back.lanes, g.lanes);
    QCOMPARE(back.events.size(), g.events.size());
    QVERIFY(std::abs(back.end_s() - g.end_s()) < 1e-6 * g.end_s());
  }

  void chrome_trace_reads_foreign_events() {
    const auto trace = nlohmann::json::parse(R"({"traceEvents": [
      {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "gpu0 compute"}},
      {"ph": "X", "name": "F0", "cat": "F", "ts": 1000, "dur": 500, "pid": 1, "tid": 7},
      {"ph": "X", "name": "allreduce", "ts": 1600, "dur": 200, "pid": 1, "tid": 8},
      {"ph": "i", "name": "marker", "ts": 1700, "pid": 1, "tid": 8}]})");
    const GanttTrace g = gantt_from_chrome_trace(trace);
    QCOMPARE(g.lanes, (QStringList{"gpu0 compute", "pid 1 tid 8"}));
    QCOMPARE(g.events.size(), size_t(2));
    QCOMPARE(g.events[0].start_s, 0.0);  // shifted to the first event
    QVERIFY(std::abs(g.events[1].start_s - 600e-6) < 1e-12);
    QCOMPARE(g.events[1].category, QString("allreduce"));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, gantt_from_chrome_trace(nlohmann::json::object()));
  }

  void result_json_reads_back() {
    const Evaluation ev = default_evaluation();
    const trainsim::Result r = result_from_json(trainsim::result_to_json(ev.result));
    QCOMPARE(r.step_time_s, ev.result.step_time_s);
    QCOMPARE(r.per_stage.size(), ev.result.per_stage.size());
    QCOMPARE(r.breakdown.bubble_s, ev.result.breakdown.bubble_s);
    QCOMPARE(r.peak_breakdown.activations_bytes, ev.result.peak_breakdown.activations_bytes);
    QCOMPARE(r.dp_bytes, ev.result.dp_bytes);
  }

  void link_load_puts_tp_on_nvlink_and_dp_on_the_nics() {
    const Evaluation ev = default_evaluation();
    const LinkLoad l = link_load(ev.scenario, ev.result, ev.placement);
    QCOMPARE(l.intra_groups, QString("TP"));
    QVERIFY(l.inter_groups.contains("DP"));
    QVERIFY(l.nvlink > 0 && l.nvlink < 1);
    QVERIFY(l.nic > 0 && l.nic < 1);
  }
};

QTEST_MAIN(GuiUnitsTest)
#include "gui_units_test.moc"
