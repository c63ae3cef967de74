// The warp-cooperative group walk: the CUDA group mode's "lists" kernel (gpu/tree_walk.cu)
// and its CPU mirror (walk_tree_warps, tree_walk.cpp), one HOSTDEV function for both.
//
// The box walk of walk_box.hpp makes every lane of a warp test the same node, in double, and
// take its own double difference to every source: ~180 lane instructions per term on an H200
// (docs/perf-gpu.md). Here the 32 lanes share that work, as Bonsai does:
//
//   stack (shared memory) <- root
//   while the stack is not empty:
//     lane l pops node l of the top 32 (fewer when the stack is nearly full) and applies the
//     box test (box_node_accepted, double):
//       accepted -> the cell's source (centre of mass relative to the box centre, mass,
//                   quadrupole; float) goes into the cell tile
//       a leaf   -> its particles (relative to the box centre, float) go into the particle
//                   tile, 32 slots filled by 32 lanes at a time
//       else     -> its children are pushed (warp prefix sum of their counts)
//     a full tile (32 sources) is evaluated: every lane sums the 32 sources on its own target
//   the partial tiles are evaluated last.
//
// The accepted cells and opened leaves are those of the box walk (the same test on the same
// box), taken in another order; only rounding differs. Positions enter the float terms relative
// to the box centre, the difference taken in double (as the CPU group kernels do: tree_view.hpp
// "Precision"; box_min_cell_d2 keeps cells off the targets). The stack keeps a headroom that
// its depth-first descents cannot exceed (kStackHeadroom), so a walk runs out of stack only with
// a capacity below it (the tests' small capacities): it returns false, and the CPU mirror walks
// its targets with walk_box_target (the CUDA kernel, which has kWarpStack, reports an error).
//
// The algorithm is written once over a warp policy W: W::Var<T> is one T per lane (the device:
// the lane's register; the host: an array of 32), W::each(f) runs f(lane) for every lane (the
// device: its own lane), and the collectives exclusive_sum, gather, or_all and sync
// (the device: shuffles and __syncwarp; the host: loops). Inside each() a lane reads and writes
// only its own Var entries and its own scratch slots; lanes see each other's values only
// through the collectives and, after a sync(), the scratch.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "physics/hostdev.hpp"
#include "physics/multipole.hpp"
#include "physics/softening.hpp"
#include "tree/morton.hpp"
#include "tree/tree_view.hpp"
#include "tree/walk_box.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi {

inline constexpr int kWarpLanes = 32;
// Node indices a warp can hold on its stack (4 KB of shared memory; 6.1 KB of scratch per warp
// in all). Without a headroom (popping 32 nodes whenever the stack had them), Plummer spheres
// at alpha 0.0015 (deeper walks than the CUDA default 0.004) had walks too deep for 256 / 512 /
// 768 / 1024 entries: 2746 / 79 / 0 / 0 of 4375 at N = 1e5, 25761 / 238 / 1 / 0 of 45592 at
// 2^20, and a Hernquist sphere at 2^18 1 of 11524 at 1024 (box_mirror_accuracy, 2026-11-30).
inline constexpr int kWarpStack = 1024;

// A cell as a source: centre of mass relative to the box centre, mass, quadrupole and mr2 (48 B:
// three 16-byte loads from shared memory).
struct alignas(16) CellSource {
  float x, y, z, m;
  float qxx, qxy, qxz, qyy;
  float qyz, qzz, mr2, pad;
};
// A particle as a source, relative to the box centre.
struct alignas(16) ParticleSource {
  float x, y, z, m;
};

