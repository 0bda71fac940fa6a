#include "models/interop/megatron_args.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>

#include "models/core/scenario_error.hpp"
#include "models/core/specs.hpp"
#include "models/scenario/json_reader.hpp"
#include "models/scenario/limits.hpp"

namespace trainsim {
namespace {

using nlohmann::json;

// Flags of megatron/training/arguments.py that change the prediction, by whether they take a
// value. The importer reads each of these below.
const std::set<std::string> kUsedValued = {
    "tensor-model-parallel-size", "pipeline-model-parallel-size",
    "num-layers-per-virtual-pipeline-stage", "num-virtual-stages-per-pipeline-rank",
    "context-parallel-size", "expert-model-parallel-size", "expert-tensor-parallel-size",
    "recompute-granularity", "recompute-method", "recompute-num-layers", "micro-batch-size",
    "global-batch-size", "seq-length", "num-layers", "hidden-size", "num-attention-heads",
    "num-query-groups", "ffn-hidden-size", "num-experts", "moe-router-topk",
    "moe-ffn-hidden-size", "moe-shared-expert-intermediate-size", "moe-layer-freq",
    "padded-vocab-size", "vocab-size", "make-vocab-size-divisible-by", "tokenizer-type",
    "tokenizer-model", "fp8-format", "max-position-embeddings", "kv-channels",
    "decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers", "train-iters",
    "cpu-offloading-num-layers", "recompute-modules", "moe-token-dispatcher-type",
    "moe-flex-dispatcher-backend", "moe-router-num-groups", "moe-router-group-topk"};
const std::set<std::string> kUsedBoolean = {
    "sequence-parallel", "use-distributed-optimizer", "swiglu",
    "untie-embeddings-and-output-weights", "group-query-attention", "bf16", "fp16",
    "overlap-grad-reduce", "overlap-param-gather", "tp-comm-overlap", "recompute-activations",
    "use-flash-attn", "optimizer-cpu-offload", "cpu-offloading", "no-overlap-p2p-communication",
    "moe-enable-deepep"};
// Known flags with no effect on step time or memory in this model (optimiser hyper-parameters,
// data, logging, checkpointing, fusions, initialisation): listed as ignored, never as unknown.
const std::set<std::string> kIgnoredValued = {
    "lr", "min-lr", "lr-decay-style", "lr-warmup-fraction", "lr-warmup-iters", "lr-decay-iters",
    "lr-warmup-samples", "lr-decay-samples", "train-samples", "weight-decay", "clip-grad",
    "adam-beta1", "adam-beta2", "adam-eps", "init-method-std", "hidden-dropout",
    "attention-dropout", "data-path", "vocab-file", "merge-file", "save", "load",
    "save-interval", "eval-interval", "eval-iters", "log-interval", "split", "seed",
    "tensorboard-dir", "wandb-project", "wandb-exp-name", "wandb-save-dir", "exp-name",
    "distributed-backend", "distributed-timeout-minutes", "position-embedding-type",
    "normalization", "norm-epsilon", "rotary-base", "rotary-percent", "data-cache-path",
    "num-workers", "moe-router-load-balancing-type", "moe-aux-loss-coeff",
    "moe-router-score-function", "moe-router-topk-scaling-factor",
    "moe-z-loss-coeff", "moe-expert-capacity-factor", "transformer-impl", "ckpt-format",
    "loss-scale", "initial-loss-scale", "min-loss-scale", "loss-scale-window",
    "fp8-amax-history-len", "fp8-amax-compute-algo", "fp8-margin", "fp8-interval",
    "tensorboard-log-interval", "log-dir", "timing-log-level", "optimizer",
    "rampup-batch-size", "attention-backend", "tp-comm-overlap-cfg", "data-args-path",
    "per-split-data-args-path", "train-data-path", "valid-data-path", "test-data-path",
    "rotary-seq-len-interpolation-factor", "use-rope-scaling", "num-dataset-builder-threads",
    "ckpt-assume-constant-structure", "dist-ckpt-strictness"};
const std::set<std::string> kIgnoredBoolean = {
    "disable-bias-linear", "no-masked-softmax-fusion", "no-bias-gelu-fusion",
    "no-bias-dropout-fusion", "use-mcore-models", "no-position-embedding",
    "use-rotary-position-embeddings", "log-throughput", "log-timers-to-tensorboard",
    "no-gradient-accumulation-fusion", "attention-softmax-in-fp32",
    "accumulate-allreduce-grads-in-fp32", "mock-data", "no-load-optim", "no-load-rng",
    "finetune", "use-checkpoint-args", "exit-on-missing-checkpoint", "moe-grouped-gemm",
    "bias-swiglu-fusion", "apply-query-key-layer-scaling", "use-legacy-models",
    "log-params-norm", "log-num-zeros-in-grad", "log-validation-ppl-to-tensorboard",
    "log-memory-to-tensorboard", "log-world-size-to-tensorboard", "use-dist-ckpt",
    "async-save", "no-async-tensor-model-parallel-allreduce", "qk-layernorm",
    "no-rope-fusion", "apply-layernorm-1p", "fp8-wgrad", "moe-router-pre-softmax",
    "manual-gc", "no-create-attention-mask-in-dataloader", "use-torch-fsdp2",
    "overlap-p2p-communication", "delay-param-gather", "align-grad-reduce",
    "align-param-gather", "check-for-nan-in-loss-and-grad", "sequence-parallel-disabled",
    "no-save-optim", "no-save-rng", "deterministic-mode", "calculate-per-token-loss"};

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// Megatron spells flags with dashes; argparse also accepts the underscore spelling of older
// scripts (--tensor_model_parallel_size is not accepted by argparse, but users paste both).
std::string canonical(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

struct Flags {
  std::map<std::string, std::string> values;  // flag (no dashes) -> value ("" for booleans)
  std::set<std::string> present;

  bool has(const std::string& f) const { return present.count(f) > 0; }
  const std::string* value(const std::string& f) const {
    auto it = values.find(f);
    return it == values.end() ? nullptr : &it->second;
  }
  // Each value is checked against the range the loader accepts for the field it becomes
  // (limits.hpp), so the error names the flag, not the scenario field.
  int64_t integer(const std::string& f, int64_t fallback, int64_t min = 1,
                  int64_t max = kMaxValue) const {
    const std::string* v = value(f);
    if (!v) return fallback;
    return parse(f, *v, min, max);
  }
  static int64_t parse(const std::string& f, const std::string& v, int64_t min,
                       int64_t max = kMaxValue) {
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || (errno != 0 && errno != ERANGE))
      throw ScenarioError("--" + f, "expected an integer, got \"" + safe_excerpt(v) + "\"" +
                                        (v.find('$') != std::string::npos
                                             ? " (a shell variable: expand it first)"
                                             : ""));
    if (errno == ERANGE || x > max)
      throw ScenarioError("--" + f, "must be at most " + std::to_string(max) + ", got " + safe_excerpt(v));
    if (x < min)
      throw ScenarioError("--" + f, "must be >= " + std::to_string(min) + ", got " + safe_excerpt(v));
    return x;
  }
  int64_t required(const std::string& f, int64_t max = kMaxValue) const {
    if (!value(f)) throw ScenarioError("--" + f, "missing (required to describe the model)");
    return integer(f, 0, 1, max);
  }
  static constexpr int64_t kMaxValue = int64_t{1} << 40;
};

// a x b x ..., or a ScenarioError naming `what` when the product passes `cap`.
int64_t product_or_fail(std::initializer_list<int64_t> factors, int64_t cap, const std::string& flag,
                        const std::string& what) {
  int64_t p = 1;
  for (int64_t f : factors) {
    p = limits::checked_product(p, f, cap);
    if (p < 0) throw ScenarioError(flag, what + " exceeds " + std::to_string(cap));
  }
  return p;
}

std::string join_args(const std::vector<std::string>& a) {
  std::string s;
  for (const auto& x : a) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

std::vector<std::string> split_command_line(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_token = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else cur += c;
      continue;
    }
    if (quote == '"') {
      if (c == '"') quote = 0;
      else if (c == '\\' && i + 1 < text.size() &&
               (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$'))
        cur += text[++i];
      else cur += c;
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') {  // line continuation
        ++i;
        continue;
      }
      cur += text[++i];
      in_token = true;
      continue;
    }
    if (c == '#' && !in_token) {  // a shell comment runs to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_token = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_token) out.push_back(cur);
      cur.clear();
      in_token = false;
      continue;
    }
    cur += c;
    in_token = true;
  }
  if (quote) throw ScenarioError("command line", std::string("unterminated ") + quote + " quote");
  if (in_token) out.push_back(cur);
  return out;
}

MegatronImport import_megatron_args(const std::vector<std::string>& all_args,
                                    const MegatronImportOptions& options) {
  MegatronImport out;
  // A launcher before the script (torchrun --nproc_per_node 8 --nnodes 16 pretrain_gpt.py ...).
  std::size_t first = 0;
  int64_t launcher_gpus = 0;
  for (std::size_t i = 0; i < all_args.size(); ++i) {
    if (ends_with(all_args[i], ".py")) {
      first = i + 1;
      break;
    }
  }
  if (first > 0) {
    int64_t nnodes = 1, nproc = 0;
    for (std::size_t i = 0; i + 1 < first; ++i) {
      std::string a = all_args[i], v;
      const auto eq = a.find('=');
      if (eq != std::string::npos) v = a.substr(eq + 1), a = a.substr(0, eq);
      else if (i + 2 < first) v = all_args[i + 1];
      a = canonical(a);
      if (a == "--nnodes") nnodes = Flags::parse("nnodes", v.substr(0, v.find(':')), 1, limits::kMaxGpus);
      if (a == "--nproc-per-node") nproc = Flags::parse("nproc_per_node", v, 1, limits::kMaxGpusPerNode);
    }
    if (nproc > 0)
      launcher_gpus = product_or_fail({nnodes, nproc}, limits::kMaxGpus, "--nnodes",
                                      "torchrun --nnodes x --nproc_per_node");
  }

  Flags flags;
  bool note_rampup = false;
  // Unknown tokens are listed (stderr and the scenario's notes), each cut to a short printable
  // excerpt and at most 100 of them: the "command line" may be any file.
  std::size_t unknown_more = 0;
  auto add_unknown = [&](const std::string& t) {
    if (out.unknown.size() < 100) out.unknown.push_back(safe_excerpt(t, 80));
    else ++unknown_more;
  };
  for (std::size_t i = first; i < all_args.size(); ++i) {
    const std::string& tok = all_args[i];
    if (!starts_with(tok, "--")) {
      add_unknown(tok + " (not a flag)");
      continue;
    }
    std::string name = tok.substr(2), value;
    bool has_inline = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline = true;
    }
    name = canonical(name);
    if (name.empty()) throw ScenarioError(safe_excerpt(tok), "empty flag name");
    const bool valued = kUsedValued.count(name) || kIgnoredValued.count(name);
    // argparse nargs=3: --rampup-batch-size START INCREMENT SAMPLES.
    if (name == "rampup-batch-size" && !has_inline) {
      for (int k = 0; k < 3; ++k)
        if (i + 1 >= all_args.size() || starts_with(all_args[i + 1], "--"))
          throw ScenarioError("--" + name, "expects 3 values: start increment samples");
        else ++i;
      out.ignored.push_back("--" + name);
      note_rampup = true;
      continue;
    }
    // argparse nargs='*': --recompute-modules core_attn moe_act ... (space-separated here).
    if (name == "recompute-modules" && !has_inline) {
      while (i + 1 < all_args.size() && !starts_with(all_args[i + 1], "--"))
        value += (value.empty() ? "" : " ") + all_args[++i];
      flags.present.insert(name);
      flags.values[name] = value;
      continue;
    }
    const bool boolean = kUsedBoolean.count(name) || kIgnoredBoolean.count(name);
    if (valued) {
      if (!has_inline) {
        if (i + 1 >= all_args.size() || starts_with(all_args[i + 1], "--"))
          throw ScenarioError("--" + name, "expects a value");
        value = all_args[++i];
      }
    } else if (boolean) {
      if (has_inline) throw ScenarioError("--" + name, "takes no value, got \"" + safe_excerpt(value) + "\"");
    } else {
      // Unknown: take the next token as its value when it is not a flag (argparse would).
      std::string shown = "--" + name;
      if (has_inline) shown += "=" + value;
      else if (i + 1 < all_args.size() && !starts_with(all_args[i + 1], "--"))
        shown += " " + all_args[++i];
      add_unknown(shown);
      continue;
    }
    if (kIgnoredValued.count(name) || kIgnoredBoolean.count(name))
      out.ignored.push_back("--" + name);
    if (flags.present.count(name) && flags.values[name] != value)
      out.assumptions.push_back("--" + name + " given twice; the last value (" + safe_excerpt(value) +
                                ") wins, as in argparse");
    flags.present.insert(name);
    flags.values[name] = value;
  }
  if (unknown_more > 0) out.unknown.push_back("... and " + std::to_string(unknown_more) + " more");
  auto note = [&](const std::string& s) { out.assumptions.push_back(s); };
  if (note_rampup) note("--rampup-batch-size: the full global batch is predicted (after ramp-up)");

