// Direct summation on the CPU: the double-precision reference and the fast float32 kernel.
#pragma once

#include <cstddef>
#include <vector>

#include "core/particle_set.hpp"
#include "physics/softening.hpp"

namespace hoshi {

struct ForceArrays {
  std::vector<double> ax, ay, az, pot;
  void resize(std::size_t n) {
    ax.assign(n, 0.0);
    ay.assign(n, 0.0);
    az.assign(n, 0.0);
    pot.assign(n, 0.0);
  }
};

// Double-precision direct summation, O(N * targets), OpenMP over targets. The yardstick for
// every accuracy claim in hoshi. Forces on the particles `targets` (indices into p) from all
// particles; the self-pair is excluded. Results have G applied.
void direct_reference(const ParticleSet& p, double G, Softening kernel, double eps,
                      const std::vector<std::size_t>& targets, ForceArrays& out);

// The same for every particle, written into p.ax, p.ay, p.az, p.pot.
void direct_reference(ParticleSet& p, double G, Softening kernel, double eps);

// Fast float32 direct summation into p.ax.. p.pot. Positions are taken relative to the
// centre of the bounding box in double, then rounded to float; sources are processed in
// L1-sized tiles; explicit SIMD (see direct_simd.cpp). Returns the number of interactions.
std::uint64_t direct_float(ParticleSet& p, double G, Softening kernel, double eps);

// Name of the SIMD path compiled in ("avx512", "avx2" or "scalar").
const char* direct_simd_name();

}  // namespace hoshi
