// Direct summation: the float32 SIMD kernel against the double reference, and momentum
// conservation of the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "direct/direct.hpp"
#include "ic/ic.hpp"
#include "solver/solver.hpp"

namespace hoshi {
namespace {

// Independent double-precision direct sum written from Newton's law with Plummer softening,
// not through the code under test.
void naive_double(const ParticleSet& p, double eps, std::size_t i, double a[3], double& pot,
                  double& sum_abs) {
  a[0] = a[1] = a[2] = pot = sum_abs = 0;
  for (std::size_t j = 0; j < p.size(); ++j) {
    if (j == i) continue;
    const double d[3] = {p.x[j] - p.x[i], p.y[j] - p.y[i], p.z[j] - p.z[i]};
    const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps * eps;
    const double r = std::sqrt(r2);
    for (int k = 0; k < 3; ++k) a[k] += p.m[j] * d[k] / (r2 * r);
    pot -= p.m[j] / r;
    sum_abs += p.m[j] * std::sqrt(r2 - eps * eps) / (r2 * r);
  }
}

TEST(DirectReference, MatchesNewtonPlummerSoftened) {
  ParticleSet p = make_plummer(512, 7);
  const double eps = 0.01;
  direct_reference(p, 1.0, Softening::plummer, eps);
  for (std::size_t i = 0; i < p.size(); i += 37) {
    double a[3], pot, s;
    naive_double(p, eps, i, a, pot, s);
    // Two double sums of the same 511 terms in the same order: agreement to a few ulps.
    EXPECT_NEAR(p.ax[i], a[0], 1e-13 * s);
    EXPECT_NEAR(p.ay[i], a[1], 1e-13 * s);
    EXPECT_NEAR(p.az[i], a[2], 1e-13 * s);
    EXPECT_NEAR(p.pot[i], pot, 1e-13 * std::abs(pot));
  }
}

TEST(DirectReference, TotalMomentumChangeIsZero) {
  // sum_i m_i a_i = 0 by Newton's third law; in double the residual is round-off:
  // |sum m a| <= c N eps_64 sum_i m_i sum_j |a_ij|, bounded here with the net |a_i| instead of
  // sum_j |a_ij| (in a Plummer sphere the pair terms of a particle add up to a few times their
  // net force) and c = 10 for that factor.
  ParticleSet p = make_plummer(2048, 11);
  direct_reference(p, 1.0, Softening::plummer, 0.0);
  double f[3] = {0, 0, 0}, scale = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    f[0] += p.m[i] * p.ax[i];
    f[1] += p.m[i] * p.ay[i];
    f[2] += p.m[i] * p.az[i];
    scale += p.m[i] * std::sqrt(p.ax[i] * p.ax[i] + p.ay[i] * p.ay[i] + p.az[i] * p.az[i]);
  }
  const double bound = 2048 * 0x1.0p-52 * scale * 10;
  for (double c : f) EXPECT_LT(std::abs(c), bound);
}

// ---- the float32 SIMD kernel against double precision ------------------------------------

// Independent cubic-spline potential (Springel, Yoshida & White 2001 eq. A2 / Gadget-2),
// written with exact fractions, for unit mass; h = 2.8 eps.
double spline_phi_reference(double r, double eps) {
  const double h = 2.8 * eps, u = r / h;
  if (u >= 1) return -1 / r;
  if (u < 0.5)
    return (16.0 / 3 * u * u - 48.0 / 5 * std::pow(u, 4) + 32.0 / 5 * std::pow(u, 5) - 14.0 / 5) /
           h;
  return (1 / (15 * u) + 32.0 / 3 * u * u - 16 * std::pow(u, 3) + 48.0 / 5 * std::pow(u, 4) -
          32.0 / 15 * std::pow(u, 5) - 16.0 / 5) /
         h;
}

// What a float32 sum may deviate from the exact one for target i, per component of a and for
// the potential. For one target, with S = sum_j |a_ij| (each term's magnitude, in double):
//  * arithmetic: every term carries a few roundings (differences, r2, the Newton step after
//    the 14-bit rsqrt estimate, whose own residual 1.5 (2^-14)^2 is negligible), ~3 ulp,
//    and the running float sum adds one rounding of at most 2^-24 |partial sum| <= 2^-24 S
//    per term. These are uncorrelated, so the total is a random walk: sigma ~ sqrt(N) 2^-24 S
//    with N = 4096 terms; c = 4 covers a 4 sigma excursion over all 4096 targets and the
//    per-term roundings.
//  * float positions: x is rounded relative to a centre (direct_float: the median position of
//    the target's chunk of Morton-ordered targets, inside the same region; the bound takes the
//    box centre of the target's own cluster), an error of up to 2^-24 |x| per coordinate, so d_ij
//    moves by 2^-24 (|x_i| + |x_j|) and the term d/r^3 by up to 3 (2^-24 (|x_i| + |x_j|) / r_ij)
//    |a_ij|; these do not average out for one target (x_i is shared), so they are summed in
//    absolute value.
// The potential is bounded the same way with |phi_ij| (position term 1x instead of 3x).
// The self pair is masked (softened too), so it adds nothing.
struct FloatBound {
  double acc, pot;
  double sum_acc, sum_pot;  // S = sum_j |a_ij| and sum_j |phi_ij|
};
FloatBound float_bound(const ParticleSet& p, double eps, Softening kernel, std::size_t i,
                       const double centre[3]) {
  const double u = 0x1.0p-24, n = double(p.size());
  double s_acc = 0, s_pot = 0, pos_acc = 0, pos_pot = 0;
  auto dist = [&](std::size_t k) {
    return std::sqrt(std::pow(p.x[k] - centre[0], 2) + std::pow(p.y[k] - centre[1], 2) +
                     std::pow(p.z[k] - centre[2], 2));
  };
  const double xi = dist(i);
  for (std::size_t j = 0; j < p.size(); ++j) {
    if (j == i) continue;
    const double d[3] = {p.x[j] - p.x[i], p.y[j] - p.y[i], p.z[j] - p.z[i]};
    const double r = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    double a, phi;
    if (kernel == Softening::spline && eps > 0) {
      // |a_ij| from the numerical derivative of the independent potential (bounds only).
      const double dr = 1e-6 * r;
      phi = p.m[j] * std::abs(spline_phi_reference(r, eps));
      a = p.m[j] * std::abs(spline_phi_reference(r + dr, eps) - spline_phi_reference(r - dr, eps)) /
          (2 * dr);
    } else {
      const double r2 = r * r + eps * eps;
      phi = p.m[j] / std::sqrt(r2);
      a = p.m[j] * r / (r2 * std::sqrt(r2));
    }
    const double xj = dist(j);
    s_acc += a;
    s_pot += phi;
    pos_acc += 3 * u * (xi + xj) / r * a;
    pos_pot += u * (xi + xj) / r * phi;
  }
  FloatBound b;
  b.acc = 4 * std::sqrt(n) * u * s_acc + pos_acc;
  b.pot = 4 * std::sqrt(n) * u * s_pot + pos_pot;
  b.sum_acc = s_acc;
  b.sum_pot = s_pot;
  return b;
}

// Runs direct_float on N = 4096 Plummer particles and checks every particle against the
// double reference with the bound above. Returns the largest error / bound seen.
double check_float_against_double(Softening kernel, double eps) {
  ParticleSet p = make_plummer(4096, 2024);
  ParticleSet q = p;
  direct_reference(p, 1.0, kernel, eps);
  const std::uint64_t count = direct_float(q, 1.0, kernel, eps);
  EXPECT_EQ(count, 4096ull * 4095ull);
  double lo[3] = {p.x[0], p.y[0], p.z[0]}, hi[3] = {p.x[0], p.y[0], p.z[0]};
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double x[3] = {p.x[i], p.y[i], p.z[i]};
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], x[k]), hi[k] = std::max(hi[k], x[k]);
  }
  const double centre[3] = {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
  double worst = 0;
  int failures = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const FloatBound b = float_bound(p, eps, kernel, i, centre);
    const double da = std::max(
        {std::abs(q.ax[i] - p.ax[i]), std::abs(q.ay[i] - p.ay[i]), std::abs(q.az[i] - p.az[i])});
    const double dp = std::abs(q.pot[i] - p.pot[i]);
    worst = std::max({worst, da / b.acc, dp / b.pot});
    if (!(da <= b.acc && dp <= b.pot) && ++failures <= 5)
      ADD_FAILURE() << "particle " << i << ": |da| " << da << " (bound " << b.acc << "), |dpot| "
                    << dp << " (bound " << b.pot << ")";
  }
  EXPECT_EQ(failures, 0);
  ::testing::Test::RecordProperty("worst_error_over_bound", std::to_string(worst));
  return worst;
}