  // Model (megatron/training/arguments.py defaults).
  json model = json::object();
  model["name"] = "megatron-import";
  const int64_t layers = flags.required("num-layers", limits::kMaxLayers);
  const int64_t hidden = flags.required("hidden-size", limits::kMaxHidden);
  const int64_t heads = flags.required("num-attention-heads", limits::kMaxHeads);
  model["layers"] = layers;
  model["hidden"] = hidden;
  model["heads"] = heads;
  if (flags.has("group-query-attention")) {
    if (!flags.value("num-query-groups"))
      throw ScenarioError("--num-query-groups", "missing; --group-query-attention needs it");
    model["kv_heads"] = flags.integer("num-query-groups", heads, 1, limits::kMaxHeads);
  } else {
    model["kv_heads"] = heads;
    if (flags.value("num-query-groups"))
      note("--num-query-groups without --group-query-attention has no effect in Megatron: MHA");
  }
  const bool swiglu = flags.has("swiglu");
  model["ffn_act"] = swiglu ? "swiglu" : "gelu";
  int64_t ffn = swiglu ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;
  if (!flags.value("ffn-hidden-size"))
    note("--ffn-hidden-size not given: Megatron's default " + std::to_string(ffn) +
         (swiglu ? " (int(4h*2/3/64)*64 with --swiglu)" : " (4h)"));
  ffn = flags.integer("ffn-hidden-size", ffn, 1, limits::kMaxFfnHidden);
  model["ffn_hidden"] = ffn;
  if (!flags.value("seq-length")) throw ScenarioError("--seq-length", "missing (required)");
  model["seq_len"] = flags.integer("seq-length", 0, 1, limits::kMaxSeqLen);
  model["tied_embeddings"] = !flags.has("untie-embeddings-and-output-weights");

