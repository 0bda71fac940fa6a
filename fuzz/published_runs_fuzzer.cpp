// libFuzzer target: published-run records (trainsim validate --published FILE): a record, or a
// list of them, read as a scenario by the record rules and predicted; a record that cannot be
// read is skipped with its reason, never a crash or another exception.
#include "fuzz/fuzz_common.hpp"
#include "validate/published_runs.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto j = fuzz::parse(fuzz::text_of(data, size));
  if (!j) return 0;
  const nlohmann::json records = j->is_array() ? *j : nlohmann::json::array({*j});
  const validate::PublishedReport report = validate::compare_published(records, fuzz::load_options());
  validate::report_to_text(report);
  validate::report_to_json(report).dump();
  return 0;
}
