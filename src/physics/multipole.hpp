// Particle-cell interactions: monopole and traceless quadrupole about the cell's centre of mass.
//
// With d = com - x_target, r = |d|, M the cell mass and the traceless quadrupole
// Q_ij = sum_k m_k (3 y_i y_j - |y|^2 delta_ij), y = x_k - com, the potential of the cell at
// the target is (Hernquist 1987, eq. 2; Dehnen 2002 eq. 9 to second order)
//   phi = -M/r - (1/2) d.Q.d / r^5
// and the acceleration -grad phi with respect to the target position is
//   a = M d / r^3 - Q.d / r^5 + (5/2) (d.Q.d) d / r^7.
// Softening (Plummer): the cell's potential is expanded to second order in y, each particle's
// softened potential -m / sqrt(|d - y|^2 + eps^2) about the centre of mass. With
// R^2 = r^2 + eps^2 in every power that gives
//   phi = -M/R - (1/2) (d.Q.d - eps^2 S) / R^5,   S = sum_k m_k |y|^2 (TreeNode::mr2),
// since sum m (3 (d.y)^2 - |y|^2 R^2) = d.Q.d + S r^2 - S R^2: the eps^2 S term is the softened
// kernel's own second-order term (it vanishes for 1/r, which is harmonic). Without it (the
// common choice of putting eps^2 into every power of the unsoftened expansion) the quadrupole
// gains almost nothing over the monopole once eps is comparable to the distance: measured in a
// 20000-particle Plummer sphere at eps 0.1, p99 force error 9.5e-3 (monopole) and 8.9e-3
// (quadrupole), 2026-11-30 audit. In u-form below: w -> w - eps^2 S / R^4. The spline kernel
// is Newtonian beyond h = 2.8 eps; callers pass eps2 = 0 for it, and the tree accepts a node
// only when all its particles are beyond h from the target (the kernel_radius of
// compute_multipoles, tree/octree.hpp), where the unsoftened terms are exact in form.
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
// q = (Q.u) / r^2 and w = u.q - eps^2 S / r^4 (both mass-like, at most ~ M theta^2),
//   a = ((M + (5/2) w) u - q) / r^2,   phi = -(M + (1/2) w) / r,
// which is the formula above term by term (Q.d / r^5 = q / r^2, (d.Q.d) d / r^7 = w u / r^2,
// d.Q.d / r^5 = w / r; r meaning R). Every intermediate is near the size of its term (u within
// [-1, 1], q and w mass-like), so float stays within range for cells of any size (r^-7 alone
// overflows float for r < 3e-6), and it is 42 vector operations with FMA (39 without the
// eps^2 S term), the fewest we found. mr2: S, the node's mr2.
template <class Real>
HOSTDEV inline void cell_quadrupole(Real dx, Real dy, Real dz, Real m, Real qxx, Real qxy, Real qxz,
                                    Real qyy, Real qyz, Real qzz, Real mr2, Real eps2, Real& ax,
                                    Real& ay, Real& az, Real& pot) {
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;  // eps2 first: three FMAs
  const Real inv = rsqrt(r2);
  const Real inv2 = inv * inv;
  const Real ux = dx * inv, uy = dy * inv, uz = dz * inv;
  const Real qx = (qxx * ux + qxy * uy + qxz * uz) * inv2;  // (Q.u)_x / r^2
  const Real qy = (qxy * ux + qyy * uy + qyz * uz) * inv2;
  const Real qz = (qxz * ux + qyz * uy + qzz * uz) * inv2;
  // u.Q.u / r^2 - (eps^2 / r^2) (S / r^2): both factors stay in range (eps^2 <= r^2 here)
  const Real w = ux * qx + uy * qy + uz * qz - (eps2 * inv2) * (mr2 * inv2);
  const Real radial = m + Real(2.5) * w;
  ax += (radial * ux - qx) * inv2;
  ay += (radial * uy - qy) * inv2;
  az += (radial * uz - qz) * inv2;
  pot -= (m + Real(0.5) * w) * inv;
}

}  // namespace hoshi