  const int64_t tp = flags.integer("tensor-model-parallel-size", 1, 1, limits::kMaxGpus);
  const int64_t pp = flags.integer("pipeline-model-parallel-size", 1, 1, limits::kMaxGpus);
  const int64_t cp = flags.integer("context-parallel-size", 1, 1, limits::kMaxGpus);
  const int64_t ep = flags.integer("expert-model-parallel-size", 1, 1, limits::kMaxGpus);

  // Vocabulary: Megatron pads the tokenizer's size to a multiple of
  // --make-vocab-size-divisible-by (128) x TP (_vocab_size_with_padding).
  int64_t vocab = 0;
  if (flags.value("padded-vocab-size")) {
    vocab = flags.integer("padded-vocab-size", 0, 1, limits::kMaxVocab);
  } else {
    int64_t raw = 0;
    if (flags.value("vocab-size")) {
      raw = flags.integer("vocab-size", 0, 1, limits::kMaxVocab);
    } else {
      const std::string tok = flags.value("tokenizer-type") ? *flags.value("tokenizer-type") : "";
      const std::string tok_model =
          flags.value("tokenizer-model") ? *flags.value("tokenizer-model") : "";
      auto contains = [&](const char* s) { return tok_model.find(s) != std::string::npos; };
      // Megatron's GPT-2 BPE (vocab 50257) is what --vocab-file + --merge-file load.
      if (tok == "GPT2BPETokenizer" || (tok.empty() && flags.value("merge-file"))) raw = 50257;
      else if (tok == "Llama2Tokenizer") raw = 32000;
      else if (contains("Llama-3") || contains("llama3") || contains("Llama3")) raw = 128256;
      else if (contains("Llama-2") || contains("llama2")) raw = 32000;
      else if (contains("Mixtral") || contains("Mistral")) raw = 32000;
      else
        throw ScenarioError("--vocab-size",
                            "missing: the vocabulary of --tokenizer-type \"" + safe_excerpt(tok) +
                                "\" is not known here; pass --vocab-size N or --padded-vocab-size N");
      note("vocabulary " + std::to_string(raw) + " from the tokenizer (" +
           safe_excerpt(tok.empty() ? tok_model : tok, 80) + ")");
    }
    const int64_t divisible = product_or_fail(
        {flags.integer("make-vocab-size-divisible-by", 128, 1, limits::kMaxVocab), tp}, limits::kMaxVocab,
        "--make-vocab-size-divisible-by", "--make-vocab-size-divisible-by x --tensor-model-parallel-size");
    vocab = (raw + divisible - 1) / divisible * divisible;
    if (vocab != raw)
      note("vocabulary padded " + std::to_string(raw) + " -> " + std::to_string(vocab) +
           " (multiple of make-vocab-size-divisible-by x TP, as Megatron pads it)");
  }
  model["vocab"] = vocab;

