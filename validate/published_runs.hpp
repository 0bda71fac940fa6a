// Predicting published measured runs (data/published_runs.json: each record cites its source) and
// reporting the error per metric (CONVENTIONS.md #12: the data cites its source; a prediction
// outside the stated error fails the check).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/result.hpp"
#include "models/scenario/scenario_loader.hpp"
#include "validate/record_scenario.hpp"

namespace trainsim::validate {

struct MetricComparison {
  std::string metric;  // "tokens_per_s", "step_time_s", "tflops_per_gpu", "mfu", "busbw_bytes_per_s", "model_state_bytes"
  double predicted = 0;
  double measured = 0;
  double error() const { return measured != 0 ? (predicted - measured) / measured : 0; }
};

struct RunComparison {
  std::string id;
  std::string kind;  // "training", "collective", "memory"
  bool predicted = false;
  std::string skipped_reason;  // why no prediction was made
  std::vector<std::string> assumptions;
  std::vector<MetricComparison> metrics;
  nlohmann::json scenario;  // the scenario built from the record (training runs)
};

struct PublishedReport {
  std::vector<RunComparison> runs;
  // Mean absolute percentage error per metric over the runs that have it.
  std::vector<std::pair<std::string, double>> mape;
  std::vector<std::pair<std::string, int>> counts;
};

RunComparison compare_record(const nlohmann::json& record, const LoadOptions& options);
// The training metrics a record measured, predicted by `result` (replaces out.metrics).
void fill_training_metrics(const nlohmann::json& record, const Result& result, RunComparison& out);
// Recomputes the per-metric MAPE from the runs.
void summarize(PublishedReport& report);
PublishedReport compare_published(const nlohmann::json& records, const LoadOptions& options);

// The published runs shipped with trainsim: $TRAINSIM_DATA/published_runs.json when that variable
// is set, else the source tree's data/published_runs.json, else data/published_runs.json in the
// current folder (a ScenarioError names what was searched when none exists).
std::string default_published_runs_path();

// Reads a published-runs file (a JSON list, or an object with a "runs" list).
nlohmann::json read_published_file(const std::string& path);

// The source a record comes from, as the leave-one-source-out check groups them: the first word
// of its `source` ("Narayanan", "NVIDIA/Megatron-LM", "mosaicml/llm-foundry").
std::string source_family(const nlohmann::json& record);

// training_tensor_share (models/workload/layer_program.hpp) fitted on the training runs of a
// report whose record `use` accepts: the value in [0.5, 1] with the least tokens/s MAPE.
struct ShareFit {
  double share = 0;
  double mape = 0;  // tokens/s MAPE of the runs fitted on, at `share`
  int runs = 0;
};
ShareFit fit_training_tensor_share(const PublishedReport& report, const nlohmann::json& records,
                                   const std::function<bool(const nlohmann::json&)>& use);
// tokens/s MAPE of the selected runs with every GPU at `share`.
double tokens_mape_at_share(const PublishedReport& report, const nlohmann::json& records,
                            const std::function<bool(const nlohmann::json&)>& use, double share, int* runs = nullptr);

// Leave one source out: for each source, fit on the others and predict it.
struct SourceFold {
  std::string source;
  int runs = 0;
  double fitted_share = 0;  // on the other sources
  double mape = 0;          // this source's tokens/s MAPE at that share
};
std::vector<SourceFold> cross_validate_sources(const PublishedReport& report, const nlohmann::json& records);
std::string cross_validation_to_text(const std::vector<SourceFold>& folds, const ShareFit& all);

std::string report_to_text(const PublishedReport& report);
nlohmann::json report_to_json(const PublishedReport& report);

}  // namespace trainsim::validate