TEST(DirectFloat, MatchesDoubleReferenceNoSoftening) {
  const double worst = check_float_against_double(Softening::plummer, 0.0);
  // The bound is not vacuous: the errors use a visible part of it.
  EXPECT_GT(worst, 1e-2);
}

TEST(DirectFloat, MatchesDoubleReferencePlummerSoftened) {
  const double worst = check_float_against_double(Softening::plummer, 0.01);
  EXPECT_GT(worst, 1e-2);
}

TEST(DirectFloat, MatchesDoubleReferenceSplineSoftened) {
  // eps = 0.05: h = 0.14, so a sizeable share of the close pairs lies inside the kernel.
  const double worst = check_float_against_double(Softening::spline, 0.05);
  EXPECT_GT(worst, 1e-2);
}

// A cluster's forces keep float round-off when the set also holds a far escaper (1e5 away) or
// a second cluster (2e3 away): the offsets are taken from a centre inside each chunk of
// Morton-ordered targets, not from the centre of the whole box, where the cluster's positions
// were rounded to ~1e-3 and 1e-4 (p99 errors 7e-2 and 1e-2 before). Each cluster particle is
// checked with the float bound about its own cluster's box centre plus the worst case of the
// float sums, n 2^-24 S (S = sum_j |a_ij|, or sum_j |phi_ij|): the other cluster's 512 nearly
// equal small terms, added to partial sums near a_i, round alike, not as the random walk that
// float_bound assumes.
TEST(DirectFloat, FarEscaperOrClusterKeepsTheClusterAccurate) {
  for (const double offset : {1e5, 2e3}) {
    ParticleSet p = make_plummer(1024, 77);
    const bool escaper = offset > 1e4;
    const std::size_t half = p.size() / 2;
    std::vector<int> cluster(p.size(), 0);
    if (escaper) {
      p.x[0] += offset;
      cluster[0] = -1;
    } else {
      for (std::size_t i = half; i < p.size(); ++i) p.x[i] += offset, cluster[i] = 1;
    }
    ParticleSet q = p;
    const double eps = 0.01;
    direct_reference(p, 1.0, Softening::plummer, eps);
    direct_float(q, 1.0, Softening::plummer, eps);
    double centre[2][3];
    for (int c = 0; c < 2; ++c) {
      double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (cluster[i] != c) continue;
        const double x[3] = {p.x[i], p.y[i], p.z[i]};
        for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], x[k]), hi[k] = std::max(hi[k], x[k]);
      }
      for (int k = 0; k < 3; ++k) centre[c][k] = (lo[k] + hi[k]) / 2;
    }
    int failures = 0;
    double worst = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (cluster[i] < 0) continue;
      const FloatBound b = float_bound(p, eps, Softening::plummer, i, centre[cluster[i]]);
      const double da = std::max(
          {std::abs(q.ax[i] - p.ax[i]), std::abs(q.ay[i] - p.ay[i]), std::abs(q.az[i] - p.az[i])});
      const double dp = std::abs(q.pot[i] - p.pot[i]);
      const double nu = double(p.size()) * 0x1.0p-24;
      const double acc_bound = b.acc + nu * b.sum_acc;
      const double pot_bound = b.pot + nu * b.sum_pot;
      worst = std::max({worst, da / acc_bound, dp / pot_bound});
      if (!(da <= acc_bound && dp <= pot_bound) && ++failures <= 5)
        ADD_FAILURE() << "offset " << offset << ", particle " << i << ": |da| " << da << " (bound "
                      << acc_bound << "), |dpot| " << dp << " (bound " << pot_bound << ")";
    }
    EXPECT_EQ(failures, 0) << "offset " << offset;
    EXPECT_GT(worst, 1e-3) << "offset " << offset;  // the bound is not vacuous
  }
}