  if (flags.value("num-experts")) {
    const int64_t experts = flags.integer("num-experts", 0, 1, limits::kMaxExperts);
    json moe = {{"experts", experts}, {"top_k", flags.integer("moe-router-topk", 2, 1, limits::kMaxExperts)}};
    const int64_t width = flags.integer("moe-ffn-hidden-size", ffn, 1, limits::kMaxFfnHidden);
    moe["expert_ffn_hidden"] = width;
    if (const std::string* s = flags.value("moe-shared-expert-intermediate-size")) {
      const int64_t shared = Flags::parse("moe-shared-expert-intermediate-size", *s, 1, limits::kMaxFfnHidden);
      const int64_t count = std::max<int64_t>(1, (shared + width / 2) / width);
      moe["shared_experts"] = count;
      if (count * width != shared)
        note("shared expert width " + std::to_string(shared) + " rounded to " +
             std::to_string(count) + " x " + std::to_string(width));
    }
    if (const std::string* f = flags.value("moe-layer-freq")) {
      // "([0]*3+[1]*58)": the first 3 layers dense (DeepSeek-V3's recipe); an integer N: every
      // N-th layer MoE, which the model does not express.
      const std::string v = *f;
      if (starts_with(v, "([0]*")) {
        moe["dense_layers"] = Flags::parse("moe-layer-freq", v.substr(5, v.find('+') - 5), 0, limits::kMaxLayers);
      } else if (v != "1") {
        note("--moe-layer-freq " + safe_excerpt(v) + " approximated as every layer MoE");
      }
    }
    // Group-limited routing: --moe-router-num-groups groups, --moe-router-group-topk of them a token.
    if (const std::string* g = flags.value("moe-router-num-groups")) {
      moe["groups"] = Flags::parse("moe-router-num-groups", *g, 1, limits::kMaxExperts);
      if (const std::string* k = flags.value("moe-router-group-topk"))
        moe["groups_per_token"] = Flags::parse("moe-router-group-topk", *k, 1, limits::kMaxExperts);
    }
    model["moe"] = moe;
  } else if (ep > 1) {
    throw ScenarioError("--expert-model-parallel-size", "> 1 needs --num-experts");
  }
  if (flags.value("kv-channels") && flags.integer("kv-channels", 0, 1, limits::kMaxHidden) * heads != hidden)
    note("--kv-channels x heads != hidden: attention width approximated as hidden");
  if (flags.value("expert-tensor-parallel-size"))
    note("--expert-tensor-parallel-size: experts costed with the dense TP degree");

