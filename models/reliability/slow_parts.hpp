// The step with a scenario's slow parts, in the estimate tier: a straggling GPU slows
// its pipeline stage (models/straggler.hpp), which the schedule's playback turns into a longer
// step; degraded switch links slow the inter-node communication that crosses them.
//
// Stragglers: delta_straggler = makespan(stages at their speeds) - makespan(nominal), both played
// by models/timeline (the closed form assumes equal stages). The goodput takes its expectation,
// P(some GPU is slow) x delta.
// Degraded links: a bandwidth-bound collective runs at its slowest link, so when the job's
// traffic crosses a degraded link its inter-node exposed communication stretches by
// 1/bandwidth_factor. It crosses one with probability 1 - (1 - fraction)^U over the U leaf
// uplinks it spreads over (ECMP). This is the expectation; the simulate tier places the degraded
// links and measures.
#pragma once

#include "models/reliability/goodput.hpp"
#include "models/core/result.hpp"
#include "models/core/specs.hpp"

namespace trainsim {

SlowParts estimate_slow_parts(const Scenario& scenario, const Result& nominal);

}  // namespace trainsim
