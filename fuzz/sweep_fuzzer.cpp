// libFuzzer target: sweep files (base, axes, constraints, objective) and their expansion into
// plans, capped low so an input's cost stays small; each plan's overrides applied to the base.
#include "fuzz/fuzz_common.hpp"
#include "models/scenario/sweep_spec.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto j = fuzz::parse(fuzz::text_of(data, size));
  if (!j) return 0;
  fuzz::expect_answer([&] {
    const SweepSpec spec = parse_sweep(*j, ".", fuzz::load_options());
    const auto plans = expand_sweep(spec, fuzz::load_options(), 2000);
    for (std::size_t i = 0; i < plans.size() && i < 4; ++i) {
      nlohmann::json raw = spec.base_raw;
      for (const auto& [path, value] : plans[i]) apply_override(raw, path, value.dump());
      fuzz::expect_answer([&] { parse_scenario(resolve_scenario_json(raw, fuzz::load_options(), spec.base_dir)); });
    }
  });
  return 0;
}
