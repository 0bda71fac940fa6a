#include "models/interop/torch_trace.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "models/cost/compute/attention_model.hpp"
#include "models/cost/compute/gemm_model.hpp"
#include "models/cost/compute/launch_model.hpp"
#include "models/cost/compute/memory_bound_model.hpp"
#include "models/cost/compute_cost.hpp"
#include "models/estimate/estimate.hpp"
#include "models/cost/flops.hpp"
#include "models/core/scenario_error.hpp"
#include "models/scenario/input_file.hpp"
#include "models/scenario/json_reader.hpp"
#include "models/workload/workload.hpp"

namespace trainsim {
using nlohmann::json;

const char* to_string(TorchOpClass c) {
  switch (c) {
    case TorchOpClass::kGemm: return "gemm";
    case TorchOpClass::kAttention: return "attention";
    case TorchOpClass::kElementwise: return "elementwise";
    case TorchOpClass::kCommunication: return "communication";
    case TorchOpClass::kOptimizer: return "optimizer";
    default: return "other";
  }
}

namespace {

using Dims = std::vector<double>;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
std::string strip_aten(const std::string& name) {
  return starts_with(name, "aten::") ? name.substr(6) : name;
}
std::string dims_text(const Dims& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.0f", i ? ", " : "", d[i]);
    s += buf;
  }
  return s + "]";
}
double product(const Dims& d, std::size_t from = 0, std::size_t to = std::string::npos) {
  double p = 1;
  for (std::size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
  return p;
}

// One complete ("X") event, checked.
struct Event {
  int index = 0;  // in traceEvents
  std::string cat, name;
  std::string thread;  // "pid/tid"
  double ts_us = 0, dur_us = 0;
  const json* args = nullptr;
  int parent = -1;  // host events: the enclosing host event (index into hosts)
  double end_us() const { return ts_us + dur_us; }
};

enum class Kind { kHost, kRuntime, kDevice, kIgnored };

Kind kind_of(const std::string& cat) {
  const std::string c = lower(cat);
  if (c == "cpu_op" || c == "operator" || c == "user_annotation" || c == "python_function")
    return Kind::kHost;
  if (c == "cuda_runtime" || c == "runtime" || c == "cuda_driver") return Kind::kRuntime;
  if (c == "kernel" || c == "gpu_memcpy" || c == "memcpy" || c == "gpu_memset" || c == "memset")
    return Kind::kDevice;
  return Kind::kIgnored;
}

std::string id_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return "";
}

// args.<key> as a positive integer id, 0 when absent / not a positive number.
long long arg_id(const Event& e, const char* key) {
  if (!e.args || !e.args->contains(key)) return 0;
  const json& v = (*e.args)[key];
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= static_cast<uint64_t>(LLONG_MAX) ? v.get<long long>() : 0;
  if (v.is_number_integer()) return std::max<long long>(0, v.get<long long>());
  if (!v.is_number()) return 0;
  // A float id beyond 2^62 is not an id Kineto writes (and would not fit a long long).
  const double d = v.get<double>();
  return d > 0 && d < 4.6e18 ? static_cast<long long>(d) : 0;
}

// Bytes per element of an "Input type" string.
double dtype_size(const std::string& t) {
  if (t == "c10::BFloat16" || t == "c10::Half" || t == "short" || t == "c10::ComplexHalf") return 2;
  if (t == "float" || t == "int" || t == "unsigned int") return 4;
  if (t == "double" || t == "long int" || t == "long" || t == "c10::complex<float>") return 8;
  if (t == "bool" || t == "unsigned char" || t == "signed char" || starts_with(t, "c10::Float8")) return 1;
  return 0;  // unknown: the caller decides
}
std::string dtype_name(const std::string& t) {
  if (t == "c10::BFloat16") return "bf16";
  if (t == "c10::Half") return "f16";
  if (t == "float") return "f32";
  if (starts_with(t, "c10::Float8")) return "fp8";
  return "";
}

// The parsed "Input Dims" / "Input type" / "Concrete Inputs" of a host op.
struct OpArgs {
  // Each input: its tensors (one for a tensor, several for a TensorList, none for a scalar).
  std::vector<std::vector<Dims>> inputs;
  std::vector<std::string> types;
  std::vector<std::string> concrete;
  bool has_dims = false;
};

OpArgs read_op_args(const Event& e, const std::string& where) {
  OpArgs a;
  if (!e.args) return a;
  const std::string base = where + ".args";
  if (e.args->contains("Input Dims")) {
    const json& d = (*e.args)["Input Dims"];
    const std::string path = base + ".Input Dims";
    if (!d.is_array()) throw ScenarioError(path, "expected a list of tensor shapes, got " + describe_json_value(d));
    a.has_dims = true;
    auto shape = [&](const json& s, const std::string& p) {
      // A tensor has at most a few dimensions, each below 2^40 elements: their products (the
      // FLOPs and bytes) stay finite.
      if (s.size() > 16) throw ScenarioError(p, "a tensor shape of " + std::to_string(s.size()) + " dimensions (at most 16)");
      Dims out;
      for (std::size_t k = 0; k < s.size(); ++k) {
        const json& v = s[k];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
            v.get<double>() != std::floor(v.get<double>()) || v.get<double>() > 1099511627776.0)
          throw ScenarioError(p + "[" + std::to_string(k) + "]",
                              "expected a non-negative integer dimension below 2^40, got " + describe_json_value(v));
        out.push_back(v.get<double>());
      }
      return out;
    };
    for (std::size_t j = 0; j < d.size(); ++j) {
      const json& in = d[j];
      const std::string p = path + "[" + std::to_string(j) + "]";
      if (!in.is_array()) throw ScenarioError(p, "expected a shape (a list of dimensions), got " + describe_json_value(in));
      std::vector<Dims> tensors;
      if (!in.empty() && in[0].is_array()) {  // a TensorList: a list of shapes
        for (std::size_t t = 0; t < in.size(); ++t) {
          const std::string pt = p + "[" + std::to_string(t) + "]";
          if (!in[t].is_array()) throw ScenarioError(pt, "expected a shape in a tensor list, got " + describe_json_value(in[t]));
          tensors.push_back(shape(in[t], pt));
        }
      } else if (!in.empty()) {
        tensors.push_back(shape(in, p));
      }
      a.inputs.push_back(std::move(tensors));
    }
  }
  if (e.args->contains("Input type")) {
    const json& t = (*e.args)["Input type"];
    if (!t.is_array()) throw ScenarioError(base + ".Input type", "expected a list of type names, got " + describe_json_value(t));
    for (const auto& v : t) a.types.push_back(v.is_string() ? v.get<std::string>() : "");
  }
  if (e.args->contains("Concrete Inputs") && (*e.args)["Concrete Inputs"].is_array())
    for (const auto& v : (*e.args)["Concrete Inputs"]) a.concrete.push_back(v.is_string() ? v.get<std::string>() : v.is_primitive() ? v.dump() : std::string());
  return a;
}

// Whether a tensor input is a permuted view ("Input Strides" not the row-major strides of its
// "Input Dims"; dimensions of size 1 have no stride to keep). Strides the trace does not record,
// or records in another shape, say nothing: false.
bool has_permuted_input(const Event& e, const OpArgs& a) {
  if (!e.args || !e.args->contains("Input Strides")) return false;
  const json& strides = (*e.args)["Input Strides"];
  if (!strides.is_array()) return false;
  for (std::size_t j = 0; j < strides.size() && j < a.inputs.size(); ++j) {
    const json& st = strides[j];
    if (a.inputs[j].size() != 1 || !st.is_array() || st.size() != a.inputs[j][0].size()) continue;
    const Dims& d = a.inputs[j][0];
    double expected = 1;
    for (std::size_t k = d.size(); k-- > 0;) {
      if (!st[k].is_number()) break;
      if (d[k] > 1 && st[k].get<double>() != expected) return true;
      expected *= d[k];
    }
  }
  return false;
}

const Dims* tensor(const OpArgs& a, std::size_t j) {
  return j < a.inputs.size() && a.inputs[j].size() == 1 ? &a.inputs[j][0] : nullptr;
}
std::string type_of(const OpArgs& a, std::size_t j) { return j < a.types.size() ? a.types[j] : ""; }

// ---- op tables ----

const std::set<std::string> kGemmOps = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear",
                                        "_addmm_activation", "_scaled_mm", "addbmm"};

// Attention ops: where q and k sit among the inputs, their layout, and where is_causal sits in
// "Concrete Inputs" (the ATen signatures, native_functions.yaml; -1: not recorded there).
struct AttentionSig {
  const char* name;
  bool bshd;  // [batch, seq, heads, dim] (else [batch, heads, seq, dim])
  int q, k, causal;
  bool backward;
  bool mask_type;  // causal given as custom_mask_type (0 = none)
};
const AttentionSig kAttentionOps[] = {
    {"aten::scaled_dot_product_attention", false, 0, 1, 5, false, false},
    {"aten::_scaled_dot_product_flash_attention", false, 0, 1, 4, false, false},
    {"aten::_scaled_dot_product_efficient_attention", false, 0, 1, 6, false, false},
    {"aten::_scaled_dot_product_cudnn_attention", false, 0, 1, 6, false, false},
    {"aten::_scaled_dot_product_flash_attention_backward", false, 1, 2, 11, true, false},
    {"aten::_scaled_dot_product_efficient_attention_backward", false, 1, 2, 11, true, false},
    {"aten::_scaled_dot_product_cudnn_attention_backward", false, 1, 2, -1, true, false},
    {"aten::_flash_attention_forward", true, 0, 1, 8, false, false},
    {"aten::_flash_attention_backward", true, 1, 2, 11, true, false},
    {"aten::_efficient_attention_forward", true, 0, 1, 9, false, true},
    {"aten::_efficient_attention_backward", true, 1, 2, 14, true, true},
    {"flash_attn::_flash_attn_forward", true, 0, 1, 5, false, false},
    {"flash_attn::_flash_attn_backward", true, 1, 2, 11, true, false},
};
const AttentionSig* attention_sig(const std::string& name) {
  for (const auto& s : kAttentionOps)
    if (name == s.name) return &s;
  return nullptr;
}

