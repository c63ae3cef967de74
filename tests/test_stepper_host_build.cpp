// The tree path of device-resident stepping (gpu/device_stepper.cu) replaces the host build's
// first stages by device ones and then calls the host build's later stages:
//   cube  = bounding_cube of the two corners of the (CUB) bounding box,
//   keys  = morton_key per particle (the HOSTDEV function, in a kernel),
//   order = a stable radix sort of (key, index) (CUB's is stable),
//   nodes = build_octree(sorted keys) + compute_multipoles(sorted particles).
// This test runs that sequence on the CPU (std::stable_sort standing in for CUB) and requires
// exactly the tree that build_tree makes, so the device walk sees the CPU solver's tree.
// Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "ic/ic.hpp"
#include "tree/morton.hpp"
#include "tree/octree.hpp"

namespace hoshi {
namespace {

TEST(StepperHostBuild, DeviceStagesReproduceTheHostTree) {
  ParticleSet p = make_plummer(6000, 51);
  // Coincident pairs (equal keys) make the sort's stability matter.
  for (std::size_t i = 0; i < 200; ++i) {
    p.x[3000 + i] = p.x[i];
    p.y[3000 + i] = p.y[i];
    p.z[3000 + i] = p.z[i];
  }
  const std::size_t n = p.size();
  TreeBuildParams bp;
  Octree host;
  PhaseTimes times;
  build_tree(p, bp, host, times);

  // Bounding box (what the CUB reduction returns), then the cube from its two corners.
  const auto [xl, xh] = std::minmax_element(p.x.begin(), p.x.end());
  const auto [yl, yh] = std::minmax_element(p.y.begin(), p.y.end());
  const auto [zl, zh] = std::minmax_element(p.z.begin(), p.z.end());
  const double cx[2] = {*xl, *xh}, cy[2] = {*yl, *yh}, cz[2] = {*zl, *zh};
  const BoundingCube cube = bounding_cube(cx, cy, cz, 2);
  EXPECT_EQ(cube.lo_x, host.cube.lo_x);
  EXPECT_EQ(cube.lo_y, host.cube.lo_y);
  EXPECT_EQ(cube.lo_z, host.cube.lo_z);
  EXPECT_EQ(cube.side, host.cube.side);

  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i)
    keys[i] = morton_key(p.x[i], p.y[i], p.z[i], cube.lo_x, cube.lo_y, cube.lo_z, cube.side);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  Octree dev;
  dev.cube = cube;
  dev.keys.resize(n);
  dev.index.resize(n);
  dev.x.resize(n);
  dev.y.resize(n);
  dev.z.resize(n);
  dev.m.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t i = order[k];
    dev.keys[k] = keys[i];
    dev.index[k] = i;
    dev.x[k] = p.x[i];
    dev.y[k] = p.y[i];
    dev.z[k] = p.z[i];
    dev.m[k] = p.m[i];
  }
  ASSERT_EQ(dev.keys, host.keys);
  ASSERT_EQ(dev.index, host.index);
  build_octree(dev.keys.data(), n, cube, bp.n_leaf, dev.nodes);
  compute_multipoles(dev.nodes, dev.x.data(), dev.y.data(), dev.z.data(), dev.m.data(),
                     bp.criterion, bp.theta);
  ASSERT_EQ(dev.nodes.size(), host.nodes.size());
  for (std::size_t k = 0; k < dev.nodes.size(); ++k) {
    const TreeNode &a = dev.nodes[k], &b = host.nodes[k];
    ASSERT_EQ(a.begin, b.begin) << k;
    ASSERT_EQ(a.end, b.end) << k;
    ASSERT_EQ(a.next, b.next) << k;
    ASSERT_EQ(a.m, b.m) << k;
    ASSERT_EQ(a.com_x, b.com_x) << k;
    ASSERT_EQ(a.rcrit2, b.rcrit2) << k;
    ASSERT_EQ(a.qxy, b.qxy) << k;
  }
}

}  // namespace
}  // namespace hoshi
