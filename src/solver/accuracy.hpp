// Force accuracy against the double-precision direct sum: what `hoshi accuracy` reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/particle_set.hpp"
#include "direct/direct.hpp"

namespace hoshi {

// k distinct particle indices drawn uniformly from [0, n), sorted, reproducible for a seed;
// all of [0, n) when k == 0 or k >= n.
std::vector<std::size_t> sample_targets(std::size_t n, std::size_t k, std::uint64_t seed);

// The relative errors |a - a_ref| / |a_ref| (acc) and |pot - pot_ref| / |pot_ref| (pot) of
// each target, in target order (p's values at targets[k] against ref entry k); |a_ref| is
// floored at 1e-6 of its median over the targets (a reference that cancels to round-off by
// symmetry gave relative errors of 1e10), and a target whose reference is exactly zero with
// the floor (an isolated particle) has the absolute error.
struct TargetErrors {
  std::vector<double> acc, pot;
};
TargetErrors target_errors(const ParticleSet& p, const std::vector<std::size_t>& targets,
                           const ForceArrays& ref);

// Percentiles of the relative errors |a - a_ref| / |a_ref| and |pot - pot_ref| / |pot_ref|
// over the targets (p's accelerations at targets[k] against ref entry k). A target whose
// reference is exactly zero (an isolated particle) uses the absolute error.
struct ForceErrors {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  double pot_p50 = 0, pot_p99 = 0;
};
ForceErrors force_errors(const ParticleSet& p, const std::vector<std::size_t>& targets,
                         const ForceArrays& ref);
// The same percentiles of errors already computed.
ForceErrors error_percentiles(TargetErrors e);

// The q-quantile (0 <= q <= 1) of a sorted sample: the value at rank ceil(q n) - 1.
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace hoshi
