// `trainsim export-chakra SCENARIO --out DIR`: the generated workload as Chakra-style execution
// traces, DIR/et.<rank>.json for each rank of one pipeline (models/chakra_export.hpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "models/interop/chakra_export.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim export-chakra SCENARIO.json --out DIR [--set path=value]...

Writes DIR/et.<rank>.json, one per pipeline stage of the representative pipeline (data-parallel
and tensor-parallel rank 0): nodes {id, name, type COMP_NODE|COMM_COLL_NODE|COMM_SEND_NODE|
COMM_RECV_NODE, ctrl_deps, data_deps, duration_micros, comm_size, comm_type, comm_src, comm_dst,
comm_tag} in the order the pipeline schedule plays them (the JSON form of Chakra's et_def.proto).
exit codes: 0 ok, 2 bad input, 3 the plan cannot run
)";

int run(int argc, char** argv) {
  std::string scenario_path, out_dir;
  LoadOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--out") {
      out_dir = option_value(argc, argv, i);
    } else if (a == "--set") {
      options.overrides.push_back(parse_set(option_value(argc, argv, i)));
    } else if (!a.empty() && a[0] == '-') {
      throw ScenarioError(a, "unknown option; see trainsim export-chakra --help");
    } else if (scenario_path.empty()) {
      scenario_path = a;
    } else {
      throw ScenarioError(a, "only one scenario at a time");
    }
  }
  if (scenario_path.empty()) throw ScenarioError("SCENARIO", "missing; see --help");
  if (out_dir.empty()) throw ScenarioError("--out", "missing: the folder for et.<rank>.json");
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
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw ScenarioError(out_dir, "cannot create the output folder: " + ec.message());
  std::size_t nodes = 0;
  for (const auto& t : traces) {
    const std::string file = out_dir + "/et." + std::to_string(t["rank"].get<int>()) + ".json";
    std::ofstream f(file);
    if (!(f << t.dump(1) << "\n")) throw ScenarioError(file, "cannot write");
    nodes += t["nodes"].size();
  }
  std::printf("wrote %zu traces (%zu nodes) to %s\n", traces.size(), nodes, out_dir.c_str());
  return kExitOk;
}

const CommandRegistrar kExportChakra("export-chakra",
                                     "write the workload as Chakra-style execution traces", run);

}  // namespace
}  // namespace trainsim::cli