TEST(DirectFloat, OneParticleFeelsNothing) {
  for (double eps : {0.0, 0.1}) {
    ParticleSet p;
    p.push_back(0.3, -0.2, 0.1, 0, 0, 0, 2.0, 0);
    direct_float(p, 1.0, Softening::plummer, eps);
    EXPECT_EQ(p.ax[0], 0.0);
    EXPECT_EQ(p.ay[0], 0.0);
    EXPECT_EQ(p.az[0], 0.0);
    // The self pair is masked, softened too: nothing (it was -m/eps added and removed, within
    // 2^-22 m/eps of 0).
    EXPECT_EQ(p.pot[0], 0.0);
  }
}

TEST(DirectFloat, TwoParticlesAnalytic) {
  // m1 = 1 at the origin, m2 = 3 at (1, 2, -2), r = 3; G = 2.
  // a_1 = G m2 d / (r^2 + eps^2)^(3/2), pot_1 = -G m2 / sqrt(r^2 + eps^2), and 1 <-> 2.
  // Each value is a handful of float operations: relative error <= 2^-20 (the self pair is
  // masked).
  for (double eps : {0.0, 0.5}) {
    ParticleSet p;
    p.push_back(0, 0, 0, 0, 0, 0, 1.0, 0);
    p.push_back(1, 2, -2, 0, 0, 0, 3.0, 1);
    const double G = 2, r2 = 9 + eps * eps, s = std::sqrt(r2);
    direct_float(p, G, Softening::plummer, eps);
    const double d[3] = {1, 2, -2};
    const double a1[3] = {p.ax[0], p.ay[0], p.az[0]}, a2[3] = {p.ax[1], p.ay[1], p.az[1]};
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(a1[k], G * 3 * d[k] / (r2 * s), 0x1.0p-20 * G * 3 * 3 / (r2 * s));
      EXPECT_NEAR(a2[k], -G * 1 * d[k] / (r2 * s), 0x1.0p-20 * G * 3 / (r2 * s));
    }
    EXPECT_NEAR(p.pot[0], -G * 3 / s, 0x1.0p-20 * G * 3 / s);
    EXPECT_NEAR(p.pot[1], -G * 1 / s, 0x1.0p-20 * G / s);
  }
}

