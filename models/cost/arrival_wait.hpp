// The wait of a synchronising collective for its last member. Between two collectives of a
// group each rank runs the same ops, whose times vary from call to call independently (system
// noise: Hoefler, Schneider and Lumsdaine, "Characterizing the Influence of System Noise on
// Large-Scale Applications by Simulation", SC'10). A collective cannot finish before its last
// member arrives, so each rank waits, on average, the expected maximum of the n arrival times
// over their mean: sigma x e_n, with sigma = cv x sqrt(sum of the segment's op times squared)
// and e_n = E[max of n standard normals] (e_2 = 1/sqrt(pi); Tippett 1925).
#pragma once

namespace trainsim {

// E[max of n independent standard normal variables]; 0 for n <= 1.
double expected_max_of_normals(int n);

// Expected seconds a member of an n-rank group waits at a collective after a segment of ops
// whose times squared sum to `sum_sq_s2`, each op's time varying with coefficient `cv`.
double arrival_wait_s(double cv, double sum_sq_s2, int ranks);

}  // namespace trainsim
