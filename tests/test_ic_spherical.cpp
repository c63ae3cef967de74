// Spherical equilibrium models: Eddington inversion against analytic distribution functions,
// sampled density and dispersion profiles against the analytic ones, virial equilibrium.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "direct/direct.hpp"
#include "ic/spherical.hpp"

namespace hoshi {
namespace {

constexpr double kPi = std::numbers::pi;

// Largest relative error of the numerical DF against `exact` over E / Psi0 in (0.001, 0.999).
template <class F>
double max_df_error(const std::string& profile, int n_grid, double psi0, F exact) {
  SphericalModelOptions o;
  o.n_grid = n_grid;
  const SphericalModel m(density_profile(profile, 1.0, 0.0), 1.0, o);
  double err = 0;
  for (double q : {0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9, 0.99, 0.999}) {
    const double E = q * psi0;
    err = std::max(err, std::fabs(m.df(E) / exact(E) - 1));
  }
  return err;
}

// The Eddington DF of a Hernquist density must reproduce Hernquist's (1990) closed form. The
// scheme (piecewise-linear drho/dPsi on a log grid, exact integrals of the square-root kernel)
// is at least first order in the grid spacing h = ln(r_max/r_min)/(n-1) = 0.0069 at n = 4000:
// the error must be below 1e-3 there (h times an O(0.1) coefficient) and fall by more than 3
// (first order: 4) when h is divided by 4. Breaking the 1/(sqrt(8) pi^2) factor, the slopes
// or the square roots fails both.
TEST(Eddington, HernquistMatchesAnalyticDF) {
  auto exact = [](double E) { return hernquist_df(E, 1.0, 1.0); };
  const double coarse = max_df_error("hernquist", 1000, 1.0, exact);
  const double fine = max_df_error("hernquist", 4000, 1.0, exact);
  EXPECT_LT(fine, 1e-3);
  EXPECT_GT(coarse / fine, 3.0);
}

// Plummer: f(E) = 24 sqrt(2) / (7 pi^3) a^2 / (G^5 M^4) E^(7/2) (Binney & Tremaine eq. 4.83),
// Psi0 = G M / a. Same bounds as above.
TEST(Eddington, PlummerMatchesAnalyticDF) {
  auto exact = [](double E) {
    return 24 * std::sqrt(2.0) / (7 * kPi * kPi * kPi) * std::pow(E, 3.5);
  };
  const double coarse = max_df_error("plummer", 1000, 1.0, exact);
  const double fine = max_df_error("plummer", 4000, 1.0, exact);
  EXPECT_LT(fine, 1e-3);
  EXPECT_GT(coarse / fine, 3.0);
}

// The tabulated mass, potential and self energy against the Hernquist closed forms:
// W = -G M^2 / (6 a); trapezoid errors O(h^2) = 5e-5.
TEST(Eddington, HernquistTablesMatchClosedForms) {
  const SphericalModel m(density_profile("hernquist", 1.0, 0.0), 1.0);
  EXPECT_NEAR(m.self_energy(), -1.0 / 6.0, 1e-4);
  for (double r : {0.01, 0.1, 1.0, 10.0, 100.0}) {
    EXPECT_NEAR(m.enclosed_mass(r) / hernquist_mass(r, 1, 1), 1.0, 1e-3) << r;
    EXPECT_NEAR(m.potential(r) / hernquist_potential(r, 1, 1), 1.0, 1e-3) << r;
  }
}

// An external potential enters Psi: a Hernquist component in its own field plus a second,
// identical Hernquist potential is the same as one of twice the mass for Psi, so its
// potential at r must be twice the one-component value.
TEST(Eddington, ExternalPotentialAddsToPsi) {
  const SphericalModel m(density_profile("hernquist", 1.0, 0.0), 1.0, {},
                         [](double r) { return hernquist_potential(r, 1.0, 1.0); });
  for (double r : {0.1, 1.0, 10.0}) EXPECT_NEAR(m.psi(r) / (2.0 / (r + 1.0)), 1.0, 1e-3);
  EXPECT_NEAR(m.external_energy(), 2 * (-1.0 / 6.0), 2e-4);  // int rho Phi dV = 2 W
  EXPECT_EQ(m.negative_df_nodes(), 0);
}

// Kolmogorov-Smirnov statistic of `r` against the cumulative distribution `cdf`.
template <class F>
double ks_statistic(std::vector<double> r, F cdf) {
  std::sort(r.begin(), r.end());
  const double n = static_cast<double>(r.size());
  double d = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double c = cdf(r[i]);
    d = std::max({d, std::fabs(c - i / n), std::fabs(c - (i + 1) / n)});
  }
  return d;
}

std::vector<double> radii(const ParticleSet& p) {
  std::vector<double> r(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    r[i] = std::sqrt(p.x[i] * p.x[i] + p.y[i] * p.y[i] + p.z[i] * p.z[i]);
  return r;
}

// The sampled radii follow M(r) / (M mass_cut): KS distance below the 1% critical value
// 1.63 / sqrt(N) (fixed seed). Sampled before the centre-of-mass shift, which moves the centre
// by ~ r_rms / sqrt(N). A wrong inversion of M(r) (e.g. dropping the square root) fails.
TEST(HernquistSample, RadiiFollowAnalyticMassProfile) {
  const std::size_t n = 20000;
  const double a = 1.0 / 3.0, cut = 0.999;
  Random rng(11);
  auto radius = [a](double X) { return a * std::sqrt(X) / (1 - std::sqrt(X)); };
  const ParticleSet p = sample_isotropic(
      n, rng, 1.0, cut, radius, [a](double r) { return 1.0 / (r + a); },
      [a](double E) { return hernquist_df(E, 1.0, a); });
  const double d = ks_statistic(radii(p), [&](double r) { return hernquist_mass(r, 1, a) / cut; });
  EXPECT_LT(d, 1.63 / std::sqrt(static_cast<double>(n)));
}

// Radial velocity dispersion in 20 equal-count shells against Hernquist's (1990) sigma_r^2(r)
// at each shell's mean radius: chi-square with the measured standard error of the mean of
// v_r^2 in each shell. For 20 degrees of freedom P(chi2 > 45.3) = 0.001. The shell's
// sigma^2 varies across the shell; the test uses narrow shells (N/20 = 1000 particles) inside
// r < 20 a, where that spread is below the statistical error. Sampling speeds from a wrong
// DF (e.g. f(E) with E = Psi + v^2/2) fails.
TEST(HernquistSample, VelocityDispersionFollowsJeans) {
  const std::size_t n = 20000;
  const double a = 1.0;
  Random rng(12);
  auto radius = [a](double X) { return a * std::sqrt(X) / (1 - std::sqrt(X)); };
  const ParticleSet p = sample_isotropic(
      n, rng, 1.0, 0.9, radius, [a](double r) { return 1.0 / (r + a); },
      [a](double E) { return hernquist_df(E, 1.0, a); });
  std::vector<std::size_t> idx(n);
  const std::vector<double> r = radii(p);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](auto i, auto j) { return r[i] < r[j]; });
  const std::size_t per = n / 20;
  double chi2 = 0;
  for (std::size_t b = 0; b < 20; ++b) {
    double s = 0, s2 = 0, rm = 0;
    for (std::size_t k = b * per; k < (b + 1) * per; ++k) {
      const std::size_t i = idx[k];
      const double vr = (p.vx[i] * p.x[i] + p.vy[i] * p.y[i] + p.vz[i] * p.z[i]) / r[i];
      s += vr * vr;
      s2 += vr * vr * vr * vr;
      rm += r[i];
    }
    const double np = static_cast<double>(per);
    const double mean = s / np, var = s2 / np - mean * mean;
    const double expect = hernquist_sigma2(rm / np, 1.0, a);
    chi2 += (mean - expect) * (mean - expect) / (var / np);
  }
  EXPECT_LT(chi2, 45.3);
}

