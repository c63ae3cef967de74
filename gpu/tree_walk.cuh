// Tree walks on the device, on a TreeView whose pointers are device pointers: per particle, one
// thread per (Morton-sorted) target calling the HOSTDEV walk_particle of tree/walk_particle.hpp,
// the same function the CPU per-particle walk calls; and the group mode, a warp per group whose
// lanes call walk_box_target (tree/walk_box.hpp), the function of the CPU mirror
// walk_tree_boxes. Both launchers take blocks of whole warps (TreePolicy::block, a multiple of
// 32; anything else is an std::invalid_argument).
//
// Upload decision: TreeView holds double positions (tree_view.hpp: the walk subtracts in
// double, then rounds the difference to float, so float error follows the local scale). The
// device gets exactly that layout: the TreeNode array as built (128 B per node) and the sorted
// particles as double x, y, z, m (32 B per particle), so that the walk code is not forked and
// the CPU per-particle walk and this kernel see the same interaction sets and the same
// arithmetic up to rsqrt and FMA contraction.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/cuda_solvers.hpp"
#include "gpu/device_buffer.cuh"
#include "solver/solver.hpp"
#include "tree/tree_view.hpp"
#include "tree/walk_box.hpp"
#include "tree/walk_particle.hpp"
#include "tree/walk_warp.hpp"

namespace hoshi::gpu {

struct TreePolicy {
  int block = 128;  // threads per block of the walk kernel
  // The group mode's kernel (tree_walk_groups); DeviceTree::walk takes group_walk_kernel().
  GroupWalkKernel group_kernel = GroupWalkKernel::lanes;
};

struct InteractionCounts {
  std::uint64_t pp = 0, pc = 0;
};

// The order in which the group mode's warps take the groups: the 1/32 with the smallest
// alpha |a_old| / G (the costliest) first, then the others, each in particle order. Buffers
// reused between calls.
class GroupSchedule {
 public:
  void order_by_alpha(const Group* d_groups, std::size_t n_groups, const float* d_alpha,
                      cudaStream_t stream = nullptr);
  const std::uint32_t* order() const { return order_.data(); }

 private:
  DeviceBuffer<std::uint64_t> keys_, keys_sorted_;
  DeviceBuffer<std::uint32_t> index_, by_alpha_, order_;
  CubTemp temp_;
};

// Device copy of a host TreeView (nodes and sorted particles). view() has device pointers.
class DeviceTree {
 public:
  // Copies t's nodes and particles to the device (stream-ordered; returns before the copy ends).
  void upload(const TreeView& t, cudaStream_t stream = nullptr);
  // Copies only the nodes, with the particles already on the device (device-resident
  // stepping: the sorted particles are gathered there). Both also build the nodes' child
  // table on the device (the lists kernel's; 32 B per node, one kernel).
  void upload_nodes(const TreeView& t, cudaStream_t stream = nullptr);
  // The group mode's groups: make_groups of the host nodes (kCudaGroupSize particles at most).
  void upload_groups(const std::vector<TreeNode>& nodes, cudaStream_t stream = nullptr);
  TreeView view() const { return view_; }
  // The walk of every particle: tree_walk (WalkKind::particle) or tree_walk_groups over the
  // uploaded groups (WalkKind::group); arguments as there.
  InteractionCounts walk(WalkKind walk, const WalkParams<float>& w, const float* d_alpha, double G,
                         const std::uint32_t* d_order, float4* d_out,
                         DeviceBuffer<unsigned long long>& counters,
                         cudaStream_t stream = nullptr) const;
  DeviceBuffer<double>& x() { return x_; }
  DeviceBuffer<double>& y() { return y_; }
  DeviceBuffer<double>& z() { return z_; }
  DeviceBuffer<double>& m() { return m_; }
  const DeviceBuffer<NodeChildren>& children() const { return children_; }
  std::size_t bytes() const {
    return nodes_.bytes() + children_.bytes() + x_.bytes() + y_.bytes() + z_.bytes() + m_.bytes();
  }

 private:
  DeviceBuffer<TreeNode> nodes_;
  DeviceBuffer<NodeChildren> children_;
  DeviceBuffer<double> x_, y_, z_, m_;
  std::vector<Group> h_groups_;
  DeviceBuffer<Group> groups_;
  mutable GroupSchedule schedule_;  // scratch of walk()
  TreeView view_{};
};

// Walks every sorted particle k of d_view: out[order ? order[k] : k] = (ax, ay, az, pot), G
// applied. d_alpha_a[k] = alpha |a_old| / G of sorted particle k for the relative criterion
// (may be null otherwise). Synchronises the stream to return the interaction counts.
InteractionCounts tree_walk(const TreeView& d_view, const WalkParams<float>& w,
                            const float* d_alpha_a, double G, const std::uint32_t* d_order,
                            float4* d_out, DeviceBuffer<unsigned long long>& counters,
                            cudaStream_t stream = nullptr, const TreePolicy& policy = {});

// The group mode: a warp per group d_groups[0 .. n_groups) (sorted ranges covering every
// particle once: make_groups), every target summing the nodes accepted for its group's box with
// the group's smallest d_alpha_a: every lane walking the box (policy.group_kernel lanes,
// tree/walk_box.hpp) or the warp building and summing the interaction lists together (lists,
// tree/walk_warp.hpp, which reads the opened nodes' children from d_kids, the tree's child
// table; the lanes kernel ignores it). Warp w takes group d_group_order[w] (a permutation of the
// groups: GroupSchedule), or group w without one. Otherwise as tree_walk.
InteractionCounts tree_walk_groups(const TreeView& d_view, const NodeChildren* d_kids,
                                   const Group* d_groups, std::size_t n_groups,
                                   const WalkParams<float>& w, const float* d_alpha, double G,
                                   const std::uint32_t* d_order, float4* d_out,
                                   DeviceBuffer<unsigned long long>& counters,
                                   cudaStream_t stream = nullptr, const TreePolicy& policy = {},
                                   const std::uint32_t* d_group_order = nullptr);

}  // namespace hoshi::gpu