  // Plan.
  json plan = json::object();
  plan["tp"] = tp;
  plan["pp"] = pp;
  plan["cp"] = cp;
  plan["ep"] = ep;
  // --moe-token-dispatcher-type flex with DeepEP (--moe-enable-deepep, or the newer
  // --moe-flex-dispatcher-backend deepep) sends a token once per node; alltoall, and allgather
  // (costed as alltoall), send every copy.
  if (const std::string* d = flags.value("moe-token-dispatcher-type")) {
    const std::string* backend = flags.value("moe-flex-dispatcher-backend");
    const bool deepep = flags.has("moe-enable-deepep") || (backend && *backend == "deepep");
    if (*d == "flex" && deepep) plan["moe_dispatcher"] = "deepep";
    else if (*d == "flex") note("--moe-token-dispatcher-type flex without DeepEP costed as alltoall");
    else if (*d == "allgather") note("--moe-token-dispatcher-type allgather costed as alltoall");
    else if (*d != "alltoall")
      throw ScenarioError("--moe-token-dispatcher-type", "unknown dispatcher \"" + safe_excerpt(*d) +
                                                            "\"; expected allgather, alltoall or flex");
  }
  int64_t gpus = options.gpus > 0 ? options.gpus : launcher_gpus;
  if (options.gpus > 0 && launcher_gpus > 0 && options.gpus != launcher_gpus)
    note("--gpus " + std::to_string(options.gpus) + " is used; the launcher line (torchrun --nnodes x "
         "--nproc_per_node) starts " + std::to_string(launcher_gpus));
  // The world size is not a Megatron flag: it comes from the launcher or the caller. Without it
  // the data-parallel degree (and the cluster) would be a guess; the other flags are still
  // checked first so one run reports their errors, then this (at the end).
  const int64_t inner = product_or_fail({tp, pp, cp}, limits::kMaxGpus, "--tensor-model-parallel-size",
                                        "--tensor-model-parallel-size x --pipeline-model-parallel-size x "
                                        "--context-parallel-size");
  const bool world_size_missing = gpus <= 0;
  if (world_size_missing) gpus = inner;
  int64_t dp = gpus / inner;
  if (gpus % inner != 0 || dp < 1)
    throw ScenarioError("--gpus", std::to_string(gpus) + " GPUs are not a multiple of TP x PP x CP = " +
                                      std::to_string(inner));
  plan["dp"] = dp;
  int64_t vpp = 1;
  if (const std::string* v = flags.value("num-layers-per-virtual-pipeline-stage")) {
    const int64_t per = Flags::parse("num-layers-per-virtual-pipeline-stage", *v, 1, limits::kMaxLayers);
    if (layers % (pp * per) != 0)
      throw ScenarioError("--num-layers-per-virtual-pipeline-stage",
                          *v + " x PP (" + std::to_string(pp) + ") does not divide --num-layers (" +
                              std::to_string(layers) + ")");
    vpp = layers / pp / per;
  }
  vpp = flags.integer("num-virtual-stages-per-pipeline-rank", vpp, 1, limits::kMaxVirtualStages);
  plan["vpp"] = vpp;
  plan["schedule"] = vpp > 1 ? "interleaved" : "1f1b";
  // Uneven first and last stages: the rest of the layers split evenly over the stages between
  // (Megatron-Core asserts that they divide).
  const bool first_given = flags.value("decoder-first-pipeline-num-layers") != nullptr;
  const bool last_given = flags.value("decoder-last-pipeline-num-layers") != nullptr;
  if ((first_given || last_given) && vpp > 1) {
    note("uneven first/last pipeline stages with virtual stages are not imported; set plan.layers_per_stage");
  } else if ((first_given || last_given) && pp > 1) {
    const int64_t first = flags.integer("decoder-first-pipeline-num-layers", 0, 1, layers);
    const int64_t last = flags.integer("decoder-last-pipeline-num-layers", 0, 1, layers);
    const int64_t between = pp - (first_given ? 1 : 0) - (last_given ? 1 : 0);
    const int64_t rest = layers - first - last;
    const char* flag = first_given ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers";
    if (rest < between || (between == 0 ? rest != 0 : rest % between != 0))
      throw ScenarioError(flag, "the other " + std::to_string(rest) + " of --num-layers (" + std::to_string(layers) +
                                    ") do not split evenly over the other " + std::to_string(between) +
                                    " pipeline stages");
    std::vector<int64_t> split(static_cast<std::size_t>(pp), between > 0 ? rest / between : 0);
    if (first_given) split.front() = first;
    if (last_given) split.back() = last;
    plan["layers_per_stage"] = split;
  } else if (first_given || last_given) {
    note("--decoder-first/last-pipeline-num-layers with one pipeline stage have no effect (every layer is on it)");
  }
  plan["sp"] = flags.has("sequence-parallel") && tp > 1;
  if (flags.has("sequence-parallel") && tp == 1)
    note("--sequence-parallel with TP 1 has no effect (Megatron turns it off)");
  const int64_t micro = flags.integer("micro-batch-size", 1, 1, limits::kMaxMicroBatch);
  plan["micro_batch"] = micro;
  if (!flags.value("global-batch-size"))
    note("--global-batch-size not given: Megatron's default micro-batch x DP = " +
         std::to_string(micro * dp));
  plan["global_batch"] = flags.integer("global-batch-size", micro * dp, 1, limits::kMaxGlobalBatch);
  plan["zero_stage"] = flags.has("use-distributed-optimizer") ? 1 : 0;
  std::string recompute = "none";
  if (flags.has("recompute-activations")) recompute = "selective";
  if (const std::string* g = flags.value("recompute-granularity")) {
    if (*g != "full" && *g != "selective")
      throw ScenarioError("--recompute-granularity", "expected full or selective, got \"" + safe_excerpt(*g) + "\"");
    recompute = *g;
  }
  if (flags.value("recompute-method") || flags.value("recompute-num-layers")) {
    const std::string method = flags.value("recompute-method") ? *flags.value("recompute-method") : "?";
    const std::string n = flags.value("recompute-num-layers") ? *flags.value("recompute-num-layers") : "?";
    if (recompute != "full")
      note("--recompute-method/--recompute-num-layers only apply with --recompute-granularity full");
    else if (!(method == "uniform" && n == "1"))
      note("--recompute-method " + safe_excerpt(method) + " --recompute-num-layers " + safe_excerpt(n) +
           ": costed as full recompute of every layer (partial recompute is not modelled)");
  }
  plan["recompute"] = recompute;
  if (const std::string* modules = flags.value("recompute-modules")) {
    // Megatron-Core's names; the modules trainsim has (specs.hpp, RecomputeModules) pass through.
    std::string rest = *modules;
    std::replace(rest.begin(), rest.end(), ',', ' ');
    json listed = json::array();
    std::size_t at = 0;
    while (at < rest.size()) {
      const std::size_t start = rest.find_first_not_of(' ', at);
      if (start == std::string::npos) break;
      const std::size_t end = std::min(rest.find(' ', start), rest.size());
      const std::string m = rest.substr(start, end - start);
      at = end;
      const auto& known = recompute_module_names();
      if (m == "moe" || m == "shared_experts")
        note("--recompute-modules " + m + ": recomputing the whole " + (m == "moe" ? "MoE layer" : "shared experts") +
             " is not modelled; left out");
      else if (m == "mla_up_proj")
        note("--recompute-modules mla_up_proj: multi-head latent attention is not imported from Megatron flags; left out");
      else if (m == "moe_act" && !flags.value("num-experts"))
        note("--recompute-modules moe_act without --num-experts has no effect; left out");
      else if (std::find(known.begin(), known.end(), m) == known.end())
        throw ScenarioError("--recompute-modules", "unknown module \"" + safe_excerpt(m) +
                                                       "\"; Megatron-Core's are core_attn, moe_act, layernorm, "
                                                       "mla_up_proj, mlp, moe, shared_experts");
      else if (std::find(listed.begin(), listed.end(), m) == listed.end())
        listed.push_back(m);
    }
    if (recompute != "selective")
      note("--recompute-modules only applies with --recompute-granularity selective");
    else if (!listed.empty())
      plan["recompute_modules"] = listed;
  }
  std::string precision = "fp32";
  if (flags.has("fp16")) precision = "fp16";
  if (flags.has("bf16")) precision = "bf16";
  if (flags.has("fp16") && flags.has("bf16"))
    throw ScenarioError("--bf16", "--bf16 and --fp16 are mutually exclusive");
  if (const std::string* f = flags.value("fp8-format")) {
    if (*f != "e4m3" && *f != "hybrid")
      throw ScenarioError("--fp8-format", "expected e4m3 or hybrid, got \"" + safe_excerpt(*f) + "\"");
    precision = "fp8";
  }
  if (precision == "fp32") note("neither --bf16 nor --fp16: fp32 training, as in Megatron");
  plan["precision"] = precision;
  plan["overlap"] = {{"dp", flags.has("overlap-grad-reduce")},
                     {"tp", flags.has("tp-comm-overlap")},
                     {"pp", !flags.has("no-overlap-p2p-communication")}};
  if (!flags.has("overlap-grad-reduce"))
    note("no --overlap-grad-reduce: the gradient reduction is not overlapped (Megatron default)");
  if (flags.has("overlap-param-gather"))
    note("--overlap-param-gather: the distributed optimizer's parameter all-gather overlaps the "
         "next forward (not costed separately)");
  if (flags.has("optimizer-cpu-offload")) plan["offload"] = {{"optimizer", true}};
  if (flags.has("cpu-offloading")) {
    plan["offload"]["activations"] = true;
    note("--cpu-offloading: activation offload of every layer (num-layers not modelled)");
  }
  plan["flash_attention"] = true;
  if (flags.value("train-iters"))
    note("--train-iters " + safe_excerpt(*flags.value("train-iters")) + " is not part of a one-step prediction");

