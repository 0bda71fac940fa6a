// A Megatron-LM pretrain_gpt.py command line -> a complete scenario (schema_version 1). Flag
// names and defaults follow megatron/training/arguments.py (core_r0.x): --tensor-model-parallel-
// size, --num-layers-per-virtual-pipeline-stage, --recompute-granularity, --swiglu's default FFN
// width int(4h*2/3/64)*64, vocabulary padding to a multiple of
// --make-vocab-size-divisible-by x TP, fp32 unless --bf16/--fp16. Flags that do not change time or
// memory are recognised and listed as ignored; flags it does not know are listed as unknown;
// nothing is dropped silently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim {

// Splits a shell-like command line: whitespace, '...' and "..." quoting, backslash escapes and
// backslash-newline continuations. Throws ScenarioError on an unterminated quote.
std::vector<std::string> split_command_line(const std::string& text);

struct MegatronImportOptions {
  nlohmann::json cluster = "dgx-a100-superpod";  // preset name or a cluster object
  int gpus_per_node = 8;                      // of that cluster (the CLI resolves it)
  int64_t gpus = 0;  // world size; 0 = from torchrun --nnodes x --nproc_per_node (else an error)
};

struct MegatronImport {
  nlohmann::json scenario;              // the complete scenario; "notes" lists what was assumed
  std::vector<std::string> unknown;     // flags this importer does not know
  std::vector<std::string> ignored;     // known flags without effect on time or memory
  std::vector<std::string> assumptions; // defaults filled in, approximations made
};

// `args` are the tokens of the command line (a leading launcher "torchrun ... pretrain_gpt.py"
// is skipped; its --nnodes/--nproc_per_node give the world size). Throws ScenarioError naming the
// flag on a missing or malformed value, and ScenarioError("--gpus", ...) when neither the options
// nor a launcher give the world size.
MegatronImport import_megatron_args(const std::vector<std::string>& args,
                                    const MegatronImportOptions& options);

}  // namespace trainsim
