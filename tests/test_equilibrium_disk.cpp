// Energy conservation of a disk galaxy over one rotation period.
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
// at hoshi run's defaults, softening eps = 0.01 (= z0) and dt = 1/128 (T / 330; the shortest
// orbital time in the softened centre, 2 pi eps / v_c(eps) ~ 0.3, is 40 steps). The leapfrog's
// energy error is second order: with dt/4 it must fall by a factor near 16 (more than 8; a
// first-order scheme, 4, or a force inconsistent with the potential, no change, fails), and at
// dt it must be below 1e-3: the innermost orbits' (dt / t_orb)^2 (2 pi)^2 / 8 ~ 3e-3 weighted
// by their share of the energy, a few percent of the particles within 2 eps. N = 2000, float
// direct summation (force round-off 1e-7).
// On every backend (the CUDA solver when built and a device is present; skipped otherwise).
class DiskGalaxyRun : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { HOSHI_SKIP_IF_UNAVAILABLE(GetParam()); }
};

TEST_P(DiskGalaxyRun, EnergyConservedOverOneRotation) {
  const std::size_t n = 2000;
  const DiskGalaxyModel model(DiskGalaxyParams{});
  const ParticleSet p = model.sample(n, 8);
  const double R = model.reference_radius();
  const double T = 2 * kPi * R / model.vc(R);
  SolverConfig c;
  c.backend = GetParam();
  c.solver = SolverKind::direct;
  c.eps = 0.01;
  auto solver = make_solver(c, n);
  const double dt = 1.0 / 128;
  const int steps = static_cast<int>(std::ceil(T / dt));
  const double e1 = max_energy_error(p, *solver, dt, steps);
  const double e2 = max_energy_error(p, *solver, dt / 4, 4 * steps);
  EXPECT_LT(e1, 1e-3);
  EXPECT_GT(e1 / e2, 8.0);
}

INSTANTIATE_TEST_SUITE_P(Backends, DiskGalaxyRun, ::testing::Values(Backend::cpu, Backend::cuda),
                         testing_support::backend_test_name);

}  // namespace
}  // namespace hoshi