TEST(DirectFloat, SplineTwoParticlesBeyondHAreNewtonian) {
  // r = 3 >= h = 2.8 eps for eps = 1: exactly Newtonian, as without softening.
  ParticleSet p;
  p.push_back(0, 0, 0, 0, 0, 0, 1.0, 0);
  p.push_back(1, 2, -2, 0, 0, 0, 3.0, 1);
  direct_float(p, 1.0, Softening::spline, 1.0);
  EXPECT_NEAR(p.ax[0], 3.0 * 1 / 27, 0x1.0p-20 * 9 / 27);
  EXPECT_NEAR(p.az[1], -1.0 * -2 / 27, 0x1.0p-20 * 3 / 27);
  EXPECT_NEAR(p.pot[0], -3.0 / 3, 0x1.0p-20);
  EXPECT_NEAR(p.pot[1], -1.0 / 3, 0x1.0p-20);
}

TEST(DirectFloat, CoincidentParticlesWithoutSofteningAreAnError) {
  ParticleSet p = make_plummer(100, 3);
  p.x[57] = p.x[12];
  p.y[57] = p.y[12];
  p.z[57] = p.z[12];
  SolverConfig c;
  c.solver = SolverKind::direct;
  c.backend = Backend::cpu;
  c.eps = 0;
  auto solver = make_solver(c, p.size());
  EXPECT_THROW(solver->compute(p), std::invalid_argument);
  // The float kernel on its own reports it too, naming the ids, rather than returning NaN.
  try {
    direct_float(p, 1.0, Softening::plummer, 0.0);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ids 12 and 57"), std::string::npos) << e.what();
  }
  // Distinct in double but 1e-13 apart (float spacing at their position ~1e-8): a chunk is no
  // wider than 256 of its smallest spacings, so the pair gets a chunk centred on itself and
  // float32 resolves it: the pair's force (~1e24) as the double sum has it, to float round-off.
  p.x[57] = p.x[12] + 1e-13;
  ParticleSet ref = p;
  make_solver(c, p.size())->compute(p);
  direct_reference(ref, 1.0, Softening::plummer, 0.0);
  for (std::size_t i : {std::size_t{12}, std::size_t{57}})
    EXPECT_NEAR(p.ax[i] / ref.ax[i], 1.0, 1e-5) << i;
  // With softening they are an ordinary pair: finite forces.
  c.eps = 0.01;
  make_solver(c, p.size())->compute(p);
  EXPECT_TRUE(std::isfinite(p.ax[57]) && std::isfinite(p.pot[12]));
}

