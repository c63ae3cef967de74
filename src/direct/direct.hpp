// Direct summation on the CPU: the double-precision reference and the fast float32 kernel.
#pragma once

#include <cstddef>
#include <cstdint>
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
// particles; the self-pair is excluded. Results have G applied. A set more than 2^64 from
// unit size (its bounding box, or eps where larger) or total mass is summed in units of them
// (powers of two, exact), so that m / r^3 stays in double's range.
void direct_reference(const ParticleSet& p, double G, Softening kernel, double eps,
                      const std::vector<std::size_t>& targets, ForceArrays& out);

// The same for every particle, written into p.ax, p.ay, p.az, p.pot.
void direct_reference(ParticleSet& p, double G, Softening kernel, double eps);

// Fast float32 direct summation into p.ax.. p.pot (G applied, self term excluded).
// The particles are sorted along the Morton curve and the targets taken in chunks, each with
// its positions relative to its median (difference in double, then rounded to float;
// direct_float.cpp); sources are processed in L1-sized tiles; explicit SIMD across targets
// (simd::VecF, 3 registers of targets against one broadcast source) running the shared
// physics templates plummer_pair / spline_pair; OpenMP over chunks. The self pair is masked
// out by index, softened or not; with eps == 0 two distinct particles whose float32 offsets
// coincide throw std::invalid_argument naming them (their force would be inf/NaN), so callers
// need no O(N log N) check beforehand.
// Returns the number of particle-particle interactions, N (N - 1).
// With `active` (per particle, in p's order): the forces of the particles flagged, written into
// theirs alone (a chunk of targets without one is skipped, the others' entries are left as they
// were); the interactions are those of the chunks summed.
std::uint64_t direct_float(ParticleSet& p, double G, Softening kernel, double eps,
                           const std::vector<std::uint8_t>* active = nullptr);

// Name of the SIMD path compiled in ("avx512", "avx2" or "scalar"), simd::kName.
const char* direct_simd_name();

// Float32 structure-of-arrays views for direct_block_float. Positions of targets and sources
// must be in one common local frame (for example relative to a cell or box centre).
struct FloatSources {
  const float* x;
  const float* y;
  const float* z;
  const float* m;
  std::size_t n;
};
struct FloatTargets {
  const float* x;
  const float* y;
  const float* z;
  float* ax;  // accumulators, added to (+=)
  float* ay;
  float* az;
  float* pot;
  std::size_t n;
};

// The SIMD block kernel behind direct_float, for reuse (tree group walks: a group's targets
// against its interaction list): adds to t.ax.. t.pot, for every target, the sum over every
// source of m f d and m phi (the shared pair kernel of `s`; G not applied). Any t.n and
// src.n; no alignment needed. Pairs at zero distance:
//   s.eps2 > 0 (softened): evaluated like any pair, zero force and potential -m/eps; a caller
//     that passes a target among the sources removes that self term itself;
//   eps == 0: skipped when skip_zero_distance is true (costs a compare per pair), otherwise
//     they produce inf/NaN, so pass true whenever a target may be among the sources.
void direct_block_float(const SofteningParams<float>& s, const FloatTargets& t,
                        const FloatSources& src, bool skip_zero_distance);

}  // namespace hoshi
