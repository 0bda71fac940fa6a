// Test helpers: the kernel benchmark records (data/kernel_benchmarks.json) the compute model's
// formulas are checked against, and the GPU presets (scenarios/gpus) they are checked with.
#pragma once

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/scenario/scenario_loader.hpp"

namespace trainsim::test {

inline std::filesystem::path repo_root() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path().parent_path();
}

inline const nlohmann::json& kernel_records() {
  static const nlohmann::json records = [] {
    std::ifstream in(repo_root() / "data" / "kernel_benchmarks.json");
    return nlohmann::json::parse(in)["records"];
  }();
  return records;
}

inline const nlohmann::json& record(const std::string& id) {
  for (const auto& r : kernel_records())
    if (r["id"] == id) return r;
  ADD_FAILURE() << "no kernel benchmark record " << id;
  static const nlohmann::json empty = nlohmann::json::object();
  return empty;
}

// The records whose id starts with `prefix`, in file order.
inline std::vector<const nlohmann::json*> records_with_prefix(const std::string& prefix) {
  std::vector<const nlohmann::json*> out;
  for (const auto& r : kernel_records())
    if (r["id"].get<std::string>().rfind(prefix, 0) == 0) out.push_back(&r);
  return out;
}

inline nlohmann::json gpu_preset_json(const std::string& name) {
  std::ifstream in(repo_root() / "scenarios" / "gpus" / (name + ".json"));
  return nlohmann::json::parse(in);
}

inline GpuSpec gpu_preset(const std::string& name) { return parse_gpu(gpu_preset_json(name), "gpu"); }

// Relative errors of one family of predictions against their records, printed and bounded.
class ErrorFamily {
 public:
  explicit ErrorFamily(std::string name) : name_(std::move(name)) {}
  void add(const std::string& id, double predicted, double measured) {
    const double e = predicted / measured - 1;
    errors_.push_back(e);
    std::printf("  %-62s measured %9.4g predicted %9.4g  %+6.1f%%\n", id.c_str(), measured, predicted, 100 * e);
  }
  double mean_abs() const {
    double s = 0;
    for (double e : errors_) s += std::fabs(e);
    return errors_.empty() ? 0 : s / errors_.size();
  }
  double max_abs() const {
    double m = 0;
    for (double e : errors_) m = std::max(m, std::fabs(e));
    return m;
  }
  std::size_t size() const { return errors_.size(); }
  // Prints the family's summary and fails the test when a bound is exceeded.
  void check(double mean_bound, double max_bound) const {
    std::printf("[family] %-34s n=%2zu  mean |error| %5.1f%%  max %5.1f%%  (bounds %.0f%% / %.0f%%)\n", name_.c_str(),
                errors_.size(), 100 * mean_abs(), 100 * max_abs(), 100 * mean_bound, 100 * max_bound);
    EXPECT_GT(errors_.size(), 0u) << name_;
    EXPECT_LE(mean_abs(), mean_bound) << name_;
    EXPECT_LE(max_abs(), max_bound) << name_;
  }

 private:
  std::string name_;
  std::vector<double> errors_;
};

}  // namespace trainsim::test
