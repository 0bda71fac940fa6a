#include "models/cost/moe_routing.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim {

namespace {

// P(none of k distinct draws from a pool of `pool` falls among `held` of them).
double miss_probability(double pool, double held, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) {
    const double rest = pool - i;
    if (rest <= 0) return 0;
    p *= std::max(0.0, rest - held) / rest;
  }
  return p;
}

// ln C(n, r), finite for every group count a model may have.
double log_choose(int n, int r) {
  return std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0);
}

// P(c of the g chosen groups among G are the q on one place): hypergeometric.
double chosen_on_place(int G, int q, int g, int c) {
  if (c < 0 || c > q || g - c < 0 || g - c > G - q) return 0;
  return std::exp(log_choose(q, c) + log_choose(G - q, g - c) - log_choose(G, g));
}

}  // namespace

double expected_places_per_token(const ExpertRouting& r, int places) {
  if (places <= 1 || r.experts <= 0 || r.top_k <= 0) return 1;
  const double E = r.experts, D = places;
  const int k = std::min(r.top_k, r.experts);
  const bool limited = r.groups > 1 && r.groups_per_token > 0 && r.groups_per_token < r.groups;
  double hit = 1 - miss_probability(E, E / D, k);
  if (limited) {
    const int G = r.groups, g = r.groups_per_token;
    const double pool = g * E / G;  // the chosen groups' experts
    if (G % places == 0) {
      // q = G / D groups on each place; c of the g chosen groups on this one ~ hypergeometric.
      const int q = G / places;
      hit = 0;
      for (int c = 1; c <= std::min(q, g); ++c)
        hit += chosen_on_place(G, q, g, c) * (1 - miss_probability(pool, c * E / G, k));
    } else if (places % G == 0) {
      // Each group spans D / G places: this place is eligible when its group is chosen.
      hit = static_cast<double>(g) / G * (1 - miss_probability(pool, E / D, k));
    } else {
      // Groups and places do not nest: a token reaches at most the places its groups touch.
      const double reachable = std::min(D, g * std::ceil(D / G));
      hit = std::min(hit, reachable / D);
    }
  }
  if (!std::isfinite(hit)) hit = 1;
  return std::clamp(D * hit, 1.0, std::min(D, static_cast<double>(k)));
}

}  // namespace trainsim
