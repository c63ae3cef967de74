// The box test of the group walks and the box walk of one target (DESIGN.md decision 5).
//
// A group's walk applies the opening criterion at the nearest point of the group's bounding
// box, so an accepted node is acceptable for every particle inside. The CPU group walk
// (tree_walk.cpp) builds one interaction list per group with box_node_accepted; the CUDA group
// mode (gpu/tree_walk.cu, a warp per group) instead lets every target of the group walk the
// same node sequence with walk_box_target: the path depends only on the box and the group's
// alpha, so the 32 lanes of a warp never diverge, and each lane sums the accepted cells and the
// opened leaves' particles for its own position, like the per-particle walk
// (walk_particle.hpp: the same visitor, the same interaction functions, positions relative to
// the target with the difference taken in double). The CPU mirror is walk_tree_boxes.
//
// HOSTDEV: the same code runs in the CPU tests and in the CUDA kernel.
#pragma once

#include <cmath>
#include <cstdint>

#include "physics/hostdev.hpp"
#include "tree/tree_view.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi {

// A group: the sorted particles [begin, end).
struct Group {
  std::uint64_t begin, end;
};

// Axis-aligned bounding box of a group's particles: centre and half-widths (double).
struct GroupBox {
  double cx, cy, cz;
  double hx, hy, hz;
};

// The box of the corners lo and hi (exact: min and max of the group's coordinates), as
// bounding_box's Box::centre and Box::half form it.
HOSTDEV inline GroupBox box_from_corners(double lox, double loy, double loz, double hix, double hiy,
                                         double hiz) {
  return {0.5 * (lox + hix), 0.5 * (loy + hiy), 0.5 * (loz + hiz),
          0.5 * (hix - lox), 0.5 * (hiy - loy), 0.5 * (hiz - loz)};
}

// Squared distance from a node's centre of mass to the nearest point of a box, and to the
// box centre.
HOSTDEV inline double box_gap(double d, double h) {
#if defined(__CUDA_ARCH__)
  const double e = fabs(d) - h;
#else
  const double e = std::fabs(d) - h;  // one andpd (a ternary -d: a compare and a blend)
#endif
  return e > 0 ? e : 0.0;
}
HOSTDEV inline double box_nearest_d2(const TreeNode& n, const GroupBox& b) {
  const double ex = box_gap(n.com_x - b.cx, b.hx);
  const double ey = box_gap(n.com_y - b.cy, b.hy);
  const double ez = box_gap(n.com_z - b.cz, b.hz);
  return ex * ex + ey * ey + ez * ez;
}
HOSTDEV inline double box_centre_d2(const TreeNode& n, const GroupBox& b) {
  const double cx = n.com_x - b.cx, cy = n.com_y - b.cy, cz = n.com_z - b.cz;
  return cx * cx + cy * cy + cz * cz;
}
// Below this distance from a box a node is opened, never used as a multipole: the CPU group
// kernels see positions relative to the box centre in float, resolved to ~2^-24 of the box
// size, and a cell closer than 2^-20 of it (possible with bmax, whose r_crit is 0 for a
// one-particle node) could round onto a target and make r = 0 in a cell term, which has no
// r = 0 mask.
HOSTDEV inline double box_min_cell_d2(const GroupBox& b) {
  const double dmin = 0x1.0p-20 * (b.hx + b.hy + b.hz);
  return dmin * dmin;
}

// True when node n may be used as a multipole for every point of box b (dmin2 =
// box_min_cell_d2(b)). alpha_a: the smallest alpha |a_old| / G over the group (relative
// criterion only).
HOSTDEV inline bool box_node_accepted(const TreeNode& n, const GroupBox& b, double dmin2,
                                      Criterion criterion, double alpha_a) {
  const double d2 = box_nearest_d2(n, b);
  return d2 > dmin2 && node_accepted<double>(n, d2, criterion, alpha_a);
}

// The box walk for one target at (xi, yi, zi) of the group with box b: visitor.cell(node, d)
// for every node accepted for the box, visitor.particle(j, d) for every particle j of every
// opened leaf (the target's own index included: the visitor decides); d = source - target.
template <class Real, class Visitor>
HOSTDEV inline void walk_box_visit(const TreeView& t, const GroupBox& b, Criterion criterion,
                                   double alpha_a, double xi, double yi, double zi,
                                   Visitor& visitor) {
  const double dmin2 = box_min_cell_d2(b);
  walk_preorder(
      t,
      [&](const TreeNode& n) {
        if (!box_node_accepted(n, b, dmin2, criterion, alpha_a)) return false;
        visitor.cell(n, static_cast<Real>(n.com_x - xi), static_cast<Real>(n.com_y - yi),
                     static_cast<Real>(n.com_z - zi));
        return true;
      },
      [&](const TreeNode& n) { visit_leaf<Real>(t, n, xi, yi, zi, visitor); });
}

// The force on sorted particle `self` at (xi, yi, zi) from the nodes accepted for its group's
// box b (without G), and its interaction counts.
template <class Real>
HOSTDEV inline ParticleForce<Real> walk_box_target(const TreeView& t, const GroupBox& b,
                                                   double alpha_a, std::uint64_t self, double xi,
                                                   double yi, double zi,
                                                   const WalkParams<Real>& w) {
  ForceVisitor<Real> v{&t, &w, self, {}};
  walk_box_visit<Real>(t, b, w.criterion, alpha_a, xi, yi, zi, v);
  return v.f;
}

}  // namespace hoshi
