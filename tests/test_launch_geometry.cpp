// Host logic of the CUDA direct kernel's launch (gpu/launch_geometry.hpp): plain C++, so it
// runs without a GPU. The kernel takes its source range from the same split_range().
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu/launch_geometry.hpp"

namespace hoshi::gpu {
namespace {

// Every source belongs to exactly one split, splits are contiguous and non-empty, and every
// split but the last is a whole number of tiles (the shared-memory tile loop relies on it).
void expect_partition(const DirectGeometry& g, std::size_t n) {
  ASSERT_GE(g.splits, 1u);
  const std::int64_t per = sources_per_split(g);
  ASSERT_EQ(per % g.block, 0);
  std::vector<int> covered(n, 0);
  std::int64_t expect_begin = 0;
  for (std::size_t s = 0; s < g.splits; ++s) {
    const SourceRange r = split_range(per, static_cast<std::int64_t>(n), s);
    EXPECT_EQ(r.begin, expect_begin) << "split " << s;
    EXPECT_GT(r.end, r.begin) << "empty split " << s << " of " << g.splits;
    for (std::int64_t j = r.begin; j < r.end; ++j) ++covered[j];
    expect_begin = r.end;
  }
  EXPECT_EQ(expect_begin, static_cast<std::int64_t>(n));
  for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(covered[j], 1) << "source " << j;
  // A split beyond the last is empty (a stray grid.y would add nothing).
  const SourceRange past = split_range(per, static_cast<std::int64_t>(n), g.splits);
  EXPECT_EQ(past.begin, past.end);
}

TEST(LaunchGeometry, SplitsPartitionTheSourcesForAnyN) {
  for (std::size_t n : {1u, 2u, 127u, 128u, 129u, 1000u, 4095u, 4096u, 4097u, 65536u, 100003u})
    for (int sms : {1, 8, 108, 132}) {
      SCOPED_TRACE(testing::Message() << "n " << n << " sms " << sms);
      const DirectGeometry g = direct_geometry(n, n, sms);
      EXPECT_EQ(g.blocks_x, (n + g.block - 1) / g.block);  // one thread per target
      expect_partition(g, n);
    }
}

TEST(LaunchGeometry, SmallNFillsTheDevice) {
  // N = 4096 on an H200 (132 SMs): 32 blocks of targets alone would leave 100 SMs idle.
  const DirectPolicy policy;
  const DirectGeometry g = direct_geometry(4096, 4096, 132, policy);
  EXPECT_EQ(g.blocks_x, 32u);
  EXPECT_GE(g.blocks_x * g.splits, 132u * policy.blocks_per_sm / 2)
      << "splits " << g.splits << " tiles/split " << g.tiles_per_split;
  // Never more splits than tiles: each split holds at least one tile.
  EXPECT_LE(g.splits, g.tiles);
  // The tiniest N cannot fill the device but still splits down to one tile per block.
  const DirectGeometry tiny = direct_geometry(300, 300, 132, policy);
  EXPECT_EQ(tiny.splits, tiny.tiles);
  EXPECT_EQ(tiny.tiles_per_split, 1u);
}

TEST(LaunchGeometry, LargeNUsesOneSplit) {
  // 2^20 targets make 8192 blocks, far above 132 x 8: no partial sums, no reduction pass.
  const DirectGeometry g = direct_geometry(1u << 20, 1u << 20, 132);
  EXPECT_EQ(g.splits, 1u);
  EXPECT_EQ(g.tiles_per_split, g.tiles);
}

TEST(LaunchGeometry, RespectsTheGridYLimit) {
  DirectPolicy policy;
  policy.max_splits = 7;
  const DirectGeometry g = direct_geometry(2000, 2000, 1000, policy);
  EXPECT_LE(g.splits, 7u);
  expect_partition(g, 2000);
}

TEST(LaunchGeometry, TwoTargetsPerThreadHalveTheBlocks) {
  // Each block covers block * targets_per_thread targets; the source tiles stay `block` wide.
  DirectPolicy p;
  p.targets_per_thread = 2;
  for (std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{257},
                        std::size_t{1} << 20}) {
    const DirectGeometry g = direct_geometry(n, n, 132, p);
    EXPECT_EQ(g.targets_per_thread, 2);
    EXPECT_EQ(g.blocks_x, (n + 255) / 256) << n;
    EXPECT_EQ(g.tiles, (n + 127) / 128) << n;
    EXPECT_GE(g.blocks_x * 256, n);
  }
  p.targets_per_thread = 0;
  EXPECT_THROW(direct_geometry(100, 100, 132, p), std::invalid_argument);
}

TEST(LaunchGeometry, EmptyAndInvalidInput) {
  const DirectGeometry g = direct_geometry(0, 0, 132);
  EXPECT_EQ(g.splits, 0u);  // nothing to launch
  EXPECT_EQ(g.blocks_x, 0u);
  EXPECT_THROW(direct_geometry(10, 10, 0), std::invalid_argument);
  DirectPolicy bad;
  bad.block = 0;
  EXPECT_THROW(direct_geometry(10, 10, 4, bad), std::invalid_argument);
}

}  // namespace
}  // namespace hoshi::gpu
