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

// Monopole plus quadrupole (order 2).
template <class Real>
HOSTDEV inline void cell_quadrupole(Real dx, Real dy, Real dz, Real m, Real qxx, Real qxy, Real qxz,
                                    Real qyy, Real qyz, Real qzz, Real eps2, Real& ax, Real& ay,
                                    Real& az, Real& pot) {
  const Real r2 = dx * dx + dy * dy + dz * dz + eps2;
  const Real inv = rsqrt(r2);
  const Real inv2 = inv * inv;
  const Real inv3 = inv * inv2;
  const Real inv5 = inv3 * inv2;
  const Real inv7 = inv5 * inv2;
  const Real qdx = qxx * dx + qxy * dy + qxz * dz;
  const Real qdy = qxy * dx + qyy * dy + qyz * dz;
  const Real qdz = qxz * dx + qyz * dy + qzz * dz;
  const Real dqd = dx * qdx + dy * qdy + dz * qdz;
  const Real radial = m * inv3 + Real(2.5) * dqd * inv7;
  ax += radial * dx - inv5 * qdx;
  ay += radial * dy - inv5 * qdy;
  az += radial * dz - inv5 * qdz;
  pot -= m * inv + Real(0.5) * dqd * inv5;
}

}  // namespace hoshi
