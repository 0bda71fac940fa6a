#include "models/cost/arrival_wait.hpp"

#include <cmath>
#include <map>

namespace trainsim {

double expected_max_of_normals(int n) {
  if (n <= 1) return 0;
  thread_local std::map<int, double> cache;
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx, by the trapezoid rule on [-10, 10]; the
  // integrand is smooth and negligible beyond, so 4000 steps give ~1e-10.
  constexpr int kSteps = 4000;
  constexpr double lo = -10, hi = 10, dx = (hi - lo) / kSteps;
  double sum = 0;
  for (int i = 0; i <= kSteps; ++i) {
    const double x = lo + i * dx;
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double f = x * n * phi * std::pow(cdf, n - 1);
    sum += (i == 0 || i == kSteps ? 0.5 : 1.0) * f;
  }
  return cache[n] = sum * dx;
}

double arrival_wait_s(double cv, double sum_sq_s2, int ranks) {
  if (!(cv > 0) || !(sum_sq_s2 > 0) || ranks <= 1) return 0;
  return expected_max_of_normals(ranks) * cv * std::sqrt(sum_sq_s2);
}

}  // namespace trainsim
