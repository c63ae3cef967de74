// Cold collapse of a uniform sphere at the analytic free-fall time.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "analysis/analysis.hpp"
#include "diagnostics/diagnostics.hpp"
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
// On every backend (the CUDA solver when built and a device is present; skipped otherwise).
class ColdCollapse : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { HOSHI_SKIP_IF_UNAVAILABLE(GetParam()); }
};

TEST_P(ColdCollapse, FollowsFreeFall) {
  const std::size_t n = 2000;
  ParticleSet p = make_uniform_sphere(n, 17, 1.0);
  SolverConfig c;
  c.backend = GetParam();
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
    const double w = diagnostics(q).potential;
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

INSTANTIATE_TEST_SUITE_P(Backends, ColdCollapse, ::testing::Values(Backend::cpu, Backend::cuda),
                         testing_support::backend_test_name);

}  // namespace
}  // namespace hoshi
