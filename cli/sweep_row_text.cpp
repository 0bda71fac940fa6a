#include "cli/sweep_row_text.hpp"

#include <charconv>
#include <cmath>

#include "cli/plan_row.hpp"
#include "models/core/scenario_error.hpp"

namespace trainsim::cli {
using nlohmann::json;

void append_json_number(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  // The routine nlohmann's serializer writes doubles with (Grisu2, then ".0" or an exponent).
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, static_cast<std::size_t>(end - buf));
}

void append_json_number(std::string& out, int64_t x) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

void append_json_string(std::string& out, const std::string& s) {
  // Printable ASCII other than the quote and the backslash stands as it is; anything else
  // (escapes, UTF-8, and the error nlohmann raises on invalid UTF-8) is nlohmann's.
  for (unsigned char c : s)
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      out += json(s).dump();
      return;
    }
  out += '"';
  out += s;
  out += '"';
}

void append_csv_string(std::string& out, const std::string& s) {
  out += '"';
  if (s.find('"') == std::string::npos) {
    out += s;
  } else {
    for (char c : s) {
      if (c == '"') out += '"';
      out += c;
    }
  }
  out += '"';
}

namespace {

// The numbers of a feasible row before judge_row adds to it (make_row: result_to_json without
// warnings and memory.per_stage, plus index and plan), by their path in the row.
enum RowName {
  kBdBubble, kBdCompute, kBdCp, kBdDp, kBdEp, kBdOffload, kBdOptimizer, kBdPp, kBdTp, kBubbleFraction,
  kCommCp, kCommDp, kCommEp, kCommPp, kCommTp, kExposedComm, kFeasible, kGpus, kHwFlops, kHwTflops, kHfu,
  kIndex, kMemActivations, kMemGrads, kMemOptimizer, kMemOther, kMemParams, kMemHbm, kMemPeak, kMfu,
  kMicroBatches, kModelFlops, kModelTflops, kOverlappedComm, kPlanCp, kPlanDp, kPlanEp, kPlanGlobalBatch,
  kPlanMicroBatch, kPlanOffload, kPlanPp, kPlanSp, kPlanTp, kPlanVpp, kPlanZero, kStepTime, kTokensPerS,
  kTokensPerStep, kRowNames
};
constexpr const char* kRowNamePaths[kRowNames] = {
    "breakdown_s.bubble", "breakdown_s.compute", "breakdown_s.cp_comm", "breakdown_s.dp_comm",
    "breakdown_s.ep_comm", "breakdown_s.offload", "breakdown_s.optimizer", "breakdown_s.pp_comm",
    "breakdown_s.tp_comm", "bubble_fraction", "comm_bytes_per_gpu.cp", "comm_bytes_per_gpu.dp",
    "comm_bytes_per_gpu.ep", "comm_bytes_per_gpu.pp", "comm_bytes_per_gpu.tp", "exposed_comm_s", "feasible",
    "gpus", "hardware_flops_per_step", "hardware_tflops_per_gpu", "hfu", "index",
    "memory.breakdown.activations_bytes", "memory.breakdown.grads_bytes", "memory.breakdown.optimizer_bytes",
    "memory.breakdown.other_bytes", "memory.breakdown.params_bytes", "memory.hbm_capacity_bytes",
    "memory.peak_bytes", "mfu", "micro_batches_per_step", "model_flops_per_step", "model_tflops_per_gpu",
    "overlapped_comm_s", "plan.cp", "plan.dp", "plan.ep", "plan.global_batch", "plan.micro_batch",
    "plan.offload_optimizer", "plan.pp", "plan.sp", "plan.tp", "plan.vpp", "plan.zero_stage", "step_time_s",
    "tokens_per_s", "tokens_per_step"};

double row_number(int name, long long index, const Scenario& s, const Result& r) {
  const ParallelPlan& p = s.plan;
  const TimeBreakdown& b = r.breakdown;
  const MemoryBreakdown& m = r.peak_breakdown;
  switch (name) {
    case kBdBubble: return b.bubble_s;
    case kBdCompute: return b.compute_s;
    case kBdCp: return b.cp_comm_s;
    case kBdDp: return b.dp_comm_s;
    case kBdEp: return b.ep_comm_s;
    case kBdOffload: return b.offload_s;
    case kBdOptimizer: return b.optimizer_s;
    case kBdPp: return b.pp_comm_s;
    case kBdTp: return b.tp_comm_s;
    case kBubbleFraction: return r.bubble_fraction;
    case kCommCp: return r.cp_bytes;
    case kCommDp: return r.dp_bytes;
    case kCommEp: return r.ep_bytes;
    case kCommPp: return r.pp_bytes;
    case kCommTp: return r.tp_bytes;
    case kExposedComm: return r.exposed_comm_s;
    case kFeasible: return r.feasible ? 1.0 : 0.0;
    case kGpus: return r.gpus;
    case kHwFlops: return r.hardware_flops_per_step;
    case kHwTflops: return r.hardware_tflops_per_gpu;
    case kHfu: return r.hfu;
    case kIndex: return static_cast<double>(index);
    case kMemActivations: return m.activations_bytes;
    case kMemGrads: return m.grads_bytes;
    case kMemOptimizer: return m.optimizer_bytes;
    case kMemOther: return m.other_bytes;
    case kMemParams: return m.params_bytes;
    case kMemHbm: return r.hbm_capacity_bytes;
    case kMemPeak: return r.peak_memory_bytes;
    case kMfu: return r.mfu;
    case kMicroBatches: return r.micro_batches;
    case kModelFlops: return r.model_flops_per_step;
    case kModelTflops: return r.model_tflops_per_gpu;
    case kOverlappedComm: return r.overlapped.total_s();
    case kPlanCp: return p.cp;
    case kPlanDp: return p.dp;
    case kPlanEp: return p.ep;
    case kPlanGlobalBatch: return static_cast<double>(p.global_batch);
    case kPlanMicroBatch: return static_cast<double>(p.micro_batch);
    case kPlanOffload: return p.offload.optimizer ? 1.0 : 0.0;
    case kPlanPp: return p.pp;
    case kPlanSp: return p.sp ? 1.0 : 0.0;
    case kPlanTp: return p.tp;
    case kPlanVpp: return p.vpp;
    case kPlanZero: return p.zero_stage;
    case kStepTime: return r.step_time_s;
    case kTokensPerS: return r.tokens_per_s;
    case kTokensPerStep: return r.tokens_per_step;
    default: return 0;
  }
}

}  // namespace

