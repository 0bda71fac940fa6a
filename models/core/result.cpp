#include "models/core/result.hpp"

#include <algorithm>

namespace trainsim {

OverlappedComm overlapped_comm(const TimeBreakdown& exposed, double tp_busy_s, double cp_busy_s, double ep_busy_s,
                               double dp_busy_s) {
  // A purpose's exposed figure may exceed its busy time (it counts the compute its collectives
  // slowed, and waits for a group's late members): nothing of it then ran hidden.
  OverlappedComm o;
  o.tp_s = std::max(0.0, tp_busy_s - exposed.tp_comm_s);
  o.cp_s = std::max(0.0, cp_busy_s - exposed.cp_comm_s);
  o.ep_s = std::max(0.0, ep_busy_s - exposed.ep_comm_s);
  o.dp_s = std::max(0.0, dp_busy_s - exposed.dp_comm_s);
  return o;
}

}  // namespace trainsim
