// Disk galaxies, mergers and the model registry.
#include <gtest/gtest.h>

#include "diagnostics/diagnostics.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "analysis/analysis.hpp"
#include "direct/direct.hpp"
#include "ic/galaxy.hpp"
#include "ic/models.hpp"
#include "ic/spherical.hpp"

namespace hoshi {
namespace {

constexpr double kPi = std::numbers::pi;

// The Hankel-transform midplane force of a razor-thin exponential disk must equal Freeman's
// closed form. Composite Simpson with >= 25 points per Bessel period and a tail beyond
// k = 1000 / R_d of relative size < 1e-7 (k^-2.5 decay): 1e-4 is a loose numerical bound
// for 0.05 R_d <= R <= 10 R_d. A wrong transform (e.g. exponent -1/2) fails by O(1).
TEST(DiskForce, ThinLimitMatchesFreeman) {
  for (double R : {0.05, 0.2, 0.5, 1.0, 2.2, 5.0, 10.0}) {
    const double vc2 = -R * exponential_disk_radial_accel(R, 1.0, 1.0, 0.0);
    EXPECT_NEAR(vc2 / freeman_vc2(R, 1.0, 1.0), 1.0, 1e-4) << R;
  }
}

// Thickness dilutes the midplane force: |a_R| decreases monotonically with z0 at fixed R, and
// the thick result tends to the thin one as z0 -> 0 (the vertical transform Z(k z0) -> 1),
// with a difference of order z0 / R.
TEST(DiskForce, ThicknessWeakensAndConverges) {
  for (double R : {0.5, 1.0, 3.0}) {
    const double thin = exponential_disk_radial_accel(R, 1, 1, 0.0);
    double prev = thin;
    for (double z0 : {0.001, 0.01, 0.1, 0.3}) {
      const double a = exponential_disk_radial_accel(R, 1, 1, z0);
      EXPECT_GT(a, prev) << R << " " << z0;  // less negative
      EXPECT_LT(std::fabs(a / thin - 1), 2 * z0 / R) << R << " " << z0;
      prev = a;
    }
  }
}

// Far from the disk its force tends to the point mass plus the quadrupole: a ring of radius b
// has a_R = -G M / R^2 (1 + 3 b^2 / (4 R^2) + O(b^4/R^4)) in its plane, and an exponential disk
// has <b^2> = 6 R_d^2, so R^2 |a_R| / (G M) = 1 + 4.5 (R_d / R)^2 = 1.005 at R = 30 R_d; the
// next order (<b^4> = 120 R_d^4) and the thickness (z0 = 0.1 R_d) are below 1e-3.
TEST(DiskForce, FarFieldIsKeplerianPlusQuadrupole) {
  const double R = 30.0;
  EXPECT_NEAR(-R * R * exponential_disk_radial_accel(R, 1, 1, 0.1), 1.0 + 4.5 / (R * R), 1e-3);
}

// The monopole potential of the disk is continuous with -G M / r far out.
TEST(DiskForce, MonopolePotential) {
  EXPECT_NEAR(exponential_disk_monopole_potential(50.0, 1, 1) * 50.0, -1.0, 1e-12);
  EXPECT_NEAR(exponential_disk_monopole_potential(1e-8, 1, 1), -1.0, 1e-7);
}

// The sampled disk has the Toomre Q it was built for at R_Q: sigma_R measured in the annulus
// R_Q (1 +- 10%) over n ~ 1000 particles, n/2 independent mirror pairs (both members of a pair
// have the same v_R and v_phi), has a relative error sqrt(1/n) = 3% (1 sigma); the
// profile's variation across the annulus (sigma_R^2 ~ exp(-R/R_d), +-0.24 R_d) biases the
// annulus mean only at second order, < 1%.
// Bound: 4 sigma = 13% on Q. A wrong 3.36 or kappa (e.g. kappa = Omega) fails.
TEST(DiskGalaxy, ToomreQAtReferenceRadius) {
  DiskGalaxyParams gp;
  const DiskGalaxyModel model(gp);
  const ParticleSet p = model.sample(40000, 7);
  std::size_t nh, nd, nb;
  model.split(40000, nh, nd, nb);
  ParticleSet disk;
  for (std::size_t i = nh; i < nh + nd; ++i)
    disk.push_back(p.x[i], p.y[i], p.z[i], p.vx[i], p.vy[i], p.vz[i], p.m[i], i);
  // The galaxy is in its centre-of-mass frame, which the halo's sampling noise moves by
  // ~ r_rms / sqrt(N) from the model centre: measure about the disk's own centre and velocity.
  const Vec3 c = centre_of_mass(disk), cv = centre_of_mass_velocity(disk);
  for (std::size_t i = 0; i < disk.size(); ++i) {
    disk.x[i] -= c[0];
    disk.y[i] -= c[1];
    disk.vx[i] -= cv[0];
    disk.vy[i] -= cv[1];
  }
  const double RQ = model.reference_radius();
  double s = 0, s2 = 0, nn = 0, svphi = 0;
  for (std::size_t i = 0; i < disk.size(); ++i) {
    const double R = std::hypot(disk.x[i], disk.y[i]);
    if (std::fabs(R / RQ - 1) > 0.1) continue;
    const double vR = (disk.vx[i] * disk.x[i] + disk.vy[i] * disk.y[i]) / R;
    const double vphi = (disk.x[i] * disk.vy[i] - disk.y[i] * disk.vx[i]) / R;
    s += vR;
    s2 += vR * vR;
    svphi += vphi;
    nn += 1;
  }
  ASSERT_GT(nn, 700);
  const double sigma = std::sqrt(s2 / nn - (s / nn) * (s / nn));
  const double Q = sigma * model.kappa(RQ) / (3.36 * model.surface_density(RQ));
  EXPECT_NEAR(Q / gp.disk_Q, 1.0, 4 * std::sqrt(1 / nn) + 0.01);
  // Mean rotation: standard error sigma_phi / sqrt(n/2); 4 sigma.
  EXPECT_NEAR(svphi / nn, model.mean_vphi(RQ), 4 * model.sigma_phi(RQ) / std::sqrt(nn / 2) + 1e-3);
}

// Vertical structure: sech^2(z / z0) has <z^2> = (pi z0)^2 / 12. Standard error of z_rms from
// n/2 independent mirror pairs ~ z_rms sqrt(var(z^2)) / (2 <z^2> sqrt(n/2)) <= z_rms / sqrt(n/2)
// (sech^2 kurtosis 4.2); 5 sigma. Disk mass and total mass exact.
TEST(DiskGalaxy, VerticalProfileAndMasses) {
  DiskGalaxyParams gp;
  gp.bulge_mass = 0.02;
  gp.bulge_fraction = 0.1;
  const DiskGalaxyModel model(gp);
  const std::size_t n = 20000;
  const ParticleSet p = model.sample(n, 3);
  std::size_t nh, nd, nb;
  model.split(n, nh, nd, nb);
  EXPECT_EQ(nh + nd + nb, n);
  double z2 = 0, md = 0, mt = 0, zc = 0;
  for (std::size_t i = nh; i < nh + nd; ++i) zc += p.z[i] / static_cast<double>(nd);
  for (std::size_t i = nh; i < nh + nd; ++i) {
    z2 += (p.z[i] - zc) * (p.z[i] - zc);
    md += p.m[i];
  }
  for (double m : p.m) mt += m;
  const double zrms = std::sqrt(z2 / static_cast<double>(nd));
  const double expect = kPi * gp.disk_z0 / std::sqrt(12.0);
  EXPECT_NEAR(zrms / expect, 1.0, 5 / std::sqrt(nd / 2.0));
  EXPECT_NEAR(md, gp.disk_mass, 1e-12);
  EXPECT_NEAR(mt, gp.halo_mass + gp.disk_mass + gp.bulge_mass, 1e-12);
}

// The whole galaxy is in virial equilibrium: 2K/|W| = 1 within sampling noise (see
// test_ic_spherical: 3 x 2.1 / sqrt(N/2) for mirror pairs), W from the double direct sum. The
// disk's cold rotation and the monopole approximation for the halo are inside that noise at these
// masses.
TEST(DiskGalaxy, VirialRatio) {
  for (const char* name : {"disk", "disk-nfw"}) {
    ParticleSet p = make_model(name, 4096, 2);
    direct_reference(p, 1.0, Softening::plummer, 0.0);
    const double q = diagnostics(p).virial_ratio;
    EXPECT_NEAR(q, 1.0, 3 * 2.1 / std::sqrt(4096.0 / 2)) << name;
  }
}

// Merger: the two galaxies' centres of mass are r_start apart and approach on the parabola:
// relative speed^2 = 2 G M / r (exact for the point-mass orbit; the galaxies' own mass
// centres sit at their model centres up to the sampling shift ~ r_rms / sqrt(N), removed by
// measuring each galaxy's own centre of mass).
TEST(Merger, ParabolicOrbitAndFrame) {
  MergerParams mp;
  mp.mass_ratio = 0.5;
  const std::size_t n = 6000;
  const ParticleSet p = make_merger(n, 4, mp);
  const auto n2 = static_cast<std::size_t>(std::llround(n * 0.5 / 1.5));
  ParticleSet a, b;
  for (std::size_t i = 0; i < n; ++i)
    (i < n - n2 ? a : b).push_back(p.x[i], p.y[i], p.z[i], p.vx[i], p.vy[i], p.vz[i], p.m[i], i);
  const Vec3 ca = centre_of_mass(a), cb = centre_of_mass(b);
  const Vec3 va = centre_of_mass_velocity(a), vb = centre_of_mass_velocity(b);
  const double r = std::hypot(cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]);
  const double v2 =
      std::pow(vb[0] - va[0], 2) + std::pow(vb[1] - va[1], 2) + std::pow(vb[2] - va[2], 2);
  const double M = 1.05 * 1.5;
  EXPECT_NEAR(r, mp.r_start, 1e-9);
  EXPECT_NEAR(v2, 2 * M / r, 1e-9);
  // Approaching: (x_b - x_a) . (v_b - v_a) < 0.
  EXPECT_LT((cb[0] - ca[0]) * (vb[0] - va[0]) + (cb[1] - ca[1]) * (vb[1] - va[1]), 0);
  // Masses 1.05 and 0.525; whole system in the centre-of-mass frame.
  double ma = 0, mb = 0;
  for (double m : a.m) ma += m;
  for (double m : b.m) mb += m;
  EXPECT_NEAR(mb / ma, 0.5, 1e-12);
  const Vec3 c = centre_of_mass(p);
  EXPECT_NEAR(std::hypot(c[0], c[1], c[2]), 0.0, 1e-12);
  // Secondary disk (the particles after its halo) inclined by 60 degrees about x, then turned
  // by 30 degrees about z: its spin axis is Rz(30) Rx(60) e_z = (sin60 sin30, -sin60 cos30,
  // cos60). The disk's own angular momentum is exact up to the random velocity dispersions,
  // a ~1% effect on the direction.
  DiskGalaxyParams g2 = mp.galaxy;
  g2.halo_mass *= 0.5;
  g2.disk_mass *= 0.5;
  std::size_t nh, nd, nb;
  DiskGalaxyModel(g2).split(n2, nh, nd, nb);
  ParticleSet disk2;
  for (std::size_t i = nh; i < nh + nd; ++i)
    disk2.push_back(b.x[i], b.y[i], b.z[i], b.vx[i], b.vy[i], b.vz[i], b.m[i], i);
  const Vec3 axis =
      angular_momentum_axis(disk2, centre_of_mass(disk2), centre_of_mass_velocity(disk2));
  const double s60 = std::sin(kPi / 3), c60 = std::cos(kPi / 3);
  EXPECT_NEAR(axis[0], s60 * 0.5, 0.03);
  EXPECT_NEAR(axis[1], -s60 * std::cos(kPi / 6), 0.03);
  EXPECT_NEAR(axis[2], c60, 0.03);
}

TEST(Registry, NamesKeysAndErrors) {
  EXPECT_EQ(make_model("hernquist", 300, 5).x, make_hernquist(300, 5).x);
  ModelParams mp;
  parse_model_params("a=0.5,mass_cut=0.99", mp);
  EXPECT_EQ(mp.at("a"), 0.5);
  EXPECT_EQ(make_model("hernquist", 300, 5, mp).x, make_hernquist(300, 5, 0.5, 0.99).x);
  EXPECT_THROW(make_model("king", 10, 1), std::invalid_argument);
  EXPECT_THROW(make_model("hernquist", 10, 1, {{"r_cut", 2.0}}), std::invalid_argument);
  EXPECT_THROW(parse_model_params("a=x", mp), std::invalid_argument);
  EXPECT_THROW(parse_model_params("a", mp), std::invalid_argument);
  EXPECT_THROW(make_model("disk", 1000, 1, {{"disk_Q", -1.0}}), std::invalid_argument);
  EXPECT_THROW(make_model("merger", 1000, 1, {{"mass_ratio", 2.0}}), std::invalid_argument);
  for (const auto& name : model_names()) {
    EXPECT_FALSE(model_help(name).empty());
    const ParticleSet p = make_model(name, 2000, 1);
    EXPECT_GE(p.size(), 2u) << name;
  }
}

}  // namespace
}  // namespace hoshi
