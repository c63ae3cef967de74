// Building the octree on the host (DESIGN.md "The tree build"):
//   bounding_cube -> compute_morton_keys -> sort_keys (radix, OpenMP) -> permute ->
//   key_deep_cells (crowded cells of the keys' finest level, rare) ->
//   build_octree (flat pre-order nodes from the sorted keys) -> compute_multipoles.
// Each stage is a free function with plain arrays in and out; build_tree runs them all and
// times them into PhaseTimes ("keys", "sort", "permute", "build", "moments").
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/particle_set.hpp"
#include "core/timer.hpp"
#include "physics/mac.hpp"
#include "physics/softening.hpp"
#include "tree/tree_view.hpp"

namespace hoshi {

// The cube [lo, lo + side)^3 that the keys divide into 2^21 cells per axis.
struct BoundingCube {
  double lo_x = 0, lo_y = 0, lo_z = 0;
  double side = 1;
};

// Smallest axis-aligned cube around the points, centred on their bounding box and grown by a
// relative 2^-20 so that the largest coordinate falls inside; side 1 when all points coincide
// (or n == 0). Parallel.
BoundingCube bounding_cube(const double* x, const double* y, const double* z, std::size_t n);

// keys[i] = morton_key of point i in `cube`. Parallel.
void compute_morton_keys(const double* x, const double* y, const double* z, std::size_t n,
                         const BoundingCube& cube, std::uint64_t* keys);

// Sorts (keys, index) by key, stably (equal keys keep their input order): an LSD radix sort
// with 12-bit digits over the top 48 key bits (32-bit indices while n < 2^32), OpenMP-parallel,
// skipping passes whose digit is the same for every key; then each run of keys equal in those
// bits (particles within 1/2^16 of the box side of each other: rare, except in a cluster that
// small) is ordered by its low 15 bits. Afterwards index[k] is the input position of the k-th
// smallest key.
void sort_keys(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& index);

// The cells of the keys' finest level (side / 2^21) that hold more than n_leaf particles,
// keyed again inside the cell. Without them such a cell was a leaf however many particles it
// held, whose members then interacted pairwise: a Jaffe cusp (rho ~ r^-2) at 1e8 particles
// puts ~1e4 in each of the central cells (docs/perf-tree.md "Known limits").
struct DeepCells {
  // Ranges of the sorted particles, each the whole of one crowded cell (its particles have
  // one key), in increasing order, and the level down to which the cell is split (22..42:
  // nodes stay well above the coordinates' rounding and their float moments in range;
  // octree.cpp, deep_level_cap; 21: not split, a leaf, but ordered as the others are).
  struct Run {
    std::uint64_t begin, end;
    int max_level;
  };
  std::vector<Run> runs;
  // For the sorted particle at position k of run r, at slot s = start[r] + (k - begin):
  // keys[s], its Morton key within the cell (the cell divided into 2^21 per axis; sorted within
  // each run, equal keys by position x, y, z, then mass, then the position in the run: the
  // order does not depend on the input's), and order[s], the position in the run it had
  // before key_deep_cells.
  std::vector<std::uint64_t> start;
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> order;