  // Cluster: the named preset with as many nodes as the world size needs.
  json cluster;
  if (options.cluster.is_string()) cluster = {{"base", options.cluster}};
  else if (options.cluster.is_object()) cluster = options.cluster;
  else throw ScenarioError("--cluster", "expected a preset name or a cluster object");
  const int64_t per_node = std::max(1, options.gpus_per_node);
  if (gpus < per_node) {
    cluster["nodes"] = 1;
    cluster["gpus_per_node"] = gpus;
  } else {
    if (gpus % per_node != 0)
      note(std::to_string(gpus) + " GPUs do not fill whole nodes of " + std::to_string(per_node) +
           "; rounded up");
    cluster["nodes"] = (gpus + per_node - 1) / per_node;
  }

  if (world_size_missing)
    throw ScenarioError("--gpus", "missing: the command line has no world size (no torchrun --nnodes/--nproc_per_node "
                                  "launcher before pretrain_gpt.py); give the GPU count, e.g. --gpus " +
                                      std::to_string(tp * pp * cp * 8) + " for data-parallel degree 8 at TP " +
                                      std::to_string(tp) + " x PP " + std::to_string(pp) + " x CP " + std::to_string(cp));

  json& s = out.scenario;
  s["schema_version"] = 1;
  s["name"] = "megatron-import";
  s["description"] = "Imported from a Megatron-LM command line by trainsim import-megatron";
  s["model"] = model;
  s["cluster"] = cluster;
  s["plan"] = plan;
  s["training"] = {{"steps", 1}};
  json notes = json::array();
  for (const auto& a : out.assumptions) notes.push_back(a);
  if (!out.unknown.empty()) notes.push_back("unknown flags (not imported): " + join_args(out.unknown));
  if (!out.ignored.empty())
    notes.push_back("ignored flags (no effect on time or memory): " + join_args(out.ignored));
  if (!notes.empty()) s["notes"] = notes;
  return out;
}

}  // namespace trainsim