// Stack entries kept free for the walk's depth-first descents (see walk_group_warp): 7 more
// per level down to the deepest (the tree's max_level), plus the popped node's 8 children.
// Trees no deeper than the keys' 21 levels (all but those with crowded deepest cells) keep
// the headroom of 21 levels, with which the stack sizes below were measured.
HOSTDEV constexpr std::uint32_t stack_headroom(std::uint32_t max_level) {
  return 7 * ((max_level > std::uint32_t(kMortonMaxLevel) ? max_level
                                                          : std::uint32_t(kMortonMaxLevel)) +
              1) +
         8;
}
// The headroom of the deepest tree the builder makes.
inline constexpr std::uint32_t kStackHeadroom = stack_headroom(kTreeMaxLevel);
// The CUDA lists kernel has no fallback walk: kWarpStack must hold the headroom (and a full
// batch above it, so that the warp tests 32 nodes at a time in the common case).
static_assert(kWarpStack > static_cast<int>(kStackHeadroom) + kWarpLanes * 8,
              "the stack holds a full batch above the headroom");

// The children of a node, up to 8 (an octree's), 0 after the last (the root is nobody's
// child): the walk reads an opened node's children from here, 32 bytes, one load per lane,
// instead of following the chain of `next` links through the children (up to 8 dependent node
// loads, and again to push them). One per node, built for a tree by child_table (host,
// tree_walk.hpp) or on the device (gpu/tree_walk.cu), both with node_children.
struct alignas(32) NodeChildren {
  std::uint32_t c[8];
};

// Node i's children in pre-order (first_child, then along `next` until i's own next).
HOSTDEV inline NodeChildren node_children(const TreeNode* nodes, std::uint32_t i) {
  NodeChildren r{};
  const TreeNode& n = nodes[i];
  int k = 0;
  for (std::uint32_t c = n.first_child; c != 0 && c < n.next && k < 8; c = nodes[c].next)
    r.c[k++] = c;
  return r;
}

HOSTDEV inline std::uint32_t child_count(const NodeChildren& ch) {
  std::uint32_t k = 0;
  for (int j = 0; j < 8; ++j) k += ch.c[j] != 0;
  return k;
}

// A warp's shared scratch.
struct WarpScratch {
  std::uint32_t stack[kWarpStack];
  CellSource cells[kWarpLanes];
  ParticleSource parts[kWarpLanes];
  std::int32_t part_slot[kWarpLanes];  // the particle's offset in the group (self test), or -1
};

// A lane's target: position relative to the box centre, slot (offset in the group; -2 for a
// lane without a target), and its force (sums without G, interaction counts).
struct LaneTarget {
  float x = 0, y = 0, z = 0;
  std::int32_t slot = -2;
  ParticleForce<float> f;
};

HOSTDEV inline CellSource cell_source(const TreeNode& n, const GroupBox& b) {
  return {static_cast<float>(n.com_x - b.cx),
          static_cast<float>(n.com_y - b.cy),
          static_cast<float>(n.com_z - b.cz),
          static_cast<float>(n.m),
          n.qxx,
          n.qxy,
          n.qxz,
          n.qyy,
          n.qyz,
          n.qzz,
          n.mr2,
          0.0f};
}

HOSTDEV inline ParticleSource particle_source(const TreeView& t, std::uint64_t j,
                                              const GroupBox& b) {
  return {static_cast<float>(t.x[j] - b.cx), static_cast<float>(t.y[j] - b.cy),
          static_cast<float>(t.z[j] - b.cz), static_cast<float>(t.m[j])};
}

// The offset of particle j in the group that starts at `begin` (-1 outside the int32 range:
// not a target of the group, as a target's offset is below the group size).
HOSTDEV inline std::int32_t group_slot(std::uint64_t j, std::uint64_t begin) {
  return j >= begin && j - begin < 0x7fffffffu ? static_cast<std::int32_t>(j - begin) : -1;
}

// The target of lane l for the targets [k0, end) of the group starting at `begin`.
HOSTDEV inline LaneTarget lane_target(const TreeView& t, const GroupBox& b, std::uint64_t begin,
                                      std::uint64_t k0, std::uint64_t end, int l) {
  LaneTarget tg;
  const std::uint64_t k = k0 + static_cast<std::uint64_t>(l);
  if (k < end) {
    tg.x = static_cast<float>(t.x[k] - b.cx);
    tg.y = static_cast<float>(t.y[k] - b.cy);
    tg.z = static_cast<float>(t.z[k] - b.cz);
    tg.slot = group_slot(k, begin);
  }
  return tg;
}

