// How many nodes share one leaf switch of the cluster's switched fabric: a collective whose
// nodes all hang off one leaf turns there and never climbs the leaf-to-spine taper
// (network.oversubscription). The simulate tier builds its leaves from this same count
// (sim/topology_fat_tree.cpp, sim/topology_rail_optimized.cpp), so both tiers agree on which
// groups cross the taper.
#pragma once

#include <string>

#include "models/core/specs.hpp"

namespace trainsim {

// Ports of a network switch when network.switch_radix is 0: a 64-port switch, as the
// NVIDIA Quantum QM8700 (HDR) and QM9700 (NDR, 64 x 400 Gb/s) that DGX SuperPODs use.
constexpr int kDefaultSwitchRadix = 64;
int switch_radix(const NetworkSpec& network);

// Nodes under one leaf, for a fat-tree of `radix`-port switches (half the ports down):
//   fat-tree        all NICs of a node on one leaf: (radix / 2) / nics_per_node nodes;
//   rail-optimized  NIC r of every node on rail r's leaf: radix / 2 nodes (a scalable unit),
//                   for rail-aligned traffic (NCCL's rings and trees keep channel c on NIC c);
//   single-switch, dragonfly, torus   every node: these fabrics have no leaf-to-spine taper
//                   (the simulator's builders do not read network.oversubscription).
// 1 for a topology not listed: a group that spans nodes is taken to cross the taper.
int nodes_per_leaf(const std::string& topology, int radix, int nics_per_node);
int nodes_per_leaf(const ClusterSpec& cluster);
// The rails of a rail-optimised fabric (its NICs per node: NIC r of every node on rail r's
// leaf); 0 where a leaf holds whole nodes.
int leaf_rails(const ClusterSpec& cluster);

}  // namespace trainsim