// Memory-bound ops (norms, activations, dropout, residual adds, bias gradients, copies).
const std::set<std::string> kElementwiseOps = {
    "layer_norm", "native_layer_norm", "native_layer_norm_backward", "rms_norm", "_fused_rms_norm",
    "_fused_rms_norm_backward", "group_norm", "native_group_norm", "native_group_norm_backward",
    "batch_norm", "native_batch_norm", "native_batch_norm_backward", "gelu", "gelu_backward",
    "silu", "silu_backward", "relu", "threshold_backward", "sigmoid", "tanh", "tanh_backward",
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "pow", "rsqrt", "exp",
    "where", "masked_fill", "masked_fill_", "softmax", "_softmax", "_softmax_backward_data",
    "dropout", "native_dropout", "native_dropout_backward", "copy_", "clone", "contiguous", "cat",
    "stack", "fill_", "zero_", "sum", "mean", "_to_copy", "to"};
const std::set<std::string> kReductions = {"sum", "mean"};
// Ops the kernel model prices at its norm rate (memory_bound_model.hpp, norm_time_s): the norms,
// and reductions over the tokens (a linear's bias gradient is a sum).
bool priced_as_norm(const std::string& n) {
  return contains(n, "norm") || kReductions.count(n) > 0;
}
const std::set<std::string> kConcats = {"cat", "stack"};

bool is_optimizer_name(const std::string& name) {
  const std::string l = lower(name);
  return starts_with(name, "Optimizer.step#") || contains(l, "adam") || contains(l, "_foreach_") ||
         starts_with(l, "aten::_fused_sgd");
}
bool is_communication_name(const std::string& name) {
  const std::string l = lower(name);
  return starts_with(l, "nccl") || starts_with(l, "c10d::") || l == "record_param_comms";
}
bool is_backward_name(const std::string& name) {
  return starts_with(name, "autograd::engine::evaluate_function") ||
         contains(name, "Backward0") || contains(name, "Backward1");
}

// ---- parsing ----

struct Parsed {
  std::vector<Event> hosts, runtimes, devices;
  std::unordered_map<long long, int> host_by_external;    // External id -> hosts index
  std::unordered_map<long long, int> runtime_by_corr;     // correlation -> runtimes index
  std::map<std::string, std::vector<int>> hosts_by_thread;  // sorted by ts
};

constexpr double kMaxTimestampUs = 1e17;
constexpr double kMaxDurationUs = 86400e6;

Event read_event(const json& e, int i, const std::string& source, Kind& kind) {
  const std::string path = source + ": traceEvents[" + std::to_string(i) + "]";
  Event ev;
  ev.index = i;
  kind = Kind::kIgnored;
  if (!e.is_object()) throw ScenarioError(path, "expected an event object, got " + describe_json_value(e));
  if (!e.contains("ph")) throw ScenarioError(path + ".ph", "missing (every trace event has a phase)");
  if (!e["ph"].is_string()) throw ScenarioError(path + ".ph", "expected a string, got " + describe_json_value(e["ph"]));
  if (e["ph"] != "X") return ev;
  if (e.contains("cat") && !e["cat"].is_string())
    throw ScenarioError(path + ".cat", "expected a string, got " + describe_json_value(e["cat"]));
  ev.cat = e.value("cat", std::string());
  kind = kind_of(ev.cat);
  if (kind == Kind::kIgnored) return ev;
  if (!e.contains("name") || !e["name"].is_string())
    throw ScenarioError(path + ".name", e.contains("name") ? "expected a string" : "missing");
  ev.name = e["name"].get<std::string>();
  const std::string what = "\"" + safe_excerpt(ev.name, 60) + "\"";
  for (const char* key : {"ts", "dur"}) {
    if (!e.contains(key))
      throw ScenarioError(path + "." + key, "missing on complete event " + what +
                                                " (an \"X\" event needs ts and dur, in microseconds)");
    const json& v = e[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw ScenarioError(path + "." + key, "expected a number of microseconds, got " + describe_json_value(v));
  }
  ev.ts_us = e["ts"].get<double>();
  ev.dur_us = e["dur"].get<double>();
  if (ev.dur_us < 0) throw ScenarioError(path + ".dur", "negative duration " + describe_json_value(e["dur"]) + " on " + what);
  // Kineto writes microseconds since the epoch (~1.7e15 today); nothing in one profiled step
  // lasts a day. Beyond these the times are not a trace's, and sums of them lose every digit.
  if (std::fabs(ev.ts_us) > kMaxTimestampUs)
    throw ScenarioError(path + ".ts", "timestamp " + describe_json_value(e["ts"]) + " us on " + what +
                                          " is not a time of this era (|ts| <= 1e17 us)");
  if (ev.dur_us > kMaxDurationUs)
    throw ScenarioError(path + ".dur", "duration " + describe_json_value(e["dur"]) + " us on " + what +
                                           " is longer than a day: not the time of one op of a step");
  ev.thread = id_text(e.value("pid", json())) + "/" + id_text(e.value("tid", json()));
  if (e.contains("args")) {
    if (!e["args"].is_object()) throw ScenarioError(path + ".args", "expected an object");
    ev.args = &e["args"];
  }
  return ev;
}

// Nests each thread's host events by time: parent = the innermost event that contains it.
void nest_hosts(Parsed& p) {
  for (int i = 0; i < static_cast<int>(p.hosts.size()); ++i) p.hosts_by_thread[p.hosts[i].thread].push_back(i);
  constexpr double kSlackUs = 1e-3;  // exporters round ts and dur to the nanosecond
  for (auto& [thread, list] : p.hosts_by_thread) {
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      const Event &x = p.hosts[a], &y = p.hosts[b];
      return x.ts_us != y.ts_us ? x.ts_us < y.ts_us : x.dur_us > y.dur_us;
    });
    std::vector<int> stack;
    for (int h : list) {
      Event& e = p.hosts[h];
      while (!stack.empty() && p.hosts[stack.back()].end_us() + kSlackUs < e.end_us()) stack.pop_back();
      e.parent = stack.empty() ? -1 : stack.back();
      stack.push_back(h);
    }
  }
}

// The innermost host event on `thread` whose span contains [ts, end].
int innermost_host(const Parsed& p, const std::string& thread, double ts, double end) {
  const auto it = p.hosts_by_thread.find(thread);
  if (it == p.hosts_by_thread.end()) return -1;
  const auto& list = it->second;
  auto pos = std::upper_bound(list.begin(), list.end(), ts,
                              [&](double t, int h) { return t < p.hosts[h].ts_us; });
  if (pos == list.begin()) return -1;
  // The last event to start before ts, or the first of its ancestors that contains the call
  // (any event containing ts started before that one, so it is one of its ancestors).
  for (int h = *(pos - 1); h >= 0; h = p.hosts[h].parent)
    if (p.hosts[h].ts_us <= ts + 1e-3 && p.hosts[h].end_us() + 1e-3 >= end) return h;
  return -1;
}

// GEMM shape of an op. Returns false when the op has no (usable) shapes.
bool gemm_dims(const std::string& op, const OpArgs& a, const std::string& where, TorchTraceOp& out) {
  const std::string n = strip_aten(op);
  const Dims *A = nullptr, *B = nullptr;
  if (n == "mm" || n == "bmm" || n == "matmul" || n == "linear" || n == "_scaled_mm") {
    A = tensor(a, 0);
    B = tensor(a, 1);
  } else {
    A = tensor(a, 1);
    B = tensor(a, 2);
  }
  if (!A || !B) return false;
  const std::string path = where + ".args.Input Dims";
  auto fail = [&](const std::string& why) {
    throw ScenarioError(path, op + " " + dims_text(*A) + " x " + dims_text(*B) + ": " + why);
  };
  double m = 0, k = 0, k2 = 0, nn = 0, batch = 1;
  if (n == "linear") {  // input [..., K] x weight [N, K]
    if (A->empty() || B->size() != 2) fail("expected an input [..., in] and a weight [out, in]");
    m = product(*A, 0, A->size() - 1);
    k = A->back();
    nn = (*B)[0];
    k2 = (*B)[1];
  } else if (n == "bmm" || n == "baddbmm" || n == "addbmm") {
    if (A->size() != 3 || B->size() != 3) fail("expected two batches of matrices [b, m, k] x [b, k, n]");
    if ((*A)[0] != (*B)[0]) fail("the batch dimensions differ");
    batch = (*A)[0];
    m = (*A)[1];
    k = (*A)[2];
    k2 = (*B)[1];
    nn = (*B)[2];
  } else if (n == "matmul") {
    if (A->empty() || B->empty()) fail("expected tensors of rank 1 or more");
    const Dims a2 = A->size() == 1 ? Dims{1, (*A)[0]} : *A;
    const Dims b2 = B->size() == 1 ? Dims{(*B)[0], 1} : *B;
    k = a2.back();
    k2 = b2[b2.size() - 2];
    nn = b2.back();
    if (b2.size() == 2) {
      m = product(a2, 0, a2.size() - 1);
    } else {
      m = a2[a2.size() - 2];
      batch = std::max(product(a2, 0, a2.size() - 2), product(b2, 0, b2.size() - 2));
    }
  } else {  // mm, addmm, _addmm_activation, _scaled_mm: [m, k] x [k, n]
    if (A->size() != 2 || B->size() != 2) fail("expected two matrices [m, k] x [k, n]");
    m = (*A)[0];
    k = (*A)[1];
    k2 = (*B)[0];
    nn = (*B)[1];
  }
  if (k != k2) fail("the inner dimensions differ (" + dims_text({k}) + " vs " + dims_text({k2}) + ")");
  out.m = m;
  out.n = nn;
  out.k = k;
  out.batch = batch;
  out.flop = 2 * m * nn * k * batch;
  return true;
}

