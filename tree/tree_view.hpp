// TreeView: the flat octree as plain pointers, shared by the CPU walks and the CUDA kernels.
//
// Layout (DESIGN.md decision 3). Nodes are stored in depth-first pre-order in one array of
// TreeNode (128 bytes, 2 cache lines; the first holds all that a walk step reads: centre
// of mass, mass, critical radius, side and the links). For node i:
//   * its first child, if any, is node i + 1 (pre-order); `first_child` is i + 1 for an
//     internal node and 0 for a leaf (0 is the root and never anyone's child);
//   * `next` is the node after its subtree (n_nodes for the last subtree), so a stack-free
//     walk is: accept -> cell term, i = next; open a leaf -> its particles, i = next;
//     open an internal node -> i = i + 1;
//   * its particles are [begin, end) in the Morton-sorted particle arrays x, y, z, m.
// Node indices are 32-bit (the builder checks that the count fits); particle indices and
// counts are 64-bit (DESIGN.md decision 9).
//
// Precision (DESIGN.md decision 2; issue 3 "precision follows the local scale"): positions
// (particles, centres of mass, geometric centres) are double, in the caller's coordinates.
// The walks subtract the target's (or group's) position in double and only then round the
// difference to the kernel's Real, so the float error of a term is 2^-24 of the local
// separation, not of the box: a cluster of size 1e-6 inside a box of size 1e3 is resolved as
// well as the cluster alone. The device walk uses this same view with the same double
// positions (one double subtraction per term, then float arithmetic).
//
// Units: those of the particles; masses and quadrupoles without G (G is applied by the caller).
#pragma once

#include <cstdint>

namespace hoshi {

struct alignas(64) TreeNode {
  // First cache line: what every walk step reads (criterion and links).
  double com_x, com_y, com_z;  // centre of mass
  double m;                    // mass
  double rcrit2;               // squared critical radius: mac_rcrit2, at least b_max^2 (octree.hpp)
  double side;                 // side length of the node's cube
  std::uint32_t next;          // node after this subtree in pre-order
  std::uint32_t first_child;   // i + 1 for an internal node, 0 for a leaf
  float b_max;                 // distance from com to the farthest particle of the node
  float mr2;  // sum of m |x - com|^2 over the particles: the second moment's trace, which the
              // Plummer-softened quadrupole term needs (multipole.hpp)
  // Second cache line: read for accepted cells (quadrupole) and opened leaves (range).
  // Traceless quadrupole about the centre of mass, Q_ij = sum m (3 y_i y_j - |y|^2 delta_ij),
  // y = x - com (src/physics/multipole.hpp). Float: it enters only the O(theta^2) correction.
  float qxx, qxy, qxz, qyy, qyz, qzz;
  std::uint64_t begin, end;  // particle range [begin, end) in the sorted arrays
  double cx, cy, cz;         // geometric centre of the node's cube
};
static_assert(sizeof(TreeNode) == 128, "TreeNode is two cache lines");

struct TreeView {
  const TreeNode* nodes = nullptr;
  std::uint32_t n_nodes = 0;
  // Morton-sorted particles: positions and masses (double), n_particles of them.
  const double* x = nullptr;
  const double* y = nullptr;
  const double* z = nullptr;
  const double* m = nullptr;
  std::uint64_t n_particles = 0;
  // Bounding cube of the tree: lower corner and side.
  double lo_x = 0, lo_y = 0, lo_z = 0, side = 0;
  // Level of the deepest node (the root is 0): at most 21 (the Morton keys' resolution) unless
  // crowded cells of that level were split further (tree/octree.hpp, DeepCells), at most 42.
  // The group walk's stack headroom follows it (tree/walk_warp.hpp).
  std::uint32_t max_level = 21;
};

}  // namespace hoshi
