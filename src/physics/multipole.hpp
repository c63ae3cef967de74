// Particle-cell interactions: monopole and traceless quadrupole about the cell's centre of mass.
//
// With d = com - x_target, r = |d|, M the cell mass and the traceless quadrupole
// Q_ij = sum_k m_k (3 y_i y_j - |y|^2 delta_ij), y = x_k - com, the potential of the cell at
// the target is (Hernquist 1987, eq. 2; Dehnen 2002 eq. 9 to second order)
//   phi = -M/r - (1/2) d.Q.d / r^5
// and the acceleration -grad phi with respect to the target position is
//   a = M d / r^3 - Q.d / r^5 + (5/2) (d.Q.d) d / r^7.
// Softening: r^2 is replaced by r^2 + eps^2 (Plummer) in every power, the usual choice for
// cells, which the opening criteria keep far from the target (Springel 2005 sec. 3.1). The
// spline kernel is Newtonian beyond 2.8 eps; callers pass eps2 = 0 for it.
#pragma once

#include "physics/hostdev.hpp"

namespace hoshi {

// Cell moments as the walks read them. Units as the particles'.
template <class Real>
struct CellMoments {
  Real m;
  Real qxx, qxy, qxz, qyy, qyz, qzz;
};

// Monopole term alone (order 1).
template <class Real>
HOSTDEV inline void cell_monopole(Real dx, Real dy, Real dz, Real m, Real eps2, Real& ax, Real& ay,
                                  Real& az, Real& pot) {
  const Real r2 = dx * dx + dy * dy + dz * dz + eps2;
  const Real inv = rsqrt(r2);
  const Real m_inv = m * inv;
  const Real m_inv3 = m_inv * inv * inv;
  ax += m_inv3 * dx;
  ay += m_inv3 * dy;
  az += m_inv3 * dz;
  pot -= m_inv;
}

// Monopole plus quadrupole (order 2). The powers of 1/r are applied in an order that keeps
// every intermediate near the size of its term (Q.d / r^2, d.Q.d / r^4, then mass-like sums
// times 1/r), so float stays within range for cells of any size: r^-7 alone overflows float
// for r < 3e-6.
template <class Real>
HOSTDEV inline void cell_quadrupole(Real dx, Real dy, Real dz, Real m, Real qxx, Real qxy, Real qxz,
                                    Real qyy, Real qyz, Real qzz, Real eps2, Real& ax, Real& ay,
                                    Real& az, Real& pot) {
  const Real r2 = dx * dx + dy * dy + dz * dz + eps2;
  const Real inv = rsqrt(r2);
  const Real inv2 = inv * inv;
  const Real qdx = (qxx * dx + qxy * dy + qxz * dz) * inv2;  // (Q.d)_x / r^2
  const Real qdy = (qxy * dx + qyy * dy + qyz * dz) * inv2;
  const Real qdz = (qxz * dx + qyz * dy + qzz * dz) * inv2;
  const Real dqd = (dx * qdx + dy * qdy + dz * qdz) * inv2;  // d.Q.d / r^4
  const Real radial = ((m + Real(2.5) * dqd) * inv) * inv2;  // M / r^3 + (5/2) d.Q.d / r^7
  ax += radial * dx - (qdx * inv) * inv2;                    // - (Q.d)_x / r^5
  ay += radial * dy - (qdy * inv) * inv2;
  az += radial * dz - (qdz * inv) * inv2;
  pot -= (m + Real(0.5) * dqd) * inv;  // M / r + (1/2) d.Q.d / r^5
}

}  // namespace hoshi
