// The tree path of device-resident stepping (gpu/device_stepper.cu) replaces the host build's
// first stages by device ones and then calls the host build's later stages:
//   cube  = bounding_cube of the two corners of the (CUB) bounding box,
//   keys  = morton_key per particle (the HOSTDEV function, in a kernel),
//   order = a stable radix sort of (key, index) (CUB's is stable),
//   deep  = key_deep_cells on the downloaded sorted arrays; when it finds crowded cells, the
//           sorted positions, masses and the 32-bit order are permuted on the host (and go
//           back up to the device),
//   nodes = build_octree(sorted keys, deep) + compute_multipoles(sorted particles).
// This test runs that sequence on the CPU (std::stable_sort standing in for CUB) and requires
// exactly the tree that build_tree makes, so the device walk sees the CPU solver's tree.
// Runs without a GPU.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/packed_forces.hpp"
#include "core/parallel_copy.hpp"
#include "ic/ic.hpp"
#include "tree/morton.hpp"
#include "tree/octree.hpp"
#include "tree/tree_solver.hpp"

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
  // A cluster of size 1e-9 in one finest key cell: the crowded-cell path.
  for (std::size_t i = 0; i < 500; ++i) {
    p.x[4000 + i] = 0.05 + 1e-9 * p.x[5000 + i];
    p.y[4000 + i] = 0.02 + 1e-9 * p.y[5000 + i];
    p.z[4000 + i] = -0.03 + 1e-9 * p.z[5000 + i];
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
  DeepCells deep;
  key_deep_cells(dev.keys.data(), dev.x.data(), dev.y.data(), dev.z.data(), dev.m.data(), n, cube,
                 bp.n_leaf, deep);
  ASSERT_FALSE(deep.empty());
  deep.permute(dev.x.data());
  deep.permute(dev.y.data());
  deep.permute(dev.z.data());
  deep.permute(dev.m.data());
  deep.permute(order.data());  // the stepper's 32-bit order
  for (std::size_t k = 0; k < n; ++k) dev.index[k] = order[k];
  ASSERT_EQ(dev.index, host.index);
  ASSERT_EQ(dev.x, host.x);
  const int deepest = build_octree(dev.keys.data(), n, cube, bp.n_leaf, dev.nodes, &deep);
  EXPECT_EQ(deepest, host.max_level);
  EXPECT_GT(deepest, kMortonMaxLevel);
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

// The stepper's zero-softening check runs on its pinned sorted arrays with a 32-bit order
// (require_no_coincident's pointer form): it must name two particles that do share a position,
// by id, and pass a set without coincident particles.
TEST(StepperHostBuild, CoincidenceCheckOnSortedArraysNamesTheIds) {
  const auto sorted = [](const ParticleSet& p, std::vector<std::uint64_t>& keys,
                         std::vector<std::uint32_t>& order, std::vector<double>& x,
                         std::vector<double>& y, std::vector<double>& z) {
    const std::size_t n = p.size();
    const BoundingCube cube = bounding_cube(p.x.data(), p.y.data(), p.z.data(), n);
    std::vector<std::uint64_t> k(n);
    for (std::size_t i = 0; i < n; ++i)
      k[i] = morton_key(p.x[i], p.y[i], p.z[i], cube.lo_x, cube.lo_y, cube.lo_z, cube.side);
    order.resize(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return k[a] < k[b]; });
    keys.resize(n), x.resize(n), y.resize(n), z.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      keys[j] = k[order[j]];
      x[j] = p.x[order[j]];
      y[j] = p.y[order[j]];
      z[j] = p.z[order[j]];
    }
  };
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> order;
  std::vector<double> x, y, z;

  // 3000: one thread's scan; 200000: one chunk per thread, each from the start of a run of
  // equal keys.
  for (const std::size_t n : {std::size_t{3000}, std::size_t{200000}}) {
    ParticleSet clean = make_plummer(n, 52);
    sorted(clean, keys, order, x, y, z);
    EXPECT_NO_THROW(require_no_coincident(keys.data(), order.data(), x.data(), y.data(), z.data(),
                                          clean.size(), clean.id.data()));

    ParticleSet p = make_plummer(n, 52);
    const std::size_t far = n - n / 6;  // one coincident pair, far apart in the input
    p.x[far] = p.x[17];
    p.y[far] = p.y[17];
    p.z[far] = p.z[17];
    sorted(p, keys, order, x, y, z);
    try {
      require_no_coincident(keys.data(), order.data(), x.data(), y.data(), z.data(), p.size(),
                            p.id.data());
      ADD_FAILURE() << "a coincident pair passed the check, n = " << n;
    } catch (const std::invalid_argument& e) {
      const std::string expected = "particles with ids " + std::to_string(p.id[17]) + " and " +
                                   std::to_string(p.id[far]) + " are at the same position";
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }

  // A crowd of 80 at one point (a run of equal keys longer than 32, sorted by position) across
  // the middle of the sorted set, where the chunks of two threads meet: the 80 particles around
  // sorted place n / 2 moved onto the one there. Two of its ids are named, on two threads.
  const std::size_t n = 200000, mid = n / 2;
  ParticleSet crowd = make_plummer(n, 53);
  sorted(crowd, keys, order, x, y, z);
  const std::size_t at = order[mid];
  std::vector<std::size_t> members;
  for (std::size_t j = mid - 40; j < mid + 40; ++j) members.push_back(order[j]);
  for (const std::size_t i : members) {
    crowd.x[i] = crowd.x[at];
    crowd.y[i] = crowd.y[at];
    crowd.z[i] = crowd.z[at];
  }
  sorted(crowd, keys, order, x, y, z);
  ASSERT_EQ(keys[mid - 30], keys[mid + 30]);  // one run across the middle
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  try {
    require_no_coincident(keys.data(), order.data(), x.data(), y.data(), z.data(), crowd.size(),
                          crowd.id.data());
    ADD_FAILURE() << "a crowd of coincident particles passed the check";
  } catch (const std::invalid_argument& e) {
    unsigned long long first = 0, second = 0;
    ASSERT_EQ(std::sscanf(e.what(), "particles with ids %llu and %llu", &first, &second), 2)
        << e.what();
    const auto in_crowd = [&](unsigned long long id) {
      for (const std::size_t i : members)
        if (crowd.id[i] == id) return true;
      return false;
    };
    EXPECT_TRUE(in_crowd(first) && in_crowd(second) && first < second) << e.what();
  }
  omp_set_num_threads(threads);
}

