// The particle-cell terms of src/physics/multipole.hpp against the exact softened sum over a
// cell's particles: the Plummer-softened quadrupole term is the second-order Taylor expansion of
// the softened potential, so its error falls as the third power of the cell size, at any
// softening; the monopole's as the second.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ic/ic.hpp"
#include "physics/multipole.hpp"

namespace hoshi {
namespace {

struct Cluster {
  std::vector<double> x, y, z, m;
};

// 40 particles of unequal mass in a lopsided cloud of size ~l about the origin, shifted so that
// their centre of mass is exactly there (so the dipole vanishes, as about a node's com).
Cluster cluster(double l) {
  Cluster c;
  Random rng(5);
  double M = 0, sx = 0, sy = 0, sz = 0;
  for (int k = 0; k < 40; ++k) {
    const double m = 0.5 + rng.uniform();
    const double x = l * (rng.uniform() - 0.2), y = l * (rng.uniform() - 0.5),
                 z = l * 0.5 * (rng.uniform() - 0.5);
    c.x.push_back(x), c.y.push_back(y), c.z.push_back(z), c.m.push_back(m);
    M += m, sx += m * x, sy += m * y, sz += m * z;
  }
  for (std::size_t k = 0; k < c.m.size(); ++k) {
    c.x[k] -= sx / M;
    c.y[k] -= sy / M;
    c.z[k] -= sz / M;
  }
  return c;
}

struct Errors {
  double mono, quad;          // |a_term - a_exact| / |a_exact|
  double mono_pot, quad_pot;  // |phi_term - phi_exact| / |phi_exact|
};

// The cell terms at the target d (from the target to the com) against the exact sum.
Errors term_errors(const Cluster& c, double dx, double dy, double dz, double eps) {
  const double eps2 = eps * eps;
  double M = 0, q[6] = {0, 0, 0, 0, 0, 0}, s2 = 0;
  double ex = 0, ey = 0, ez = 0, ep = 0;
  for (std::size_t k = 0; k < c.m.size(); ++k) {
    const double x = c.x[k], y = c.y[k], z = c.z[k], m = c.m[k], r2 = x * x + y * y + z * z;
    M += m;
    q[0] += m * (3 * x * x - r2), q[1] += m * 3 * x * y, q[2] += m * 3 * x * z;
    q[3] += m * (3 * y * y - r2), q[4] += m * 3 * y * z, q[5] += m * (3 * z * z - r2);
    s2 += m * r2;
    // Particle at com + y seen from the target: separation d + y.
    const double px = dx + x, py = dy + y, pz = dz + z;
    const double inv = 1 / std::sqrt(px * px + py * py + pz * pz + eps2);
    ex += m * px * inv * inv * inv, ey += m * py * inv * inv * inv, ez += m * pz * inv * inv * inv;
    ep -= m * inv;
  }
  double mx = 0, my = 0, mz = 0, mp = 0, qx = 0, qy = 0, qz = 0, qp = 0;
  cell_monopole<double>(dx, dy, dz, M, eps2, mx, my, mz, mp);
  cell_quadrupole<double>(dx, dy, dz, M, q[0], q[1], q[2], q[3], q[4], q[5], s2, eps2, qx, qy, qz,
                          qp);
  const double a = std::sqrt(ex * ex + ey * ey + ez * ez);
  return {std::hypot(mx - ex, my - ey, mz - ez) / a, std::hypot(qx - ex, qy - ey, qz - ez) / a,
          std::abs(mp - ep) / std::abs(ep), std::abs(qp - ep) / std::abs(ep)};
}

TEST(Multipole, SoftenedQuadrupoleErrorFallsAsTheCubeOfTheCellSize) {
  // Target at distance 0.3 from the com, softening 0, 0.1 (comparable to the distance) and 0.3.
  // Halving the cell size divides the quadrupole term's error by ~8 (the first neglected term is
  // the octupole, l^3) and the monopole's by ~4 (l^2). Without the eps^2 S term of the
  // softened expansion the quadrupole's error kept an l^2 part (eps^2 S / R^5): at eps = 0.1
  // it fell by only ~4, and was no better than the monopole's.
  for (double eps : {0.0, 0.1, 0.3}) {
    SCOPED_TRACE("eps " + std::to_string(eps));
    Errors prev{};
    for (int k = 0; k < 4; ++k) {
      const double l = 0.08 / std::ldexp(1.0, k);
      const Errors e = term_errors(cluster(l), 0.18, -0.2, 0.12, eps);
      EXPECT_LT(e.quad, e.mono / 4) << "l " << l;
      if (k > 0) {
        // ~8 once l is small enough that the next (l^4) term is negligible: measured 5.4, 6.8,
        // 7.4 at eps = 0.1 for l = 0.04, 0.02, 0.01 (the first halving is checked by the
        // comparison with the monopole only).
        if (k > 1) {
          EXPECT_GT(prev.quad / e.quad, 6.0) << "l " << l;
        }
        EXPECT_GT(prev.mono / e.mono, 3.5) << "l " << l;  // ~4
        EXPECT_LT(prev.mono / e.mono, 4.5) << "l " << l;
        // The potential's terms alike: the monopole's error is the quadrupole's l^2 part (the
        // dipole vanishes about the com), the quadrupole's the octupole's l^3.
        if (k > 1) {
          EXPECT_GT(prev.quad_pot / e.quad_pot, 6.0) << "l " << l;
        }
        EXPECT_GT(prev.mono_pot / e.mono_pot, 3.5) << "l " << l;
        EXPECT_LT(prev.mono_pot / e.mono_pot, 4.5) << "l " << l;
      }
      EXPECT_LT(e.quad_pot, e.mono_pot / 4) << "l " << l;
      prev = e;
    }
  }
}

}  // namespace
}  // namespace hoshi