TEST(DirectFloat, BlockKernelAnyShape) {
  // Target and source counts that are not multiples of the SIMD width or of the 3-register
  // group exercise every remainder path. Reference: the double sum over the same float
  // inputs; bound: c sqrt(n) 2^-24 sum_j |a_ij| with c = 4 as above, no position term (both
  // sides use the same float positions). Accumulators start at 1 for ax: the kernel adds.
  Random rng(99);
  for (std::size_t nt : {1, 5, 16, 37, 53, 100}) {
    for (double eps : {0.0, 0.02}) {
      const std::size_t ns = 29 + nt;  // the first nt sources are the targets themselves
      std::vector<float> x(ns), y(ns), z(ns), m(ns);
      for (std::size_t j = 0; j < ns; ++j) {
        x[j] = float(rng.uniform(-1, 1));
        y[j] = float(rng.uniform(-1, 1));
        z[j] = float(rng.uniform(-1, 1));
        m[j] = float(rng.uniform(0.5, 1.5));
      }
      std::vector<float> ax(nt, 1.0f), ay(nt, 0.0f), az(nt, 0.0f), pot(nt, 0.0f);
      const auto s = SofteningParams<float>::make(Softening::plummer, eps);
      direct_block_float(
          s, {x.data(), y.data(), z.data(), ax.data(), ay.data(), az.data(), pot.data(), nt},
          {x.data(), y.data(), z.data(), m.data(), ns}, true);
      for (std::size_t i = 0; i < nt; ++i) {
        double a[3] = {0, 0, 0}, ph = 0, sa = 0, sp = 0;
        for (std::size_t j = 0; j < ns; ++j) {
          const double d[3] = {double(x[j]) - x[i], double(y[j]) - y[i], double(z[j]) - z[i]};
          const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps * eps;
          if (d[0] == 0 && d[1] == 0 && d[2] == 0 && eps == 0) continue;  // skipped self pair
          const double inv = 1 / std::sqrt(r2);
          for (int k = 0; k < 3; ++k) a[k] += m[j] * d[k] * inv * inv * inv;
          ph -= m[j] * inv;
          sa += m[j] * std::sqrt(r2 - eps * eps) * inv * inv * inv;
          sp += m[j] * inv;
        }
        const double ba = 4 * std::sqrt(double(ns)) * 0x1.0p-24 * (sa + 1);
        EXPECT_NEAR(ax[i], 1.0 + a[0], ba) << "nt " << nt << " i " << i << " eps " << eps;
        EXPECT_NEAR(ay[i], a[1], ba) << "nt " << nt << " i " << i << " eps " << eps;
        EXPECT_NEAR(az[i], a[2], ba) << "nt " << nt << " i " << i << " eps " << eps;
        EXPECT_NEAR(pot[i], ph, 4 * std::sqrt(double(ns)) * 0x1.0p-24 * sp)
            << "nt " << nt << " i " << i << " eps " << eps;
      }
    }
  }
}

// ---- the shared softening kernels (double) ---------------------------------------------

TEST(Softening, ScaledPlummerFormEqualsPlummerPair) {
  // plummer_pair_scaled (m/2 in, 4a out) is an algebraic rewrite of plummer_pair: in double
  // the two agree to a few ulps.
  const double d[][3] = {{0.3, -0.1, 0.7}, {1e-3, 2e-3, -1e-3}, {5, 4, 3}};
  for (const auto& v : d) {
    for (double eps2 : {0.0, 1e-4}) {
      double a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
      plummer_pair(v[0], v[1], v[2], 1.7, eps2, true, a[0], a[1], a[2], a[3]);
      plummer_pair_scaled(v[0], v[1], v[2], 0.85, eps2, true, b[0], b[1], b[2], b[3]);
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(0.25 * b[k], a[k], 1e-14 * std::abs(a[k]));
      EXPECT_NEAR(b[3], a[3], 1e-14 * std::abs(a[3]));
    }
  }
  double ax = 0, ay = 0, az = 0, pot = 0;
  plummer_pair_scaled(0.0, 0.0, 0.0, 1.0, 0.0, false, ax, ay, az, pot);
  EXPECT_EQ(ax, 0.0);
  EXPECT_EQ(pot, 0.0);
}

