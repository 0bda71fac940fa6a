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

struct ImportModelOptions {
  std::string path, name;
  long long seq = 0;
};

void declare(CLI::App& app, ImportModelOptions& o) {
  app.description(
      "Reads a Hugging Face config.json (Llama 1/2/3, Mistral, Mixtral, Qwen2, Qwen2-MoE, DeepSeek-V2/V3,\n"
      "GPT-2, GPT-NeoX) and prints the model object of the scenario format; save it as\n"
      "scenarios/models/NAME.json, or point a scenario at the config directly:\n"
      "\"model\": {\"hf_config\": \"path/config.json\", \"seq_len\": 4096}. The parameter count goes to stderr.\n"
      "  trainsim import-model config.json --seq-len 8192 > scenarios/models/my-model.json");
  app.add_option("CONFIG.json", o.path, "the Hugging Face config.json")->required();
  app.add_option("--seq-len,--seq", o.seq,
                 "the training sequence length (needed: a config.json's max_position_embeddings is the\n"
                 "longest context the model supports, not what it trains with)")
      ->type_name("N")
      ->check(CLI::Range(1LL, 1LL << 24));
  app.add_option("--name", o.name, "model name (default: the config's _name_or_path, else its model_type)")
      ->type_name("NAME");
}

int run(ImportModelOptions& o) {
  const std::string& path = o.path;
  const std::string& name = o.name;
  const long long seq = o.seq;
  nlohmann::json model = hf_config_to_model_json(read_json_file(path, "config.json"), path, seq);
  if (!name.empty()) model["name"] = name;
  // Check it the way a scenario would load it, and report the size.
  nlohmann::json scenario = {{"schema_version", 1},
                             {"model", model},
                             {"cluster", "dgx-a100-superpod"},
                             {"plan", {{"global_batch", 1}}}};
  LoadOptions options;
  options.preset_dirs = default_preset_dirs();
  Scenario s;
  try {
    s = parse_scenario(resolve_scenario_json(scenario, options));
  } catch (const ScenarioError& e) {
    // The error names trainsim's field (model.moe.groups), not the config's key (n_group): say
    // which file it came from and that the field is of its conversion.
    throw ScenarioError(path, "its model as converted to trainsim's fields: " + std::string(e.what()));
  }
  const ParamCount p = count_params(s.model);
  std::cout << model.dump(2) << "\n";
  std::fprintf(stderr, "%s: %.2fB parameters (%.2fB active per token)\n",
               model["name"].get<std::string>().c_str(), p.total / 1e9, p.active_per_token / 1e9);
  return kExitOk;
}

const CommandRegistrar kImportModel("import-model", "Hugging Face config.json -> model preset", declare, run);

}  // namespace
}  // namespace trainsim::cli
