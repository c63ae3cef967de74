// A Hernquist halo sampled from its DF stays in equilibrium (tree solver).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "analysis/analysis.hpp"
#include "gpu_test_support.hpp"
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

// An isolated Hernquist halo in Henon units (a = 1/3, mirror-pair sampled, N = 20k) keeps its
// 10, 50 and 90% Lagrangian radii (about the centre of mass) over 10 half-mass dynamical
// times t_dyn = sqrt(r50^3 / (G M / 2)) = 1.02 (r50 = (1 + sqrt 2) a).
// Tree, theta = 0.5 (Barnes 1994 criterion, quadrupoles). Softening rule: the Plummer
// softening may weaken the force at r10 = 0.154 by at most 1%, 1.5 eps^2 / r10^2 < 0.01, so
// eps = 0.01. dt = 1/32: 38 steps per circular orbit at r10 (period 1.2).
// Bound for each radius r_f, the sum of
//  * fluctuations: an equilibrium's Lagrangian radii fluctuate as particles cross them, at
//    most like an independent resample of N' = N/2 pairs: delta r / r = sqrt(f (1 - f) / N')
//    / f / (d ln M / d ln r), d ln M / d ln r = 2 a / (r + a), for each of r(t) and r(0);
//    their ratio, sqrt 2 times that; 3 sigma (9.3%, 7.2%, 13.7%);
//  * two-body relaxation over t: |delta r| / r <~ t / t_relax(r), with the local
//    t_relax = 0.34 sigma^3 / (G^2 m rho ln Lambda) (Binney & Tremaine eq. 7.106) from the
//    model's sigma and rho, m = M / N and Lambda = r / eps (softened encounters): 7% at r10,
//    0.4% at r50, < 0.01% at r90.
// A model out of equilibrium (velocities 10% too large) changes r10 and r50 by more than
// 20% within a few t_dyn and fails.
// On every backend (the CUDA solver when built and a device is present; skipped otherwise).
class HernquistEquilibrium : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { HOSHI_SKIP_IF_UNAVAILABLE(GetParam()); }
};

TEST_P(HernquistEquilibrium, LagrangianRadiiStayPut) {
  const std::size_t n = 20000;
  const double a = 1.0 / 3.0, eps = 0.01;
  ParticleSet p = make_hernquist(n, 2026, a);
  SolverConfig c;
  c.backend = GetParam();
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
    const double fluct =
        3 * std::sqrt(2.0) * std::sqrt(fk * (1 - fk) / (n / 2.0)) / fk / (2 * a / (r + a));
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

INSTANTIATE_TEST_SUITE_P(Backends, HernquistEquilibrium,
                         ::testing::Values(Backend::cpu, Backend::cuda),
                         testing_support::backend_test_name);

}  // namespace
}  // namespace hoshi