TEST(Softening, SplineIsNewtonianBeyondH) {
  const double eps = 0.1, h = 2.8 * eps;
  for (double r = h; r < 20 * h; r *= 1.37) {
    double f, phi;
    spline_kernel(r * r, 1 / h, true, f, phi);
    // Newtonian branch: 1/r from 1/sqrt in double, a few ulps.
    EXPECT_NEAR(f, 1 / (r * r * r), 1e-14 / (r * r * r)) << "r " << r;
    EXPECT_NEAR(phi, -1 / r, 1e-14 / r) << "r " << r;
  }
}

TEST(Softening, SplineMatchesIndependentPotentialAndDepth) {
  const double eps = 0.1, h = 2.8 * eps;
  // phi(0) = -m/eps: the same depth as Plummer (r2 = 0 must not give NaN).
  double f0, phi0;
  spline_kernel(0.0, 1 / h, true, f0, phi0);
  EXPECT_NEAR(phi0, -1 / eps, 1e-12 / eps);
  EXPECT_TRUE(std::isfinite(f0));
  // The code's coefficients are decimals to 12-13 digits (10.666666666667 for 32/3,
  // 0.066666666667 for 1/15): agreement with the exact fractions to ~1e-11 relative.
  for (double u = 0.01; u < 1.3; u += 0.0137) {
    double f, phi;
    spline_kernel(u * h * u * h, 1 / h, true, f, phi);
    EXPECT_NEAR(phi, spline_phi_reference(u * h, eps), 1e-10 / eps) << "u " << u;
  }
}

TEST(Softening, SplineIsContinuousAtHalfAndOne) {
  // Both pieces meet at u = 1/2 and u = 1 (the potential and force are continuous), so
  // values at u -+ delta differ by |d/du| 2 delta plus the coefficient rounding (1e-11).
  const double eps = 0.1, h = 2.8 * eps, delta = 1e-9;
  for (double u0 : {0.5, 1.0}) {
    double f1, p1, f2, p2;
    const double r1 = (u0 - delta) * h, r2 = (u0 + delta) * h;
    spline_kernel(r1 * r1, 1 / h, true, f1, p1);
    spline_kernel(r2 * r2, 1 / h, true, f2, p2);
    // |dphi/du| <= 4/h, |df/du| <= 100/h^3 on [0, 1.x].
    EXPECT_NEAR(p1, p2, 2 * delta * 4 / h + 1e-10 / h) << "u " << u0;
    EXPECT_NEAR(f1, f2, 2 * delta * 100 / (h * h * h) + 1e-10 / (h * h * h)) << "u " << u0;
  }
}

TEST(Softening, SplineForceIsPotentialGradient) {
  // With d = x_source - x_target and a = f d, a = -grad_target phi(|d|) gives
  // f = (1/r) dphi/dr (the usual f = -(1/r) dphi/dr with d = x_target - x_source).
  // Central differences with step dr = 1e-5 r: truncation dr^2/6 times the third derivative,
  // ~1e-10 relative, and cancellation 1e-16 |phi| / dr ~ 1e-11; tolerance 1e-7 relative.
  // Points avoid the joins at u = 1/2 and 1, where the third derivative jumps.
  const double eps = 0.1, h = 2.8 * eps;
  for (double u = 0.03; u < 2.0; u += 0.0311) {
    if (std::abs(u - 0.5) < 1e-3 || std::abs(u - 1) < 1e-3) continue;
    const double r = u * h, dr = 1e-5 * r;
    double f, phi, fa, pa, fb, pb;
    spline_kernel(r * r, 1 / h, true, f, phi);
    spline_kernel((r + dr) * (r + dr), 1 / h, true, fa, pa);
    spline_kernel((r - dr) * (r - dr), 1 / h, true, fb, pb);
    const double dphi_dr = (pa - pb) / (2 * dr);
    EXPECT_NEAR(f, dphi_dr / r, 1e-7 * std::abs(f)) << "u " << u;
  }
}

}  // namespace
}  // namespace hoshi