// The stepper copies each step's nodes into pinned memory with parallel_copy: every byte
// arrives, for sizes below one chunk, at chunk boundaries and above, with ragged ends.
TEST(StepperHostBuild, ParallelCopyCopiesEveryByte) {
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4095},
                                  (std::size_t{1} << 20) + 3, (std::size_t{5} << 20) + 7}) {
    std::vector<unsigned char> src(bytes), dst(bytes + 1, 0xAB);
    for (std::size_t k = 0; k < bytes; ++k) src[k] = static_cast<unsigned char>(k * 131 + 7);
    parallel_copy(dst.data(), src.data(), bytes);
    ASSERT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << bytes;
    EXPECT_EQ(dst[bytes], 0xAB) << "wrote past the end, " << bytes;
  }
}

// The device's packed (ax, ay, az, pot) floats land in the right arrays, exactly (float to
// double), below and above the size where the copy goes parallel, and nothing past n.
TEST(StepperHostBuild, PackedForcesLandInTheirArrays) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{100000}}) {
    std::vector<float> packed(4 * n);
    for (std::size_t k = 0; k < packed.size(); ++k)
      packed[k] = static_cast<float>(k) * 0.5f + 0.125f;  // exact in float up to 4e5
    ParticleSet p;
    p.resize(n + 1);
    p.ax.back() = p.ay.back() = p.az.back() = p.pot.back() = -7.0;
    store_packed_forces(packed.data(), n, p);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(p.ax[i], packed[4 * i]) << i;
      ASSERT_EQ(p.ay[i], packed[4 * i + 1]) << i;
      ASSERT_EQ(p.az[i], packed[4 * i + 2]) << i;
      ASSERT_EQ(p.pot[i], packed[4 * i + 3]) << i;
    }
    EXPECT_EQ(p.ax[n], -7.0);
    EXPECT_EQ(p.pot[n], -7.0);
  }
}

}  // namespace
}  // namespace hoshi
