// Multipole acceptance criteria (opening criteria), DESIGN.md decision 4.
//
// The geometric criteria reduce to one comparison per node, d^2 > r_crit^2, where d is the
// distance from the target (or the nearest point of a group's bounding box) to the node's
// centre of mass and r_crit is fixed per node when the tree is built:
//   bh        Barnes & Hut (1986):   l / d < theta           r_crit = l / theta
//   barnes94  Barnes (1994):         d > l / theta + delta   r_crit = l / theta + delta
//   bmax      Salmon & Warren 1994:  d > b_max / theta       r_crit = b_max / theta
// with l the node's side length, delta = |com - geometric centre| and b_max the distance from
// the centre of mass to the node's farthest particle.
//   relative  Gadget-2 (Springel 2005, eq. 18): G M l^2 / d^4 <= alpha |a_old|, together with
//             Gadget's guard that the target is outside the node's box grown by 10% on each
//             side (here: d > r_guard with r_guard = sqrt(3) * 0.6 * l + delta), and a bound
//             on the cell's actual error (mac_relative_bound_ok, below).
#pragma once

#include "physics/hostdev.hpp"

namespace hoshi {

enum class Criterion : int { bh = 0, barnes94 = 1, bmax = 2, relative = 3 };

// Squared critical radius of a node (host, double; stored per node).
inline double mac_rcrit2(Criterion c, double theta, double side, double delta, double b_max) {
  double r = 0;
  switch (c) {
    case Criterion::bh:
      r = side / theta;
      break;
    case Criterion::barnes94:
      r = side / theta + delta;
      break;
    case Criterion::bmax:
      r = b_max / theta;
      break;
    case Criterion::relative:  // the guard radius; the acceleration test is separate
      r = 1.7320508075688772 * 0.6 * side + delta;
      break;
  }
  return r * r;
}

// Geometric acceptance: true when the node may be used as a multipole.
template <class Real>
HOSHI_HOSTDEV inline bool mac_accept(Real d2, Real rcrit2) {
  return d2 > rcrit2;
}

// The relative criterion's error estimate M l^2 / d^4 assumes the mass is spread over the
// cell. A cell whose mass sits at one corner and whose light particle sits at the opposite
// corner, facing the target just beyond the guard, has an error ~25x the estimate there
// (docs/perf-tree.md, "Known limits"), and a massive perturber, which makes |a_old| and so
// the tolerance large, lets it pass. So the cell must also meet Salmon & Warren's (1994)
// rigorous bound on the error of its monopole + quadrupole acceleration at a distance
// d > b_max from its centre of mass, B3 (4 d - 3 b_max) / (d^4 (d - b_max)^2) with
// B3 = sum m |y|^3 <= b_max mr2, within kRelativeBoundFactor times the tolerance. For a cell
// whose mass is spread (mr2 ~ M l^2 / 4) the bound exceeds the estimate by more than that
// factor only at d < ~1.2 l, where the estimate itself rarely passes: Plummer and Hernquist
// spheres and the disk galaxy at the default alphas keep their counts to 0.03% and their errors
// (docs/perf-tree.md). With order 1 the same bound is used: within a few percent of the
// monopole's wherever it binds (b_max close to d). In float, as ratios of masses (mr2 / d^2
// against alpha_a d^2), whatever the Real of the walk: no over- or underflow for any tree
// the solver builds (it rescales positions and masses to order one: ScaledSolver,
// src/solver/solver.cpp).
inline constexpr float kRelativeBoundFactor = 4;

HOSHI_HOSTDEV inline bool mac_relative_bound_ok(float d2, float b_max, float mr2, float alpha_a) {
  const float inv_d = rsqrt(d2);
  const float x = b_max * inv_d, u = 1 - x;  // b_max / d < 1: d2 > rcrit2 >= b_max^2
  return mr2 * inv_d * inv_d * x * (4 - 3 * x) <= kRelativeBoundFactor * alpha_a * d2 * u * u;
}

// Gadget's relative criterion, after the guard: M l^2 <= (alpha |a_old| / G) d^4, then the
// bound above. alpha_a = alpha * |a_old| / G of the target (the smallest over a group).
// Most cells that pass the estimate pass the bound for certain, without its square root: with
// d >= 2 b_max, x (4 - 3x) <= 5/4 and u^2 >= 1/4, so the bound's left side is at most
// (5/4) mr2 and its right side at least (kRelativeBoundFactor / 4) M l^2 = M l^2; hence
// (5/4) mr2 <= M l^2 suffices (a uniform cube has mr2 = M l^2 / 4).
template <class Real>
HOSHI_HOSTDEV inline bool mac_accept_relative(Real d2, Real rguard2, Real m, Real side2,
                                              Real alpha_a, float b_max, float mr2) {
  static_assert(kRelativeBoundFactor == 4, "the shortcut below assumes the factor 4");
  if (!(d2 > rguard2 && m * side2 <= alpha_a * d2 * d2)) return false;
  const Real b = b_max;
  if (d2 >= 4 * b * b && Real(1.25) * Real(mr2) <= m * side2) return true;
  return mac_relative_bound_ok(static_cast<float>(d2), b_max, mr2, static_cast<float>(alpha_a));
}

}  // namespace hoshi