// FlashAttention-2 FLOP count (Dao 2023, arXiv:2307.08691, sec. 4.1): forward 4 * b * h * s_q *
// s_k * d, halved with a causal mask; backward 2.5x the forward.
bool attention_flop(const AttentionSig& sig, const OpArgs& a, TorchTraceOp& out) {
  const Dims* q = tensor(a, sig.q);
  const Dims* k = tensor(a, sig.k);
  if (!q || !k || q->size() != 4 || k->size() != 4) return false;
  const double b = (*q)[0], d = (*q)[3];
  const double heads = sig.bshd ? (*q)[2] : (*q)[1];
  const double sq = sig.bshd ? (*q)[1] : (*q)[2];
  const double sk = sig.bshd ? (*k)[1] : (*k)[2];
  double flop = 4 * b * heads * sq * sk * d;
  if (out.causal) flop /= 2;
  if (sig.backward) flop *= 2.5;
  out.flop = flop;
  AttentionShape& shape = out.attention;
  shape.batch = b;
  shape.heads = heads;
  shape.kv_heads = sig.bshd ? (*k)[2] : (*k)[1];
  shape.seq_q = sq;
  shape.seq_kv = sk;
  shape.head_dim = d;
  shape.causal = out.causal;
  return true;
}

// The FlashAttention generation of an attention kernel: FlashAttention-3's kernels are built
// for Hopper ("...Sm90..." in their template arguments), FlashAttention-2's (flash-attn and
// PyTorch's copy, pytorch_flash::) are not. "" for the memory-efficient (fmha_cutlass) and cuDNN
// kernels.
std::string flash_generation(const std::string& kernel) {
  const std::string l = lower(kernel);
  if (!contains(l, "flash")) return "";
  return contains(l, "sm90") ? "flash3" : "flash2";
}

// is_causal from "Concrete Inputs": 1 causal, 0 not, -1 not recorded.
int causal_of(const AttentionSig& sig, const OpArgs& a) {
  if (sig.causal < 0 || sig.causal >= static_cast<int>(a.concrete.size())) return -1;
  const std::string v = lower(a.concrete[sig.causal]);
  if (v.empty()) return -1;
  if (sig.mask_type) return v == "0" ? 0 : 1;
  if (v == "true" || v == "1") return 1;
  if (v == "false" || v == "0") return 0;
  return -1;
}

// Minimum traffic of a memory-bound op: its inputs read once, its output written once (the
// largest input's size; nothing for reductions, the inputs' sum for concatenations; copies and
// fills write what they read / their target).
double elementwise_bytes(const std::string& op, const OpArgs& a, double fallback_size) {
  const std::string n = strip_aten(op);
  double in = 0, largest = 0;
  double first_size = 0;
  for (std::size_t j = 0; j < a.inputs.size(); ++j) {
    double size = dtype_size(type_of(a, j));
    if (size > 0 && first_size == 0) first_size = size;
    for (const auto& t : a.inputs[j]) {
      const double b = product(t) * (size > 0 ? size : (first_size > 0 ? first_size : fallback_size));
      in += b;
      largest = std::max(largest, b);
    }
  }
  if (kReductions.count(n)) return in;
  if (kConcats.count(n)) return 2 * in;
  if (n == "copy_" || n == "_to_copy" || n == "to" || n == "clone" || n == "contiguous") return n == "copy_" ? in : 2 * in;
  if (n == "fill_" || n == "zero_") return largest;
  return in + largest;
}

// The op_rates seconds_per_element slot of an aten op (stripped of "aten::"), nullptr when it
// has none. SwiGLU's silu counts as the activation (its mul has no slot); rms_norm as the norm.
const char* op_rate_slot(const std::string& n) {
  static const std::map<std::string, const char*> kSlots = {
      {"layer_norm", "layernorm_fwd"}, {"native_layer_norm", "layernorm_fwd"}, {"rms_norm", "layernorm_fwd"},
      {"_fused_rms_norm", "layernorm_fwd"}, {"layer_norm_backward", "layernorm_bwd"},
      {"native_layer_norm_backward", "layernorm_bwd"}, {"rms_norm_backward", "layernorm_bwd"},
      {"_fused_rms_norm_backward", "layernorm_bwd"}, {"gelu", "gelu_fwd"}, {"silu", "gelu_fwd"},
      {"gelu_backward", "gelu_bwd"}, {"silu_backward", "gelu_bwd"}, {"add", "residual_add"},
      {"add_", "residual_add"}, {"_log_softmax", "softmax_xent"}, {"log_softmax", "softmax_xent"},
      {"_log_softmax_backward_data", "softmax_xent"}, {"nll_loss", "softmax_xent"},
      {"nll_loss_nd", "softmax_xent"}, {"nll_loss_forward", "softmax_xent"}, {"nll_loss_backward", "softmax_xent"},
      {"nll_loss2d_forward", "softmax_xent"}, {"nll_loss2d_backward", "softmax_xent"},
      {"cross_entropy_loss", "softmax_xent"}, {"cross_entropy", "softmax_xent"},
      {"embedding", "embedding_fwd"}, {"embedding_backward", "embedding_bwd"},
      {"embedding_dense_backward", "embedding_bwd"}, {"copy_", "copy"}, {"to", "copy"}, {"_to_copy", "copy"},
      {"fill_", "fill_zero"}, {"zero_", "fill_zero"}};
  const auto it = kSlots.find(n);
  return it == kSlots.end() ? nullptr : it->second;
}

// The elements an op-rate slot op works on: its first input's; an embedding's output (the
// first input is the table: indices x hidden).
double slot_elements(const std::string& n, const OpArgs& a) {
  if (n == "embedding") {
    const Dims* table = tensor(a, 0);
    const Dims* idx = tensor(a, 1);
    return table && idx && table->size() == 2 ? product(*idx) * (*table)[1] : 0;
  }
  const char* slot = op_rate_slot(n);
  if (slot && std::string(slot) == "softmax_xent") {  // nll_loss_backward's first input is the scalar grad
    double largest = 0;
    for (const auto& in : a.inputs)
      for (const auto& t : in) largest = std::max(largest, product(t));
    return largest;
  }
  const Dims* x = tensor(a, 0);
  return x ? product(*x) : 0;
}

// Ops on fewer elements are launch-latency bound (the 0-dim fill_ of the loss gradient seed):
// their time says nothing per element, so they take no op-rate slot.
constexpr double kMinRateElements = 1024;

