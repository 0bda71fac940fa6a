// The pipeline schedules, one line each (CONVENTIONS.md #17). Adding one: a new file in this
// folder defining `const PipelineSchedule& NAME_schedule()`, and its line below. The first is
// the default; the order is plan search's order, which breaks its ties.
#include <string>

#include "models/core/scenario_error.hpp"
#include "models/schedules/pipeline_schedule.hpp"

#define TRAINSIM_PIPELINE_SCHEDULES(X) \
  X(one_f_one_b)                       \
  X(interleaved)                       \
  X(zb_h1)                             \
  X(zb_h2)                             \
  X(dualpipe)                          \
  X(gpipe)

namespace trainsim {

#define TRAINSIM_DECLARE(name) const PipelineSchedule& name##_schedule();
TRAINSIM_PIPELINE_SCHEDULES(TRAINSIM_DECLARE)
#undef TRAINSIM_DECLARE

const std::vector<const PipelineSchedule*>& pipeline_schedules() {
#define TRAINSIM_ENTRY(name) &name##_schedule(),
  static const std::vector<const PipelineSchedule*> all = {
      TRAINSIM_PIPELINE_SCHEDULES(TRAINSIM_ENTRY)};
#undef TRAINSIM_ENTRY
  return all;
}

const PipelineSchedule* find_pipeline_schedule(const std::string& name) {
  for (const PipelineSchedule* s : pipeline_schedules())
    if (s->is_named(name)) return s;
  return nullptr;
}

const PipelineSchedule& default_pipeline_schedule() { return *pipeline_schedules().front(); }

std::vector<const char*> pipeline_schedule_names() {
  std::vector<const char*> names;
  for (const PipelineSchedule* s : pipeline_schedules()) names.push_back(s->name());
  return names;
}

const PipelineSchedule& pipeline_schedule(const std::string& name) {
  if (const PipelineSchedule* s = find_pipeline_schedule(name)) return *s;
  std::string list;
  for (const char* n : pipeline_schedule_names())
    list += (list.empty() ? "\"" : ", \"") + std::string(n) + "\"";
  throw ScenarioError("plan.schedule", "unknown pipeline schedule \"" + name.substr(0, 64) +
                                           "\"; expected one of " + list);
}

const PipelineSchedule& plan_pipeline_schedule(const std::string& name, int pp) {
  const PipelineSchedule& named = pipeline_schedule(name);
  return pp > 1 ? named : default_pipeline_schedule();
}

}  // namespace trainsim
