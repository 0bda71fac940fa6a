// `trainsim export-chakra SCENARIO --out DIR`: the generated workload as Chakra-style execution
// traces, DIR/et.<rank>.json for each rank of one pipeline (models/chakra_export.hpp).
#include <cstdio>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/output_file.hpp"
#include "models/interop/chakra_export.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::cli {
namespace {

struct ExportOptions {
  std::string scenario_path, out_dir;
  std::vector<std::string> sets;
};

void declare(CLI::App& app, ExportOptions& o) {
  app.description(
      "Writes DIR/et.<rank>.json, one per pipeline stage of the representative pipeline (data-parallel\n"
      "and tensor-parallel rank 0): nodes {id, name, type COMP_NODE|COMM_COLL_NODE|COMM_SEND_NODE|\n"
      "COMM_RECV_NODE, ctrl_deps, data_deps, duration_micros, comm_size, comm_type, comm_src, comm_dst,\n"
      "comm_tag} in the order the pipeline schedule plays them (the JSON form of Chakra's et_def.proto).");
  app.add_option("SCENARIO", o.scenario_path, "the scenario JSON file (- reads it from standard input)")->required();
  app.add_option("--out", o.out_dir, "the folder for et.<rank>.json (created if missing)")->type_name("DIR")->required();
  add_set_option(app, o.sets);
}

int run(ExportOptions& o) {
  check_output_dir(o.out_dir, "--out");
  LoadOptions options;
  options.overrides = parse_sets(o.sets);
  const std::string& scenario_path = o.scenario_path;
  const std::string& out_dir = o.out_dir;
  options.preset_dirs = default_preset_dirs();
  const Scenario s = load_scenario_file(scenario_path, options);
  std::vector<nlohmann::json> traces;
  try {
    traces = export_chakra(s);
  } catch (const ScenarioError& e) {
    if (e.path() != "plan") throw;
    std::fprintf(stderr, "trainsim: %s\n", e.what());
    return kExitInfeasible;
  }
  create_output_dir(out_dir, "--out");
  auto file_of = [&](const nlohmann::json& t) { return out_dir + "/et." + std::to_string(t["rank"].get<int>()) + ".json"; };
  // Every file is checked before the first is written: a failure leaves the folder as it was.
  for (const auto& t : traces) {
    check_output_file(file_of(t), "--out");
    refuse_overwriting_inputs(file_of(t), "--out", {scenario_path});
  }
  std::size_t nodes = 0;
  for (const auto& t : traces) {
    write_output_file(file_of(t), t.dump(1) + "\n", "--out");
    nodes += t["nodes"].size();
  }
  std::printf("wrote %zu traces (%zu nodes) to %s\n", traces.size(), nodes, out_dir.c_str());
  return kExitOk;
}

const CommandRegistrar kExportChakra("export-chakra",
                                     "write the workload as Chakra-style execution traces", declare, run);

}  // namespace
}  // namespace trainsim::cli
