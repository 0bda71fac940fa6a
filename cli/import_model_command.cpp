// `trainsim import-model config.json [--seq N]`: a Hugging Face config.json as a model preset
// (models/hf_config.hpp), printed as JSON for scenarios/models/<name>.json.
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/cli_args.hpp"
#include "cli/command_registry.hpp"
#include "models/cost/flops.hpp"
#include "models/scenario/hf_config.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: trainsim import-model CONFIG.json [--seq N] [--name NAME]

Reads a Hugging Face config.json (Llama 1/2/3, Mistral, Mixtral, Qwen2, Qwen2-MoE, DeepSeek-V2/V3,
GPT-2, GPT-NeoX) and prints the model object of the scenario format; save it as
scenarios/models/NAME.json, or point a scenario at the config directly:
"model": {"hf_config": "path/config.json"}. The parameter count goes to stderr.

  --seq N      sequence length (default: the config's max_position_embeddings / n_positions)
  --name NAME  model name (default: the config's _name_or_path, else its model_type)
exit codes: 0 ok, 2 bad input (the message names the field)
)";

int run(int argc, char** argv) {
  std::string path, name;
  long long seq = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return kExitOk;
    } else if (a == "--seq") {
      seq = parse_int_option(a, option_value(argc, argv, i), 1, 1LL << 24);
    } else if (a == "--name") {
      name = option_value(argc, argv, i);
    } else if (!a.empty() && a[0] == '-') {
      throw ScenarioError(a, "unknown option; see trainsim import-model --help");
    } else if (path.empty()) {
      path = a;
    } else {
      throw ScenarioError(a, "only one config.json at a time");
    }
  }
  if (path.empty()) throw ScenarioError("CONFIG.json", "missing; see trainsim import-model --help");
  nlohmann::json model = hf_config_to_model_json(read_json_file(path, "config.json"), path, seq);
  if (!name.empty()) model["name"] = name;
  // Check it the way a scenario would load it, and report the size.
  nlohmann::json scenario = {{"schema_version", 1},
                             {"model", model},
                             {"cluster", "dgx-a100-superpod"},
                             {"plan", {{"global_batch", 1}}}};
  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  const Scenario s = parse_scenario(resolve_scenario_json(scenario, options));
  const ParamCount p = count_params(s.model);
  std::cout << model.dump(2) << "\n";
  std::fprintf(stderr, "%s: %.3g parameters (%.3g active per token)\n",
               model["name"].get<std::string>().c_str(), p.total, p.active_per_token);
  return kExitOk;
}

const CommandRegistrar kImportModel("import-model", "Hugging Face config.json -> model preset", run);

}  // namespace
}  // namespace trainsim::cli
