// Initial conditions: mass, centre-of-mass frame, Plummer energy and virial ratio.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "diagnostics/diagnostics.hpp"
#include "direct/direct.hpp"
#include "ic/ic.hpp"

namespace hoshi {
namespace {

void expect_com_frame(const ParticleSet& p) {
  const Diagnostics d = diagnostics(p);
  EXPECT_NEAR(d.mass, 1.0, 1e-12);
  // Shifted to the centre-of-mass frame in double: residuals are round-off of sums of N
  // terms of size |x| ~ 1 (positions) and |v| ~ 1: N * 2^-53 * max|x|.
  const double tol = p.size() * 0x1.0p-52 * 30;
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(d.com[k], 0.0, tol);
    EXPECT_NEAR(d.momentum[k], 0.0, tol);
  }
}

TEST(InitialConditions, PlummerHenonUnits) {
  // Henon units: E = -1/4, W = -1/2, K = 1/4 (virial). Sampling noise: the relative
  // fluctuation of K = sum m v^2/2 is sqrt(Var(v^2)) / <v^2> / sqrt(N) ~ 0.8 / sqrt(N) for the
  // Plummer DF, that of W is of the same order; at N = 4096 sigma ~ 0.0125 (E, W: at most twice
  // that). One draw within 4 sigma of each; the mean of 16 draws (seeds 42..57) within 4 of its
  // sigma, a quarter of one draw's: a length scale off by 5% (E 5% off) fails, which one draw's
  // 10% bound on E let through. The 0.1% mass cut shifts E by 7e-4 (-0.2507), K by less.
  const std::size_t n = 4096, draws = 16;
  const double sigma = 0.8 / std::sqrt(static_cast<double>(n));
  double e = 0, q = 0, k = 0;
  for (std::uint64_t seed = 42; seed < 42 + draws; ++seed) {
    ParticleSet p = make_plummer(n, seed);
    ASSERT_EQ(p.size(), n);
    expect_com_frame(p);
    direct_reference(p, 1.0, Softening::plummer, 0.0);
    const Diagnostics d = diagnostics(p);
    EXPECT_NEAR(d.total, -0.25, 4 * sigma * 0.25 * 2) << seed;
    EXPECT_NEAR(d.virial_ratio, 1.0, 4 * sigma * 2) << seed;
    EXPECT_NEAR(d.kinetic, 0.25, 4 * sigma * 0.25) << seed;
    e += d.total / draws, q += d.virial_ratio / draws, k += d.kinetic / draws;
  }
  const double of_mean = 1 / std::sqrt(static_cast<double>(draws));
  EXPECT_NEAR(e, -0.25, 4 * sigma * 0.25 * 2 * of_mean);
  EXPECT_NEAR(q, 1.0, 4 * sigma * 2 * of_mean);
  EXPECT_NEAR(k, 0.25, 4 * sigma * 0.25 * of_mean);
}

TEST(Diagnostics, VirialRatioIsTheCentreOfMassFrames) {
  // A Plummer sphere moving as a whole at speed 3 (K grows by M 9 / 2 = 4.5, W unchanged):
  // the virial ratio is that of the sphere at rest, to the round-off of K (the bulk part is
  // subtracted: ~N 2^-52 (K + 4.5)).
  ParticleSet p = make_plummer(2048, 44);
  direct_reference(p, 1.0, Softening::plummer, 0.0);
  const Diagnostics rest = diagnostics(p);
  for (std::size_t i = 0; i < p.size(); ++i) p.vx[i] += 3.0;
  const Diagnostics moving = diagnostics(p);
  EXPECT_NEAR(moving.kinetic, rest.kinetic + 4.5, 1e-9);
  EXPECT_NEAR(moving.virial_ratio, rest.virial_ratio, 2048 * 0x1.0p-52 * 10);
}

TEST(InitialConditions, PlummerLeavesOutTheOuterTenthOfAPercent) {
  // The model is cut at 0.1% of its mass: r < 22.8 Henon lengths (38.7 scale radii), where
  // M(r) = 0.999. Beyond r = 13.43 (22.8 scale radii, M = 0.99712: the cut until 2026-11-30,
  // which left nothing there) lies 0.00188 of the mass: at N = 1e5, 188 +- 14 particles (binomial);
  // allow 5 sigma.
  const std::size_t n = 100000;
  const ParticleSet p = make_plummer(n, 43);
  double r_max = 0;
  std::size_t beyond = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = std::sqrt(p.x[i] * p.x[i] + p.y[i] * p.y[i] + p.z[i] * p.z[i]);
    r_max = std::max(r_max, r);
    beyond += r > 13.43;
  }
  EXPECT_LT(r_max, 22.81);  // the cut, plus the centre-of-mass shift
  EXPECT_NEAR(static_cast<double>(beyond), 188.0, 5 * 14.0);
}

TEST(InitialConditions, PlummerIsReproducibleBySeed) {
  const ParticleSet a = make_plummer(100, 9), b = make_plummer(100, 9), c = make_plummer(100, 10);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.vz, b.vz);
  EXPECT_NE(a.x, c.x);
}

TEST(InitialConditions, UniformSphereIsColdAndInsideRadius) {
  ParticleSet p = make_uniform_sphere(2000, 5, 2.0);
  expect_com_frame(p);
  // Half the mass within R / 2^(1/3) for a uniform sphere: binomial noise sqrt(N)/2.
  std::size_t inside = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double r = std::sqrt(p.x[i] * p.x[i] + p.y[i] * p.y[i] + p.z[i] * p.z[i]);
    // Inside R plus the centre-of-mass shift, whose size is ~ sqrt(3/5) R / sqrt(N) (5 sigma).
    EXPECT_LE(r, 2.0 * (1 + 5 * std::sqrt(0.6 / 2000)));
    EXPECT_EQ(p.vx[i], 0.0);
    if (r < 2.0 / std::cbrt(2.0)) ++inside;
  }
  EXPECT_NEAR(static_cast<double>(inside), 1000.0, 4 * std::sqrt(2000.0) / 2);
}

TEST(InitialConditions, KeplerOrbitElements) {
  const double e = 0.5;
  ParticleSet p = make_kepler(e);
  expect_com_frame(p);
  // Relative orbit: r = 1 + e at apocentre, specific energy -G M / (2 a) = -1/2.
  const double dx = p.x[0] - p.x[1], dvy = p.vy[0] - p.vy[1];
  EXPECT_NEAR(dx, 1 + e, 1e-15);
  EXPECT_NEAR(0.5 * dvy * dvy - 1.0 / dx, -0.5, 1e-15);
  EXPECT_THROW(make_kepler(1.0), std::invalid_argument);
  EXPECT_THROW(make_plummer(0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace hoshi