RowJudge::RowJudge(const SweepSpec& spec, std::function<const json&(bool)> scenario_json,
                   std::function<json()> overrides)
    : spec_(spec), scenario_json_(std::move(scenario_json)), overrides_(std::move(overrides)) {
  // The row's numbers the expressions name go into a stub row that row_lookup reads as it reads
  // a full row: a name the row does not hold as a number resolves on the scenario either way.
  std::vector<std::string> names;
  for (const Expression& c : spec.constraints)
    for (const std::string& n : c.names()) names.push_back(n);
  for (const std::string& n : spec.objective.names()) names.push_back(n);
  for (const std::string& n : names) {
    int found = -1;
    for (int k = 0; k < kRowNames; ++k)
      if (n == kRowNamePaths[k]) found = k;
    if (found >= 0) {
      json* node = &stub_;
      std::size_t start = 0;
      for (std::size_t dot; (dot = n.find('.', start)) != std::string::npos; start = dot + 1)
        node = &(*node)[n.substr(start, dot - start)];
      node = &(*node)[n.substr(start)];
      *node = 0.0;
      leaves_.emplace_back(found, node);
    } else if (n.rfind("plan.", 0) == 0) {
      plan_part_ = true;  // a plan field the row does not hold: the plan's own scenario JSON
    }
    with_overrides_ = with_overrides_ || n.rfind("overrides.", 0) == 0;
    with_meets_ = with_meets_ || n == "meets_constraints";
  }
  if (stub_.is_null()) stub_ = json::object();
}

