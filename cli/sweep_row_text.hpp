// A sweep row written straight from the plan's Scenario and Result, without building it as a JSON
// value: the same text make_row + judge_row + dump give (keys sorted as nlohmann sorts them,
// numbers as nlohmann writes them), the same CSV line, and the plain record the summary keeps.
// An invalid plan's row is still built as JSON (invalid_row). tests/cli/sweep_test.sh holds the
// rows to `trainsim run --json` of the same plans, and outputs/summaries to the loader's route.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/sweep_rows.hpp"
#include "models/core/result.hpp"
#include "models/core/specs.hpp"
#include "models/scenario/sweep_spec.hpp"

namespace trainsim::cli {

// Appends a double as nlohmann's dump writes it (shortest round-trip digits, ".0" on integral
// values, null when not finite).
void append_json_number(std::string& out, double x);
void append_json_number(std::string& out, int64_t x);
// Appends s as a JSON string (nlohmann's escaping) / as a CSV field (quoted, quotes doubled).
void append_json_string(std::string& out, const std::string& s);
void append_csv_string(std::string& out, const std::string& s);

// The constraints and the objective judged on a plan's figures, as judge_row judges a row: a
// name resolves on the row first (result keys, the plan, index, ...), then on the scenario;
// hbm, gpus, nodes and gpus_per_node on the scenario's cluster.
class RowJudge {
 public:
  // scenario_json(plan_part) gives the plan's scenario JSON (see SweepPlans::scenario_json).
  RowJudge(const SweepSpec& spec, std::function<const nlohmann::json&(bool plan_part)> scenario_json,
           std::function<nlohmann::json()> overrides);
  struct Verdict {
    std::vector<std::size_t> violated;  // constraint indexes
    double objective = 0;
  };
  // Throws ScenarioError as Expression::evaluate does on a name that resolves nowhere.
  Verdict judge(long long index, const Scenario& scenario, const Result& result);

 private:
  const SweepSpec& spec_;
  std::function<const nlohmann::json&(bool)> scenario_json_;
  std::function<nlohmann::json()> overrides_;
  nlohmann::json stub_;
  std::vector<std::pair<int, nlohmann::json*>> leaves_;  // a row number and its place in stub_
  bool plan_part_ = false, with_overrides_ = false, with_meets_ = false;
};

// Writes the rows of evaluated plans: JSON text, CSV line and, for a ranked row, its record.
class RowText {
 public:
  RowText(const SweepSpec& spec, SweepTally& tally);
  // A plan the estimate judged feasible (verdict from RowJudge) or not (verdict unused).
  void plan_row(long long index, const std::string& overrides_text, const Scenario& scenario,
                const Result& result, const RowJudge::Verdict* verdict, std::string& json_out,
                std::string* csv_out);
  // A row built as JSON (an invalid plan): its text, CSV line and tally.
  void json_row(const nlohmann::json& row, std::string& json_out, std::string* csv_out);

 private:
  const std::string& cached(const std::string& s);
  const SweepSpec& spec_;
  SweepTally& tally_;
  std::vector<std::string> constraint_json_;
  std::unordered_map<std::string, std::string> escaped_;
};

}  // namespace trainsim::cli