struct Energies {
  double K = 0, W = 0;
};

// K and W = 1/2 sum m phi with the double direct reference (eps = 0).
Energies energies(ParticleSet p) {
  direct_reference(p, 1.0, Softening::plummer, 0.0);
  Energies e;
  for (std::size_t i = 0; i < p.size(); ++i) {
    e.K += 0.5 * p.m[i] * (p.vx[i] * p.vx[i] + p.vy[i] * p.vy[i] + p.vz[i] * p.vz[i]);
    e.W += 0.5 * p.m[i] * p.pot[i];
  }
  return e;
}

// Virial ratio 2K/|W| = 1 and E = -1/4 (Henon units) within sampling noise. The relative
// scatter of K is sd(v^2)/mean(v^2)/sqrt(N') <= 1.5/sqrt(N') for these DFs, and W's is of the
// same order, so 2K/|W| scatters by <= 2.1/sqrt(N'), with N' = N/2 independent mirror pairs:
// 0.046 at N = 4096; the bound is 3 sigma, 0.14. Truncation at 99.9% of the mass shifts E by <
// 1e-3. A DF off by a factor in v (e.g. a missing sqrt(2) in v_esc) moves 2K/|W| by a factor of 2.
class VirialTest : public ::testing::TestWithParam<const char*> {};

