#include "solver/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ic/ic.hpp"

namespace hoshi {

std::vector<std::size_t> sample_targets(std::size_t n, std::size_t k, std::uint64_t seed) {
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (k == 0 || k >= n) return all;
  // Partial Fisher-Yates: the first k entries become a uniform sample without replacement.
  Random rng(seed ^ 0x9e3779b97f4a7c15ULL);
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(rng.next_u64() % (n - i));
    std::swap(all[i], all[j]);
  }
  all.resize(k);
  std::sort(all.begin(), all.end());
  return all;
}

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  const double rank = std::ceil(q * static_cast<double>(s.size()));
  const std::size_t i = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return s[std::min(i, s.size() - 1)];
}

TargetErrors target_errors(const ParticleSet& p, const std::vector<std::size_t>& targets,
                           const ForceArrays& ref) {
  TargetErrors e;
  e.acc.resize(targets.size());
  e.pot.resize(targets.size());
  // The denominator's floor: 1e-6 of the median |a_ref|. A target whose acceleration cancels
  // by symmetry (the centre of a lattice) has a reference of pure round-off, 4e-17, and its
  // relative error was 2e10 for an absolute error of 1e-3 of the median.
  // Lengths by hypot: a sum of squares overflowed for accelerations above 1e154 (a system of
  // size 1e-110), and every error came out NaN.
  std::vector<double> norms(targets.size());
  for (std::size_t k = 0; k < targets.size(); ++k)
    norms[k] = std::hypot(ref.ax[k], ref.ay[k], ref.az[k]);
  double floor = 0;
  if (!norms.empty()) {
    std::vector<double> sorted = norms;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    floor = 1e-6 * sorted[sorted.size() / 2];
  }
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const std::size_t i = targets[k];
    const double dx = p.ax[i] - ref.ax[k], dy = p.ay[i] - ref.ay[k], dz = p.az[i] - ref.az[k];
    const double a = std::max(norms[k], floor);
    const double da = std::hypot(dx, dy, dz);
    e.acc[k] = a > 0 ? da / a : da;
    const double dp = std::abs(p.pot[i] - ref.pot[k]);
    e.pot[k] = ref.pot[k] != 0 ? dp / std::abs(ref.pot[k]) : dp;
  }
  return e;
}

ForceErrors force_errors(const ParticleSet& p, const std::vector<std::size_t>& targets,
                         const ForceArrays& ref) {
  return error_percentiles(target_errors(p, targets, ref));
}

ForceErrors error_percentiles(TargetErrors te) {
  std::vector<double>& acc = te.acc;
  std::vector<double>& pot = te.pot;
  std::sort(acc.begin(), acc.end());
  std::sort(pot.begin(), pot.end());
  ForceErrors e;
  e.p50 = quantile_sorted(acc, 0.5);
  e.p90 = quantile_sorted(acc, 0.9);
  e.p99 = quantile_sorted(acc, 0.99);
  e.p999 = quantile_sorted(acc, 0.999);
  e.max = acc.empty() ? 0 : acc.back();
  e.pot_p50 = quantile_sorted(pot, 0.5);
  e.pot_p99 = quantile_sorted(pot, 0.99);
  return e;
}

}  // namespace hoshi
