// Conserved quantities and global properties of a particle set.
#pragma once

#include <array>

#include "core/particle_set.hpp"

namespace hoshi {

struct Diagnostics {
  double kinetic = 0;                // K = sum m v^2 / 2
  double potential = 0;              // W = sum m pot / 2 (pot holds G and excludes the self term)
  double total = 0;                  // K + W
  std::array<double, 3> momentum{};  // sum m v
  std::array<double, 3> angular_momentum{};  // sum m x cross v
  std::array<double, 3> com{};               // centre of mass
  double mass = 0;
  // 2 K_int / |W|, K_int = K - |P|^2 / (2M): the kinetic energy in the centre-of-mass frame
  // (the virial theorem's), so that a system moving as a whole keeps its ratio.
  double virial_ratio = 0;
};

// Requires p.pot to hold the potentials of the current positions. Sums in double with
// pairwise-stable OpenMP reductions.
Diagnostics diagnostics(const ParticleSet& p);

}  // namespace hoshi