TEST_P(VirialTest, VirialRatioAndHenonEnergy) {
  const std::string name = GetParam();
  const std::size_t n = 4096;
  const ParticleSet p = name == "hernquist-analytic"
                            ? make_hernquist(n, 5)
                            : make_eddington_model(name, n, 5, 0.0, name == "nfw" ? 10.0 : 0.0);
  const Energies e = energies(p);
  const double bound = 3 * 2.1 / std::sqrt(static_cast<double>(n) / 2);
  EXPECT_NEAR(2 * e.K / -e.W, 1.0, bound) << name;
  EXPECT_NEAR((e.K + e.W) / -0.25, 1.0, bound) << name;
}

// The Henon scaling exactly (VirialTest's E cannot see a scale off by 10%: E -> E / lambda moves
// it by 10% against a bound of 14%): the same draw at a = 0 (Henon units) is the a = 1 draw with
// lengths times lambda = -2 W_self and velocities over sqrt(lambda), so that E = W / 2 = -1/4,
// with W_self analytic for G = M = a = 1: Hernquist -1/6, Plummer -3 pi / 32, Jaffe -1/2. Both
// draws are shifted to their centre-of-mass frame, which scales alike: the ratio is lambda to
// round-off (1e-12). Against the analytic value the bound is the model's tabulated W_self,
// a quadrature on its radial grid (4000 log-spaced points over 12 decades, h = 0.0069 in
// ln r: errors ~h^2 = 5e-5; measured 2e-6 to 1.3e-5); 1e-4.
TEST(EddingtonSample, HenonScalingIsTheAnalyticSelfEnergys) {
  for (const auto& [name, w_self] :
       {std::pair{"hernquist", -1.0 / 6}, {"plummer", -3 * kPi / 32}, {"jaffe", -0.5}}) {
    SCOPED_TRACE(name);
    const ParticleSet h = make_eddington_model(name, 512, 9, 0.0);
    const ParticleSet u = make_eddington_model(name, 512, 9, 1.0);
    ASSERT_EQ(h.size(), u.size());
    double num = 0, den = 0;
    for (std::size_t i = 0; i < h.size(); ++i) num += std::abs(h.x[i]), den += std::abs(u.x[i]);
    const double lambda = num / den;
    EXPECT_NEAR(lambda / (-2 * w_self), 1.0, 1e-4);
    for (std::size_t i = 0; i < h.size(); ++i) {
      ASSERT_NEAR(h.z[i], lambda * u.z[i], 1e-12 * lambda * den / h.size() * 10) << i;
      ASSERT_NEAR(h.vy[i] * std::sqrt(lambda), u.vy[i], 1e-12 * (1 + std::abs(u.vy[i]))) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, VirialTest,
                         ::testing::Values("hernquist-analytic", "hernquist", "plummer", "jaffe",
                                           "nfw"));

// Every Eddington model's sampled radii follow its own tabulated M(r) (KS, 1% level).
TEST(EddingtonSample, RadiiFollowModelMassProfile) {
  for (const char* name : {"plummer", "jaffe", "nfw"}) {
    const SphericalModel m(density_profile(name, 1.0, std::string(name) == "nfw" ? 10.0 : 0.0), 1);
    Random rng(21);
    const std::size_t n = 10000;
    const ParticleSet p = m.sample(n, rng, 0.99, false);  // independent draws
    const double d =
        ks_statistic(radii(p), [&](double r) { return std::min(m.enclosed_mass(r) / 0.99, 1.0); });
    EXPECT_LT(d, 1.63 / std::sqrt(static_cast<double>(n))) << name;
  }
}

// The NFW model's radii follow its cut-off profile for a cutoff far outside or inside the
// default grid (1e-6 a to 1e6 a): M(r) by an independent quadrature here (trapezoid in ln r,
// 2e5 points from 1e-9 min(a, r_cut) to 400 r_cut), KS at the 1% level with N/2 independent
// draws (mirror pairs). A grid that stopped at 1e6 a put 41% of the particles of r_cut = 1e7 a
// on its edge (D ~ 0.3); one that started at 1e-6 a refused r_cut = 1e-7 a as a cusp.
TEST(EddingtonSample, NfwFollowsItsCutoffFarFromTheDefaultGrid) {
  for (const double rc : {1e7, 1e-7}) {
    const std::size_t n = 8000;
    const ParticleSet p = make_eddington_model("nfw", n, 3, 1.0, rc);
    const int k = 200000;
    const double l0 = std::log(1e-9 * std::min(1.0, rc)), h = (std::log(400 * rc) - l0) / (k - 1);
    std::vector<double> mass(k);
    auto dm = [&](int i) {  // 4 pi r^3 rho(r), per unit ln r
      const double r = std::exp(l0 + i * h);
      return 4 * kPi * r * r * r * std::exp(-r / rc) / (r * (1 + r) * (1 + r));
    };
    mass[0] = dm(0) / 2;  // rho ~ 1/r inside: M = 2 pi r^2 = (4 pi r^3 rho) / 2
    for (int i = 1; i < k; ++i) mass[i] = mass[i - 1] + 0.5 * h * (dm(i - 1) + dm(i));
    const double cut = 0.999, total = mass.back();
    const double d = ks_statistic(radii(p), [&](double r) {
      const double t = std::clamp((std::log(r) - l0) / h, 0.0, k - 1.0);
      const int i = std::min(static_cast<int>(t), k - 2);
      const double f = mass[i] + (t - i) * (mass[i + 1] - mass[i]);
      return std::min(f / total / cut, 1.0);
    });
    EXPECT_LT(d, 1.63 / std::sqrt(n / 2.0)) << "r_cut " << rc;
  }
}

// Mirror-pair sampling puts the density centre at the centre of mass, so the Lagrangian radii
// about the centre of mass of make_hernquist follow the analytic ones: the fraction f of the
// sample inside r is M(r) / (M mass_cut), so r_f = r(M = f mass_cut). Binomial noise with
// N' = N/2 independent pairs: delta r / r = sqrt(f (1 - f) / N') / f / (d ln M / d ln r),
// d ln M / d ln r = 2 a / (r + a); 4 sigma. Without the mirror pairs the centre of mass sits
// ~0.15 (= r10) from the cusp at N = 20k and r10 fails.
TEST(HernquistSample, LagrangianRadiiAboutCentreOfMass) {
  const std::size_t n = 20000;
  const double a = 1.0 / 3.0, cut = 0.999;
  const ParticleSet p = make_hernquist(n, 31);
  std::vector<double> r = radii(p);
  std::sort(r.begin(), r.end());
  for (double f : {0.1, 0.5, 0.9}) {
    const double s = std::sqrt(f * cut);
    const double expect = a * s / (1 - s);
    const double measured = r[static_cast<std::size_t>(std::ceil(f * n)) - 1];
    const double sigma = std::sqrt(f * (1 - f) / (n / 2.0)) / f / (2 * a / (expect + a));
    EXPECT_NEAR(measured / expect, 1.0, 4 * sigma) << f;
  }
}

TEST(SphericalModels, ReproducibleBySeed) {
  const ParticleSet a = make_hernquist(500, 3), b = make_hernquist(500, 3),
                    c = make_hernquist(500, 4);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.vz, b.vz);
  EXPECT_NE(a.x, c.x);
  const ParticleSet d = make_eddington_model("jaffe", 300, 9),
                    e = make_eddington_model("jaffe", 300, 9);
  EXPECT_EQ(d.vy, e.vy);
}

// The sampler runs blocks of particles in parallel, each block with its own generator: the
// sample must not depend on the number of threads.
TEST(SphericalModels, IndependentOfThreadCount) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const ParticleSet a = make_hernquist(10000, 8);
  omp_set_num_threads(2);
  const ParticleSet b = make_hernquist(10000, 8);
  omp_set_num_threads(saved);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.vz, b.vz);
}

TEST(SphericalModels, CentreOfMassFrameAndMass) {
  const ParticleSet p = make_eddington_model("nfw", 2000, 1, 0.0, 10.0);
  double m = 0, cx = 0, vx = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    m += p.m[i];
    cx += p.m[i] * p.x[i];
    vx += p.m[i] * p.vx[i];
  }
  EXPECT_NEAR(m, 1.0, 1e-12);
  EXPECT_NEAR(cx, 0.0, 1e-12);
  EXPECT_NEAR(vx, 0.0, 1e-12);
}

TEST(SphericalModels, BadInputThrows) {
  EXPECT_THROW(make_hernquist(0, 1), std::invalid_argument);
  EXPECT_THROW(make_hernquist(10, 1, -1.0), std::invalid_argument);
  EXPECT_THROW(make_hernquist(10, 1, 1.0, 1.5), std::invalid_argument);
  EXPECT_THROW(density_profile("king", 1, 0), std::invalid_argument);
  EXPECT_THROW(density_profile("nfw", 1, 0), std::invalid_argument);  // needs a cutoff
  // r^-2 at large r: infinite mass.
  EXPECT_THROW(SphericalModel([](double r) { return 1.0 / (r * r); }, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace hoshi
