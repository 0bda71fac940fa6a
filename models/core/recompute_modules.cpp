// plan.recompute_modules (specs.hpp, RecomputeModules): names and the set a plan applies.
#include <string>
#include <vector>

#include "models/core/specs.hpp"

namespace trainsim {

namespace {
// The members in recompute_module_names()' order.
constexpr bool RecomputeModules::*kMembers[] = {&RecomputeModules::core_attn, &RecomputeModules::layernorm,
                                                 &RecomputeModules::mla_up_proj, &RecomputeModules::moe_act,
                                                 &RecomputeModules::mlp};
}  // namespace

bool& recompute_module(RecomputeModules& modules, std::size_t index) { return modules.*kMembers[index]; }

const std::vector<std::string>& recompute_module_names() {
  static const std::vector<std::string> names = {"core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp"};
  return names;
}

std::vector<std::string> to_strings(const RecomputeModules& m) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < recompute_module_names().size(); ++i)
    if (m.*kMembers[i]) out.push_back(recompute_module_names()[i]);
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
