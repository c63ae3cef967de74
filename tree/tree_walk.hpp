// CPU tree walks over a built Octree (DESIGN.md decisions 3 and 5).
//
//  * walk_tree_particles: one stack-free walk per particle (walk_particle.hpp, the same
//    HOSTDEV function as the CUDA kernel), OpenMP over the Morton-ordered particles.
//  * walk_tree_groups: the fast path. Particles are grouped (make_groups); one walk per group,
//    with the opening criterion applied to the distance from the node's centre of mass to the
//    group's bounding box, builds an interaction list (cells and leaf particle ranges) valid
//    for every particle of the group; SIMD kernels (tree/group_kernels.hpp, on
//    src/direct/simd.hpp VecF) then evaluate list x group with the shared physics templates
//    (plummer_pair_scaled / spline_pair, cell_monopole / cell_quadrupole). Positions enter the
//    float kernels relative to the group's centre, the difference taken in double
//    (tree_view.hpp, "Precision"). Above the groups the walk is hierarchical: nodes of more
//    than n_group particles classify candidate cells once for all their particles, and cells
//    far from a target compared to its size go into its local expansion (M2L), which is
//    shifted down to its children (L2L) and evaluated once per particle (L2P;
//    physics/local_expansion.hpp, tree_walk.cpp "The hierarchical group walk").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "physics/mac.hpp"
#include "physics/softening.hpp"
#include "tree/octree.hpp"
#include "tree/tree_view.hpp"
#include "tree/walk_box.hpp"
#include "tree/walk_warp.hpp"

