// libFuzzer target: Hugging Face config.json files, converted to a model and loaded into a
// scenario on a fixed cluster (the route of "model": {"hf_config": ...}).
#include "fuzz/fuzz_common.hpp"
#include "models/estimate/estimate.hpp"
#include "models/scenario/hf_config.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto j = fuzz::parse(fuzz::text_of(data, size));
  if (!j) return 0;
  fuzz::expect_answer([&] {
    const nlohmann::json model = hf_config_to_model_json(*j, "config.json", size % 3 == 0 ? 4096 : 0);
    const nlohmann::json s = {{"schema_version", 1},
                              {"model", model},
                              {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 1}}},
                              {"plan", {{"dp", 8}, {"global_batch", 64}}}};
    estimate(parse_scenario(resolve_scenario_json(s, fuzz::load_options())));
  });
  return 0;
}
