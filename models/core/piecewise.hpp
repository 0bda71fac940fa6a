// A curve given as points: linear between neighbours, flat beyond its ends.
#pragma once

#include <utility>
#include <vector>

namespace trainsim {

// y at x on (x, y) points ascending in x, linear in axis(x) between neighbours (axis: the
// identity, or log2 for head dimensions), the end values beyond the ends. Needs a point.
template <class Axis>
double piecewise_linear(const std::vector<std::pair<double, double>>& points, double x, Axis axis) {
  if (x <= points.front().first) return points.front().second;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (x <= points[i].first) {
      const double x0 = axis(points[i - 1].first), x1 = axis(points[i].first);
      const double t = (axis(x) - x0) / (x1 - x0);
      return points[i - 1].second + t * (points[i].second - points[i - 1].second);
    }
  }
  return points.back().second;
}

}  // namespace trainsim