RowJudge::Verdict RowJudge::judge(long long index, const Scenario& scenario, const Result& result) {
  for (auto& [name, node] : leaves_) *node = row_number(name, index, scenario, result);
  if (with_overrides_) stub_["overrides"] = overrides_();
  if (with_meets_) stub_.erase("meets_constraints");
  const Expression::Lookup lookup = row_lookup(stub_, scenario_json_(plan_part_));
  Verdict v;
  for (std::size_t c = 0; c < spec_.constraints.size(); ++c)
    if (!constraint_met(spec_.constraints[c].evaluate(lookup))) v.violated.push_back(c);
  // judge_row evaluates the objective after it has added meets_constraints to the row.
  if (with_meets_) stub_["meets_constraints"] = v.violated.empty();
  v.objective = spec_.objective.evaluate(lookup);
  return v;
}

RowText::RowText(const SweepSpec& spec, SweepTally& tally) : spec_(spec), tally_(tally) {
  for (const Expression& c : spec.constraints) constraint_json_.push_back(json(c.text()).dump());
}

const std::string& RowText::cached(const std::string& s) {
  auto it = escaped_.find(s);
  if (it == escaped_.end()) it = escaped_.emplace(s, json(s).dump()).first;
  return it->second;
}

void RowText::plan_row(long long index, const std::string& overrides_text, const Scenario& s, const Result& r,
                       const RowJudge::Verdict* verdict, std::string& o, std::string* csv) {
  const ParallelPlan& p = s.plan;
  auto key = [&o](const char* k) { o += k; };
  auto num = [&o](double x) { append_json_number(o, x); };
  auto integer = [&o](int64_t x) { append_json_number(o, x); };
  auto boolean = [&o](bool b) { o += b ? "true" : "false"; };
  const std::string& model = cached(s.model.name);
  const std::string& cluster = cached(s.cluster.name);
  const std::string& gpu = cached(s.cluster.gpu.name);
  const std::string& fidelity = cached(r.fidelity);
  const std::string& schedule = cached(p.schedule);
  const std::string& recompute = cached(to_string(p.recompute));
  const std::string& precision = cached(to_string(p.precision));
  auto plan_object = [&] {
    key("\"plan\":{\"cp\":"), integer(p.cp), key(",\"dp\":"), integer(p.dp);
    if (p.dp_shard > 0) key(",\"dp_shard\":"), integer(p.dp_shard);
    key(",\"ep\":"), integer(p.ep);
    key(",\"global_batch\":"), integer(p.global_batch), key(",\"micro_batch\":"), integer(p.micro_batch);
    key(",\"offload_optimizer\":"), boolean(p.offload.optimizer), key(",\"pp\":"), integer(p.pp);
    key(",\"precision\":"), o += precision, key(",\"recompute\":"), o += recompute;
    key(",\"schedule\":"), o += schedule, key(",\"sp\":"), boolean(p.sp), key(",\"tp\":"), integer(p.tp);
    key(",\"vpp\":"), integer(p.vpp);
    if (p.zero_hpz_partition_size > 1) key(",\"zero_hpz_partition_size\":"), integer(p.zero_hpz_partition_size);
    if (p.zero_quantized_gradients) key(",\"zero_quantized_gradients\":true");
    if (p.zero_quantized_weights) key(",\"zero_quantized_weights\":true");
    key(",\"zero_stage\":"), integer(p.zero_stage), o += '}';
  };
  const bool feasible = r.feasible;
  const std::string code = feasible ? std::string() : reason_code(r.reason);
  bool meets = false;
  double objective = 0;
  if (feasible) {
    meets = verdict->violated.empty();
    objective = verdict->objective;
    const TimeBreakdown& b = r.breakdown;
    const MemoryBreakdown& m = r.peak_breakdown;
    key("{\"breakdown_s\":{\"bubble\":"), num(b.bubble_s), key(",\"compute\":"), num(b.compute_s);
    key(",\"cp_comm\":"), num(b.cp_comm_s), key(",\"dp_comm\":"), num(b.dp_comm_s);
    key(",\"ep_comm\":"), num(b.ep_comm_s), key(",\"offload\":"), num(b.offload_s);
    key(",\"optimizer\":"), num(b.optimizer_s), key(",\"pp_comm\":"), num(b.pp_comm_s);
    key(",\"tp_comm\":"), num(b.tp_comm_s), key("},\"bubble_fraction\":"), num(r.bubble_fraction);
    key(",\"cluster\":"), o += cluster;
    key(",\"comm_bytes_per_gpu\":{\"cp\":"), num(r.cp_bytes), key(",\"dp\":"), num(r.dp_bytes);
    key(",\"ep\":"), num(r.ep_bytes), key(",\"pp\":"), num(r.pp_bytes), key(",\"tp\":"), num(r.tp_bytes);
    key("},\"exposed_comm_s\":"), num(r.exposed_comm_s), key(",\"feasible\":true,\"fidelity\":"), o += fidelity;
    key(",\"gpu\":"), o += gpu, key(",\"gpus\":"), integer(r.gpus);
    key(",\"hardware_flops_per_step\":"), num(r.hardware_flops_per_step);
    key(",\"hardware_tflops_per_gpu\":"), num(r.hardware_tflops_per_gpu), key(",\"hfu\":"), num(r.hfu);
    key(",\"index\":"), integer(index), key(",\"meets_constraints\":"), boolean(meets);
    key(",\"memory\":{\"breakdown\":{\"activations_bytes\":"), num(m.activations_bytes);
    key(",\"grads_bytes\":"), num(m.grads_bytes), key(",\"optimizer_bytes\":"), num(m.optimizer_bytes);
    key(",\"other_bytes\":"), num(m.other_bytes), key(",\"params_bytes\":"), num(m.params_bytes);
    key("},\"hbm_capacity_bytes\":"), num(r.hbm_capacity_bytes), key(",\"peak_bytes\":"), num(r.peak_memory_bytes);
    key("},\"mfu\":"), num(r.mfu), key(",\"micro_batches_per_step\":"), integer(r.micro_batches);
    key(",\"model\":"), o += model, key(",\"model_flops_per_step\":"), num(r.model_flops_per_step);
    key(",\"model_tflops_per_gpu\":"), num(r.model_tflops_per_gpu), key(",\"objective\":"), num(objective);
    key(",\"overlapped_comm_s\":"), num(r.overlapped.total_s());
    key(",\"overlapped_s\":{\"cp_comm\":"), num(r.overlapped.cp_s), key(",\"dp_comm\":"), num(r.overlapped.dp_s);
    key(",\"ep_comm\":"), num(r.overlapped.ep_s), key(",\"tp_comm\":"), num(r.overlapped.tp_s);
    key("},\"overrides\":"), o += overrides_text;
    o += ',', plan_object(), key(",\"reason\":"), append_json_string(o, r.reason);
    key(",\"status\":"), key(meets ? "\"ok\"" : "\"outside_constraints\""), key(",\"step_time_s\":"), num(r.step_time_s);
    key(",\"tokens_per_s\":"), num(r.tokens_per_s), key(",\"tokens_per_step\":"), num(r.tokens_per_step);
    key(",\"violated\":[");
    for (std::size_t k = 0; k < verdict->violated.size(); ++k) {
      if (k) o += ',';
      o += constraint_json_[verdict->violated[k]];
    }
    key("]}\n");
  } else {
    // judge_row keeps, of an infeasible row, the plan and why (and what memory it would need).
    key("{\"cluster\":"), o += cluster, key(",\"feasible\":false,\"fidelity\":"), o += fidelity;
    key(",\"gpu\":"), o += gpu, key(",\"gpus\":"), integer(r.gpus), key(",\"index\":"), integer(index);
    key(",\"meets_constraints\":false");
    if (code == "out_of_memory")
      key(",\"memory\":{\"hbm_capacity_bytes\":"), num(r.hbm_capacity_bytes), key(",\"peak_bytes\":"),
          num(r.peak_memory_bytes), o += '}';
    key(",\"model\":"), o += model, key(",\"objective\":null,\"overrides\":"), o += overrides_text;
    o += ',', plan_object(), key(",\"reason\":"), append_json_string(o, r.reason);
    key(",\"reason_code\":"), append_json_string(o, code), key(",\"status\":\"infeasible\",\"violated\":[]}\n");
  }
  const bool ranked = feasible && meets && std::isfinite(objective);
  if (csv) {
    std::string& c = *csv;
    auto cnum = [&c](double x) { append_json_number(c, x); };
    auto cint = [&c](int64_t x) { append_json_number(c, x); };
    cint(index), c += ',', append_csv_string(c, s.model.name), c += ',', append_csv_string(c, s.cluster.name);
    c += ',', cint(r.gpus);
    for (int64_t d : {int64_t{p.tp}, int64_t{p.pp}, int64_t{p.dp}, int64_t{p.cp}, int64_t{p.ep}, int64_t{p.vpp}})
      c += ',', cint(d);
    c += ',', append_csv_string(c, p.schedule), c += ',', cint(p.micro_batch), c += ',', cint(p.global_batch);
    c += ',', cint(p.zero_stage), c += ',', append_csv_string(c, to_string(p.recompute));
    c += p.sp ? ",true" : ",false";
    c += feasible ? ",true" : ",false";
    c += meets ? ",true," : ",false,";
    if (feasible && std::isfinite(objective)) cnum(objective);
    if (feasible) {
      for (double x : {r.step_time_s, r.tokens_per_s, r.mfu, r.hfu, r.model_tflops_per_gpu, r.bubble_fraction,
                       r.exposed_comm_s})
        c += ',', cnum(x);
    } else {
      c += ",,,,,,,";
    }
    c += ',';
    if (feasible || code == "out_of_memory") cnum(r.peak_memory_bytes);
    c += ',', append_csv_string(c, r.reason), c += '\n';
  }
  if (!feasible) {
    tally_.add_rejected(index, code, r.reason);
  } else if (!meets) {
    tally_.add_constrained(index, spec_.constraints[verdict->violated[0]].text());
  } else if (!ranked) {
    tally_.add_unranked();
  } else {
    RankedPlan k;
    k.index = index, k.objective = objective, k.tokens_per_s = r.tokens_per_s, k.peak_bytes = r.peak_memory_bytes;
    k.gpus = r.gpus, k.step_time_s = r.step_time_s, k.mfu = r.mfu, k.bubble_fraction = r.bubble_fraction;
    StringTable& t = tally_.strings;
    k.model = t.id(s.model.name), k.cluster = t.id(s.cluster.name), k.schedule = t.id(p.schedule);
    k.recompute = t.id(to_string(p.recompute)), k.precision = t.id(to_string(p.precision));
    k.tp = p.tp, k.pp = p.pp, k.dp = p.dp, k.cp = p.cp, k.ep = p.ep, k.vpp = p.vpp, k.zero_stage = p.zero_stage;
    k.dp_shard = p.dp_shard;
    k.hpz = p.zero_hpz_partition_size > 1 ? p.zero_hpz_partition_size : 0;
    k.qwz = p.zero_quantized_weights, k.qgz = p.zero_quantized_gradients;
    k.micro_batch = p.micro_batch, k.global_batch = p.global_batch, k.sp = p.sp;
    k.offload_optimizer = p.offload.optimizer;
    tally_.add_ranked(k);
  }
}

void RowText::json_row(const json& row, std::string& json_out, std::string* csv_out) {
  json_out += row.dump();
  json_out += '\n';
  if (csv_out) append_csv_line(row, *csv_out);
  tally_.add_json(row);
}

}  // namespace trainsim::cli