// Kernel names that betray the class when no op says it.
TorchOpClass class_from_kernel(const std::string& kernel) {
  const std::string l = lower(kernel);
  if (contains(l, "nccl")) return TorchOpClass::kCommunication;
  if (contains(l, "flash") || contains(l, "fmha") || contains(l, "attention")) return TorchOpClass::kAttention;
  if (contains(l, "gemm") || contains(l, "cutlass") || contains(l, "xmma") || contains(l, "cublas"))
    return TorchOpClass::kGemm;
  return TorchOpClass::kOther;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TorchTrace parse_torch_trace(const json& trace, const std::string& source, const TorchTraceOptions& options) {
  TorchTrace out;
  out.source = source;
  const json* events = nullptr;
  if (trace.is_array()) {
    events = &trace;
  } else if (trace.is_object()) {
    if (!trace.contains("traceEvents"))
      throw ScenarioError(source + ": traceEvents", "missing: not a PyTorch profiler (Kineto) trace; expected "
                                                    "{\"traceEvents\": [...]} as export_chrome_trace writes it");
    events = &trace["traceEvents"];
    if (!events->is_array()) throw ScenarioError(source + ": traceEvents", "expected a list of events");
    if (trace.contains("deviceProperties")) {
      const json& dp = trace["deviceProperties"];
      if (!dp.is_array()) throw ScenarioError(source + ": deviceProperties", "expected a list of devices");
      if (!dp.empty()) {
        if (!dp[0].is_object() || (dp[0].contains("name") && !dp[0]["name"].is_string()))
          throw ScenarioError(source + ": deviceProperties[0].name", "expected a device name string");
        out.device_name = dp[0].value("name", std::string());
      }
    }
  } else {
    throw ScenarioError(source, "expected a JSON object with \"traceEvents\" (a PyTorch profiler trace)");
  }
  if (events->empty()) throw ScenarioError(source + ": traceEvents", "empty: the profiler recorded nothing");

  Parsed p;
  for (std::size_t i = 0; i < events->size(); ++i) {
    Kind kind;
    Event ev = read_event((*events)[i], static_cast<int>(i), source, kind);
    if (kind == Kind::kHost) p.hosts.push_back(std::move(ev));
    else if (kind == Kind::kRuntime) p.runtimes.push_back(std::move(ev));
    else if (kind == Kind::kDevice) p.devices.push_back(std::move(ev));
  }
  if (p.devices.empty())
    throw ScenarioError(source + ": traceEvents", "no GPU kernels (cat \"kernel\"): was the trace recorded with "
                                                  "activities=[ProfilerActivity.CUDA]?");
  nest_hosts(p);
  int shared_ids = 0;  // ops whose External id another op holds: their kernels go to one of them
  for (int h = 0; h < static_cast<int>(p.hosts.size()); ++h) {
    const long long id = arg_id(p.hosts[h], "External id");
    if (!id) continue;
    auto [it, fresh] = p.host_by_external.emplace(id, h);
    const bool op = lower(p.hosts[h].cat) == "cpu_op", kept_op = lower(p.hosts[it->second].cat) == "cpu_op";
    // Prefer the op over an annotation that shares its id.
    if (!fresh && !kept_op && op) it->second = h;
    else if (!fresh && kept_op && op) ++shared_ids;
  }
  if (shared_ids > 0)
    out.warnings.push_back(std::to_string(shared_ids) + " ops share an External id with another op (the profiler "
                           "gives each op its own): their kernels are attributed to one of them");
  for (int r = 0; r < static_cast<int>(p.runtimes.size()); ++r)
    if (const long long c = arg_id(p.runtimes[r], "correlation")) p.runtime_by_corr.emplace(c, r);

  // ---- the step ----
  std::vector<int> steps;
  for (int h = 0; h < static_cast<int>(p.hosts.size()); ++h)
    if (starts_with(p.hosts[h].name, "ProfilerStep#")) steps.push_back(h);
  std::sort(steps.begin(), steps.end(), [&](int a, int b) { return p.hosts[a].ts_us < p.hosts[b].ts_us; });
  double step_begin = -HUGE_VAL, step_end = HUGE_VAL;
  if (!steps.empty()) {
    int chosen = steps.back();
    if (options.step >= 0) {
      chosen = -1;
      std::string names;
      for (int h : steps) {
        names += (names.empty() ? "" : ", ") + p.hosts[h].name;
        if (p.hosts[h].name == "ProfilerStep#" + std::to_string(options.step)) chosen = h;
      }
      if (chosen < 0)
        throw ScenarioError("--step", "no ProfilerStep#" + std::to_string(options.step) + " in " + source +
                                          "; it has " + names);
    } else if (steps.size() > 1) {
      out.warnings.push_back(std::to_string(steps.size()) + " profiler steps in the trace; reading the last, " +
                             p.hosts[chosen].name + " (--step N picks another)");
    }
    out.step_name = p.hosts[chosen].name;
    step_begin = p.hosts[chosen].ts_us;
    step_end = p.hosts[chosen].end_us();
    out.step_time_s = p.hosts[chosen].dur_us * 1e-6;
    if (out.step_time_s <= 0)
      throw ScenarioError(source + ": traceEvents[" + std::to_string(p.hosts[chosen].index) + "].dur",
                          out.step_name + " has zero duration");
  } else {
    out.warnings.push_back("no ProfilerStep#N annotation (profile with torch.profiler.schedule and call "
                           "prof.step()): the step time is the span of the GPU work");
  }
  auto in_step = [&](double ts) { return ts >= step_begin - 1e-3 && ts <= step_end + 1e-3; };

  // ---- link each device event to its op ----
  struct Group {
    int host = -1;
    std::vector<int> devices;
  };
  std::map<int, Group> by_host;       // host index -> kernels
  std::vector<Group> unlinked;
  std::vector<std::pair<double, double>> intervals;
  for (int d = 0; d < static_cast<int>(p.devices.size()); ++d) {
    const Event& dev = p.devices[d];
    int host = -1;
    if (const long long id = arg_id(dev, "External id")) {
      const auto it = p.host_by_external.find(id);
      if (it != p.host_by_external.end()) host = it->second;
    }
    double launch_ts = dev.ts_us;
    if (const long long c = arg_id(dev, "correlation")) {
      const auto it = p.runtime_by_corr.find(c);
      if (it != p.runtime_by_corr.end()) {
        const Event& rt = p.runtimes[it->second];
        launch_ts = rt.ts_us;
        if (host < 0) {
          if (const long long id = arg_id(rt, "External id")) {
            const auto h = p.host_by_external.find(id);
            if (h != p.host_by_external.end()) host = h->second;
          }
        }
        if (host < 0) host = innermost_host(p, rt.thread, rt.ts_us, rt.end_us());
      }
    }
    // A launch from a step-annotation-only context (no op) is not an op.
    if (host >= 0 && starts_with(p.hosts[host].name, "ProfilerStep#")) host = -1;
    const double when = host >= 0 ? p.hosts[host].ts_us : launch_ts;
    if (!in_step(when)) continue;
    ++out.kernels;
    intervals.emplace_back(dev.ts_us, dev.end_us());
    if (host >= 0) {
      Group& g = by_host[host];
      g.host = host;
      g.devices.push_back(d);
    } else {
      ++out.unlinked_kernels;
      unlinked.push_back(Group{-1, {d}});
    }
  }
  {
    // A stream runs one kernel at a time: kernels of one stream that overlap (beyond the
    // exporters' nanosecond rounding) mean times that were edited or merged from several runs.
    std::map<std::string, std::vector<std::pair<double, double>>> by_stream;
    for (const Event& dev : p.devices) by_stream[dev.thread].emplace_back(dev.ts_us, dev.end_us());
    int overlapping = 0;
    double worst_us = 0;
    for (auto& [stream, spans] : by_stream) {
      std::sort(spans.begin(), spans.end());
      double end = -HUGE_VAL;
      for (const auto& [b, e] : spans) {
        if (b < end - 1e-3) ++overlapping, worst_us = std::max(worst_us, end - b);
        end = std::max(end, e);
      }
    }
    if (overlapping > 0) {
      char text[200];
      std::snprintf(text, sizeof text, "%d %s before the previous kernel of %s stream ends (by up to %.3g us): "
                    "a stream runs one kernel at a time, so the trace's kernel times are suspect", overlapping,
                    overlapping == 1 ? "kernel starts" : "kernels start", overlapping == 1 ? "its" : "their", worst_us);
      out.warnings.push_back(text);
    }
  }
  if (out.kernels == 0)
    throw ScenarioError(source + ": traceEvents", "no GPU kernels inside " +
                                                      (out.step_name.empty() ? std::string("the trace") : out.step_name));
  std::sort(intervals.begin(), intervals.end());
  {
    double busy = 0, cur_b = intervals[0].first, cur_e = intervals[0].second;
    for (const auto& [b, e] : intervals) {
      if (b > cur_e) {
        busy += cur_e - cur_b;
        cur_b = b;
        cur_e = e;
      } else {
        cur_e = std::max(cur_e, e);
      }
    }
    busy += cur_e - cur_b;
    out.gpu_busy_s = busy * 1e-6;
    // Kernels that all last 0 us carry no time to fit a rate to (a trace written without CUPTI
    // timestamps, or edited).
    if (out.gpu_busy_s <= 0)
      throw ScenarioError(source + ": traceEvents",
                          (out.kernels == 1 ? std::string("the one GPU kernel inside ")
                                            : "all " + std::to_string(out.kernels) + " GPU kernels inside ") +
                              (out.step_name.empty() ? std::string("the trace") : out.step_name) +
                              (out.kernels == 1 ? " lasts" : " last") + " 0 us: no GPU time to fit");
    if (steps.empty()) {
      double last = -HUGE_VAL;
      for (const auto& iv : intervals) last = std::max(last, iv.second);
      out.step_time_s = (last - intervals.front().first) * 1e-6;
    }
  }

  // ---- token count: the rows of aten::linear inputs, else the commonest GEMM dimension ----
  out.tokens = options.tokens;
  if (out.tokens <= 0) {
    std::map<double, int> votes;
    for (const Event& h : p.hosts) {
      const std::string n = strip_aten(h.name);
      if (n != "linear" || !in_step(h.ts_us)) continue;
      const OpArgs a = read_op_args(h, source + ": traceEvents[" + std::to_string(h.index) + "]");
      if (const Dims* x = tensor(a, 0); x && x->size() >= 2) ++votes[product(*x, 0, x->size() - 1)];
    }
    int best = 0;
    for (const auto& [t, v] : votes)
      if (v > best) best = v, out.tokens = t;
  }

  // ---- classify ----
  auto ancestors_have = [&](int h, auto pred) {
    for (int up = h; up >= 0; up = p.hosts[up].parent)
      if (pred(p.hosts[up].name)) return true;
    return false;
  };
  bool causal_assumed = false;
  int gemm_without_shapes = 0;
  std::map<double, int> gemm_dim_votes;
  std::map<int, double> slot_elements_of;  // op-rate slot host ops -> their elements (carried once)
  for (auto& [h, g] : by_host) {
    TorchTraceOp op;
    const Event& first = p.devices[g.devices.front()];
    op.kernel = first.name;
    op.kernels = static_cast<int>(g.devices.size());
    for (int d : g.devices) op.gpu_time_s += p.devices[d].dur_us * 1e-6;
    op.backward = ancestors_have(h, is_backward_name);
    const TorchOpClass by_kernel = class_from_kernel(first.name);
    int cls_host = h;
    if (by_kernel == TorchOpClass::kCommunication || ancestors_have(h, is_communication_name)) {
      op.cls = TorchOpClass::kCommunication;
    } else if (ancestors_have(h, is_optimizer_name)) {
      op.cls = TorchOpClass::kOptimizer;
    } else {
      op.cls = TorchOpClass::kOther;
      for (int up = h; up >= 0; up = p.hosts[up].parent) {
        const std::string& name = p.hosts[up].name;
        const std::string n = strip_aten(name);
        if (attention_sig(name)) op.cls = TorchOpClass::kAttention;
        else if (starts_with(name, "aten::") && kGemmOps.count(n)) op.cls = TorchOpClass::kGemm;
        else if (starts_with(name, "aten::") && kElementwiseOps.count(n)) op.cls = TorchOpClass::kElementwise;
        else continue;
        cls_host = up;
        break;
      }
      // The op chain says nothing (a custom op): trust a GEMM or attention kernel name.
      if (op.cls == TorchOpClass::kOther &&
          (by_kernel == TorchOpClass::kGemm || by_kernel == TorchOpClass::kAttention))
        op.cls = by_kernel;
    }
    const Event& host = p.hosts[cls_host];
    op.event = host.index;
    op.name = host.name;
    const std::string where = source + ": traceEvents[" + std::to_string(host.index) + "]";
    if (op.cls == TorchOpClass::kGemm || op.cls == TorchOpClass::kAttention ||
        op.cls == TorchOpClass::kElementwise) {
      const OpArgs a = read_op_args(host, where);
      for (std::size_t j = 0; j < a.types.size() && op.dtype.empty(); ++j) op.dtype = dtype_name(a.types[j]);
      if (op.cls == TorchOpClass::kGemm) {
        if (!a.has_dims || !gemm_dims(op.name, a, where, op)) {
          ++gemm_without_shapes;
        } else {
          ++gemm_dim_votes[op.m];
          ++gemm_dim_votes[op.n];
          ++gemm_dim_votes[op.k];
        }
      } else if (op.cls == TorchOpClass::kAttention) {
        if (const AttentionSig* sig = attention_sig(op.name)) {
          int causal = causal_of(*sig, a);
          for (int up = p.hosts[cls_host].parent; causal < 0 && up >= 0; up = p.hosts[up].parent)
            if (const AttentionSig* s2 = attention_sig(p.hosts[up].name))
              causal = causal_of(*s2, read_op_args(p.hosts[up], source + ": traceEvents[" +
                                                                    std::to_string(p.hosts[up].index) + "]"));
          if (causal < 0) causal_assumed = true;
          op.causal = causal != 0;
          op.attention_kernel = flash_generation(op.kernel);
          if (!attention_flop(*sig, a, op))
            out.warnings.push_back(op.name + " (traceEvents[" + std::to_string(host.index) +
                                   "]) has no [b, h, s, d] shapes: timed, not fitted");
        }
      } else {
        op.bytes = elementwise_bytes(op.name, a, 2);
        const std::string n = strip_aten(op.name);
        op.relayout = n == "cat" || ((n == "copy_" || n == "clone" || n == "contiguous" || n == "_to_copy") &&
                                     has_permuted_input(host, a));
        if (const Dims* x = tensor(a, 0)) op.elements = product(*x);
      }
    }
    // The op_rates slot: the innermost aten ancestor that has one (native_layer_norm rather than
    // the layer_norm around it; the embedding around index_select). Gradient accumulation's adds
    // are not residuals.
    if ((op.cls == TorchOpClass::kElementwise || op.cls == TorchOpClass::kOther) &&
        !ancestors_have(h, [](const std::string& n) { return contains(n, "AccumulateGrad"); })) {
      for (int up = h; up >= 0; up = p.hosts[up].parent) {
        const std::string& name = p.hosts[up].name;
        if (!starts_with(name, "aten::")) continue;
        const char* slot = op_rate_slot(strip_aten(name));
        if (!slot) continue;
        const bool first_use = !slot_elements_of.count(up);
        if (first_use)
          slot_elements_of[up] = slot_elements(strip_aten(name), read_op_args(p.hosts[up], source + ": traceEvents[" +
                                                                                          std::to_string(p.hosts[up].index) + "]"));
        if (slot_elements_of[up] < kMinRateElements) break;
        op.slot = slot;
        op.slot_op = strip_aten(name);
        // Several trace ops (kernels launched by ops nested in it) share the slot op's elements.
        op.elements = first_use ? slot_elements_of[up] : 0;
        break;
      }
    }
    out.ops.push_back(std::move(op));
  }
  for (const Group& g : unlinked) {
    TorchTraceOp op;
    const Event& dev = p.devices[g.devices.front()];
    op.name = op.kernel = dev.name;
    op.kernels = 1;
    op.gpu_time_s = dev.dur_us * 1e-6;
    op.cls = class_from_kernel(dev.name);
    out.ops.push_back(std::move(op));
  }
  if (causal_assumed)
    out.warnings.push_back("is_causal is not in the trace's \"Concrete Inputs\" (PyTorch < 2.1?): attention "
                           "assumed causal");
  if (gemm_without_shapes > 0)
    out.warnings.push_back(std::to_string(gemm_without_shapes) + " GEMM ops have no \"Input Dims\" "
                           "(record_shapes=True records them): timed, not fitted");
  if (out.unlinked_kernels > 0)
    out.warnings.push_back(std::to_string(out.unlinked_kernels) + " kernels link to no host op (no External "
                           "id, no launch with their correlation id): classified by kernel name");
  if (out.tokens <= 0) {
    int best = 0;
    for (const auto& [dim, v] : gemm_dim_votes)
      if (v > best) best = v, out.tokens = dim;
  }

  // ---- weight dims, pass and label of each GEMM ----
  double qkv_out = 0, attn_in = 0, up = 0, down_in = 0, vocab = 0, h = 0;
  if (options.model) {
    const ModelSpec& m = *options.model;
    const int tp = std::max(1, options.tp);
    h = static_cast<double>(m.hidden);
    // A fused QKV projection (MLA's separate latent projections are not labelled).
    qkv_out = (query_width(m) + key_value_width(m)) / tp;
    attn_in = context_width(m) / tp;
    up = static_cast<double>(m.ffn_hidden) * (m.ffn_act == FfnActivation::kSwiglu ? 2 : 1) / tp;
    down_in = static_cast<double>(m.ffn_hidden) / tp;
    vocab = static_cast<double>(m.vocab) / tp;
  }
  for (TorchTraceOp& op : out.ops) {
    if (op.cls != TorchOpClass::kGemm || op.flop <= 0 || op.batch != 1 || out.tokens <= 0) continue;
    const double t = out.tokens;
    // Weight [out, in]: forward C[T, out] = X[T, in] W^T; dgrad C[T, in] = G[T, out] W; wgrad
    // C[out, in] = G^T[out, T] X[T, in].
    if (op.k == t && op.m != t) {
      op.pass = "wgrad";
      op.weight_a = op.m, op.weight_b = op.n;
    } else if (op.m == t) {
      op.pass = op.backward ? "dgrad" : "forward";
      if (op.backward) op.weight_a = op.k, op.weight_b = op.n;
      else op.weight_a = op.n, op.weight_b = op.k;
    } else if (op.n == t) {
      op.pass = op.backward ? "dgrad" : "forward";
      op.weight_a = op.m, op.weight_b = op.k;
    } else {
      continue;
    }
    if (options.model) {
      auto is = [&](double o, double i) { return op.weight_a == o && op.weight_b == i; };
      if (is(qkv_out, h)) op.label = "qkv";
      else if (is(h, attn_in)) op.label = "attn_out";
      else if (is(up, h)) op.label = "mlp_up";
      else if (is(h, down_in)) op.label = "mlp_down";
      else if (is(vocab, h)) op.label = "logits";
    }
  }
  for (const TorchTraceOp& op : out.ops) {
    TorchClassTime& c = out.classes[static_cast<int>(op.cls)];
    c.gpu_time_s += op.gpu_time_s;
    c.kernels += op.kernels;
    c.ops += 1;
    c.flop += op.flop;
    c.bytes += op.bytes;
  }
  return out;
}

TorchTrace read_torch_trace(const std::string& path, const TorchTraceOptions& options) {
  const std::string text = read_input_file(path, "trace");
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b)
    throw ScenarioError(path, "gzip-compressed: decompress it first (gunzip -k " + path + ")");
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw ScenarioError(path, "empty file");
  json j;
  try {
    j = parse_json_text(text, path, DuplicateKeys::kKeepLast);  // profiler output
  } catch (const JsonSyntaxError& e) {
    if (e.number_overflow()) throw;
    throw ScenarioError(path + ":" + std::to_string(e.line()) + ":" + std::to_string(e.column()),
                        std::string(e.at_end() ? "the JSON ends early (a trace cut off while it was written?)"
                                               : "malformed JSON") + ": " + e.reason());
  }
  return parse_torch_trace(j, path, options);
}

