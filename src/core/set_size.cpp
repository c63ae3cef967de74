#include "core/set_size.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/bounds.hpp"

namespace hoshi {

SetSize set_size(const ParticleSet& p) {
  SetSize s;
  const std::size_t n = p.size();
  if (n == 0) return s;
  const Box box = bounding_box(p);
  s.extent = std::max({box.hi[0] - box.lo[0], box.hi[1] - box.lo[1], box.hi[2] - box.lo[2]});
  double min_mass = HUGE_VAL;
  for (double m : p.m) {
    s.mass += m;
    if (m > 0) min_mass = std::min(min_mass, m);
  }
  s.min_mass = min_mass < HUGE_VAL ? min_mass : 0;
  const std::size_t stride = (n + kSizeSample - 1) / kSizeSample;
  std::vector<double> v;
  v.reserve(kSizeSample);
  for (const std::vector<double>* c : {&p.x, &p.y, &p.z}) {
    v.clear();
    for (std::size_t i = 0; i < n; i += stride) v.push_back((*c)[i]);
    const std::size_t k = v.size();
    const std::size_t lo = k / 20, hi = k - 1 - k / 20;
    std::nth_element(v.begin(), v.begin() + lo, v.end());
    const double low = v[lo];
    std::nth_element(v.begin() + lo, v.begin() + hi, v.end());
    s.bulk = std::max(s.bulk, v[hi] - low);
  }
  // Coincident bulk (all sampled particles at one point): the box.
  if (!(s.bulk > 0)) s.bulk = s.extent;
  return s;
}

}  // namespace hoshi
