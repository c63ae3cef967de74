// Launch geometry of the CUDA kernels: plain C++ so that the CPU tests cover it.
//
// Direct kernel: one thread per target (or per targets_per_thread targets), blocks of `block`
// threads along grid.x, and the source range split into `splits` contiguous pieces along grid.y.
// Each piece is a whole number of tiles of `block` sources (the shared-memory tile), except the
// last, which ends at n. For large N, splits = 1; for small N the split is what fills the device: N
// = 4096 with 128-thread blocks is only 32 blocks, too few for 132 multiprocessors, so the sources
// are split until about `blocks_per_sm` blocks per multiprocessor exist, and a second kernel sums
// the `splits` partial results of each target in a fixed order (deterministic).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "physics/hostdev.hpp"

namespace hoshi::gpu {

// Tuning as data (STYLE.md: "TraversalPolicy"), one place.
struct DirectPolicy {
  int block = 128;         // threads per block = sources per shared-memory tile
  int blocks_per_sm = 8;   // aim: this many resident blocks per multiprocessor
  int max_splits = 65535;  // grid.y limit
  // Targets per thread: each source of a tile is read once for this many targets (the direct
  // kernel is compiled for 1, 2 and 4; direct_forces takes gpu::direct_targets_per_thread()).
  int targets_per_thread = 1;
};

struct DirectGeometry {
  int block = 0;
  int targets_per_thread = 1;
  std::size_t blocks_x = 0;         // ceil(n_targets / (block * targets_per_thread))
  std::size_t tiles = 0;            // ceil(n_sources / block)
  std::size_t tiles_per_split = 0;  // >= 1
  std::size_t splits = 0;           // grid.y; every split holds at least one source
};

inline std::size_t ceil_div(std::size_t a, std::size_t b) {
  return (a + b - 1) / b;
}

// Geometry for n_targets x n_sources on a device with sm_count multiprocessors.
inline DirectGeometry direct_geometry(std::size_t n_targets, std::size_t n_sources, int sm_count,
                                      const DirectPolicy& policy = {}) {
  if (policy.block < 1 || sm_count < 1 || policy.blocks_per_sm < 1 || policy.max_splits < 1)
    throw std::invalid_argument(
        "direct_geometry: block, sm_count, blocks_per_sm and max_splits "
        "must be >= 1 (sm_count " +
        std::to_string(sm_count) + ")");
  if (policy.targets_per_thread < 1)
    throw std::invalid_argument("direct_geometry: targets_per_thread must be >= 1");
  DirectGeometry g;
  g.block = policy.block;
  g.targets_per_thread = policy.targets_per_thread;
  const std::size_t b = static_cast<std::size_t>(policy.block);
  g.blocks_x = ceil_div(n_targets, b * static_cast<std::size_t>(policy.targets_per_thread));
  g.tiles = ceil_div(n_sources, b);
  if (g.blocks_x == 0 || g.tiles == 0) {
    g.tiles_per_split = 1;
    g.splits = 0;  // nothing to launch
    return g;
  }
  const std::size_t want_blocks =
      static_cast<std::size_t>(sm_count) * static_cast<std::size_t>(policy.blocks_per_sm);
  std::size_t splits = std::max<std::size_t>(1, ceil_div(want_blocks, g.blocks_x));
  splits = std::min({splits, g.tiles, static_cast<std::size_t>(policy.max_splits)});
  g.tiles_per_split = ceil_div(g.tiles, splits);
  g.splits = ceil_div(g.tiles, g.tiles_per_split);  // no empty split
  return g;
}

struct SourceRange {
  std::int64_t begin, end;
};

// Source index range [begin, end) of split s when each split holds `per_split` sources
// (tiles_per_split * block). HOSTDEV: the kernel calls this very function.
HOSTDEV inline SourceRange split_range(std::int64_t per_split, std::int64_t n_sources,
                                       std::int64_t s) {
  const std::int64_t begin = s * per_split < n_sources ? s * per_split : n_sources;
  const std::int64_t end = n_sources - begin < per_split ? n_sources : begin + per_split;
  return {begin, end};
}

inline std::int64_t sources_per_split(const DirectGeometry& g) {
  return static_cast<std::int64_t>(g.tiles_per_split) * g.block;
}

// One thread per particle for element-wise kernels (kick, drift, conversions).
inline std::size_t elementwise_blocks(std::size_t n, int block = 256) {
  return ceil_div(n, static_cast<std::size_t>(block));
}

}  // namespace hoshi::gpu