std::string match_gpu_preset(const std::string& device_name, const std::vector<std::string>& presets) {
  auto tokens = [](const std::string& s) {
    std::vector<std::string> t;
    std::string cur;
    for (char c : s) {
      if (std::isalnum(static_cast<unsigned char>(c))) cur += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      else if (!cur.empty()) t.push_back(cur), cur.clear();
    }
    if (!cur.empty()) t.push_back(cur);
    return t;
  };
  const auto dev = tokens(device_name);
  std::string best;
  int best_score = 0;
  for (const auto& preset : presets) {
    const auto pt = tokens(preset);
    if (pt.empty() || std::find(dev.begin(), dev.end(), pt[0]) == dev.end()) continue;  // the model: A100, H100
    int score = 0;
    for (const auto& t : pt) score += std::find(dev.begin(), dev.end(), t) != dev.end();
    if (score > best_score) best_score = score, best = preset;
  }
  return best;
}

namespace {
// The GPU's peak for a trace's dtype name (bf16 for a name no plan computes in).
double peak_for(const GpuSpec& gpu, const std::string& dtype) {
  Precision p = Precision::kBf16;  // left as it is when the name is none a plan computes in
  precision_of_dtype(dtype, p);
  return gpu.peak_flops(p);
}

// What the calibration file of a fit holds for the GPU (calibrate_gpu reads these): the nominal
// peak its efficiencies are shares of, the training-loop share, the GEMM rows, the achieved
// elementwise bandwidth.
json gpu_calibration_json(const TorchTraceFit& fit, const std::string& gpu_name) {
  json c;
  c["format"] = "trainsim-calibration";
  c["version"] = 1;
  json gemm = json::array();
  for (const auto& s : fit.gemm_shapes)
    gemm.push_back({{"dtype", s.dtype}, {"label", s.label.empty() ? "other" : s.label}, {"pass", s.pass},
                    {"m", s.m}, {"n", s.n}, {"k", s.k}, {"calls", s.calls}, {"time_s", s.time_s},
                    {"flop", s.flop}, {"flop_per_s", s.time_s > 0 ? s.flop / s.time_s : 0.0},
                    {"efficiency", s.efficiency}});
  // The efficiencies are shares of the GPU's nominal peak (the trace measures no peak of its own).
  json peaks = json::object();
  if (fit.peak_flop_per_s > 0)
    peaks[fit.dtype] = {{"flop_per_s", fit.peak_flop_per_s},
                        {"source", "nominal peak of " + gpu_name + ": the efficiencies are shares of it"}};
  c["peak_flop_per_s"] = peaks;
  // The trace's kernels ran in the training loop: their rates already hold what the loop costs.
  c["training_tensor_share"] = 1.0;
  c["gemm"] = gemm;
  // A share below the least a GPU's kernels reach is not written: fit_torch_trace refuses it.
  if (fit.memory_bandwidth_share >= kMinMemoryBandwidthShare) c["memory_bandwidth_share"] = fit.memory_bandwidth_share;
  // The FlashAttention calls, one point per shape, named by the kernel that ran: the kernel the
  // plan prices (fit_kernel_params fits its share to them), unlike calibrate's own attention.
  json ops = json::array();
  for (const TorchAttentionShape& x : fit.attention_shapes) {
    const AttentionShape& a = x.shape;
    char shape[160];
    std::snprintf(shape, sizeof shape, "batch=%.0f seq=%.0f seq_kv=%.0f heads=%.0f head_dim=%.0f", a.batch, a.seq_q,
                  a.seq_kv, a.heads, a.head_dim);
    ops.push_back({{"op", x.backward ? "attention_bwd" : "attention_fwd"}, {"kernel", x.kernel}, {"shape", shape},
                   {"causal", a.causal}, {"calls", x.calls}, {"time_s", x.time_s / x.calls},
                   {"flop", x.flop / x.calls}});
  }
  c["ops"] = ops;
  return c;
}
}  // namespace

