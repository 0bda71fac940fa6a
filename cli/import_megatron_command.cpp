// `trainsim import-megatron "<pretrain_gpt.py arguments>"`: a Megatron-LM command line as a
// scenario (models/megatron_args.hpp). Unknown flags are listed on stderr and in "notes".
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "models/scenario/input_file.hpp"
#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "cli/output_file.hpp"
#include "models/interop/megatron_args.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::cli {
namespace {

struct ImportMegatronOptions {
  std::string cluster = "dgx-a100-superpod", out_path, file;
  long long gpus = 0;
  CLI::App* app = nullptr;  // the Megatron arguments are what the table does not know
};

void declare(CLI::App& app, ImportMegatronOptions& o) {
  app.description(
      "Turns a Megatron-LM pretrain_gpt.py command line (one quoted argument, the arguments as they\n"
      "are, or a file holding them; backslash-newline continuations and quotes are handled; a leading\n"
      "\"torchrun ... pretrain_gpt.py\" gives the world size) into a scenario that `trainsim run` accepts:\n"
      "  trainsim import-megatron \"--tensor-model-parallel-size 8 --num-layers 96 ...\" --gpus 1024");
  app.allow_extras();
  o.app = &app;
  app.add_option("--cluster", o.cluster, "cluster preset or cluster JSON file")->type_name("C")->default_str(o.cluster);
  app.add_option("--gpus", o.gpus, "world size (needed unless a torchrun --nnodes/--nproc_per_node line gives it)")
      ->type_name("N")
      ->check(CLI::Range(1LL, 1LL << 24));
  app.add_option("--out", o.out_path, "write the scenario there instead of stdout")->type_name("FILE");
  app.add_option("--file", o.file, "read the Megatron command line from this file")->type_name("SCRIPT");
  app.footer(
      "Flags that change nothing here (learning rate, data paths, ...) are listed as ignored, flags this\n"
      "importer does not know as unknown: both on stderr and in the scenario's \"notes\".");
}

int run(ImportMegatronOptions& o) {
  std::string text;
  for (const auto& a : o.app->remaining()) text += " " + a;
  // A regular file, bounded in size (the readers' rule: no FIFO or device blocks the import).
  if (!o.file.empty()) text += " " + read_input_file(o.file, "--file (Megatron command line)");
  if (text.find_first_not_of(" \t\n") == std::string::npos)
    throw ScenarioError("ARGS", "missing: the Megatron-LM arguments (quoted) or --file SCRIPT");
  if (!o.out_path.empty()) {
    check_output_file(o.out_path, "--out");
    refuse_overwriting_inputs(o.out_path, "--out", {o.file});
  }
  const std::string& cluster = o.cluster;
  const std::string& out_path = o.out_path;
  const long long gpus = o.gpus;

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
    write_output_file(out_path, out, "--out");
  }
  return kExitOk;
}

const CommandRegistrar kImportMegatron("import-megatron",
                                       "Megatron-LM command line -> scenario", declare, run);

}  // namespace
}  // namespace trainsim::cli
