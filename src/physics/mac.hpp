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
//             side (here: d > r_guard with r_guard = sqrt(3) * 0.6 * l + delta).
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

// Gadget's relative criterion, after the guard: M l^2 <= (alpha |a_old| / G) d^4.
// alpha_a = alpha * |a_old| / G of the target (the smallest over a group).
template <class Real>
HOSHI_HOSTDEV inline bool mac_accept_relative(Real d2, Real rguard2, Real m, Real side2,
                                              Real alpha_a) {
  return d2 > rguard2 && m * side2 <= alpha_a * d2 * d2;
}

}  // namespace hoshi