TorchTraceFit fit_torch_trace(const TorchTrace& trace, const GpuSpec& gpu) {
  TorchTraceFit fit;
  // The GEMM dtype with the most GPU time.
  std::map<std::string, double> time_by_dtype;
  int gemm_ops = 0, gemm_with_shapes = 0;
  for (const auto& op : trace.ops) {
    if (op.cls != TorchOpClass::kGemm) continue;
    ++gemm_ops;
    if (op.flop > 0) ++gemm_with_shapes;
    if (op.weight_a > 0) time_by_dtype[op.dtype.empty() ? "bf16" : op.dtype] += op.gpu_time_s;
  }
  if (gemm_ops == 0)
    throw ScenarioError(trace.source + ": traceEvents",
                        "no GEMM kernels (aten::mm, addmm, bmm, matmul, linear) in " +
                            (trace.step_name.empty() ? std::string("the trace") : trace.step_name) +
                            ": nothing to fit the GEMM share to");
  if (gemm_with_shapes == 0)
    throw ScenarioError(trace.source + ": traceEvents",
                        std::to_string(gemm_ops) + " GEMM ops but none with \"Input Dims\": record the trace "
                        "with torch.profiler.profile(record_shapes=True)");
  if (time_by_dtype.empty())
    throw ScenarioError(trace.source + ": traceEvents",
                        "no GEMM has a dimension equal to the token count (" + std::to_string(trace.tokens) +
                            "): give the scenario the trace ran (--scenario) so the weight dimensions can be told");
  double most = -1;
  for (const auto& [d, t] : time_by_dtype)
    if (t > most) most = t, fit.dtype = d;
  fit.peak_flop_per_s = peak_for(gpu, fit.dtype);
  if (fit.peak_flop_per_s <= 0)
    throw ScenarioError("gpu", gpu.name + " has no " + fit.dtype + " peak rate for the trace's GEMMs");

  std::map<std::tuple<std::string, std::string, double, double, double>, TorchGemmShape> shapes;
  for (const auto& op : trace.ops) {
    if (op.cls != TorchOpClass::kGemm) continue;
    if (op.weight_a <= 0) {
      ++fit.gemms_unfitted;
      continue;
    }
    const std::string dtype = op.dtype.empty() ? "bf16" : op.dtype;
    if (peak_for(gpu, dtype) <= 0) continue;
    TorchGemmShape& s = shapes[{dtype, op.pass, trace.tokens, op.weight_a, op.weight_b}];
    s.dtype = dtype;
    s.pass = op.pass;
    s.label = op.label;
    s.m = trace.tokens;
    s.n = op.weight_a;
    s.k = op.weight_b;
    s.calls += 1;
    s.time_s += op.gpu_time_s;
    s.flop += op.flop;
  }
  // No op runs faster than the GPU's fastest tensor-core rate (2x for 2:4 sparsity): a GEMM
  // that appears to is a trace whose times are not this GPU's (or not times at all).
  const double fastest = 2 * std::max({gpu.peak_flops_fp8, gpu.peak_flops_bf16, gpu.peak_flops_fp16,
                                       gpu.peak_flops_fp32});
  auto check_rate = [&](const TorchTraceOp& op) {
    if (op.gpu_time_s > 0 && op.flop / op.gpu_time_s > fastest) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "%.3g FLOP in %.3g s of kernels is %.3g FLOP/s, above twice %s's fastest peak "
                    "(%.3g): the kernel times are not plausible",
                    op.flop, op.gpu_time_s, op.flop / op.gpu_time_s, safe_excerpt(gpu.name).c_str(), fastest / 2);
      throw ScenarioError(trace.source + ": traceEvents[" + std::to_string(op.event) + "] (" +
                              safe_excerpt(op.name, 60) + ")",
                          buf);
    }
  };
  for (const auto& op : trace.ops)
    if (op.cls == TorchOpClass::kGemm || op.cls == TorchOpClass::kAttention) check_rate(op);
  for (auto& [key, s] : shapes) {
    s.efficiency = s.time_s > 0 ? s.flop / s.time_s / peak_for(gpu, s.dtype) : 0;
    if (s.efficiency > 0) fit.gemm_shapes.push_back(s);
  }
  double af = 0, at = 0, bf = 0, bt = 0, eb = 0, et = 0;
  std::map<std::tuple<std::string, bool, double, double, double, double, double, double, bool>, TorchAttentionShape>
      attention_by_shape;
  for (const auto& op : trace.ops) {
    if (op.cls == TorchOpClass::kAttention && op.flop > 0) {
      const double peak = op.dtype.empty() || peak_for(gpu, op.dtype) <= 0 ? fit.peak_flop_per_s : peak_for(gpu, op.dtype);
      const bool bwd = op.backward || contains(op.name, "backward");
      (bwd ? bf : af) += op.flop / peak;
      (bwd ? bt : at) += op.gpu_time_s;
      if (!op.attention_kernel.empty() && op.gpu_time_s > 0) {
        const AttentionShape& a = op.attention;
        const auto key = std::make_tuple(op.attention_kernel, bwd, a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv,
                                         a.head_dim, a.causal);
        auto [it, added] = attention_by_shape.try_emplace(key);
        TorchAttentionShape& x = it->second;
        if (added) x.kernel = op.attention_kernel, x.backward = bwd, x.shape = a;
        ++x.calls;
        x.time_s += op.gpu_time_s;
        x.flop += op.flop;
      }
    } else if (op.cls == TorchOpClass::kElementwise && op.bytes > 0) {
      eb += op.bytes;
      et += op.gpu_time_s;
    }
  }
  for (auto& [key, x] : attention_by_shape) fit.attention_shapes.push_back(x);
  // The kernel model's memory-bound share: the HBM share the trace's streaming kernels reach
  // (their minimum traffic over their time, each kernel's fixed time off). Norms, reductions over
  // the tokens and relayouts are left out: the model prices them at their own rates relative to
  // this one (the preset's ratios, from their kernel benchmarks).
  {
    double bytes = 0, busy_s = 0;
    for (const auto& op : trace.ops) {
      if (op.cls != TorchOpClass::kElementwise || !(op.bytes > 0) || op.relayout || priced_as_norm(strip_aten(op.name)))
        continue;
      const double busy = op.gpu_time_s - op.kernels * kernel_fixed_s(gpu);
      if (!(busy > 0)) continue;
      bytes += op.bytes;
      busy_s += busy;
    }
    const double model_s = gpu.hbm_bandwidth_bytes_per_s > 0 ? bytes / gpu.hbm_bandwidth_bytes_per_s : 0,
                 measured_s = busy_s;
    if (model_s > 0 && measured_s > 0) fit.memory_bandwidth_share = std::min(1.0, model_s / measured_s);
  }
  fit.attention_forward_efficiency = at > 0 ? af / at : 0;
  fit.attention_backward_efficiency = bt > 0 ? bf / bt : 0;
  fit.attention_efficiency = at + bt > 0 ? (af + bf) / (at + bt) : 0;
  fit.elementwise_bytes_per_s = et > 0 ? eb / et : 0;

  // The GPU as the file this fit writes calibrates it (--calibration takes the same route):
  // the GEMM share fitted with the fitted memory-bound share bounding the GEMMs' HBM roofline.
  const bool priced_dtype = precision_of_dtype(fit.dtype, fit.precision);
  const Precision fit_precision = fit.precision;
  fit.gpu = gpu;
  std::vector<GemmFamilyFit> family_fits;
  try {
    calibrate_gpu(gpu_calibration_json(fit, gpu.name), fit.gpu, &family_fits);
    // A share below 1% of the bandwidth says the elementwise times are not this GPU's kernels; the
    // GEMMs' verdict on such a trace (calibrate_gpu's) comes first, then this one.
    const double share = fit.memory_bandwidth_share;
    if (share > 0 && share < kMinMemoryBandwidthShare) {
      char what[200];
      std::snprintf(what, sizeof what,
                    "the streaming elementwise kernels reach %.3g of the GPU's HBM bandwidth, below the %.2g a "
                    "GPU's kernels reach: they are not timings of this GPU",
                    share, kMinMemoryBandwidthShare);
      throw ScenarioError("", what);
    }
  } catch (const ScenarioError& e) {
    // A share below 1% of the GPU's rate: not a GPU's GEMMs (a trace with absurd times).
    throw ScenarioError(trace.source + ": traceEvents", e.message());
  }
  for (const GemmFamilyFit& f : family_fits)
    if (priced_dtype && f.family == gemm_share_family(fit.gpu, fit_precision)) fit.gemm = f.fit;
  const GpuSpec& fitted = fit.gpu;
  for (TorchGemmShape& s : fit.gemm_shapes) {
    Precision p = fit_precision;
    if (fit.gemm.share > 0 && precision_of_dtype(s.dtype, p))
      s.fitted_efficiency = gemm_efficiency_from_shape(fitted, {s.m, s.n, s.k, 1}, p);
  }

  for (const auto& op : trace.ops) {
    double t = op.gpu_time_s;
    Precision p = fit_precision;
    if (op.cls == TorchOpClass::kGemm && op.flop > 0 && fit.gemm.share > 0 &&
        (op.dtype.empty() || precision_of_dtype(op.dtype, p))) {
      const GemmShape shape{op.m, op.n, op.k, std::max(1.0, op.batch)};
      const double eff = gemm_efficiency_from_shape(fitted, shape, p);
      if (eff > 0) t = op.flop / (fitted.peak_flops(gemm_dtype_on(fitted, p)) * eff);
    } else if (op.cls == TorchOpClass::kAttention && op.flop > 0) {
      const bool bwd = op.backward || contains(op.name, "backward");
      const AttentionKernel kernel =
          fused_attention_kernel(op.attention_kernel) == AttentionKernel::kFlash3 ? AttentionKernel::kFlash3
                                                                                  : AttentionKernel::kFlash2;
      const AttentionKernelParams& fitted_kernel =
          kernel == AttentionKernel::kFlash3 ? fitted.kernel.flash3 : fitted.kernel.flash2;
      if (!op.attention_kernel.empty() && fitted_kernel.present()) {
        AttentionShape a = op.attention;
        a.kernel = kernel;
        t = attention_time_s(fitted, a, bwd ? Pass::kBackwardInput : Pass::kForward, op.flop);
      } else {
        const double e = bwd ? fit.attention_backward_efficiency : fit.attention_forward_efficiency;
        const double peak = op.dtype.empty() || peak_for(gpu, op.dtype) <= 0 ? fit.peak_flop_per_s : peak_for(gpu, op.dtype);
        if (e > 0) t = op.flop / (peak * e);
      }
    } else if (op.cls == TorchOpClass::kElementwise && op.bytes > 0 && fit.memory_bandwidth_share > 0) {
      const std::string n = strip_aten(op.name);
      t = op.kernels * kernel_fixed_s(fitted) +
          (op.relayout ? relayout_time_s(fitted, op.bytes)
           : priced_as_norm(n) ? norm_time_s(fitted, op.bytes)
                               : memory_bound_time_s(fitted, op.bytes));
    }
    fit.predicted_s[static_cast<int>(op.cls)] += t;
  }
  return fit;
}

