// Input checks shared by the solvers and readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/particle_set.hpp"

namespace hoshi {

// Two distinct particles (indices i < j) at exactly the same position, if any: of all such
// positions the smallest in (x, y, z) order, with its two smallest indices. O(N log N), parallel.
std::optional<std::pair<std::size_t, std::size_t>> find_coincident_pair(const ParticleSet& p);

// With zero softening two distinct particles at one point have an infinite force: throws
// std::invalid_argument naming their ids and the position.
void require_distinct_positions(const ParticleSet& p);

// Every position, velocity and mass finite, masses >= 0 and total mass > 0; throws
// std::invalid_argument naming the particle id and field. `what` names the source (a file).
void require_valid_particles(const ParticleSet& p, const std::string& what);

}  // namespace hoshi
