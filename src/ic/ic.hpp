// Initial conditions. Every model is deterministic for a given seed and is returned in its
// centre-of-mass frame. Units: G = 1, total mass 1 unless stated (Henon units).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/particle_set.hpp"

namespace hoshi {

// Plummer sphere (Aarseth, Henon & Wielen 1974) in Henon units: G = M = 1, E = -1/4,
// scale length a = 3 pi / 16, virial ratio 1.
ParticleSet make_plummer(std::size_t n, std::uint64_t seed);

// Uniform sphere of radius `radius` at rest (cold collapse). Free-fall time
// t_ff = (pi/2) sqrt(R^3 / (2 G M)).
ParticleSet make_uniform_sphere(std::size_t n, std::uint64_t seed, double radius = 1.0);

// Kepler two-body orbit: masses 1/2 and 1/2, semi-major axis 1 (G = 1, so the period is
// 2 pi), eccentricity e in [0, 1), started at apocentre.
ParticleSet make_kepler(double e);

// Shifts positions and velocities to the centre-of-mass frame.
void to_com_frame(ParticleSet& p);

// Deterministic uniform random numbers in [0, 1) from a 64-bit seed (splitmix64 seeding of
// xoshiro256**), identical on every platform and compiler.
class Random {
 public:
  explicit Random(std::uint64_t seed);
  std::uint64_t next_u64();
  double uniform();  // [0, 1)
  double uniform(double a, double b) { return a + (b - a) * uniform(); }
  double normal();  // standard normal (Box-Muller)

 private:
  std::uint64_t s_[4];
};

}  // namespace hoshi
