#include "models/cost/compute/kernel_params_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "models/core/scenario_error.hpp"
#include "models/scenario/json_reader.hpp"

namespace trainsim {
using nlohmann::json;

namespace {

const std::initializer_list<const char*> kDocKeys = {"description", "source", "notes"};

AttentionPassParams parse_pass(const json& j, const std::string& path, AttentionPassParams p) {
  JsonReader r(j, path);
  if (const json* share = r.raw("share")) {
    JsonReader s(*share, r.child_path("share"));
    p.share_by_head_dim.clear();
    for (auto it = share->begin(); it != share->end(); ++it) {
      const std::string key = it.key();
      char* end = nullptr;
      const double hd = std::strtod(key.c_str(), &end);
      if (end == key.c_str() || *end != '\0' || !(hd >= 8 && hd <= 1024))
        s.fail(key, "expected a head dimension between 8 and 1024 as the key");
      p.share_by_head_dim.emplace_back(hd, s.number(key, 0.01, 1.0));
    }
    std::sort(p.share_by_head_dim.begin(), p.share_by_head_dim.end());
    if (p.share_by_head_dim.empty()) r.fail("share", "expected at least one head dimension");
  }
  p.overhead_blocks = r.number_or("overhead_blocks", p.overhead_blocks, 0, 1000);
  p.causal_factor = r.number_or("causal_factor", p.causal_factor, 0.1, 1.0);
  r.finish(kDocKeys);
  return p;
}

AttentionKernelParams parse_kernel(const json& j, const std::string& path, AttentionKernelParams k) {
  JsonReader r(j, path);
  if (const json* f = r.raw("forward")) k.forward = parse_pass(*f, r.child_path("forward"), k.forward);
  if (const json* b = r.raw("backward")) k.backward = parse_pass(*b, r.child_path("backward"), k.backward);
  if (!k.forward.present()) r.fail("forward", "missing (required): {share, overhead_blocks, causal_factor}");
  if (!k.backward.present()) r.fail("backward", "missing (required): {share, overhead_blocks, causal_factor}");
  r.finish(kDocKeys);
  return k;
}

json pass_to_json(const AttentionPassParams& p) {
  json share = json::object();
  for (const auto& [hd, s] : p.share_by_head_dim) share[std::to_string(static_cast<int>(hd))] = s;
  return {{"share", share}, {"overhead_blocks", p.overhead_blocks}, {"causal_factor", p.causal_factor}};
}

}  // namespace

GpuKernelParams parse_gpu_kernel_params(const json& block, const std::string& path,
                                        const GpuKernelParams& base) {
  JsonReader r(block, path);
  GpuKernelParams k = base;
  using units::Kind;
  k.sm_count = static_cast<int>(r.integer_or("sm_count", k.sm_count, 1, 100000));
  if (const json* g = r.raw("gemm")) {
    JsonReader gr(*g, r.child_path("gemm"));
    if (const json* sh = gr.raw("sustained_share")) {
      JsonReader s(*sh, gr.child_path("sustained_share"));
      k.gemm_share_16bit = s.number_or("bf16", k.gemm_share_16bit, 0.01, 1.0);
      k.gemm_share_fp8 = s.number_or("fp8", k.gemm_share_fp8, 0.01, 1.0);
      k.gemm_share_fp32 = s.number_or("fp32", k.gemm_share_fp32, 0.01, 1.0);
      s.finish(kDocKeys);
    }
    if (const json* tiles = gr.raw("tiles")) {
      const std::string tp = gr.child_path("tiles");
      if (!tiles->is_array() || tiles->empty() || tiles->size() > 32)
        throw ScenarioError(tp, "expected a list of 1 to 32 [tile_m, tile_n] pairs");
      k.gemm_tiles.clear();
      for (std::size_t i = 0; i < tiles->size(); ++i) {
        const json& t = (*tiles)[i];
        const std::string ip = tp + "[" + std::to_string(i) + "]";
        if (!t.is_array() || t.size() != 2) throw ScenarioError(ip, "expected [tile_m, tile_n]");
        k.gemm_tiles.emplace_back(static_cast<int>(json_to_integer(t[0], ip + "[0]", 8, 1024)),
                                  static_cast<int>(json_to_integer(t[1], ip + "[1]", 8, 1024)));
      }
    }
    if (gr.has("scheduler"))
      k.gemm_scheduler = gr.choice("scheduler", {"waves", "stream_k"}) == "stream_k" ? GemmScheduler::kStreamK
                                                                                     : GemmScheduler::kWaves;
    k.gemm_epilogue_overlap = gr.boolean_or("epilogue_overlap", k.gemm_epilogue_overlap);
    k.gemm_small_tile_penalty = gr.number_or("small_tile_penalty", k.gemm_small_tile_penalty, 0, 10);
    k.gemm_misaligned_factor = gr.number_or("misaligned_factor", k.gemm_misaligned_factor, 0.01, 1.0);
    gr.finish(kDocKeys);
  }
  if (const json* a = r.raw("attention")) {
    JsonReader ar(*a, r.child_path("attention"));
    k.attention_block = ar.number_or("block", k.attention_block, 16, 1024);
    if (const json* f2 = ar.raw("flash2")) k.flash2 = parse_kernel(*f2, ar.child_path("flash2"), k.flash2);
    if (const json* f3 = ar.raw("flash3")) k.flash3 = parse_kernel(*f3, ar.child_path("flash3"), k.flash3);
    ar.finish(kDocKeys);
  }
  if (const json* m = r.raw("memory")) {
    JsonReader mr(*m, r.child_path("memory"));
    k.memory_bandwidth_share = mr.number_or("bandwidth_share", k.memory_bandwidth_share, 0.01, 1.0);
    k.memory_norm_bandwidth_ratio = mr.number_or("norm_bandwidth_ratio", k.memory_norm_bandwidth_ratio, 0.05, 1.0);
    k.memory_scatter_add_ratio =
        mr.number_or("scatter_add_bandwidth_ratio", k.memory_scatter_add_ratio, 0.01, 1.0);
    k.memory_relayout_ratio = mr.number_or("relayout_bandwidth_ratio", k.memory_relayout_ratio, 0.01, 1.0);
    k.memory_optimizer_ratio = mr.number_or("optimizer_bandwidth_ratio", k.memory_optimizer_ratio, 0.05, 1.0);
    mr.finish(kDocKeys);
  }
  if (const json* pw = r.raw("power")) {
    JsonReader pr(*pw, r.child_path("power"));
    if (const json* curve = pr.raw("tensor_share_by_busy")) {
      const std::string cp = pr.child_path("tensor_share_by_busy");
      if (!curve->is_object() || curve->empty())
        throw ScenarioError(cp, "expected an object of busy share (\"0.25\" .. \"1\") to rate share");
      JsonReader cr(*curve, cp);
      k.power_tensor_share.clear();
      for (auto it = curve->begin(); it != curve->end(); ++it) {
        double busy = 0;
        try {
          std::size_t used = 0;
          busy = std::stod(it.key(), &used);
          if (used != it.key().size()) busy = -1;
        } catch (const std::exception&) {
          busy = -1;
        }
        if (!(busy > 0 && busy <= 1))
          throw ScenarioError(cp + "." + it.key(), "expected a busy share in (0, 1] as the key");
        k.power_tensor_share.emplace_back(busy, cr.number(it.key(), 0.2, 1.5));
      }
      std::sort(k.power_tensor_share.begin(), k.power_tensor_share.end());
    }
    pr.finish(kDocKeys);
  }
  if (const json* l = r.raw("launch")) {
    JsonReader lr(*l, r.child_path("launch"));
    k.kernel_fixed_s = lr.quantity_or("kernel", Kind::kTime, k.kernel_fixed_s, 0, 1e-2);
    k.host_launch_s = lr.quantity_or("host", Kind::kTime, k.host_launch_s, 0, 1e-2);
    lr.finish(kDocKeys);
  }
  // Citations: documentation only, but they must be text (a test checks that every parameter
  // of every preset has one).
  if (const json* src = r.raw("sources")) {
    if (!src->is_object()) throw ScenarioError(r.child_path("sources"), "expected an object of citations");
    for (auto it = src->begin(); it != src->end(); ++it)
      if (!it.value().is_string())
        throw ScenarioError(r.child_path("sources") + "." + it.key(), "expected a citation string");
  }
  r.finish(kDocKeys);
  return k;
}

json to_json(const GpuKernelParams& k) {
  json out = json::object();
  if (k.sm_count > 0) out["sm_count"] = k.sm_count;
  json gemm = json::object();
  json share = json::object();
  if (k.gemm_share_16bit > 0) share["bf16"] = k.gemm_share_16bit;
  if (k.gemm_share_fp8 > 0) share["fp8"] = k.gemm_share_fp8;
  if (k.gemm_share_fp32 > 0) share["fp32"] = k.gemm_share_fp32;
  if (!share.empty()) gemm["sustained_share"] = share;
  if (!k.gemm_tiles.empty()) {
    json tiles = json::array();
    for (const auto& [m, n] : k.gemm_tiles) tiles.push_back({m, n});
    gemm["tiles"] = tiles;
  }
  gemm["scheduler"] = k.gemm_scheduler == GemmScheduler::kStreamK ? "stream_k" : "waves";
  gemm["epilogue_overlap"] = k.gemm_epilogue_overlap;
  gemm["small_tile_penalty"] = k.gemm_small_tile_penalty;
  gemm["misaligned_factor"] = k.gemm_misaligned_factor;
  out["gemm"] = gemm;
  json attention = {{"block", k.attention_block}};
  if (k.flash2.present())
    attention["flash2"] = {{"forward", pass_to_json(k.flash2.forward)}, {"backward", pass_to_json(k.flash2.backward)}};
  if (k.flash3.present())
    attention["flash3"] = {{"forward", pass_to_json(k.flash3.forward)}, {"backward", pass_to_json(k.flash3.backward)}};
  out["attention"] = attention;
  if (k.memory_bandwidth_share > 0) out["memory"] = {{"bandwidth_share", k.memory_bandwidth_share}};
  if (k.memory_norm_bandwidth_ratio > 0) out["memory"]["norm_bandwidth_ratio"] = k.memory_norm_bandwidth_ratio;
  if (k.memory_scatter_add_ratio > 0) out["memory"]["scatter_add_bandwidth_ratio"] = k.memory_scatter_add_ratio;
  if (k.memory_relayout_ratio > 0) out["memory"]["relayout_bandwidth_ratio"] = k.memory_relayout_ratio;
  if (k.memory_optimizer_ratio > 0) out["memory"]["optimizer_bandwidth_ratio"] = k.memory_optimizer_ratio;
  if (!k.power_tensor_share.empty()) {
    json curve = json::object();
    for (const auto& [busy, share] : k.power_tensor_share) {
      char key[32];
      std::snprintf(key, sizeof key, "%g", busy);
      curve[key] = share;
    }
    out["power"] = {{"tensor_share_by_busy", curve}};
  }
  out["launch"] = {{"kernel", k.kernel_fixed_s}, {"host", k.host_launch_s}};
  return out;
}

}  // namespace trainsim
