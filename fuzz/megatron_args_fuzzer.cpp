// libFuzzer target: Megatron-LM command lines (pretrain_gpt.py arguments, with or without a
// torchrun launcher), imported into a scenario that must then load.
#include "fuzz/fuzz_common.hpp"
#include "models/estimate/estimate.hpp"
#include "models/interop/megatron_args.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_answer([&] {
    MegatronImportOptions o;
    if (size % 2) o.gpus = 64;
    const MegatronImport m = import_megatron_args(split_command_line(text), o);
    estimate(parse_scenario(resolve_scenario_json(m.scenario, fuzz::load_options())));
  });
  return 0;
}
