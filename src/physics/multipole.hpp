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
// spline kernel is Newtonian beyond h = 2.8 eps; callers pass eps2 = 0 for it, and the tree
// accepts a node only when all its particles are beyond h from the target (the kernel_radius
// of compute_multipoles, tree/octree.hpp), where the unsoftened terms are exact in form.
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
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;  // eps2 first: three FMAs
  const Real inv = rsqrt(r2);
  const Real m_inv = m * inv;
  const Real m_inv3 = m_inv * inv * inv;
  ax += m_inv3 * dx;
  ay += m_inv3 * dy;
  az += m_inv3 * dz;
  pot -= m_inv;
}

// Monopole plus quadrupole (order 2). Written in the unit vector u = d / r: with
// q = (Q.u) / r^2 and w = u.q (both mass-like, at most ~ M theta^2),
//   a = ((M + (5/2) w) u - q) / r^2,   phi = -(M + (1/2) w) / r,
// which is the formula above term by term (Q.d / r^5 = q / r^2, (d.Q.d) d / r^7 = w u / r^2,
// d.Q.d / r^5 = w / r). Every intermediate is near the size of its term (u within [-1, 1],
// q and w mass-like), so float stays within range for cells of any size (r^-7 alone
// overflows float for r < 3e-6), and it is 39 vector operations with FMA, the fewest we found.
template <class Real>
HOSTDEV inline void cell_quadrupole(Real dx, Real dy, Real dz, Real m, Real qxx, Real qxy, Real qxz,
                                    Real qyy, Real qyz, Real qzz, Real eps2, Real& ax, Real& ay,
                                    Real& az, Real& pot) {
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;  // eps2 first: three FMAs
  const Real inv = rsqrt(r2);
  const Real inv2 = inv * inv;
  const Real ux = dx * inv, uy = dy * inv, uz = dz * inv;
  const Real qx = (qxx * ux + qxy * uy + qxz * uz) * inv2;  // (Q.u)_x / r^2
  const Real qy = (qxy * ux + qyy * uy + qyz * uz) * inv2;
  const Real qz = (qxz * ux + qyz * uy + qzz * uz) * inv2;
  const Real w = ux * qx + uy * qy + uz * qz;  // u.Q.u / r^2
  const Real radial = m + Real(2.5) * w;
  ax += (radial * ux - qx) * inv2;
  ay += (radial * uy - qy) * inv2;
  az += (radial * uz - qz) * inv2;
  pot -= (m + Real(0.5) * w) * inv;
}

}  // namespace hoshi
