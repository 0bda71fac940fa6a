// Sweep files: a name in a constraint or objective that means nothing is an error when the sweep
// is read, not a sweep whose every plan fails (or passes) it.
#include "models/scenario/sweep_spec.hpp"

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

json sweep(const json& constraints, const std::string& objective = "tokens_per_s") {
  return {{"schema_version", 1},
          {"base", {{"schema_version", 1}, {"model", "gpt-1.7b"},
                    {"cluster", {{"base", "dgx-a100-superpod"}, {"nodes", 4}}},
                    {"plan", {{"dp", 32}, {"global_batch", 512}}}}},
          {"axes", json::array({{{"path", "plan.micro_batch"}, {"values", {1, 2}}}})},
          {"constraints", constraints},
          {"objective", {{"maximize", objective}}}};
}

std::string error_of(const json& j) {
  LoadOptions o;
  o.preset_dirs = default_preset_dirs();
  try {
    parse_sweep(j, ".", o);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, UnknownNamesInConstraintsAreErrors) {
  EXPECT_EQ(error_of(sweep({"memory.peak_bytes < 0.9 * hbm", "plan.tp <= gpus_per_node", "mfu > 0.1",
                            "cluster.gpu.hbm_capacity > 0", "plan.offload_optimizer == 0"})),
            "");
  EXPECT_NE(error_of(sweep({"memory.peak_byts < 0.9 * hbm"}))
                .find("constraints[0]: unknown name \"memory.peak_byts\""),
            std::string::npos);
  EXPECT_NE(error_of(sweep(json::array(), "tokens_per_sec")).find("objective.maximize: unknown name \"tokens_per_sec\""),
            std::string::npos);
  // Sections an axis may switch on are not known from the base.
  EXPECT_EQ(error_of(sweep({"model.moe.experts >= 0"})), "");
}

// A degrees axis factorises the GPU count over parallel degrees: another path (model.layers) or a
// degree listed twice would sweep plans that are not factorisations.
TEST(SweepSpec, DegreesAreDistinctParallelDegrees) {
  auto with_degrees = [](const json& degrees) {
    json j = sweep(json::array());
    j["axes"] = json::array({{{"degrees", degrees}}});
    return j;
  };
  EXPECT_EQ(error_of(with_degrees({"plan.tp", "plan.pp", "plan.dp", "plan.cp"})), "");
  EXPECT_NE(error_of(with_degrees({"model.layers", "plan.dp"}))
                .find("axes[0].degrees: expected parallel degrees among plan.tp, plan.pp, plan.dp, plan.cp, plan.ep"),
            std::string::npos);
  EXPECT_NE(error_of(with_degrees({"plan.tp", "plan.tp", "plan.dp"})).find("\"plan.tp\" is listed twice"),
            std::string::npos);
}

}  // namespace
}  // namespace trainsim
