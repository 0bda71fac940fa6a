// Every kernel-level parameter of every GPU preset cites where it comes from: a record of
// data/kernel_benchmarks.json (by id or id prefix*) or a named NVIDIA / CUTLASS document; and
// the "kernels" block survives the resolved-scenario round trip.
#include "models/cost/compute/kernel_params_json.hpp"

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"
#include "tests/models/cost/compute/kernel_records.hpp"

namespace trainsim {
namespace {

void leaves(const nlohmann::json& j, const std::string& path, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (path.empty() && it.key() == "sources") continue;
      leaves(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    }
  } else {
    out.push_back(path);
  }
}

bool cites_a_record(const std::string& text) {
  for (const auto& r : test::kernel_records()) {
    const std::string id = r["id"];
    if (text.find(id) != std::string::npos) return true;
  }
  // id prefixes written as "gemm_mamf_bf16_*" or "attn_*_fa2_*"
  for (std::size_t star = text.find('*'); star != std::string::npos; star = text.find('*', star + 1)) {
    std::size_t begin = star;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(text[begin - 1])) || text[begin - 1] == '_'))
      --begin;
    const std::string prefix = text.substr(begin, star - begin);
    if (prefix.size() < 4) continue;
    for (const auto& r : test::kernel_records())
      if (r["id"].get<std::string>().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(GpuKernelParams, EveryPresetParameterCitesASource) {
  int presets = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::repo_root() / "scenarios" / "gpus")) {
    const std::string name = entry.path().stem().string();
    const nlohmann::json j = test::gpu_preset_json(name);
    ASSERT_TRUE(j.contains("kernels")) << name << " has no kernels block";
    const nlohmann::json& k = j["kernels"];
    ASSERT_TRUE(k.contains("sources")) << name;
    const nlohmann::json& src = k["sources"];
    std::vector<std::string> params;
    leaves(k, "", params);
    for (const std::string& p : params) {
      // The citation of a parameter or of the group it belongs to.
      std::string key = p, cited;
      while (true) {
        if (src.contains(key)) {
          cited = src[key];
          break;
        }
        const auto dot = key.rfind('.');
        if (dot == std::string::npos) break;
        key = key.substr(0, dot);
      }
      EXPECT_FALSE(cited.empty()) << name << ": kernels." << p << " has no entry in kernels.sources";
      if (cited.empty()) continue;
      const bool document = cited.find("NVIDIA") != std::string::npos || cited.find("CUTLASS") != std::string::npos;
      EXPECT_TRUE(cites_a_record(cited) || document)
          << name << ": kernels." << p << " cites neither a kernel record nor a document: " << cited;
    }
    // No citation for a parameter the block does not have.
    for (auto it = src.begin(); it != src.end(); ++it) {
      bool used = false;
      for (const std::string& p : params) used |= p == it.key() || p.rfind(it.key() + ".", 0) == 0;
      EXPECT_TRUE(used) << name << ": kernels.sources." << it.key() << " names no parameter";
    }
    ++presets;
  }
  EXPECT_GE(presets, 7);
}

TEST(GpuKernelParams, RoundTripsThroughTheResolvedScenarioForm) {
  const GpuSpec h100 = test::gpu_preset("H100-SXM-80GB");
  ASSERT_TRUE(h100.kernel.present());
  const GpuKernelParams back = parse_gpu_kernel_params(to_json(h100.kernel), "gpu.kernels");
  EXPECT_EQ(back.sm_count, 132);
  EXPECT_EQ(back.gemm_tiles, h100.kernel.gemm_tiles);
  EXPECT_EQ(back.gemm_scheduler, GemmScheduler::kStreamK);
  EXPECT_DOUBLE_EQ(back.gemm_share_fp8, h100.kernel.gemm_share_fp8);
  EXPECT_EQ(back.flash3.backward.share_by_head_dim, h100.kernel.flash3.backward.share_by_head_dim);
  EXPECT_EQ(back.power_tensor_share, h100.kernel.power_tensor_share);
  EXPECT_DOUBLE_EQ(back.kernel_fixed_s, 2e-6);
  EXPECT_DOUBLE_EQ(back.host_launch_s, 5e-6);
}

TEST(GpuKernelParams, RejectsBadValuesNamingTheField) {
  auto expect_error = [](const char* text, const std::string& field) {
    try {
      parse_gpu_kernel_params(nlohmann::json::parse(text), "gpu.kernels");
      ADD_FAILURE() << "accepted " << text;
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"gemm": {"sustained_share": {"bf16": 1.5}}})", "gpu.kernels.gemm.sustained_share.bf16");
  expect_error(R"({"gemm": {"tiles": [[128]]}})", "gpu.kernels.gemm.tiles[0]");
  expect_error(R"({"gemm": {"scheduler": "magic"}})", "gpu.kernels.gemm.scheduler");
  expect_error(R"({"attention": {"flash2": {"forward": {"share": {"x": 0.3}}}}})", "gpu.kernels.attention.flash2.forward.share.x");
  expect_error(R"({"attention": {"flash2": {"forward": {"share": {"64": 0.3}}}}})", "gpu.kernels.attention.flash2.backward");
  expect_error(R"({"launch": {"kernel": "2 parsecs"}})", "gpu.kernels.launch.kernel");
  expect_error(R"({"memroy": {}})", "memroy");
  expect_error(R"({"power": {"tensor_share_by_busy": {"busy": 0.9}}})", "gpu.kernels.power.tensor_share_by_busy.busy");
  expect_error(R"({"power": {"tensor_share_by_busy": {"1.5": 0.9}}})", "gpu.kernels.power.tensor_share_by_busy.1.5");
  expect_error(R"({"power": {"tensor_share_by_busy": {"0.5": 3}}})", "gpu.kernels.power.tensor_share_by_busy.0.5");
  expect_error(R"({"power": {"tensor_share_by_busy": {}}})", "gpu.kernels.power.tensor_share_by_busy");
  expect_error(R"({"sources": {"sm_count": 3}})", "gpu.kernels.sources.sm_count");
}

}  // namespace
}  // namespace trainsim
