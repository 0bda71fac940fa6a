#include "models/workload/pass_pricing.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "models/cost/compute/power_model.hpp"
#include "models/workload/fb_overlap.hpp"
#include "models/workload/memo.hpp"
#include "models/workload/program_reduce.hpp"

namespace trainsim {

PassProgram pass_program(const LayerContext& ctx, const ChunkLayers& cl, PassKind pass) {
  PassProgram prog;
  const int dense = cl.layers - cl.moe_layers;
  const bool fwd = pass == PassKind::kForward;
  auto layers = [&](bool moe, int n) {
    if (n > 0) prog.blocks.push_back(layer_block(ctx, moe, pass, n));
  };
  if (fwd) {
    if (cl.first) prog.blocks.push_back(embedding_block(ctx, pass));
    layers(false, dense);
    layers(true, cl.moe_layers);
    if (cl.last) prog.blocks.push_back(head_block(ctx, pass));
  } else {
    if (cl.last) prog.blocks.push_back(head_block(ctx, pass));
    layers(true, cl.moe_layers);
    layers(false, dense);
    if (cl.first) prog.blocks.push_back(embedding_block(ctx, pass));
  }
  // Blocks with no ops (the embedding's input-gradient pass) are dropped.
  prog.blocks.erase(std::remove_if(prog.blocks.begin(), prog.blocks.end(),
                                   [](const OpBlock& b) { return b.compute.empty() && b.comm.empty(); }),
                    prog.blocks.end());
  return prog;
}

namespace {

// One block's share of the summary, `repeat` times; blocks are added in the pass's order.
void add_block(PassSummary& s, const OpBlock& b, int repeat) {
  for (const CommOp& c : b.comm) {
    s.traffic[static_cast<int>(c.purpose)] += c.wire_bytes * repeat;
    s.comm_busy_s[static_cast<int>(c.purpose)] += c.time_s * repeat;
  }
  for (std::size_t i = 0; i < b.compute.size(); ++i) {
    if (b.compute[i].pass == Pass::kBackwardWeight) s.wgrad_compute_s += b.compute_s[i] * repeat;
    s.compute_sq_s2 += b.compute_s[i] * b.compute_s[i] * repeat;
  }
}

}  // namespace

PassSummary summarize_pass(const PassProgram& p, double sigma) {
  PassSummary s;
  s.cost = reduce_pass(p, sigma);
  for (const OpBlock& b : p.blocks) add_block(s, b, b.repeat);
  return s;
}

namespace {

// Everything one pass kind depends on besides the memo environment (model, GPU, fabric) and
// the chunk, normalised so that plans differing only in what the pass ignores share it: ZeRO
// 0-2 are one (only ZeRO-3 changes the layer programs), the DP groups matter only to ZeRO-3,
// the micro-batch count only to the unfused gradient accumulation of the passes with weight
// gradients (B+W, W), recompute only to the passes with input gradients (B+W, B).
// The group shapes enter it as an interned id (GroupShapesKey): the key is hashed once per pass
// kind, the shapes once per plan.
struct GroupShapesKey {
  GroupShape shape[kCommGroups];
};
struct ContextKey {
  uint32_t env;
  int32_t tp, cp, ep, etp;
  int32_t micro_batches;
  uint32_t shapes;
  double micro_batch, activation_bytes, param_bytes, grad_bytes, zero3_prefetch_params, power_share, slowest_gpu;
  char algo[24];
  uint8_t protocol, sp, precision, recompute, flash, kernel, overlap_tp, zero3, gaf, pass, vocab_parallel, dispatcher,
      autocast, relayout, early_stop, qwz, qgz, fused_loss, per_parameter;
};

bool has_weight_grads(PassKind pass) { return pass == PassKind::kBackward || pass == PassKind::kBackwardWeight; }
bool has_input_grads(PassKind pass) { return pass == PassKind::kBackward || pass == PassKind::kBackwardInput; }

}  // namespace

void context_ids(const LayerContext& ctx, const PassKind* kinds, int count, uint32_t* ids) {
  if (std::strlen(ctx.algo.name()) >= sizeof(ContextKey::algo)) {
    std::fill(ids, ids + count, 0u);
    return;
  }
  ContextKey k;
  memo::zero(k);
  const bool zero3 = ctx.zero_stage >= 3;
  k.env = ctx.memo_env;
  k.tp = ctx.tp, k.cp = ctx.cp, k.ep = ctx.ep, k.etp = ctx.etp;
  struct Id {
    uint32_t id;
  };
  {
    GroupShapesKey s;
    memo::zero(s);
    for (int g = 0; g < kCommGroups; ++g)
      s.shape[g] = zero3 || !data_parallel_kind(static_cast<CommGroup>(g)) ? ctx.shape[g] : GroupShape{};
    // Ids are never reused: an evicted entry comes back under a new id, never another's.
    thread_local uint32_t next_shapes_id = 1;
    thread_local memo::Table<GroupShapesKey, Id, 512> shapes_table;
    k.shapes = shapes_table.get(s, [&] { return Id{next_shapes_id++}; }).id;
  }
  k.micro_batch = ctx.micro_batch;
  k.activation_bytes = ctx.activation_bytes;
  k.param_bytes = ctx.param_bytes;
  k.grad_bytes = ctx.grad_bytes;
  k.zero3_prefetch_params = zero3 ? ctx.zero3_prefetch_params : 0;
  std::memcpy(k.algo, ctx.algo.name(), std::strlen(ctx.algo.name()));
  k.protocol = static_cast<uint8_t>(ctx.protocol);
  k.sp = ctx.sp;
  k.precision = static_cast<uint8_t>(ctx.precision);
  k.flash = ctx.flash_attention;
  k.kernel = static_cast<uint8_t>(ctx.attention_kernel);
  k.overlap_tp = ctx.overlap_tp;
  k.zero3 = zero3;
  k.qwz = zero3 && ctx.zero_quantized_weights;
  k.qgz = zero3 && ctx.zero_quantized_gradients;
  k.per_parameter = zero3 && ctx.zero3_per_parameter;
  k.vocab_parallel = ctx.vocab_parallel;
  k.dispatcher = static_cast<uint8_t>(ctx.moe_dispatcher);
  k.autocast = ctx.autocast;
  k.relayout = ctx.attention_relayout;
  k.fused_loss = ctx.fused_loss;
  k.power_share = ctx.power_share;
  k.slowest_gpu = ctx.slowest_gpu;
  thread_local uint32_t next_id = 1;
  // 2048 slots of ~180 bytes.
  thread_local memo::Table<ContextKey, Id, 2048> table;
  for (int i = 0; i < count; ++i) {
    const PassKind pass = kinds[i];
    const bool weights = has_weight_grads(pass);
    k.micro_batches = weights && !ctx.grad_accumulation_fusion ? ctx.micro_batches : 0;
    k.gaf = weights && ctx.grad_accumulation_fusion;
    k.recompute = has_input_grads(pass)
                      ? static_cast<uint8_t>(static_cast<uint8_t>(ctx.recompute) | ctx.recompute_modules.bits() << 2)
                      : 0;
    k.early_stop = has_input_grads(pass) && ctx.recompute_early_stop;
    k.pass = static_cast<uint8_t>(pass);
    ids[i] = table.get(k, [&] { return Id{next_id++}; }).id;
  }
}

namespace {

struct PassKey {
  uint32_t context;
  int32_t layers, moe_layers;
  uint8_t first, last, pass, pad;
};

// The blocks of a chunk's pass around its layers: the one before them (forward: the embedding
// of the first chunk; backward: the head of the last) and the one after; nullptr where the
// chunk has none or the block has no ops (pass_program drops those).
const OpBlock* nonempty(const OpBlock& b) { return b.compute.empty() && b.comm.empty() ? nullptr : &b; }
OpBlock lead_block(const LayerContext& ctx, PassKind pass) {
  return pass == PassKind::kForward ? embedding_block(ctx, pass) : head_block(ctx, pass);
}
OpBlock end_block(const LayerContext& ctx, PassKind pass) {
  return pass == PassKind::kForward ? head_block(ctx, pass) : embedding_block(ctx, pass);
}

// The passes of chunks that differ only in their layer count (the stage lengths of a search)
// share the playing of their layers: a RepeatedPass per (pass context, pass, lead block or not,
// which kind of layer comes first), and its lead, layer and end blocks, built once. 2048 entries,
// direct-mapped: an entry taken by another key starts again (the result is the same either way).
constexpr std::size_t kRepeatEntries = 2048;
struct RepeatKey {
  uint32_t context;
  uint8_t pass, lead, moe, pad;
};
struct RepeatEntry {
  bool used = false;
  RepeatKey key{};
  RepeatedPass pass;
  PassSummary lead;  // the lead block's traffic and weight-gradient compute (its cost unused)
  OpBlock end;       // the block after the layers, built on first use
  bool end_built = false;
};

// pass_program's pass, reduced from the entry's states (the same blocks in the same order):
// lead, the first kind of layers (dense forward, MoE backward, when the chunk has them), the
// other kind, the end block.
PassSummary repeated_pass(const LayerContext& ctx, uint32_t context, const ChunkLayers& cl, PassKind pass,
                          double sigma) {
  const bool fwd = pass == PassKind::kForward;
  const int dense = cl.layers - cl.moe_layers;
  const bool lead = fwd ? cl.first : cl.last;
  const bool end = fwd ? cl.last : cl.first;
  // The layers' two runs in pass order: (moe?, count).
  const bool first_moe = fwd ? dense == 0 : cl.moe_layers > 0;
  const int first_n = first_moe ? cl.moe_layers : dense;
  const int second_n = first_moe ? dense : cl.moe_layers;
  if (first_n <= 0) return summarize_pass(pass_program(ctx, cl, pass), sigma);
  thread_local std::unique_ptr<RepeatEntry[]> entries = std::make_unique<RepeatEntry[]>(kRepeatEntries);
  RepeatKey k;
  memo::zero(k);
  k.context = context;
  k.pass = static_cast<uint8_t>(pass);
  k.lead = lead;
  k.moe = first_moe;
  RepeatEntry& e = entries[memo::hash_bytes(&k, sizeof k) & (kRepeatEntries - 1)];
  if (!e.used || std::memcmp(&e.key, &k, sizeof k) != 0) {
    const OpBlock lb = lead ? lead_block(ctx, pass) : OpBlock{};
    const OpBlock* l = lead ? nonempty(lb) : nullptr;
    e.pass.start(l, layer_block(ctx, first_moe, pass, 1), sigma);
    e.lead = PassSummary{};
    if (l) add_block(e.lead, *l, 1);
    memo::copy_bytes(e.key, k);
    e.used = true;
    e.end_built = false;
  }
  if (end && !e.end_built) {
    e.end = end_block(ctx, pass);
    e.end_built = true;
  }
  OpBlock second;
  const OpBlock* tail[2];
  std::size_t tails = 0;
  if (second_n > 0) {
    second = layer_block(ctx, !first_moe, pass, second_n);
    tail[tails++] = &second;
  }
  if (end && nonempty(e.end)) tail[tails++] = &e.end;
  // The summary's sums in pass order, from the lead's (added to zeros first, as summarize_pass does).
  PassSummary s = e.lead;
  s.cost = e.pass.reduce(first_n, tail, tails);
  add_block(s, e.pass.block(), first_n);
  for (std::size_t i = 0; i < tails; ++i) add_block(s, *tail[i], tail[i]->repeat);
  return s;
}

}  // namespace

double memo_layer_power_share(const LayerContext& ctx, bool moe_layer) {
  const GpuSpec& gpu = *ctx.gpu;
  if (gpu.op_rates.present() || !follows_power_curve(gpu)) return 0;
  if (ctx.memo_env == 0) return layer_power_share(ctx, moe_layer);
  LayerContext c = ctx;
  c.power_share = 1;  // what layer_power_share prices the layer at
  c.slowest_gpu = 1;
  const PassKind kinds[2] = {PassKind::kForward, PassKind::kBackward};
  uint32_t ids[2] = {0, 0};
  context_ids(c, kinds, 2, ids);
  if (ids[0] == 0) return layer_power_share(ctx, moe_layer);
  struct Key {
    uint32_t forward, backward;
    uint8_t moe;
  };
  struct Value {
    double share;
  };
  Key k;
  memo::zero(k);
  k.forward = ids[0], k.backward = ids[1], k.moe = moe_layer;
  thread_local memo::Table<Key, Value, 256> table;
  return table.get(k, [&] { return Value{layer_power_share(ctx, moe_layer)}; }).share;
}

PassSummary memo_pass(const LayerContext& ctx, uint32_t context, const ChunkLayers& cl, PassKind pass,
                      double sigma) {
  if (context == 0) return summarize_pass(pass_program(ctx, cl, pass), sigma);
  thread_local memo::Table<PassKey, PassSummary, 8192> table;
  PassKey k;
  memo::zero(k);
  k.context = context;
  k.layers = cl.layers, k.moe_layers = cl.moe_layers;
  k.first = cl.first, k.last = cl.last;
  k.pass = static_cast<uint8_t>(pass);
  // The chunks of a plan ask for the same few passes over and over (an interleaved device's
  // middle chunks, pass after pass): the last answer per pass kind, before the table.
  struct Last {
    PassKey key;
    PassSummary value;
    bool valid = false;
  };
  thread_local Last last[kPassKinds];
  Last& l = last[static_cast<int>(pass)];
  if (l.valid && std::memcmp(&l.key, &k, sizeof k) == 0) return l.value;
  l.value = table.get(k, [&] { return repeated_pass(ctx, context, cl, pass, sigma); });
  memo::copy_bytes(l.key, k);
  l.valid = true;
  return l.value;
}

namespace {

// What the reduction of a block reads: its repeat-independent content (compute_s and comm).
bool same_reduction(const OpBlock& a, const OpBlock& b) {
  if (a.compute_s != b.compute_s || a.comm.size() != b.comm.size()) return false;
  for (std::size_t i = 0; i < a.comm.size(); ++i) {
    const CommOp &x = a.comm[i], &y = b.comm[i];
    if (x.stream != y.stream || x.purpose != y.purpose || x.after != y.after || x.waited_by != y.waited_by ||
        x.prefetch != y.prefetch || x.time_s != y.time_s)
      return false;
  }
  return true;
}

// reduce_pass of a pair's merged program, bit for bit, through RepeatedPass where the program is
// a lead (at most one block), its longest block and tails: plans that differ in their stages'
// lengths (a search over pp) share the playing of the long block's repetitions. 1024 entries per
// thread, found by the lead's and the block's first op and sizes, confirmed by their content.
PassCost reduce_pair(const PassProgram& pair, double sigma) {
  const std::vector<OpBlock>& blocks = pair.blocks;
  const std::size_t r = blocks.size() > 1 && blocks[1].repeat > blocks[0].repeat ? 1 : 0;
  constexpr std::size_t kMaxTails = 8;
  if (blocks.empty() || blocks[r].repeat < 4 || blocks.size() - r - 1 > kMaxTails) return reduce_pass(pair, sigma);
  struct Entry {
    bool used = false, has_lead = false;
    double sigma = 0;
    OpBlock lead;
    RepeatedPass pass;
  };
  thread_local std::unique_ptr<Entry[]> entries = std::make_unique<Entry[]>(1024);
  const OpBlock* lead = r == 1 ? &blocks[0] : nullptr;
  const OpBlock& block = blocks[r];
  uint64_t h = memo::hash_bytes(&sigma, sizeof sigma) ^ (block.compute_s.size() * 0x9e3779b97f4a7c15ull) ^
               (block.comm.size() << 20) ^ (lead ? lead->compute_s.size() << 40 : 1);
  if (!block.compute_s.empty()) h ^= memo::hash_bytes(block.compute_s.data(), sizeof(double));
  Entry& e = entries[h & 1023];
  const bool hit = e.used && e.sigma == sigma && e.has_lead == (lead != nullptr) &&
                   (!lead || (same_reduction(e.lead, *lead) && e.lead.repeat == lead->repeat)) &&
                   same_reduction(e.pass.block(), block);
  if (!hit) {
    e.used = true;
    e.sigma = sigma;
    e.has_lead = lead != nullptr;
    if (lead) e.lead = *lead;
    e.pass.start(lead, block, sigma);
  }
  const OpBlock* tail[kMaxTails];
  const std::size_t tails = blocks.size() - r - 1;
  for (std::size_t i = 0; i < tails; ++i) tail[i] = &blocks[r + 1 + i];
  return e.pass.reduce(block.repeat, tail, tails);
}

}  // namespace

PairCosts pair_costs(const LayerContext& ctx, const uint32_t contexts[3], const ChunkLayers cl[2], PassKind backward,
                     double sigma, const DeviceProgram* programs, std::vector<PassProgram>* keep) {
  auto compute = [&] {
    // The kept programs where there are some, else the passes built here.
    PassProgram built[2][2];
    const PassProgram* pass[2][2];  // [forward, backward][chunk]
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 2; ++i) {
        const PassKind kind = i == 0 ? PassKind::kForward : backward;
        if (programs && !programs->chunks[k].program(kind).empty()) {
          pass[i][k] = &programs->chunks[k].program(kind);
        } else {
          built[i][k] = pass_program(ctx, cl[k], kind);
          pass[i][k] = &built[i][k];
        }
      }
    PairCosts out;
    for (int f = 0; f < 2; ++f)
      for (int b = 0; b < 2; ++b) {
        PassProgram pair = overlap_forward_backward(*pass[0][f], *pass[1][b]);
        out.s[f][b] = reduce_pair(pair, sigma).time_s;
        if (keep) keep->push_back(std::move(pair));
      }
    return out;
  };
  if (keep || contexts[0] == 0 || contexts[1] == 0) return compute();
  // B + W of a split schedule is priced in B's context (recompute) and W's (micro-batches,
  // gradient accumulation fusion) together.
  struct Key {
    uint32_t forward, backward, weight;
    int32_t layers[2], moe_layers[2];
    uint8_t first[2], last[2], pass;
  };
  Key k;
  memo::zero(k);
  k.forward = contexts[0];
  k.backward = contexts[1];
  k.weight = contexts[2];
  for (int i = 0; i < 2; ++i) {
    k.layers[i] = cl[i].layers;
    k.moe_layers[i] = cl[i].moe_layers;
    k.first[i] = cl[i].first;
    k.last[i] = cl[i].last;
  }
  k.pass = static_cast<uint8_t>(backward);
  thread_local memo::Table<Key, PairCosts, 1024> table;
  return table.get(k, compute);
}

}  // namespace trainsim