// The n cells of a tile on one lane's target (the p-c count is the warp's: walk_group_warp).
HOSTDEV inline void sum_cells(const CellSource* c, int n, const WalkParams<float>& w,
                              LaneTarget& tg) {
  if (w.order == 1) {
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
    for (int j = 0; j < n; ++j)
      cell_monopole(c[j].x - tg.x, c[j].y - tg.y, c[j].z - tg.z, c[j].m, w.cell_eps2, tg.f.ax,
                    tg.f.ay, tg.f.az, tg.f.pot);
  } else {
#if defined(__CUDA_ARCH__)
#pragma unroll 2
#endif
    for (int j = 0; j < n; ++j)
      cell_quadrupole(c[j].x - tg.x, c[j].y - tg.y, c[j].z - tg.z, c[j].m, c[j].qxx, c[j].qxy,
                      c[j].qxz, c[j].qyy, c[j].qyz, c[j].qzz, c[j].mr2, w.cell_eps2, tg.f.ax,
                      tg.f.ay, tg.f.az, tg.f.pot);
  }
}

// The n particles of a tile on one lane's target; the target itself (slot == tg.slot) is
// masked out.
HOSTDEV inline void sum_particles(const ParticleSource* p, const std::int32_t* slot, int n,
                                  const WalkParams<float>& w, LaneTarget& tg) {
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
  for (int j = 0; j < n; ++j)
    pair_interaction(w.soft, p[j].x - tg.x, p[j].y - tg.y, p[j].z - tg.z, p[j].m,
                     slot[j] != tg.slot, tg.f.ax, tg.f.ay, tg.f.az, tg.f.pot);
}

