// Positions relative to a local origin, the bounding-box centre, computed in double before the
// conversion to float (DESIGN.md decision 2), as the CPU float kernels do. Plain C++.
#pragma once

#include <algorithm>
#include <cstddef>

#include "core/particle_set.hpp"

namespace hoshi::gpu {

struct Centre {
  double x = 0, y = 0, z = 0;
};

// Centre of the axis-aligned bounding box of p (the origin for an empty set).
inline Centre bounding_box_centre(const ParticleSet& p) {
  if (p.empty()) return {};
  double lo[3] = {p.x[0], p.y[0], p.z[0]}, hi[3] = {p.x[0], p.y[0], p.z[0]};
  for (std::size_t i = 1; i < p.size(); ++i) {
    lo[0] = std::min(lo[0], p.x[i]);
    hi[0] = std::max(hi[0], p.x[i]);
    lo[1] = std::min(lo[1], p.y[i]);
    hi[1] = std::max(hi[1], p.y[i]);
    lo[2] = std::min(lo[2], p.z[i]);
    hi[2] = std::max(hi[2], p.z[i]);
  }
  return {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};
}

}  // namespace hoshi::gpu
