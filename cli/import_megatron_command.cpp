// `trainsim import-megatron "<pretrain_gpt.py arguments>"`: a Megatron-LM command line as a
// scenario (models/megatron_args.hpp). Unknown flags are listed on stderr and in "notes".
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "models/interop/megatron_args.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim import-megatron "ARGS" [--cluster C] [--gpus N] [--out FILE]
       trainsim import-megatron --file SCRIPT [--cluster C] [--gpus N] [--out FILE]

Turns a Megatron-LM pretrain_gpt.py command line (one quoted argument, or a file holding it;
backslash-newline continuations and quotes are handled; a leading "torchrun ... pretrain_gpt.py"
gives the world size) into a scenario that `trainsim run` accepts.

  --cluster C   cluster preset or cluster JSON file (default dgx-a100-superpod)
  --gpus N      world size (default: torchrun --nnodes x --nproc_per_node, else TP x PP x CP)
  --out FILE    write the scenario there instead of stdout
Flags that change nothing here (learning rate, data paths, ...) are listed as ignored, flags
this importer does not know as unknown: both on stderr and in the scenario's "notes".
exit codes: 0 ok, 2 bad input (the message names the flag)
)";

int run(int argc, char** argv) {
  std::string text, cluster = "dgx-a100-superpod", out_path;
  long long gpus = 0;
  bool have_text = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--cluster") {
      cluster = option_value(argc, argv, i);
    } else if (a == "--gpus") {
      gpus = parse_int_option(a, option_value(argc, argv, i), 1, 1LL << 24);
    } else if (a == "--out") {
      out_path = option_value(argc, argv, i);
    } else if (a == "--file") {
      const std::string f = option_value(argc, argv, i);
      std::ifstream in(f);
      if (!in) throw ScenarioError(f, "cannot open the command-line file");
      std::ostringstream ss;
      ss << in.rdbuf();
      text += " " + ss.str();
      have_text = true;
    } else if (!have_text || a.rfind("--", 0) != 0) {
      text += " " + a;
      have_text = true;
    } else {
      throw ScenarioError(a, "unknown option; quote the Megatron arguments as one argument");
    }
  }
  if (!have_text) throw ScenarioError("ARGS", "missing; see trainsim import-megatron --help");

  MegatronImportOptions options;
  options.gpus = gpus;
  LoadOptions load;
  load.preset_dirs = default_preset_dirs();
  nlohmann::json cluster_json = cluster;
  if (cluster.find('/') != std::string::npos ||
      (cluster.size() > 5 && cluster.substr(cluster.size() - 5) == ".json")) {
    cluster_json = read_json_file(cluster, "cluster");
    if (cluster_json.is_object() && cluster_json.contains("cluster") &&
        cluster_json.contains("schema_version"))
      cluster_json = nlohmann::json(cluster_json["cluster"]);
  }
  options.cluster = cluster_json;
  const nlohmann::json resolved = resolve_cluster_json(cluster_json, load);
  options.gpus_per_node = resolved.value("gpus_per_node", 8);

  MegatronImport imp = import_megatron_args(split_command_line(text), options);
  // The strict loader must accept what we produce.
  parse_scenario(resolve_scenario_json(imp.scenario, load));
  for (const auto& u : imp.unknown) std::fprintf(stderr, "unknown flag (not imported): %s\n", u.c_str());
  if (!imp.ignored.empty()) {
    std::string s;
    for (const auto& x : imp.ignored) s += " " + x;
    std::fprintf(stderr, "ignored (no effect on time or memory):%s\n", s.c_str());
  }
  for (const auto& a : imp.assumptions) std::fprintf(stderr, "note: %s\n", a.c_str());
  const std::string out = imp.scenario.dump(2) + "\n";
  if (out_path.empty()) {
    std::cout << out;
  } else {
    std::ofstream f(out_path);
    if (!(f << out)) throw ScenarioError(out_path, "cannot write the scenario file");
  }
  return kExitOk;
}

const CommandRegistrar kImportMegatron("import-megatron",
                                       "Megatron-LM command line -> scenario", run);

}  // namespace
}  // namespace trainsim::cli