// The warp's walk for the targets [k0, k0 + 32) held in tg (lane_target) of the group that
// starts at group_begin, with box b; adds their sums and counts to tg.f. kids: the tree's
// child_table. Returns false, with the sums partial, when the stack would need more than
// stack_capacity (<= kWarpStack) entries. An opened node's children are read twice (counted,
// then pushed after the prefix sum of the counts has placed them; the second read hits the
// cache): cheaper than holding up to 8 indices per lane in registers.
template <class W>
HOSTDEV inline bool walk_group_warp(W& warp, const TreeView& t, const NodeChildren* kids,
                                    const GroupBox& b, Criterion criterion, double alpha_a,
                                    const WalkParams<float>& w, std::uint64_t group_begin,
                                    std::uint64_t k0, WarpScratch& s, int stack_capacity,
                                    typename W::template Var<LaneTarget>& tg) {
  using U32 = std::uint32_t;
  enum : int { kNone, kCell, kLeaf, kOpen };
  const double dmin2 = box_min_cell_d2(b);
  const std::int32_t lane0 = group_slot(k0, group_begin);  // the slot of lane 0's target
  typename W::template Var<U32> node, n_children, n_leaf, is_cell;
  typename W::template Var<int> kind;
  typename W::template Var<std::uint64_t> leaf_begin;
  typename W::template Var<U32> hit;  // this lane's target was seen among the particles (0/1)
  U32 sp = 1, nc = 0, np = 0;         // stack size, cells and particles in the tiles (uniform)
  std::uint64_t n_cells_total = 0, n_parts_total = 0;
  warp.each([&](int l) {
    if (l == 0) s.stack[0] = 0;  // the root, popped by lane 0 itself: no sync needed
    hit[l] = 0;
  });
  const U32 headroom = stack_headroom(t.max_level);
  const U32 limit = U32(stack_capacity) > headroom ? U32(stack_capacity) - headroom : 0;
  while (sp > 0) {
    // Up to 32 nodes, while popping k and pushing at most 8 children each leaves the headroom
    // free (k <= (capacity - headroom - sp) / 7); otherwise one, the top node: from there the
    // walk goes depth first, one level deeper per step and at most 7 entries more, which the
    // headroom holds down to the deepest level.
    const U32 fit = sp < limit ? (limit - sp) / 7 : 0;
    U32 k = sp < U32(kWarpLanes) ? sp : U32(kWarpLanes);
    if (k > fit) k = fit > 0 ? fit : 1;
    warp.each([&](int l) {
      kind[l] = kNone;
      n_children[l] = 0;
      n_leaf[l] = 0;
      node[l] = 0;        // every lane passes these to the shuffles below, read or not:
      leaf_begin[l] = 0;  // defined values (the mirror's fill never showed it: unused)
      if (U32(l) < k) {
        const U32 i = s.stack[sp - 1 - U32(l)];
        node[l] = i;
        const TreeNode& n = t.nodes[i];
        if (box_node_accepted(n, b, dmin2, criterion, alpha_a)) {
          kind[l] = kCell;
        } else if (n.first_child == 0) {
          kind[l] = kLeaf;
          leaf_begin[l] = n.begin;
          n_leaf[l] = static_cast<U32>(n.end - n.begin);
        } else {
          kind[l] = kOpen;
          n_children[l] = child_count(kids[i]);
        }
      }
      is_cell[l] = kind[l] == kCell;
    });
    sp -= k;
    warp.sync();  // the popped entries are read before the children overwrite them

    // Children onto the stack.
    U32 n_push = 0;
    const auto push_at = warp.exclusive_sum(n_children, n_push);
    if (sp + n_push > U32(stack_capacity)) return false;
    warp.each([&](int l) {
      if (kind[l] != kOpen) return;
      const NodeChildren ch = kids[node[l]];
      const U32 pos = sp + push_at[l];
      for (U32 c = 0; c < n_children[l]; ++c) s.stack[pos + c] = ch.c[c];
    });
    sp += n_push;

    // Accepted cells into the cell tile; a tile that fills is summed, then takes the rest.
    U32 n_new = 0;
    const auto cell_at = warp.exclusive_sum(is_cell, n_new);
    warp.each([&](int l) {
      const U32 slot = nc + cell_at[l];
      if (is_cell[l] && slot < U32(kWarpLanes)) s.cells[slot] = cell_source(t.nodes[node[l]], b);
    });
    if (nc + n_new >= U32(kWarpLanes)) {
      warp.sync();
      warp.each([&](int l) { sum_cells(s.cells, kWarpLanes, w, tg[l]); });
      warp.sync();
      warp.each([&](int l) {
        const U32 slot = nc + cell_at[l];
        if (is_cell[l] && slot >= U32(kWarpLanes))
          s.cells[slot - U32(kWarpLanes)] = cell_source(t.nodes[node[l]], b);
      });
      nc = nc + n_new - U32(kWarpLanes);
    } else {
      nc += n_new;
    }
    n_cells_total += n_new;

    // The opened leaves' particles into the particle tile, particle q of the leaves (in lane
    // order) into slot np + q - done, 32 lanes at a time: lane l finds the leaf holding q by a
    // binary search over the prefix sums.
    U32 n_parts = 0;
    const auto part_at = warp.exclusive_sum(n_leaf, n_parts);
    for (U32 done = 0; done < n_parts;) {
      const U32 room = U32(kWarpLanes) - np;
      const U32 take = n_parts - done < room ? n_parts - done : room;
      typename W::template Var<int> src;
      typename W::template Var<U32> q;
      warp.each([&](int l) {
        src[l] = 0;
        q[l] = done + (U32(l) < take ? U32(l) : 0);
      });
      for (int step = kWarpLanes / 2; step > 0; step /= 2) {
        typename W::template Var<int> probe;
        warp.each([&](int l) { probe[l] = src[l] + step; });
        const auto at = warp.gather(part_at, probe);
        warp.each([&](int l) {
          if (at[l] <= q[l]) src[l] = probe[l];
        });
      }
      const auto first = warp.gather(part_at, src);
      const auto begin = warp.gather(leaf_begin, src);
      typename W::template Var<U32> bit;  // the target (lane) this particle is, as a bit
      warp.each([&](int l) {
        bit[l] = 0;
        if (U32(l) >= take) return;
        const std::uint64_t j = begin[l] + (q[l] - first[l]);
        s.parts[np + U32(l)] = particle_source(t, j, b);
        const std::int32_t slot = group_slot(j, group_begin);
        s.part_slot[np + U32(l)] = slot;
        if (slot >= lane0 && slot - lane0 < kWarpLanes) bit[l] = 1u << (slot - lane0);
      });
      const U32 seen = warp.or_all(bit);
      warp.each([&](int l) { hit[l] |= (seen >> l) & 1u; });
      np += take;
      done += take;
      if (np == U32(kWarpLanes)) {
        warp.sync();
        warp.each([&](int l) { sum_particles(s.parts, s.part_slot, kWarpLanes, w, tg[l]); });
        warp.sync();
        np = 0;
      }
    }
    n_parts_total += n_parts;
    warp.sync();  // the children pushed and the tiles' entries are visible to every lane
  }
  warp.each([&](int l) {
    sum_cells(s.cells, static_cast<int>(nc), w, tg[l]);
    sum_particles(s.parts, s.part_slot, static_cast<int>(np), w, tg[l]);
    tg[l].f.pc += n_cells_total;
    tg[l].f.pp += n_parts_total - hit[l];
  });
  warp.sync();  // the scratch is free for the next walk
  return true;
}