namespace {

// The trace's class of a workload compute op.
TorchOpClass class_of(const ComputeOp& op) {
  switch (op.kind) {
    case ComputeKind::kGemm: return TorchOpClass::kGemm;
    case ComputeKind::kAttention: return TorchOpClass::kAttention;
    case ComputeKind::kOptimizer: return TorchOpClass::kOptimizer;
    case ComputeKind::kMemoryBound: break;
  }
  const bool other =
      op.role == OpRole::kSoftmaxXent || op.role == OpRole::kFusedSoftmaxXent || op.role == OpRole::kEmbedding;
  return other ? TorchOpClass::kOther : TorchOpClass::kElementwise;
}

}  // namespace

ModelStepClasses model_step_classes(const Scenario& sc) {
  ModelStepClasses out;
  Workload w;
  Result r;
  // The profiled rank's kernels run at its own pace; the job's wait for its slowest GPU
  // (slowest_gpu_slowdown) is in the step, not in that rank's kernels.
  Scenario own = sc;
  own.cluster.gpu.speed_spread = 0;
  if (!build_workload(own, w, r) || !r.feasible) {
    out.feasible = false;
    out.reason = r.reason;
  }
  if (w.stages.empty()) return out;
  // The first device's op graph, op by op, as the estimate prices it (compute_op_time_s): the
  // same ops and times the tiers use, sorted into the trace's classes.
  const GpuSpec& gpu = sc.cluster.gpu;
  out.op_rates = gpu.op_rates.present();
  const double mb = w.micro_batches;
  for (const ChunkProgram& ch : w.programs.front().chunks)
    for (const PassProgram& prog : ch.pass)
      for (const OpBlock& b : prog.blocks)
        for (std::size_t i = 0; i < b.compute.size(); ++i) {
          const ComputeOp& op = b.compute[i];
          const double launch = out.op_rates ? 0.0 : op.kernels * kernel_fixed_s(gpu);
          out.class_s[static_cast<int>(class_of(op))] += mb * b.repeat * (b.compute_s[i] - launch);
          out.launch_s += mb * b.repeat * launch;
          if (op.kind == ComputeKind::kGemm) out.gemm_flop += mb * b.repeat * op.flop;
        }
  const StageWork& st = w.stages.front();
  out.class_s[static_cast<int>(TorchOpClass::kCommunication)] =
      st.dp_reduce_s + mb * (st.tp_comm_s + st.cp_comm_s + st.ep_comm_s + st.zero3_comm_s);
  out.class_s[static_cast<int>(TorchOpClass::kOptimizer)] += w.optimizer_s;
  out.compute_s = mb * (st.forward_compute_s + st.backward_compute_s);
  const Result est = estimate(sc);
  out.step_s = est.step_time_s;
  if (!est.feasible) out.feasible = false, out.reason = est.reason;
  return out;
}

const TorchOpRateSlot* TorchOpRates::slot(const std::string& name) const {
  for (const auto& s : slots)
    if (s.name == name) return &s;
  return nullptr;
}

namespace {
// Minimum traffic per element of each slot, in element accesses (reads + writes), for a slot
// the trace has no op for: its time at the fitted elementwise bandwidth.
struct SlotDef {
  const char* name;
  double accesses;
  const char* traffic;
};
const SlotDef kSlotDefs[] = {
    {"layernorm_fwd", 2, "read x, write y"},
    {"layernorm_bwd", 3, "read dy and x, write dx"},
    {"gelu_fwd", 2, "read x, write y"},
    {"gelu_bwd", 3, "read dy and x, write dx"},
    {"residual_add", 3, "read 2, write 1"},
    {"softmax_xent", 6, "log-softmax read + write, its gradient read 2 + write 1, the loss gradient write"},
    {"embedding_fwd", 2, "gather a row element, write it"},
    {"embedding_bwd", 2, "read the gradient, accumulate into the table"},
    {"copy", 2, "read, write"},
    {"fill_zero", 1, "write"},
};
double activation_size(const std::string& dtype) { return dtype == "f32" ? 4 : 2; }  // fp8 trains with bf16 activations
}  // namespace

