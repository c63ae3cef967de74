// Axis-aligned bounding box of points, computed in double: the start of the tree build; and
// the median position, the local origin of the float direct kernels (DESIGN.md decision 2).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/particle_set.hpp"

namespace hoshi {

struct Box {
  double lo[3] = {0, 0, 0};
  double hi[3] = {0, 0, 0};
  double centre(int k) const { return 0.5 * (lo[k] + hi[k]); }
  double half(int k) const { return 0.5 * (hi[k] - lo[k]); }
};

// Box of points [begin, end) of the arrays x, y, z; all zero when the range is empty.
// OpenMP-parallel for large ranges.
inline Box bounding_box(const double* x, const double* y, const double* z, std::size_t begin,
                        std::size_t end) {
  Box b;
  if (end <= begin) return b;
  double lo[3] = {x[begin], y[begin], z[begin]}, hi[3] = {x[begin], y[begin], z[begin]};
  const auto b0 = static_cast<std::ptrdiff_t>(begin), b1 = static_cast<std::ptrdiff_t>(end);
#ifdef _OPENMP  // (not defined in CUDA translation units that include this header)
#pragma omp parallel for if (b1 - b0 > 200000) reduction(min : lo[:3]) reduction(max : hi[:3])
#endif
  for (std::ptrdiff_t i = b0; i < b1; ++i) {
    lo[0] = std::min(lo[0], x[i]);
    hi[0] = std::max(hi[0], x[i]);
    lo[1] = std::min(lo[1], y[i]);
    hi[1] = std::max(hi[1], y[i]);
    lo[2] = std::min(lo[2], z[i]);
    hi[2] = std::max(hi[2], z[i]);
  }
  for (int k = 0; k < 3; ++k) {
    b.lo[k] = lo[k];
    b.hi[k] = hi[k];
  }
  return b;
}

inline Box bounding_box(const ParticleSet& p) {
  return bounding_box(p.x.data(), p.y.data(), p.z.data(), 0, p.size());
}

// The median (the element of rank (end - begin) / 2) of v[begin, end), begin < end, through
// `scratch`: per coordinate, a centre inside a set's bulk that far outliers do not move (the
// float direct kernels' origin: direct_float.cpp per chunk, the CUDA direct solver).
inline double median(const std::vector<double>& v, std::size_t begin, std::size_t end,
                     std::vector<double>& scratch) {
  scratch.assign(v.begin() + static_cast<std::ptrdiff_t>(begin),
                 v.begin() + static_cast<std::ptrdiff_t>(end));
  const auto mid = scratch.begin() + static_cast<std::ptrdiff_t>(scratch.size() / 2);
  std::nth_element(scratch.begin(), mid, scratch.end());
  return *mid;
}

}  // namespace hoshi