// The warp policy of the CPU mirror: the 32 lanes one after the other. A lane that indexes
// another lane's Var inside each() (which the device would not see: there a Var is the lane's
// own register) aborts, so that the CPU tests catch what the device would get wrong. A new Var
// holds the byte pattern 0xA5 in every lane, not zeros: on the device it is an uninitialised
// register, so a value read before it was written (by its lane, or by a collective from a lane
// that never wrote it) must not pass the CPU tests by being 0.
class HostWarp {
 public:
  template <class T>
  class Var {
   public:
    Var() {
      static_assert(std::is_trivially_copyable_v<T>);
      std::memset(static_cast<void*>(v_), 0xA5, sizeof v_);
    }
    T& operator[](int l) { return v_[checked(l)]; }
    const T& operator[](int l) const { return v_[checked(l)]; }

   private:
    friend class HostWarp;
    static int checked(int l) {
      if (l != current_lane()) {
        std::fprintf(stderr, "HostWarp: lane %d read lane %d's value outside a collective\n",
                     current_lane(), l);
        std::abort();
      }
      return l;
    }
    T v_[kWarpLanes];
  };

  template <class F>
  void each(F&& f) {
    for (int l = 0; l < kWarpLanes; ++l) {
      current_lane() = l;
      f(l);
    }
    current_lane() = -1;
  }
  void sync() {}
  // Exclusive prefix sums over the lanes, and their total.
  Var<std::uint32_t> exclusive_sum(const Var<std::uint32_t>& v, std::uint32_t& total) {
    Var<std::uint32_t> r;
    std::uint32_t s = 0;
    for (int l = 0; l < kWarpLanes; ++l) {
      r.v_[l] = s;
      s += v.v_[l];
    }
    total = s;
    return r;
  }
  // r[l] = v[src[l]] (src[l] taken modulo 32, as a shuffle does).
  template <class T>
  Var<T> gather(const Var<T>& v, const Var<int>& src) {
    Var<T> r;
    for (int l = 0; l < kWarpLanes; ++l) r.v_[l] = v.v_[src.v_[l] & (kWarpLanes - 1)];
    return r;
  }
  std::uint32_t or_all(const Var<std::uint32_t>& v) {
    std::uint32_t r = 0;
    for (int l = 0; l < kWarpLanes; ++l) r |= v.v_[l];
    return r;
  }

 private:
  static int& current_lane() {
    thread_local int lane = -1;
    return lane;
  }
};

}  // namespace hoshi
