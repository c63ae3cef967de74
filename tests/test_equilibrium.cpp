// Dynamics of the initial conditions: cold collapse at the free-fall time, a Hernquist halo
// staying in equilibrium, energy conservation of a disk galaxy.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "analysis/analysis.hpp"
#include "ic/galaxy.hpp"
#include "ic/ic.hpp"
#include "ic/models.hpp"
#include "ic/spherical.hpp"
#include "nbody_test_util.hpp"
#include "solver/solver.hpp"

namespace hoshi {
namespace {

constexpr double kPi = std::numbers::pi;
using testing_util::leapfrog;
using testing_util::total_energy;

// Homologous collapse of a cold uniform sphere (every shell has the same free-fall time):
// r / r0 = cos^2(eta), t / t_ff = (2 / pi) (eta + sin(eta) cos(eta)).
double cycloid_eta(double tau) {
  double lo = 0, hi = kPi / 2;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    ((2 / kPi) * (mid + std::sin(mid) * std::cos(mid)) < tau ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Cold uniform sphere, N = 2000, R = 1, G = M = 1: t_ff = (pi/2) sqrt(R^3 / (2 G M)) = 1.1107.
// Direct summation (float), Plummer softening eps = 0.02 (0.15 of the mean interparticle
// spacing 0.13), dt = 0.002 (t_ff / 555).
// Discreteness: a shell enclosing N X particles has a free-fall time that scatters by
// sigma_tau = (1/2) delta N / N = 0.5 / sqrt(N X), 0.016 for the half-mass shell. So
//  * r50(t) / r50(0) must follow the cycloid within |d(r/r0)/dtau| (3 sigma_tau + 0.01),
//    d(r/r0)/dtau = -(pi/2) tan(eta); the 0.01 covers the softening's force deficit
//    (eps^2 / r50^2 < 1% for r50 > 0.2);
//  * the collapse time, the time of the deepest potential energy, must be t_ff within
//    3 sigma_tau + 0.02: the last 2% of t_ff is the fall from r < 0.1 R
//    ((t_ff - t) / t_ff = (4 / 3 pi) (r / R)^(3/2)), where the softening and the
//    N^(-1/3) graininess stop the collapse.
// Wrong G or mass (t_ff changes by sqrt(2)) or a missing half-kick fail.
TEST(ColdCollapse, FollowsFreeFall) {
  const std::size_t n = 2000;
  ParticleSet p = make_uniform_sphere(n, 17, 1.0);
  SolverConfig c;
  c.solver = SolverKind::direct;
  c.eps = 0.02;
  auto solver = make_solver(c, n);
  const double t_ff = kPi / 2 * std::sqrt(1.0 / 2.0);
  const double dt = 0.002;
  const int steps = static_cast<int>(std::lround(1.15 * t_ff / dt));
  const double sigma_tau = 0.5 / std::sqrt(n * 0.5);
  double r50_0 = 0, w_min = 0, t_min = 0;
  std::vector<double> checks = {0.3, 0.5, 0.7, 0.8, 0.9};
  std::size_t next = 0;
  leapfrog(p, *solver, dt, steps, [&](double t, const ParticleSet& q) {
    const double w = potential_energy_from_pot(q);
    if (w < w_min) {
      w_min = w;
      t_min = t;
    }
    const double r50 = lagrangian_radii(q, {0.5}, centre_of_mass(q))[0];
    if (t == 0) r50_0 = r50;
    if (next < checks.size() && t >= checks[next] * t_ff - 0.5 * dt) {
      const double tau = t / t_ff;
      const double eta = cycloid_eta(tau);
      const double expect = std::cos(eta) * std::cos(eta);
      const double slope = kPi / 2 * std::tan(eta);
      EXPECT_NEAR(r50 / r50_0, expect, slope * (3 * sigma_tau + 0.01)) << "t/t_ff = " << tau;
      ++next;
    }
  });
  EXPECT_EQ(next, checks.size());
  EXPECT_NEAR(t_min / t_ff, 1.0, 3 * sigma_tau + 0.02);
}

// An isolated Hernquist halo in Henon units (a = 1/3, mirror-pair sampled, N = 20k) keeps its
// 10, 50 and 90% Lagrangian radii (about the centre of mass) over 10 half-mass dynamical
// times t_dyn = sqrt(r50^3 / (G M / 2)) = 1.02 (r50 = (1 + sqrt 2) a).
// Tree, theta = 0.5 (Barnes 1994 criterion, quadrupoles). Softening rule: the Plummer
// softening may weaken the force at r10 = 0.154 by at most 1%, 1.5 eps^2 / r10^2 < 0.01, so
// eps = 0.01. dt = 1/32: 38 steps per circular orbit at r10 (period 1.2).
// Bound for each radius r_f, the sum of
//  * fluctuations: an equilibrium's Lagrangian radii fluctuate as particles cross them, at
//    most like an independent resample of N' = N/2 pairs: delta r / r = sqrt(f (1 - f) / N')
//    / f / (d ln M / d ln r), d ln M / d ln r = 2 a / (r + a); 3 sigma (6.6%, 5.1%, 9.7%);
//  * two-body relaxation over t: |delta r| / r <~ t / t_relax(r), with the local
//    t_relax = 0.34 sigma^3 / (G^2 m rho ln Lambda) (Binney & Tremaine eq. 7.106) from the
//    model's sigma and rho, m = M / N and Lambda = r / eps (softened encounters): 7% at r10,
//    0.4% at r50, < 0.01% at r90.
// A model out of equilibrium (velocities 10% too large) changes r10 and r50 by more than
// 20% within a few t_dyn and fails.
TEST(HernquistEquilibrium, LagrangianRadiiStayPut) {
  const std::size_t n = 20000;
  const double a = 1.0 / 3.0, eps = 0.01;
  ParticleSet p = make_hernquist(n, 2026, a);
  SolverConfig c;
  c.solver = SolverKind::tree;
  c.eps = eps;
  c.tree.theta = 0.5;
  auto solver = make_solver(c, n);
  const double r50 = (1 + std::sqrt(2.0)) * a;
  const double t_dyn = std::sqrt(r50 * r50 * r50 / 0.5);
  const double dt = 1.0 / 32;
  const int steps = static_cast<int>(std::ceil(10 * t_dyn / dt));
  const double t_end = steps * dt;
  const std::vector<double> f = {0.1, 0.5, 0.9};
  std::vector<double> bound;
  for (double fk : f) {
    const double s = std::sqrt(fk * 0.999);
    const double r = a * s / (1 - s);
    const double fluct = 3 * std::sqrt(fk * (1 - fk) / (n / 2.0)) / fk / (2 * a / (r + a));
    const double sigma = std::sqrt(hernquist_sigma2(r, 1.0, a));
    const double t_relax =
        0.34 * sigma * sigma * sigma / (hernquist_density(r, 1.0, a) / n * std::log(r / eps));
    bound.push_back(fluct + t_end / t_relax);
  }
  std::vector<double> r0;
  double next = 0;
  leapfrog(p, *solver, dt, steps, [&](double t, const ParticleSet& q) {
    if (t + 0.5 * dt < next) return;
    next += t_dyn;
    const auto lr = lagrangian_radii(q, f, centre_of_mass(q));
    if (r0.empty()) r0 = lr;
    for (std::size_t k = 0; k < f.size(); ++k)
      EXPECT_NEAR(lr[k] / r0[k], 1.0, bound[k]) << "f = " << f[k] << ", t = " << t;
  });
}

// Maximum relative energy error of a leapfrog run of `p` over `steps` steps of dt.
double max_energy_error(ParticleSet p, GravitySolver& solver, double dt, int steps) {
  double e0 = 0, worst = 0;
  leapfrog(p, solver, dt, steps, [&](double t, const ParticleSet& q) {
    const double e = total_energy(q);
    if (t == 0) e0 = e;
    worst = std::max(worst, std::fabs(e / e0 - 1));
  });
  return worst;
}

// A disk galaxy (registry defaults: Hernquist halo M = 1, a = 1; disk M = 0.05, R_d = 0.1,
// z0 = 0.01, Q = 1.5) conserves energy over one rotation period at R_Q, T = 2 pi R_Q / v_c,
// at softening eps = z0 and dt = 0.01 (T / 260; the shortest orbital time in the softened
// centre, 2 pi eps / v_c(eps) ~ 0.3, is 30 steps). The leapfrog's energy error is second
// order: with dt/2 it must fall by a factor near 4 (more than 2.5; a first-order scheme or
// a force inconsistent with the potential gives ~2 or no change), and at dt it must be below
// 1e-3 ((dt / t_orb)^2 (2 pi)^2 / 8 ~ 5e-3 for the innermost orbits, which carry a
// small fraction of the energy). N = 2000, float direct summation (force round-off 1e-7).
TEST(DiskGalaxyRun, EnergyConservedOverOneRotation) {
  const std::size_t n = 2000;
  const DiskGalaxyModel model(DiskGalaxyParams{});
  const ParticleSet p = model.sample(n, 8);
  const double R = model.reference_radius();
  const double T = 2 * kPi * R / model.vc(R);
  SolverConfig c;
  c.solver = SolverKind::direct;
  c.eps = 0.01;
  auto solver = make_solver(c, n);
  const double dt = 0.01;
  const int steps = static_cast<int>(std::ceil(T / dt));
  const double e1 = max_energy_error(p, *solver, dt, steps);
  const double e2 = max_energy_error(p, *solver, dt / 2, 2 * steps);
  EXPECT_LT(e1, 1e-3);
  EXPECT_GT(e1 / e2, 2.5);
}

}  // namespace
}  // namespace hoshi
