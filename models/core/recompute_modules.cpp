// plan.recompute_modules (specs.hpp, RecomputeModules): names and the set a plan applies.
#include <string>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

const std::vector<std::string>& recompute_module_names() {
  static const std::vector<std::string> names = {"core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp"};
  return names;
}

std::vector<std::string> to_strings(const RecomputeModules& m) {
  const bool on[] = {m.core_attn, m.layernorm, m.mla_up_proj, m.moe_act, m.mlp};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < recompute_module_names().size(); ++i)
    if (on[i]) out.push_back(recompute_module_names()[i]);
  return out;
}

RecomputeModules piecewise_recompute(Recompute mode, const RecomputeModules& modules) {
  if (mode == Recompute::kSelective) return modules;
  RecomputeModules none;
  none.core_attn = false;
  return none;
}

std::string recompute_label(const ParallelPlan& plan) {
  std::string label = to_string(plan.recompute);
  if (plan.recompute != Recompute::kSelective || plan.recompute_modules == RecomputeModules{}) return label;
  label += " (";
  const std::vector<std::string> names = to_strings(plan.recompute_modules);
  for (std::size_t i = 0; i < names.size(); ++i) label += (i ? ", " : "") + names[i];
  return label + ")";
}

}  // namespace trainsim
