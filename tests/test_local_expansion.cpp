// Local (Taylor) expansions of cell potentials (src/physics/local_expansion.hpp), against the
// cell terms of src/physics/multipole.hpp evaluated directly, in double.
//
// Bounds: for a point mass M at s, the degree-P Taylor expansion of -M / |s - x| about 0 has,
// at |x| = rho |s|, a potential error of at most M / (|s| - |x|) rho^(P+1) (the remainder of the
// Legendre series, |P_l| <= 1; Greengard & Rokhlin 1987), and its gradient, the series
// differentiated term by term, an error of at most (M / |s|^2) sum_{l > P} (l + 1) rho^(l - 1).
// The quadrupole part converges at the same rate; its constants are checked through the
// convergence order.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "direct/simd.hpp"
#include "physics/local_expansion.hpp"
#include "physics/multipole.hpp"

namespace hoshi {
namespace {

TEST(LocalExpansion, MonomialTableIsConsistent) {
  constexpr Monomials<5> m{};
  EXPECT_EQ(m.kCount, 56);
  for (int c = 0; c < m.kCount; ++c) {
    EXPECT_EQ(Monomials<5>::index(m.ex[c], m.ey[c], m.ez[c]), c);
    EXPECT_EQ(m.deg[c], m.ex[c] + m.ey[c] + m.ez[c]);
    if (c > 0) {
      EXPECT_GE(m.deg[c], m.deg[c - 1]);
    }
    for (int v = 0; v < 3; ++v) {
      const int e[3] = {m.ex[c], m.ey[c], m.ez[c]};
      if (e[v] == 0) {
        EXPECT_EQ(m.down1[c][v], -1);
      } else {
        const int d = m.down1[c][v];
        EXPECT_EQ(m.deg[d], m.deg[c] - 1);
      }
    }
  }
}

struct Cell {
  double sx, sy, sz, m, qxx, qxy, qxz, qyy, qyz, qzz, mr2, eps2;
};

// Largest relative errors (acceleration, potential) of the expansion against the exact cell
// term over 300 directions at |x| = rho |s|.
template <int P, int kOrder>
std::pair<double, double> max_errors(const Cell& c, double rho) {
  std::vector<double> L(Monomials<P>::kCount, 0.0);
  add_cell_to_local<P, kOrder>(c.sx, c.sy, c.sz, c.m, c.qxx, c.qxy, c.qxz, c.qyy, c.qyz, c.qzz,
                               c.mr2, c.eps2, L.data());
  const double s = std::sqrt(c.sx * c.sx + c.sy * c.sy + c.sz * c.sz);
  double worst_a = 0, worst_p = 0;
  for (int k = 0; k < 300; ++k) {
    // Quasi-random directions (golden-angle spiral over the sphere).
    const double z = 1 - 2 * (k + 0.5) / 300, r = std::sqrt(1 - z * z), phi = 2.399963 * k;
    const double x = rho * s * r * std::cos(phi), y = rho * s * r * std::sin(phi), w = rho * s * z;
    double ax = 0, ay = 0, az = 0, pot = 0;
    if (kOrder == 1)
      cell_monopole(c.sx - x, c.sy - y, c.sz - w, c.m, c.eps2, ax, ay, az, pot);
    else
      cell_quadrupole(c.sx - x, c.sy - y, c.sz - w, c.m, c.qxx, c.qxy, c.qxz, c.qyy, c.qyz, c.qzz,
                      c.mr2, c.eps2, ax, ay, az, pot);
    double bx, by, bz, bp;
    eval_local<P>(L.data(), x, y, w, bx, by, bz, bp);
    const double da = std::hypot(ax - bx, ay - by, az - bz) / std::hypot(ax, ay, az);
    worst_a = std::max(worst_a, da);
    worst_p = std::max(worst_p, std::abs(pot - bp) / std::abs(pot));
  }
  return {worst_a, worst_p};
}

TEST(LocalExpansion, PointMassWithinTheTaylorBound) {
  const Cell c{0.8, -0.5, 0.33, 1.3, 0, 0, 0, 0, 0, 0, 0, 0};
  for (double rho : {0.1, 0.3, 0.5}) {
    SCOPED_TRACE("rho " + std::to_string(rho));
    const auto [ea, ep] = max_errors<5, 1>(c, rho);
    // Relative to |phi| >= M / (|s| + |x|) and |a| >= M / (|s| + |x|)^2:
    // |dphi| / |phi| <= rho^6 (1 + rho) / (1 - rho), |da| / |a| <= sum_{l > 5} (l + 1)
    // rho^(l - 1) (1 + rho)^2 (|grad r^l P_l| <= sqrt(l (l + 1)) r^(l - 1)).
    double grad = 0;
    for (int l = 6; l < 400; ++l) grad += (l + 1) * std::pow(rho, l - 1);
    EXPECT_LT(ep, std::pow(rho, 6) * (1 + rho) / (1 - rho) + 1e-14);
    EXPECT_LT(ea, grad * (1 + rho) * (1 + rho) + 1e-14);
    // And the bound is not vacuous: the error is within a factor 20 of it.
    EXPECT_GT(ea, grad / 20);
  }
}

TEST(LocalExpansion, ExactAtTheCentreAndConvergesAtOrderP) {
  // A softened cell with a quadrupole and a second moment (mr2) of the size a cell of radius
  // ~0.3 |s| has.
  const Cell c{0.8, -0.5, 0.33, 1.3, 0.09, -0.02, 0.03, -0.05, 0.01, -0.04, 0.1, 0.01};
  // At x = 0 the expansion is the cell term itself.
  std::vector<double> L(Monomials<5>::kCount, 0.0);
  add_cell_to_local<5, 2>(c.sx, c.sy, c.sz, c.m, c.qxx, c.qxy, c.qxz, c.qyy, c.qyz, c.qzz, c.mr2,
                          c.eps2, L.data());
  double ax = 0, ay = 0, az = 0, pot = 0, bx, by, bz, bp;
  cell_quadrupole(c.sx, c.sy, c.sz, c.m, c.qxx, c.qxy, c.qxz, c.qyy, c.qyz, c.qzz, c.mr2, c.eps2,
                  ax, ay, az, pot);
  eval_local<5>(L.data(), 0.0, 0.0, 0.0, bx, by, bz, bp);
  EXPECT_NEAR(bx, ax, 1e-14 * std::abs(ax));
  EXPECT_NEAR(by, ay, 1e-14 * std::abs(ay));
  EXPECT_NEAR(bz, az, 1e-14 * std::abs(az));
  EXPECT_NEAR(bp, pot, 1e-14 * std::abs(pot));
  // Halving rho divides the acceleration error by ~2^P (2^(P+1) for the potential): required
  // at least 2^(P - 1) and 2^P, for P = 3, 4, 5 and both orders.
  auto check = [](auto e1, auto e2, int P) {
    EXPECT_GT(e1.first / e2.first, std::pow(2.0, P - 1)) << "P " << P;
    EXPECT_GT(e1.second / e2.second, std::pow(2.0, P)) << "P " << P;
    EXPECT_LT(e1.first, 0.05) << "P " << P;
  };
  check(max_errors<3, 2>(c, 0.2), max_errors<3, 2>(c, 0.1), 3);
  check(max_errors<4, 2>(c, 0.2), max_errors<4, 2>(c, 0.1), 4);
  check(max_errors<5, 2>(c, 0.2), max_errors<5, 2>(c, 0.1), 5);
  check(max_errors<5, 1>(c, 0.2), max_errors<5, 1>(c, 0.1), 5);
}

TEST(LocalExpansion, SimdLanesAgreeWithDoubleToFloatRoundOff) {
  // The walk runs add_cell_to_local on SIMD vectors of float, one cell per lane, and sums the
  // lanes: compare with the double expansion of the same cells. Float round-off of a sum of
  // kWidth terms of size ~M / |s| is a few 2^-24 of the coefficient scale.
  using simd::VecF;
  constexpr int P = 5, K = Monomials<P>::kCount, W = simd::kWidth;
  float sx[W], sy[W], sz[W], m[W], q[6][W], mr2[W];
  std::vector<double> Ld(K, 0.0);
  for (int l = 0; l < W; ++l) {
    const double a = 0.7 * l + 0.3;
    sx[l] = float(3.5 * std::cos(a));
    sy[l] = float(3.5 * std::sin(a));
    sz[l] = float(2.0 - 0.25 * l);
    m[l] = float(0.5 + 0.1 * l);
    const float qq[6] = {0.1f, -0.02f, 0.03f, -0.05f, 0.01f, -0.05f};
    for (int k = 0; k < 6; ++k) q[k][l] = qq[k] * m[l];
    mr2[l] = 0.2f * m[l];
    add_cell_to_local<P, 2>(double(sx[l]), double(sy[l]), double(sz[l]), double(m[l]),
                            double(q[0][l]), double(q[1][l]), double(q[2][l]), double(q[3][l]),
                            double(q[4][l]), double(q[5][l]), double(mr2[l]), double(0.01f),
                            Ld.data());
  }
  VecF Lv[K];
  for (VecF& v : Lv) v = VecF(0.0f);
  add_cell_to_local<P, 2>(VecF::load(sx), VecF::load(sy), VecF::load(sz), VecF::load(m),
                          VecF::load(q[0]), VecF::load(q[1]), VecF::load(q[2]), VecF::load(q[3]),
                          VecF::load(q[4]), VecF::load(q[5]), VecF::load(mr2), VecF(0.01f), Lv);
  double scale = 0;
  for (int l = 0; l < W; ++l)
    scale += m[l] / std::sqrt(sx[l] * sx[l] + sy[l] * sy[l] + sz[l] * sz[l]);
  for (int c = 0; c < K; ++c)
    EXPECT_NEAR(simd::reduce_add(Lv[c]), Ld[c], 64 * 0x1.0p-24 * scale) << "coefficient " << c;
}

TEST(LocalExpansion, ShiftIsExactToRoundOff) {
  // out(x') = c L(o + s x'): potential and acceleration of the shifted expansion at x' equal
  // c times the original's at o + s x' (acceleration times c s, the chain rule), for any
  // polynomial: the shift only regroups its terms, so only double round-off separates them.
  constexpr int P = 5, K = Monomials<P>::kCount;
  std::vector<double> L(K), out(K);
  unsigned seed = 12345;
  auto uniform = [&] {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) * 0x1.0p-24 * 2 - 1;
  };
  for (double& l : L) l = uniform();
  const double ox = 0.4 * uniform(), oy = 0.4 * uniform(), oz = 0.4 * uniform(), s = 0.45, c = 0.45;
  shift_local<P>(L.data(), ox, oy, oz, s, c, out.data());
  double worst = 0;
  for (int k = 0; k < 50; ++k) {
    const double x = uniform(), y = uniform(), z = uniform();
    double a1[4], a2[4];
    eval_local<P>(out.data(), x, y, z, a1[0], a1[1], a1[2], a1[3]);
    eval_local<P>(L.data(), ox + s * x, oy + s * y, oz + s * z, a2[0], a2[1], a2[2], a2[3]);
    for (int d = 0; d < 3; ++d) worst = std::max(worst, std::abs(a1[d] - c * s * a2[d]));
    worst = std::max(worst, std::abs(a1[3] - c * a2[3]));
  }
  // Coefficients of order 1 and |x| <= sqrt(3): terms up to ~100 in size, 56 of them.
  EXPECT_LT(worst, 1e-12);
  // Not the identity: the shifted coefficients differ from the original ones.
  double diff = 0;
  for (int a = 0; a < K; ++a) diff = std::max(diff, std::abs(out[a] - L[a]));
  EXPECT_GT(diff, 0.1);
}

}  // namespace
}  // namespace hoshi
