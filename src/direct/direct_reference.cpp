#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "core/set_size.hpp"
#include "direct/direct.hpp"

namespace hoshi {

namespace {

// Sets more than 2^kMaxUnscaled from unit size or mass are summed in units of their size and
// mass (below, exact); nearer ones as they are, so that their sums stay bit for bit.
constexpr int kMaxUnscaled = 64;

}  // namespace

void direct_reference(const ParticleSet& p, double G, Softening kernel, double eps,
                      const std::vector<std::size_t>& targets, ForceArrays& out) {
  const std::size_t n = p.size();
  // Double's range holds the pair term m / r^3 only for r^3 between ~m 1e-308 and m 1e308: two
  // unit masses 1e-105 apart, or a Plummer sphere 1e110 in size, gave inf / NaN or 0 (the
  // float32 solvers are rescaled for this, src/solver/solver.cpp). A set whose bulk (its 5-95%
  // range, as the float32 solvers take it: one far escaper does not shrink the cluster; or the
  // softening where that is larger) or total mass is far from 1 is therefore summed with
  // positions / 2^kL, masses / 2^kM and eps / 2^kL, and the results scaled back by
  // 2^(kM - 2 kL) (accelerations) and 2^(kM - kL) (potentials): powers of two, exact while
  // nothing leaves double's normal range, so the sums are those of the same system in units
  // where it is of order one.
  const SetSize size = set_size(p);
  int kL = nearest_power_of_two(std::max(size.bulk, eps)), kM = nearest_power_of_two(size.mass);
  if (std::abs(kL) <= kMaxUnscaled && std::abs(kM) <= kMaxUnscaled) kL = kM = 0;
  std::vector<double> sx, sy, sz, sm;  // the rescaled set, where one is needed
  const double *x = p.x.data(), *y = p.y.data(), *z = p.z.data(), *m = p.m.data();
  if (kL != 0 || kM != 0) {
    sx.resize(n), sy.resize(n), sz.resize(n), sm.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      sx[j] = std::ldexp(p.x[j], -kL);
      sy[j] = std::ldexp(p.y[j], -kL);
      sz[j] = std::ldexp(p.z[j], -kL);
      sm[j] = std::ldexp(p.m[j], -kM);
    }
    x = sx.data(), y = sy.data(), z = sz.data(), m = sm.data();
  }
  const auto s = SofteningParams<double>::make(kernel, std::ldexp(eps, -kL));
  const std::ptrdiff_t nt = static_cast<std::ptrdiff_t>(targets.size());
  out.resize(targets.size());
#pragma omp parallel for schedule(dynamic, 16) if (nt * n > 100000)
  for (std::ptrdiff_t t = 0; t < nt; ++t) {
    const std::size_t i = targets[t];
    double ax = 0, ay = 0, az = 0, pot = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      pair_interaction(s, x[j] - x[i], y[j] - y[i], z[j] - z[i], m[j], true, ax, ay, az, pot);
    }
    out.ax[t] = G * std::ldexp(ax, kM - 2 * kL);
    out.ay[t] = G * std::ldexp(ay, kM - 2 * kL);
    out.az[t] = G * std::ldexp(az, kM - 2 * kL);
    out.pot[t] = G * std::ldexp(pot, kM - kL);
  }
}

void direct_reference(ParticleSet& p, double G, Softening kernel, double eps) {
  std::vector<std::size_t> all(p.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  ForceArrays f;
  direct_reference(p, G, kernel, eps, all, f);
  p.ax.swap(f.ax);
  p.ay.swap(f.ay);
  p.az.swap(f.az);
  p.pot.swap(f.pot);
}

}  // namespace hoshi