namespace hoshi {

struct TreeWalkConfig {
  Criterion criterion = Criterion::barnes94;  // the criterion the nodes' rcrit2 belongs to
  int order = 2;
  Softening softening = Softening::plummer;
  double eps = 0;
  double G = 1;
  int n_group = 64;
  // Group walk: an accepted cell farther from a target's centre than its radius / local_ratio
  // enters the target's local expansion (physics/local_expansion.hpp) instead of a p-c term
  // per particle; 0 turns local expansions off. See local_ratio_for().
  double local_ratio = 0;
};

// Degree of the group walk's local expansions.
int local_expansion_order();

// The local_ratio for a walk from the user's coefficient R (TreeParams::local_ratio):
// rho = R e^(1/P), P the expansion degree, at most 0.5, with e the criterion's multipole error
// scale: theta^(order + 1) for the geometric criteria, kRelativeErrorScale alpha for the
// relative one. The local expansion's truncation error per cell, ~rho^P, then scales like the
// multipole error, so error-versus-theta (or alpha) studies keep their slope; R = 0 turns
// local expansions off.
double local_ratio_for(double R, Criterion criterion, double theta, double alpha, int order);
// The relative criterion at alpha has the errors of barnes94 at theta with theta^3 =
// kRelativeErrorScale alpha (measured: alpha 0.02 and theta 0.65 both give p99 1.0e-3 for the
// group walk at N = 1e6).
inline constexpr double kRelativeErrorScale = 13.7;

struct WalkCounts {
  std::uint64_t pp = 0, pc = 0;  // totals over all targets
  std::uint64_t m2l = 0;         // cells added to a group's local expansion, total
};

// Group (the sorted particles [begin, end)) and GroupBox: tree/walk_box.hpp.

// Groups covering every particle once, in Morton order: runs of consecutive sibling subtrees
// with at most n_group particles together (so groups are near n_group in size, not n_group/8);
// a leaf with more than n_group particles (coincident points at level 21, or n_leaf > n_group)
// is cut into pieces of n_group.
std::vector<Group> make_groups(const std::vector<TreeNode>& nodes, int n_group);

// Axis-aligned bounding box of a group's particles (GroupBox: tree/walk_box.hpp).
GroupBox group_box(const TreeView& t, const Group& g);

// The interaction list of a group: nodes used as multipoles and leaves opened.
struct InteractionList {
  std::vector<std::uint32_t> cells;
  std::vector<std::uint32_t> leaves;
  void clear() {
    cells.clear();
    leaves.clear();
  }
};

// Walk for a box: a node is accepted when its criterion holds at the nearest point of the
// box (so it holds for every particle inside). alpha_a: the smallest alpha |a_old| / G over
// the group (relative criterion only).
void group_interaction_list(const TreeView& t, const GroupBox& box, Criterion criterion,
                            double alpha_a, InteractionList& list);

// The lists of the hierarchical group walk (walk_tree_groups), for tests: per group, the
// accepted cells its particles use as p-c terms (cells), through a local expansion of the
// group or of one of its big ancestors (far), and the opened leaves. Sorted by group.
struct GroupLists {
  Group group;
  std::vector<std::uint32_t> cells, far, leaves;
};
std::vector<GroupLists> group_walk_lists(const Octree& tree, const TreeWalkConfig& cfg,
                                         const float* alpha_a);

// The targets of a walk (GravitySolver::compute_active): every particle (the default), or
// those flagged. The tree holds every particle as a source either way; a walk skips the
// targets (particles, groups, big nodes) whose sorted range [begin, end) holds no flagged
// particle, and walks the others whole.
struct ActiveTargets {
  const std::uint8_t* flags = nullptr;    // caller's order, nonzero: active; nullptr: all
  const std::uint64_t* prefix = nullptr;  // [k]: flagged among sorted particles [0, k), k <= n
  bool any(std::uint64_t begin, std::uint64_t end) const {
    return prefix == nullptr || prefix[end] != prefix[begin];
  }
  std::uint64_t count(std::uint64_t begin, std::uint64_t end) const {
    return prefix == nullptr ? end - begin : prefix[end] - prefix[begin];
  }
  bool active(std::size_t i) const { return flags == nullptr || flags[i] != 0; }  // caller's i
};

// ActiveTargets::prefix of `flags` (caller's order) for the tree's sorted order: n + 1 counts.
std::vector<std::uint64_t> active_prefix(const Octree& tree, const std::uint8_t* flags);

// Both walks write a, pot (G applied; self term excluded) of sorted particle k to
// ax[tree.index[k]] etc., i.e. in the caller's particle order (the group walk through a
// tree-order buffer and the inverse permutation, which avoids random writes). alpha_a: per sorted
// particle alpha |a_old| / G for the relative criterion (nullptr otherwise). With `active`
// flags, only the active particles' entries are written; the interaction counts are those of
// the targets walked.
WalkCounts walk_tree_particles(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                               double* ax, double* ay, double* az, double* pot,
                               const ActiveTargets& active = {});
WalkCounts walk_tree_groups(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                            double* ax, double* ay, double* az, double* pot,
                            const ActiveTargets& active = {});
// The CPU mirror of the CUDA group mode: make_groups(cfg.n_group) groups, every target walking
// its group's box (walk_box.hpp) with the group's smallest alpha_a; no local expansions. Same
// output convention as above.
WalkCounts walk_tree_boxes(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                           double* ax, double* ay, double* az, double* pot);

// Every node's children (walk_warp.hpp, NodeChildren), for the lists kernel's walk: element i
// is node_children(t.nodes, i). OpenMP over the nodes.
std::vector<NodeChildren> child_table(const TreeView& t);

// The CPU mirror of the CUDA group mode's lists kernel (walk_warp.hpp): the groups of
// walk_tree_boxes, each walked once by a (host) warp for 32 targets at a time, the same
// interaction sets as walk_tree_boxes in another order. A walk that would need more than
// stack_capacity (<= kWarpStack) stack entries falls back to walk_tree_boxes's walk for its
// targets; *fallbacks (if given) counts those walks. Same output convention as above.
WalkCounts walk_tree_warps(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                           double* ax, double* ay, double* az, double* pot,
                           int stack_capacity = kWarpStack, std::uint64_t* fallbacks = nullptr);

}  // namespace hoshi
