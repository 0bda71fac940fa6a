// Chrome/Perfetto trace of a simulated step: one process per pipeline stage
// (pid = stage) with tracks (tid) for compute, p2p send, p2p receive, DP reduction and expert-DP
// reduction; compute slices named like "F mb3 c0"; flow arrows ("ph": "s" / "f") from each p2p
// send to its receive; and a "links" process (pid = stages) with utilisation counters of the
// hottest links (LinkStats::write_chrome_trace). Timestamps in microseconds. No SimGrid here.
#pragma once

#include <ostream>
#include <vector>

#include "sim/link_stats.hpp"
#include "sim/step_player.hpp"

namespace trainsim::sim {

enum StepTraceTrack { kTrackCompute = 0, kTrackP2pSend = 1, kTrackP2pRecv = 2, kTrackDp = 3, kTrackExpertDp = 4 };

// links: the directed links whose utilisation counters to include (may be empty; stats may be
// null).
void write_step_trace(std::ostream& out, const StepTimeline& timeline, const LinkStats* stats,
                      const std::vector<DirectedLink>& links);

}  // namespace trainsim::sim
