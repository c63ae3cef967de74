// Direct summation: the float32 SIMD kernel against the double reference, and momentum
// conservation of the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "direct/direct.hpp"
#include "ic/ic.hpp"

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
  // |sum m a| <= c N eps_64 sum_i m_i sum_j |a_ij|.
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

}  // namespace
}  // namespace hoshi
