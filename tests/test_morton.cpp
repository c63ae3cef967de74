// Morton keys and the radix sort: exact checks against independent bit-by-bit code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "ic/ic.hpp"
#include "tree/morton.hpp"
#include "tree/octree.hpp"

namespace hoshi {
namespace {

// Reference interleave written from the definition: bit b of x goes to bit 3b+2, y to 3b+1,
// z to 3b.
std::uint64_t interleave_reference(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  std::uint64_t k = 0;
  for (int b = 0; b < 21; ++b) {
    k |= std::uint64_t((x >> b) & 1u) << (3 * b + 2);
    k |= std::uint64_t((y >> b) & 1u) << (3 * b + 1);
    k |= std::uint64_t((z >> b) & 1u) << (3 * b);
  }
  return k;
}

TEST(Morton, CornerPointsOfTheUnitCube) {
  // Cube [0, 1)^3: the lower corner is key 0; the far corner clamps into the last cell,
  // key 2^63 - 1 (all 63 bits set); the single-axis corners set every x (y, z) bit.
  const std::uint32_t top = kMortonCells - 1;
  EXPECT_EQ(morton_key(0, 0, 0, 0, 0, 0, 1), 0u);
  EXPECT_EQ(morton_key(1, 1, 1, 0, 0, 0, 1), (std::uint64_t{1} << 63) - 1);
  EXPECT_EQ(morton_key(1, 0, 0, 0, 0, 0, 1), interleave_reference(top, 0, 0));
  EXPECT_EQ(morton_key(0, 1, 0, 0, 0, 0, 1), interleave_reference(0, top, 0));
  EXPECT_EQ(morton_key(0, 0, 1, 0, 0, 0, 1), interleave_reference(0, 0, top));
  EXPECT_EQ(morton_key(1, 0, 0, 0, 0, 0, 1), 0x4924924924924924ULL);
  EXPECT_EQ(morton_key(0, 1, 0, 0, 0, 0, 1), 0x2492492492492492ULL);
  EXPECT_EQ(morton_key(0, 0, 1, 0, 0, 0, 1), 0x1249249249249249ULL);
  // The centre is the first cell of octant 7 at level 1.
  EXPECT_EQ(morton_key(0.5, 0.5, 0.5, 0, 0, 0, 1), std::uint64_t{7} << 60);
}

TEST(Morton, ClampsOutsideTheCubeAndNaN) {
  const std::uint32_t top = kMortonCells - 1;
  EXPECT_EQ(morton_cell(-5.0, 0.0, kMortonCells), 0u);
  EXPECT_EQ(morton_cell(1e300, 0.0, kMortonCells), top);
  EXPECT_EQ(morton_cell(std::nan(""), 0.0, kMortonCells), 0u);
  EXPECT_EQ(morton_cell(std::numeric_limits<double>::infinity(), 0.0, kMortonCells), top);
  // Just below the upper face: the last cell, not one past it.
  EXPECT_EQ(morton_cell(std::nextafter(1.0, 0.0), 0.0, kMortonCells), top);
}

TEST(Morton, EncodeMatchesReferenceAndDecodes) {
  Random rng(3);
  for (int i = 0; i < 20000; ++i) {
    const auto x = static_cast<std::uint32_t>(rng.next_u64() & 0x1fffff);
    const auto y = static_cast<std::uint32_t>(rng.next_u64() & 0x1fffff);
    const auto z = static_cast<std::uint32_t>(rng.next_u64() & 0x1fffff);
    const std::uint64_t k = morton_encode(x, y, z);
    ASSERT_EQ(k, interleave_reference(x, y, z));
    std::uint32_t a, b, c;
    morton_decode(k, a, b, c);
    ASSERT_EQ(a, x);
    ASSERT_EQ(b, y);
    ASSERT_EQ(c, z);
    // Octant digit of level L is (x, y, z) bit 21 - L.
    for (int level = 1; level <= 21; ++level) {
      const int bit = 21 - level;
      const unsigned want = ((x >> bit) & 1u) << 2 | ((y >> bit) & 1u) << 1 | ((z >> bit) & 1u);
      ASSERT_EQ(morton_octant(k, level), want);
    }
  }
}

TEST(Morton, KeyOrderIsOctantOrder) {
  // Points in octant o of the unit cube (digit 4x + 2y + z) get keys in [o 2^60, (o+1) 2^60).
  Random rng(4);
  for (int i = 0; i < 1000; ++i) {
    const double x = rng.uniform(), y = rng.uniform(), z = rng.uniform();
    const unsigned o = (x >= 0.5) * 4 + (y >= 0.5) * 2 + (z >= 0.5);
    EXPECT_EQ(morton_key(x, y, z, 0, 0, 0, 1) >> 60, o);
  }
}

void expect_sorted_like_stable_sort(std::vector<std::uint64_t> keys) {
  std::vector<std::uint64_t> want(keys.size());
  std::iota(want.begin(), want.end(), std::uint64_t{0});
  std::stable_sort(want.begin(), want.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return keys[a] < keys[b]; });
  const std::vector<std::uint64_t> input = keys;
  std::vector<std::uint64_t> index;
  sort_keys(keys, index);
  ASSERT_EQ(index.size(), input.size());
  EXPECT_EQ(index, want);  // stability: equal keys keep their input order
  for (std::size_t k = 0; k < keys.size(); ++k) ASSERT_EQ(keys[k], input[index[k]]);
}

TEST(RadixSort, MatchesStableSort) {
  Random rng(5);
  std::vector<std::uint64_t> keys(100000);
  for (auto& k : keys) k = rng.next_u64() >> 1;  // 63-bit keys
  expect_sorted_like_stable_sort(keys);
  // Many duplicates, and keys that differ only in the top or bottom digit.
  for (auto& k : keys) k = (rng.next_u64() % 7) << 60 | (rng.next_u64() % 3);
  expect_sorted_like_stable_sort(keys);
}

TEST(RadixSort, ParallelSortAboveTheThreadThreshold) {
  // From 2^17 keys the radix passes run on more than one thread (when there are more): the
  // per-thread histograms and offsets, with random keys and with many duplicates.
  Random rng(8);
  std::vector<std::uint64_t> keys(std::size_t{1} << 18);
  for (auto& k : keys) k = rng.next_u64() >> 1;
  expect_sorted_like_stable_sort(keys);
  for (auto& k : keys) k = (rng.next_u64() % 1000) << 40 | (rng.next_u64() % 4);
  expect_sorted_like_stable_sort(keys);
}

TEST(RadixSort, KeysThatDifferOnlyInTheLowBits) {
  // The radix passes sort the top 48 bits; runs equal there are sorted afterwards: short runs
  // (std::stable_sort) and long runs (a cluster within 1/2^16 of the box side: two counting
  // passes over the low 15 bits above 2048 keys), with duplicates.
  Random rng(6);
  std::vector<std::uint64_t> keys(50000);
  for (auto& k : keys) k = (rng.next_u64() % 2000) << 15 | (rng.next_u64() % 5);
  expect_sorted_like_stable_sort(keys);
  for (auto& k : keys) k = std::uint64_t{12345} << 15 | (rng.next_u64() % 30000);
  expect_sorted_like_stable_sort(keys);
  for (std::size_t i = 0; i < keys.size(); ++i)  // already sorted, and reversed in the low bits
    keys[i] = (i % 2 ? (std::uint64_t{7} << 15 | (keys.size() - i)) : std::uint64_t{i} << 20);
  expect_sorted_like_stable_sort(keys);
}

TEST(RadixSort, DegenerateSizesAndEqualKeys) {
  expect_sorted_like_stable_sort({});
  expect_sorted_like_stable_sort({42});
  expect_sorted_like_stable_sort({5, 3});
  expect_sorted_like_stable_sort(std::vector<std::uint64_t>(1000, 12345));  // every pass skipped
}

TEST(BoundingCube, ContainsEveryPointAndHandlesOnePoint) {
  ParticleSet p = make_plummer(1000, 2);
  const BoundingCube c = bounding_cube(p.x.data(), p.y.data(), p.z.data(), p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_GE(p.x[i], c.lo_x);
    EXPECT_LT(p.x[i], c.lo_x + c.side);
    EXPECT_GE(p.y[i], c.lo_y);
    EXPECT_LT(p.y[i], c.lo_y + c.side);
    EXPECT_GE(p.z[i], c.lo_z);
    EXPECT_LT(p.z[i], c.lo_z + c.side);
  }
  const double x = 3.0, y = -2.0, z = 1e5;
  const BoundingCube one = bounding_cube(&x, &y, &z, 1);
  EXPECT_GT(one.side, 0);
  EXPECT_LT(one.lo_x, x);
  EXPECT_GT(one.lo_x + one.side, x);
}

}  // namespace
}  // namespace hoshi
