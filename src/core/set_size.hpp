// A particle set's size and mass as the rescalings to units of order one take them (the float32
// solvers, src/solver/solver.cpp, and the double reference, src/direct/direct_reference.cpp):
// the bulk's size, so that one far escaper does not shrink a cluster out of range.
#pragma once

#include <cmath>
#include <cstddef>

#include "core/particle_set.hpp"

namespace hoshi {

// The bulk's size (the largest spread of a coordinate between the 5th and 95th percentiles of
// an evenly strided sample of at most kSizeSample particles; for fewer than 20 particles the
// sample's full extent; the box where the sample is one point), the largest side of the
// bounding box, the total mass and the smallest nonzero mass. All 0 for an empty set.
struct SetSize {
  double bulk = 0, extent = 0, mass = 0, min_mass = 0;
};
inline constexpr std::size_t kSizeSample = 4096;
SetSize set_size(const ParticleSet& p);

// The exponent of the power of two nearest to v (log2 rounded); 0 for v <= 0 or not finite:
// the unit a size or mass is rescaled by.
inline int nearest_power_of_two(double v) {
  return v > 0 && std::isfinite(v) ? static_cast<int>(std::lround(std::log2(v))) : 0;
}

}  // namespace hoshi
