// Forces that come back from the device as packed (ax, ay, az, pot) float quadruples (CUDA's
// float4), stored into a ParticleSet's double arrays: one helper for the CUDA solvers and the
// device stepper, split across the OpenMP threads (a serial loop over 2^20 particles is a
// few milliseconds of a step whose device work is ~15 ms).
#pragma once

#include <cstddef>

#include "core/particle_set.hpp"

namespace hoshi {

// p.ax[i] = xyzw[4i], p.ay[i] = xyzw[4i + 1], p.az[i] = xyzw[4i + 2], p.pot[i] = xyzw[4i + 3]
// for i < n; p's force arrays must hold n entries.
void store_packed_forces(const float* xyzw, std::size_t n, ParticleSet& p);

}  // namespace hoshi
