// The per-particle tree walk (DESIGN.md decision 3): one target, a stack-free loop over the
// pre-order node array. HOSTDEV: the CPU per-particle walk calls it from an OpenMP loop and
// the CUDA walk kernel calls it per thread, so the CPU tests cover the GPU's code.
//
//   i = 0
//   while i < n_nodes:
//     d = com_i - x_target                    (double difference, then Real)
//     accept(d, node)  -> cell term (monopole or quadrupole); i = next_i
//     leaf             -> pair terms with the leaf's particles; i = next_i
//     otherwise        -> i = i + 1           (the first child)
//
// The criterion (DESIGN.md decision 4) is the one the node's rcrit2 was computed for:
// bh, barnes94, bmax: d^2 > rcrit2 (mac_accept); relative: mac_accept_relative with
// rcrit2 the guard radius and alpha_a = alpha |a_old| / G of the target.
//
// Results are without G (multiply by G as the caller). Positions: see tree_view.hpp.
// The self pair is skipped by index (`self`, a sorted index; kNoParticle for a field point).
// With eps = 0, distinct particles at one point make r = 0 and an infinite force: the solver
// rejects such input before walking (tree_solver.cpp).
#pragma once

#include <cstdint>

#include "physics/hostdev.hpp"
#include "physics/mac.hpp"
#include "physics/multipole.hpp"
#include "physics/softening.hpp"
#include "tree/tree_view.hpp"

namespace hoshi {

inline constexpr std::uint64_t kNoParticle = ~std::uint64_t{0};

// What a walk needs besides the tree, in the kernel's Real type.
template <class Real>
struct WalkParams {
  Criterion criterion = Criterion::barnes94;  // the criterion the nodes' rcrit2 belongs to
  int order = 2;                              // 1 monopole, 2 monopole + quadrupole
  SofteningParams<Real> soft;                 // particle-particle kernel
  Real cell_eps2 = 0;  // Plummer eps^2 in the cell terms (0 with the spline kernel)
};

// The parameters for a criterion, expansion order and softening (host). Cells always get the
// Plummer form of the softening; with the spline kernel (Newtonian beyond 2.8 eps) they are
// unsoftened (multipole.hpp).
template <class Real>
inline WalkParams<Real> make_walk_params(Criterion criterion, int order, Softening kernel,
                                         double eps) {
  WalkParams<Real> w;
  w.criterion = criterion;
  w.order = order;
  w.soft = SofteningParams<Real>::make(kernel, eps);
  w.cell_eps2 = w.soft.kind == Softening::plummer ? static_cast<Real>(eps * eps) : Real(0);
  return w;
}

// True when node `n` may be used as a multipole for a target at offset d = com - x_target.
template <class Real>
HOSTDEV inline bool node_accepted(const TreeNode& n, Real d2, Criterion criterion, Real alpha_a) {
  if (criterion == Criterion::relative)
    return mac_accept_relative(d2, Real(n.rcrit2), Real(n.m), Real(n.side * n.side), alpha_a,
                               n.b_max, n.mr2);
  return mac_accept(d2, Real(n.rcrit2));
}

// visitor.particle(j, d) for every particle j of leaf n, d = x_j - x_target (double
// difference, then Real). Shared by the per-particle and the box walk (walk_box.hpp).
template <class Real, class Visitor>
HOSTDEV inline void visit_leaf(const TreeView& t, const TreeNode& n, double xi, double yi,
                               double zi, Visitor& visitor) {
  for (std::uint64_t j = n.begin; j < n.end; ++j)
    visitor.particle(j, static_cast<Real>(t.x[j] - xi), static_cast<Real>(t.y[j] - yi),
                     static_cast<Real>(t.z[j] - zi));
}

// The stack-free pre-order loop that every single-target walk shares: accept(n) tests node n
// (and, when it accepts, applies it as a cell); an opened leaf goes to leaf(n); an opened
// internal node descends to its first child, anything used skips its subtree (n.next).
template <class Accept, class Leaf>
HOSTDEV inline void walk_preorder(const TreeView& t, Accept&& accept, Leaf&& leaf) {
  std::uint32_t i = 0;
  while (i < t.n_nodes) {
    const TreeNode& n = t.nodes[i];
    if (accept(n)) {
      i = n.next;
    } else if (n.first_child == 0) {
      leaf(n);
      i = n.next;
    } else {
      i = n.first_child;
    }
  }
}

// The walk itself, calling visitor.cell(node, dx, dy, dz) for every accepted node and
// visitor.particle(j, dx, dy, dz) for every particle j of every opened leaf (the target's own
// index included: the visitor decides). d = source - target, Real.
template <class Real, class Visitor>
HOSTDEV inline void walk_particle_visit(const TreeView& t, double xi, double yi, double zi,
                                        Criterion criterion, Real alpha_a, Visitor& visitor) {
  walk_preorder(
      t,
      [&](const TreeNode& n) {
        const Real dx = static_cast<Real>(n.com_x - xi);
        const Real dy = static_cast<Real>(n.com_y - yi);
        const Real dz = static_cast<Real>(n.com_z - zi);
        if (!node_accepted(n, dx * dx + dy * dy + dz * dz, criterion, alpha_a)) return false;
        visitor.cell(n, dx, dy, dz);
        return true;
      },
      [&](const TreeNode& n) { visit_leaf<Real>(t, n, xi, yi, zi, visitor); });
}

// Force on one target from the tree, and its interaction counts.
template <class Real>
struct ParticleForce {
  Real ax = 0, ay = 0, az = 0, pot = 0;  // without G
  std::uint64_t pp = 0, pc = 0;          // particle-particle and particle-cell terms
};

template <class Real>
struct ForceVisitor {
  const TreeView* t;
  const WalkParams<Real>* w;
  std::uint64_t self;
  ParticleForce<Real> f;

  HOSTDEV void cell(const TreeNode& n, Real dx, Real dy, Real dz) {
    if (w->order == 1) {
      cell_monopole(dx, dy, dz, Real(n.m), w->cell_eps2, f.ax, f.ay, f.az, f.pot);
    } else {
      cell_quadrupole(dx, dy, dz, Real(n.m), Real(n.qxx), Real(n.qxy), Real(n.qxz), Real(n.qyy),
                      Real(n.qyz), Real(n.qzz), Real(n.mr2), w->cell_eps2, f.ax, f.ay, f.az, f.pot);
    }
    ++f.pc;
  }
  HOSTDEV void particle(std::uint64_t j, Real dx, Real dy, Real dz) {
    if (j == self) return;
    pair_interaction(w->soft, dx, dy, dz, Real(t->m[j]), true, f.ax, f.ay, f.az, f.pot);
    ++f.pp;
  }
};

// The force on sorted particle `self` at (xi, yi, zi) (or on a field point with
// self = kNoParticle). alpha_a = alpha |a_old| / G for the relative criterion, else unused.
template <class Real>
HOSTDEV inline ParticleForce<Real> walk_particle(const TreeView& t, std::uint64_t self, double xi,
                                                 double yi, double zi, const WalkParams<Real>& w,
                                                 Real alpha_a) {
  ForceVisitor<Real> v{&t, &w, self, {}};
  walk_particle_visit(t, xi, yi, zi, w.criterion, alpha_a, v);
  return v.f;
}

}  // namespace hoshi
