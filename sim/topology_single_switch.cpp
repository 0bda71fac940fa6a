// Every NIC on one switch: the contention-free network (the alpha-beta closed forms' setting).
#include "sim/topology.hpp"

namespace trainsim::sim {

void build_single_switch(TopologyBuilder& b) {
  const int sw = b.add_switch(1, 0, "switch0");
  for (int i = 0; i < b.nic_count(); ++i) b.attach_nic(i, sw);
}

}  // namespace trainsim::sim