TorchOpRates torch_trace_op_rates(const TorchTrace& trace, const TorchTraceFit& fit, const Scenario& sc) {
  TorchOpRates out;
  const ModelSpec& m = sc.model;
  const ParallelPlan& p = sc.plan;
  out.shape = {m.layers, static_cast<int>(m.hidden), m.heads, static_cast<int>(m.seq_len), static_cast<int>(m.vocab),
               static_cast<int>(p.micro_batch), p.tp, p.pp, p.dp, p.zero_stage};
  out.peak_dtype = fit.dtype;
  OpRates& r = out.rates;
  r.peak_flop_per_s = fit.peak_flop_per_s;
  const double bw = fit.elementwise_bytes_per_s > 0 ? fit.elementwise_bytes_per_s : sc.cluster.gpu.hbm_bandwidth_bytes_per_s;
  const double size = activation_size(fit.dtype);
  auto fmt = [](const char* f, double a, double b = 0, double c = 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return std::string(buf);
  };

  // ---- GEMMs per pass: FLOP-weighted over the fitted dtype's shapes ----
  const char* pass_names[] = {"forward", "backward_input", "backward_weight", "lm_head"};
  out.gemm.resize(4);
  for (int i = 0; i < 4; ++i) out.gemm[i].name = pass_names[i];
  for (const auto& s : fit.gemm_shapes) {
    if (s.dtype != fit.dtype) continue;
    const int i = s.label == "logits" ? 3 : s.pass == "forward" ? 0 : s.pass == "dgrad" ? 1 : s.pass == "wgrad" ? 2 : -1;
    if (i < 0) continue;
    out.gemm[i].shapes += 1;
    out.gemm[i].flop += s.flop;
    out.gemm[i].time_s += s.time_s;
  }
  const Precision fit_precision = fit.precision;
  const GpuSpec& fitted = fit.gpu;
  const double h = static_cast<double>(m.hidden);
  for (int i = 0; i < 4; ++i) {
    TorchGemmPass& g = out.gemm[i];
    if (g.time_s > 0 && g.flop > 0 && fit.peak_flop_per_s > 0) {
      g.efficiency = g.flop / g.time_s / fit.peak_flop_per_s;
      g.measured = true;
    } else {
      // The kernel model at the fitted share, for the pass's widest GEMM: the MLP's up
      // projection (tokens x 4h/tp x h) for the layers, the LM head's (tokens x vocab/tp x h).
      const GemmShape shape{trace.tokens, (i == 3 ? static_cast<double>(m.vocab) : 4 * h) / p.tp, h, 1};
      g.efficiency = gemm_efficiency_from_shape(fitted, shape, fit_precision);
      out.notes.push_back("op_rates: no " + g.name + " GEMM of the " + fit.dtype + " GEMMs in the trace" +
                          (i == 3 ? std::string(" labelled logits") : "") +
                          fmt(": its efficiency is the kernel model's at the fitted share for N = %.0f (%.3f)",
                              shape.n, g.efficiency));
    }
  }
  r.gemm_forward_efficiency = out.gemm[0].efficiency;
  r.gemm_backward_input_efficiency = out.gemm[1].efficiency;
  r.gemm_backward_weight_efficiency = out.gemm[2].efficiency;
  r.lm_head_gemm_efficiency = out.gemm[3].efficiency;

  // ---- attention ----
  r.attention_forward_efficiency = fit.attention_forward_efficiency;
  r.attention_backward_efficiency = fit.attention_backward_efficiency;
  for (double* e : {&r.attention_forward_efficiency, &r.attention_backward_efficiency}) {
    if (*e > 0) continue;
    *e = fit.attention_efficiency > 0 ? fit.attention_efficiency : r.gemm_forward_efficiency;
    out.notes.push_back(std::string("op_rates: no ") + (e == &r.attention_forward_efficiency ? "forward" : "backward") +
                        " attention with shapes in the trace: its efficiency is " +
                        (fit.attention_efficiency > 0 ? "the other pass's" : "the forward GEMMs'") + fmt(" (%.3f)", *e));
  }

  // ---- memory-bound ops, per element; what has no slot ----
  std::map<std::string, TorchOpRateSlot> by_slot;
  std::map<std::string, double> unmodelled;
  double xent_logits_fwd = 0, xent_loss_fwd = 0;
  for (const auto& op : trace.ops) {
    if (op.cls != TorchOpClass::kElementwise && op.cls != TorchOpClass::kOther) continue;
    if (op.slot.empty()) {
      if (op.cls == TorchOpClass::kElementwise) unmodelled[strip_aten(op.name)] += op.gpu_time_s;
      continue;
    }
    TorchOpRateSlot& s = by_slot[op.slot];
    s.ops += 1;
    s.time_s += op.gpu_time_s;
    if (op.slot == "softmax_xent") {
      // Per logit, loss and gradient together: the logits the forward log-softmax read (else
      // those of the forward loss op).
      const bool fwd = op.slot_op.find("backward") == std::string::npos;
      if (fwd && (op.slot_op == "_log_softmax" || op.slot_op == "log_softmax")) xent_logits_fwd += op.elements;
      else if (fwd) xent_loss_fwd = std::max(xent_loss_fwd, op.elements);
    } else {
      s.elements += op.elements;
    }
  }
  if (by_slot.count("softmax_xent")) by_slot["softmax_xent"].elements = xent_logits_fwd > 0 ? xent_logits_fwd : xent_loss_fwd;
  double* dst[] = {&r.layernorm_fwd_s_per_element, &r.layernorm_bwd_s_per_element, &r.gelu_fwd_s_per_element,
                   &r.gelu_bwd_s_per_element,      &r.residual_add_s_per_element,  &r.softmax_xent_s_per_element,
                   &r.embedding_fwd_s_per_element, &r.embedding_bwd_s_per_element, &r.copy_s_per_element,
                   &r.fill_zero_s_per_element};
  for (std::size_t i = 0; i < std::size(kSlotDefs); ++i) {
    const SlotDef& d = kSlotDefs[i];
    TorchOpRateSlot s = by_slot.count(d.name) ? by_slot[d.name] : TorchOpRateSlot{};
    s.name = d.name;
    if (s.time_s > 0 && s.elements > 0) {
      s.seconds_per_element = s.time_s / s.elements;
      s.measured = true;
    } else {
      s.seconds_per_element = d.accesses * size / bw;
      out.notes.push_back(std::string("op_rates: ") +
                          (s.ops > 0 ? "the trace's " + std::string(d.name) + " ops have no element counts"
                                     : "no " + std::string(d.name) + " op in the trace") +
                          ": its rate is its minimum traffic (" + d.traffic + fmt(", %.0f x %.0f bytes)", d.accesses, size) +
                          fmt(" at the fitted elementwise bandwidth, %.3g s per element", s.seconds_per_element));
    }
    *dst[i] = s.seconds_per_element;
    out.slots.push_back(s);
  }
  if (out.slot("embedding_fwd")->measured || out.slot("embedding_bwd")->measured)
    out.notes.push_back("op_rates: embedding rates are per output element (indices x hidden) over every embedding "
                        "op of the trace (a learned position embedding too); the model counts one embedding per token");
  if (const auto* s = out.slot("fill_zero"); s && !s->measured)
    out.notes.push_back("op_rates: the model zeroes every gradient before the step (fill_zero per gradient); a "
                        "trace without gradient zeroing (zero_grad(set_to_none=True), PyTorch 2's default) did not");
  if (m.ffn_act == FfnActivation::kSwiglu)
    out.notes.push_back("op_rates: SwiGLU: the silu counts as the activation (gelu rates); its gate multiply has no "
                        "slot (unmodelled elementwise)");

  // ---- AdamW, per parameter of this GPU ----
  TorchOpRateSlot adam;
  adam.name = "adamw";
  double params = count_params(m).total / (static_cast<double>(p.tp) * p.pp);
  if (p.zero_stage >= 1) params /= p.dp;
  out.optimizer_params = params;
  adam.elements = params;
  for (const auto& op : trace.ops)
    if (op.cls == TorchOpClass::kOptimizer) adam.ops += 1, adam.time_s += op.gpu_time_s;
  if (adam.time_s > 0 && params > 0) {
    adam.seconds_per_element = adam.time_s / params;
    adam.measured = true;
  } else {
    // bf16 param and grad read, param written; fp32 exp_avg and exp_avg_sq read and written.
    const double bytes = 3 * size + 16;
    adam.seconds_per_element = bytes / bw;
    out.notes.push_back("op_rates: no optimizer kernels in the trace: AdamW is its minimum traffic" +
                        fmt(" (%.0f bytes per parameter) at the fitted elementwise bandwidth", bytes));
  }
  r.adamw_s_per_param = adam.seconds_per_element;
  out.slots.push_back(adam);

  for (const auto& [name, t] : unmodelled) {
    out.unmodelled_elementwise_s += t;
    out.unmodelled_by_op.emplace_back(name, t);
  }
  std::sort(out.unmodelled_by_op.begin(), out.unmodelled_by_op.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

json torch_trace_op_rates_json(const TorchOpRates& o) {
  const OpRates& r = o.rates;
  json j;
  j["shape"] = {{"layers", o.shape.layers}, {"hidden", o.shape.hidden}, {"heads", o.shape.heads},
                {"seq", o.shape.seq},       {"vocab", o.shape.vocab},   {"micro_batch", o.shape.micro_batch},
                {"tp", o.shape.tp},         {"pp", o.shape.pp},         {"dp", o.shape.dp},
                {"zero", o.shape.zero},     {"optimizer_params", o.optimizer_params}};
  // The key says f32 (the CPU calibration's); the efficiencies here are shares of the GEMMs'
  // dtype peak, named in peak_dtype.
  j["peak_f32_flop_per_s"] = r.peak_flop_per_s;
  j["peak_dtype"] = o.peak_dtype;
  j["gemm_efficiency"] = {{"forward", r.gemm_forward_efficiency},
                          {"backward_input", r.gemm_backward_input_efficiency},
                          {"backward_weight", r.gemm_backward_weight_efficiency},
                          {"lm_head", r.lm_head_gemm_efficiency}};
  j["attention_efficiency"] = {{"forward", r.attention_forward_efficiency},
                               {"backward", r.attention_backward_efficiency}};
  json se = json::object();
  json measured = json::object();
  for (const auto& s : o.slots) {
    if (s.name != "adamw") se[s.name] = s.seconds_per_element;
    measured[s.name] = {{"ops", s.ops}, {"time_s", s.time_s}, {s.name == "adamw" ? "params" : "elements", s.elements},
                        {"source", s.measured ? "trace" : "fallback: minimum traffic at the fitted bandwidth"}};
  }
  j["seconds_per_element"] = se;
  j["adamw_seconds_per_param"] = r.adamw_s_per_param;
  json gemm = json::object();
  for (const auto& g : o.gemm)
    gemm[g.name] = {{"shapes", g.shapes}, {"flop", g.flop}, {"time_s", g.time_s},
                    {"source", g.measured ? "trace" : "fallback: the fitted curve"}};
  measured["gemm"] = gemm;
  json un = json::object();
  for (const auto& [name, t] : o.unmodelled_by_op) un[name] = t;
  j["measured"] = measured;
  j["unmodelled_elementwise"] = {{"time_s", o.unmodelled_elementwise_s}, {"by_op_s", un}};
  j["notes"] = o.notes;
  j["source"] = "trainsim import-torch-trace: counts and times from the trace's own ops";
  return j;
}

json torch_trace_calibration_json(const TorchTrace& trace, const TorchTraceFit& fit, const std::string& gpu_name) {
  json c = gpu_calibration_json(fit, gpu_name);
  c["backend"] = "torch-trace";
  c["device"] = trace.device_name.empty() ? gpu_name : trace.device_name;
  c["source"] = {{"trace", trace.source}, {"step", trace.step_name}, {"kernels", trace.kernels}};
  json& ops = c["ops"];
  const TorchClassTime& attn = trace.of(TorchOpClass::kAttention);
  if (fit.attention_efficiency > 0)
    ops.push_back({{"op", "attention"}, {"time_s", attn.gpu_time_s}, {"flop", attn.flop},
                   {"flop_per_s", attn.gpu_time_s > 0 ? attn.flop / attn.gpu_time_s : 0.0},
                   {"efficiency", fit.attention_efficiency},
                   {"forward_efficiency", fit.attention_forward_efficiency},
                   {"backward_efficiency", fit.attention_backward_efficiency},
                   {"flop_convention", "FlashAttention-2: forward 4bhs^2d, causal halved, backward 2.5x"}});
  const TorchClassTime& el = trace.of(TorchOpClass::kElementwise);
  if (fit.elementwise_bytes_per_s > 0)
    ops.push_back({{"op", "elementwise"}, {"time_s", el.gpu_time_s}, {"bytes", el.bytes},
                   {"bytes_per_s", fit.elementwise_bytes_per_s}});
  json classes = json::object();
  for (int i = 0; i < kTorchOpClasses; ++i) {
    const TorchClassTime& t = trace.classes[i];
    classes[to_string(static_cast<TorchOpClass>(i))] = {
        {"time_s", t.gpu_time_s}, {"kernels", t.kernels}, {"ops", t.ops}, {"fitted_time_s", fit.predicted_s[i]}};
  }
  c["torch_trace"] = {{"step", trace.step_name},
                      {"step_time_s", trace.step_time_s},
                      {"gpu_busy_s", trace.gpu_busy_s},
                      {"tokens", trace.tokens},
                      {"unlinked_kernels", trace.unlinked_kernels},
                      {"classes", classes},
                      {"gemm_fit", {{"dtype", fit.dtype},
                                    {"sustained_share", fit.gemm.share},
                                    {"mean_relative_error", fit.gemm.mean_relative_error},
                                    {"max_relative_error", fit.gemm.max_relative_error},
                                    {"shapes", fit.gemm.samples},
                                    {"unfitted_gemm_ops", fit.gemms_unfitted}}},
                      {"warnings", trace.warnings}};
  return c;
}

}  // namespace trainsim