  bool empty() const { return runs.empty(); }
  // Reorders an array of the sorted particles as key_deep_cells reordered the runs (T: double,
  // std::uint64_t or std::uint32_t). Parallel over runs.
  template <class T>
  void permute(T* a) const;
};

// Finds the crowded cells of sorted_keys (runs of more than n_leaf equal keys), with the level to
// which each can be split (a cell holding a point far from the origin compared with the box, or
// only particles so light that their float moments would underflow, cannot: max_level 21,
// deep_level_cap), computes the particles' keys inside their cell from the sorted positions and
// sorts each run by them, equal keys by position, mass, then their order (so that the order
// does not depend on the input's). The sorted keys need no change (equal within a run); every other
// array of the sorted particles is brought into the new order by deep.permute. Parallel over runs;
// a scan of the keys when there are none.
void key_deep_cells(const std::uint64_t* sorted_keys, const double* x, const double* y,
                    const double* z, const double* m, std::size_t n, const BoundingCube& cube,
                    int n_leaf, DeepCells& deep);

// Flat pre-order octree over the sorted keys: node ranges, geometry, next and first_child
// (moments are left zero). A node with <= n_leaf particles is a leaf; a crowded cell of level
// 21 (the key resolution) is split further by its particles' keys in `deep` (key_deep_cells,
// which must have been applied to the particles; nullptr: none, every level-21 node is a
// leaf), down to its run's max_level (at most 42), where any number of coincident particles
// ends in one leaf.
// Parallel: subtrees of ~n / 1024 particles are counted, then written in place (no
// intermediate copies). Returns the level of the deepest node. Throws std::invalid_argument
// when n_leaf < 1, std::length_error when the node count does not fit 32-bit indices.
int build_octree(const std::uint64_t* sorted_keys, std::size_t n, const BoundingCube& cube,
                 int n_leaf, std::vector<TreeNode>& nodes, const DeepCells* deep = nullptr);

// The depth of a node (0 for the root, at most kTreeMaxLevel): its side is the root's times
// 2^-level exactly.
inline int node_level(const TreeNode& n, const TreeNode& root) {
  return std::ilogb(root.side / n.side);
}

// Moments of every node, bottom-up, accumulated in double: mass, centre of mass (the
// geometric centre for a massless node), traceless quadrupole about the centre of mass
// (leaves from their particles, parents from their children by the parallel-axis shift),
// b_max (exact: farthest particle of the range) and rcrit2 = max(mac_rcrit2(criterion, theta,
// side, |com - centre|, b_max), (b_max (1 + 1e-6) + kernel_radius)^2): the second term keeps
// every criterion from accepting a node that contains the target, and, with kernel_radius the
// softening kernel's support beyond which it is Newtonian (the spline's h; 0 for Plummer, whose
// softening the cell terms carry), from accepting one with a particle within that radius of
// the target, where the unsoftened cell terms would be wrong. x, y, z, m are the sorted
// particles. Parallel over subtrees.
void compute_multipoles(std::vector<TreeNode>& nodes, const double* x, const double* y,
                        const double* z, const double* m, Criterion criterion, double theta,
                        double kernel_radius = 0);

// Recomputes only rcrit2 for another criterion or theta (moments unchanged).
void set_critical_radii(std::vector<TreeNode>& nodes, Criterion criterion, double theta,
                        double kernel_radius = 0);

// The kernel_radius of compute_multipoles for a softening: the spline's h = 2.8 eps (exactly
// Newtonian beyond it, and its cells unsoftened: multipole.hpp), 0 for Plummer.
double cell_kernel_radius(Softening kernel, double eps);

// A built tree: the sorted particle copies, the permutation and the nodes.
struct Octree {
  BoundingCube cube;
  std::vector<std::uint64_t> keys;   // sorted Morton keys
  std::vector<std::uint64_t> index;  // index[k]: position in the input of sorted particle k
  std::vector<double> x, y, z, m;    // sorted positions and masses
  DeepCells deep;                    // crowded cells of level 21, keyed further (usually none)
  std::vector<TreeNode> nodes;       // pre-order
  int max_level = 0;                 // level of the deepest node

  TreeView view() const;
  std::size_t bytes() const;  // memory held by the arrays above
};

struct TreeBuildParams {
  int n_leaf = 16;
  Criterion criterion = Criterion::barnes94;
  double theta = 0.5;
  double kernel_radius = 0;  // compute_multipoles' (cell_kernel_radius)
};

// All stages in order; each stage's seconds are added to `times`.
void build_tree(const ParticleSet& p, const TreeBuildParams& params, Octree& tree,
                PhaseTimes& times);

}  // namespace hoshi
