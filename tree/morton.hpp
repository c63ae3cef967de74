// 63-bit Morton keys: 21 bits per axis, interleaved x, y, z from the most significant bit.
//
// The key of a point is built from its integer cell coordinates in the bounding cube
// [lo, lo + side)^3 divided into 2^21 cells per axis. Bit 3*(20-b)+2 of the key is bit (20-b)
// of the x coordinate, +1 of y, +0 of z, so the octant digit of level L (1..21) is
//   (key >> 3*(21-L)) & 7  =  4*xbit + 2*ybit + zbit,
// and sorting the keys orders the particles along the Z-order curve, octant by octant.
// Coordinates outside the cube (round-off at the upper face, or a caller's mistake) clamp to
// the nearest face cell; NaN maps to cell 0. All functions are HOSTDEV (also used by gpu/).
#pragma once

#include <cstdint>

#include "physics/hostdev.hpp"

namespace hoshi {

inline constexpr int kMortonBits = 21;  // bits per axis
inline constexpr int kMortonMaxLevel = kMortonBits;
inline constexpr std::uint32_t kMortonCells = 1u << kMortonBits;  // cells per axis
// The octree goes below the keys' finest level where it must: more than a leaf's worth of
// particles in one cell of that level are keyed again inside it, 21 levels more
// (tree/octree.hpp, DeepCells), so no node is deeper than this.
inline constexpr int kTreeMaxLevel = 2 * kMortonMaxLevel;

// Spreads the low 21 bits of v so that bit b moves to bit 3b.
HOSTDEV inline std::uint64_t morton_spread3(std::uint32_t v) {
  std::uint64_t x = v & 0x1fffffu;
  x = (x | x << 32) & 0x1f00000000ffffULL;
  x = (x | x << 16) & 0x1f0000ff0000ffULL;
  x = (x | x << 8) & 0x100f00f00f00f00fULL;
  x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
  x = (x | x << 2) & 0x1249249249249249ULL;
  return x;
}

// Inverse of morton_spread3: gathers bits 0, 3, 6, ... into the low 21 bits.
HOSTDEV inline std::uint32_t morton_compact3(std::uint64_t x) {
  x &= 0x1249249249249249ULL;
  x = (x | x >> 2) & 0x10c30c30c30c30c3ULL;
  x = (x | x >> 4) & 0x100f00f00f00f00fULL;
  x = (x | x >> 8) & 0x1f0000ff0000ffULL;
  x = (x | x >> 16) & 0x1f00000000ffffULL;
  x = (x | x >> 32) & 0x1fffffULL;
  return static_cast<std::uint32_t>(x);
}

// Key of integer cell coordinates (each < 2^21).
HOSTDEV inline std::uint64_t morton_encode(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz) {
  return morton_spread3(ix) << 2 | morton_spread3(iy) << 1 | morton_spread3(iz);
}

HOSTDEV inline void morton_decode(std::uint64_t key, std::uint32_t& ix, std::uint32_t& iy,
                                  std::uint32_t& iz) {
  ix = morton_compact3(key >> 2);
  iy = morton_compact3(key >> 1);
  iz = morton_compact3(key);
}

// Cell coordinate along one axis: floor((x - lo) * cells_per_length), clamped to
// [0, 2^21 - 1]. cells_per_length = 2^21 / side.
HOSTDEV inline std::uint32_t morton_cell(double x, double lo, double cells_per_length) {
  const double c = (x - lo) * cells_per_length;
  if (!(c > 0.0)) return 0;  // also NaN
  if (c >= static_cast<double>(kMortonCells - 1)) return kMortonCells - 1;
  return static_cast<std::uint32_t>(c);
}

// Key of a point in the cube with lower corner (lo_x, lo_y, lo_z) and side length `side`.
HOSTDEV inline std::uint64_t morton_key(double x, double y, double z, double lo_x, double lo_y,
                                        double lo_z, double side) {
  const double s = static_cast<double>(kMortonCells) / side;
  return morton_encode(morton_cell(x, lo_x, s), morton_cell(y, lo_y, s), morton_cell(z, lo_z, s));
}

// Octant digit (0..7) of level `level` (1..21): 4*xbit + 2*ybit + zbit.
HOSTDEV inline unsigned morton_octant(std::uint64_t key, int level) {
  return static_cast<unsigned>(key >> (3 * (kMortonMaxLevel - level))) & 7u;
}

// The key with every digit below `level` cleared: the first key of its level-`level` cell.
HOSTDEV inline std::uint64_t morton_cell_prefix(std::uint64_t key, int level) {
  const int shift = 3 * (kMortonMaxLevel - level);
  return shift >= 64 ? 0 : (key >> shift) << shift;
}

}  // namespace hoshi
