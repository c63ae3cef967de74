// Octree invariants on random, clustered and degenerate particle sets: exact structural
// checks and moments against brute-force sums over each node's particles.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ic/ic.hpp"
#include "tree/morton.hpp"
#include "tree/octree.hpp"
#include "tree/tree_walk.hpp"

namespace hoshi {
namespace {

ParticleSet uniform_cube(std::size_t n, std::uint64_t seed) {
  ParticleSet p;
  Random rng(seed);
  for (std::size_t i = 0; i < n; ++i)
    p.push_back(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), 0, 0, 0,
                rng.uniform(0.5, 1.5) / n, i);
  return p;
}

ParticleSet all_at_one_point(std::size_t n) {
  ParticleSet p;
  for (std::size_t i = 0; i < n; ++i) p.push_back(0.25, -1.5, 3.0, 0, 0, 0, 1.0 / n, i);
  return p;
}

ParticleSet one_octant(std::size_t n, std::uint64_t seed) {
  // Everything in one octant of a cube that also holds one far particle at the other corner.
  ParticleSet p;
  Random rng(seed);
  for (std::size_t i = 0; i + 1 < n; ++i)
    p.push_back(rng.uniform(0.9, 1.0), rng.uniform(0.9, 1.0), rng.uniform(0.9, 1.0), 0, 0, 0,
                1.0 / n, i);
  p.push_back(0, 0, 0, 0, 0, 0, 1.0 / n, n - 1);
  return p;
}

ParticleSet thin_disk(std::size_t n, std::uint64_t seed) {
  ParticleSet p;
  Random rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = std::sqrt(rng.uniform()), phi = 2 * M_PI * rng.uniform();
    p.push_back(r * std::cos(phi), r * std::sin(phi), 0.0, 0, 0, 0, 1.0 / n, i);
  }
  return p;
}

void check_tree(const ParticleSet& p, int n_leaf, const std::string& what) {
  SCOPED_TRACE(what);
  Octree t;
  PhaseTimes times;
  build_tree(p, {n_leaf, Criterion::bmax, 0.5}, t, times);
  const std::size_t n = p.size();
  const auto& nodes = t.nodes;
  for (const char* phase : {"keys", "sort", "permute", "build", "moments"})
    EXPECT_EQ(times.count(phase), 1u) << phase;
  if (n == 0) {
    EXPECT_TRUE(nodes.empty());
    return;
  }
  ASSERT_FALSE(nodes.empty());
  const std::uint32_t nn = static_cast<std::uint32_t>(nodes.size());

  // The permutation is a permutation, and the sorted copies match it; keys ascend.
  std::vector<int> seen(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    ASSERT_LT(t.index[k], n);
    ++seen[t.index[k]];
    EXPECT_EQ(t.x[k], p.x[t.index[k]]);
    EXPECT_EQ(t.m[k], p.m[t.index[k]]);
    if (k > 0) {
      EXPECT_LE(t.keys[k - 1], t.keys[k]);
    }
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1);

  // Root covers everything. A full walk that opens every node visits each node exactly once,
  // in index order (pre-order), and next of the last subtree is the node count.
  EXPECT_EQ(nodes[0].begin, 0u);
  EXPECT_EQ(nodes[0].end, n);
  EXPECT_EQ(nodes[0].next, nn);
  std::vector<int> visits(nn, 0);
  std::uint32_t expect = 0;
  for (std::uint32_t i = 0; i < nn; i = nodes[i].first_child ? nodes[i].first_child : i + 1) {
    ASSERT_EQ(i, expect);
    ++visits[i];
    ++expect;
  }
  for (int v : visits) ASSERT_EQ(v, 1);
  // A walk that accepts every node at level L (jumps to next) and opens the others visits
  // exactly the nodes of level <= L, each once, and the accepted ranges tile [0, n): this
  // checks `next` of internal nodes.
  for (std::uint32_t cut = 0; cut <= 3; ++cut) {
    std::vector<int> v(nn, 0);
    std::uint64_t covered = 0;
    for (std::uint32_t i = 0; i < nn;) {
      ++v[i];
      if (static_cast<std::uint32_t>(node_level(nodes[i], nodes[0])) == cut ||
          nodes[i].first_child == 0) {
        ASSERT_EQ(nodes[i].begin, covered);
        covered = nodes[i].end;
        i = nodes[i].next;
      } else {
        i = nodes[i].first_child;
      }
    }
    EXPECT_EQ(covered, n);
    for (std::uint32_t i = 0; i < nn; ++i)
      ASSERT_EQ(v[i], static_cast<std::uint32_t>(node_level(nodes[i], nodes[0])) <= cut ? 1 : 0);
  }

  // Every particle is in exactly one leaf; leaves respect n_leaf or sit at the deepest level of
  // their cell: 21 (the keys' finest) for a crowded cell that is not split further, its run's
  // max_level (at most 42) for one that is.
  const auto deepest_at = [&](std::uint64_t b) {
    for (const DeepCells::Run& r : t.deep.runs)
      if (r.begin <= b && b < r.end) return r.max_level;
    return kMortonMaxLevel;
  };
  std::vector<int> in_leaf(n, 0);
  for (std::uint32_t i = 0; i < nn; ++i) {
    const TreeNode& nd = nodes[i];
    ASSERT_LT(nd.begin, nd.end) << "empty node " << i;
    if (nd.first_child == 0) {
      EXPECT_TRUE(nd.end - nd.begin <= static_cast<std::uint64_t>(n_leaf) ||
                  node_level(nd, nodes[0]) == deepest_at(nd.begin))
          << "leaf " << i << " of " << nd.end - nd.begin;
      for (std::uint64_t j = nd.begin; j < nd.end; ++j) ++in_leaf[j];
      EXPECT_EQ(nd.next, i + 1);
    } else {
      // Children partition the range, in order, one level down, and tile the parent's next.
      EXPECT_EQ(nd.first_child, i + 1);
      std::uint64_t cursor = nd.begin;
      std::uint32_t c = nd.first_child;
      for (; c < nd.next; c = nodes[c].next) {
        EXPECT_EQ(nodes[c].begin, cursor);
        EXPECT_EQ(node_level(nodes[c], nodes[0]), node_level(nd, nodes[0]) + 1);
        EXPECT_DOUBLE_EQ(nodes[c].side, 0.5 * nd.side);
        cursor = nodes[c].end;
      }
      EXPECT_EQ(c, nd.next);
      EXPECT_EQ(cursor, nd.end);
    }
    // Every particle of the node lies in the node's cube (the geometry is that of the keys), up
    // to the rounding of a coordinate (2^-52 of it, and of the cube's corner: which of two
    // cells a particle on their face falls in is decided in rounded arithmetic).
    const double h = 0.5 * nd.side * (1 + 1e-12);
    for (std::uint64_t j = nd.begin; j < nd.end; ++j) {
      const double round = 0x1.0p-50 * std::max({std::abs(t.x[j]), std::abs(t.y[j]),
                                                 std::abs(t.z[j]), std::abs(t.cube.lo_x),
                                                 std::abs(t.cube.lo_y), std::abs(t.cube.lo_z)});
      ASSERT_LE(std::abs(t.x[j] - nd.cx), h + round) << "node " << i << " particle " << j;
      ASSERT_LE(std::abs(t.y[j] - nd.cy), h + round) << "node " << i << " particle " << j;
      ASSERT_LE(std::abs(t.z[j] - nd.cz), h + round) << "node " << i << " particle " << j;
    }
  }
  for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(in_leaf[j], 1) << "particle " << j;

  // Moments against brute force over each node's range. Mass and centre of mass are double
  // sums of the same terms in another order: relative difference <= n 2^-52 (bound the
  // centre by the node size). The quadrupole is summed in double and stored in float: its
  // error is 2^-24 relative to each component plus double round-off, bounded by
  // 2^-23 * sum m |y|^2 (the scale of every component). b_max is exact up to one float
  // rounding (2^-24 relative).
  for (std::uint32_t i = 0; i < nn; ++i) {
    const TreeNode& nd = nodes[i];
    double M = 0, cx = 0, cy = 0, cz = 0;
    for (std::uint64_t j = nd.begin; j < nd.end; ++j) {
      M += t.m[j];
      cx += t.m[j] * t.x[j];
      cy += t.m[j] * t.y[j];
      cz += t.m[j] * t.z[j];
    }
    const double cnt = static_cast<double>(nd.end - nd.begin);
    ASSERT_NEAR(nd.m, M, 4 * cnt * 0x1.0p-52 * M);
    cx /= M;
    cy /= M;
    cz /= M;
    const double scale =
        std::max({std::abs(cx), std::abs(cy), std::abs(cz), nd.side}) * 8 * cnt * 0x1.0p-52;
    ASSERT_NEAR(nd.com_x, cx, scale);
    ASSERT_NEAR(nd.com_y, cy, scale);
    ASSERT_NEAR(nd.com_z, cz, scale);
    double q[6] = {0, 0, 0, 0, 0, 0}, s2 = 0, b2 = 0;
    for (std::uint64_t j = nd.begin; j < nd.end; ++j) {
      const double dx = t.x[j] - nd.com_x, dy = t.y[j] - nd.com_y, dz = t.z[j] - nd.com_z;
      const double r2 = dx * dx + dy * dy + dz * dz;
      q[0] += t.m[j] * (3 * dx * dx - r2);
      q[1] += t.m[j] * 3 * dx * dy;
      q[2] += t.m[j] * 3 * dx * dz;
      q[3] += t.m[j] * (3 * dy * dy - r2);
      q[4] += t.m[j] * 3 * dy * dz;
      q[5] += t.m[j] * (3 * dz * dz - r2);
      s2 += t.m[j] * r2;
      b2 = std::max(b2, r2);
    }
    // Components below FLT_MIN are stored as 0 (octree.cpp: no float denormals).
    const double qtol = 0x1.0p-23 * 3 * s2 + std::numeric_limits<float>::min();
    const float got[6] = {nd.qxx, nd.qxy, nd.qxz, nd.qyy, nd.qyz, nd.qzz};
    for (int k = 0; k < 6; ++k) ASSERT_NEAR(got[k], q[k], qtol) << "node " << i << " q" << k;
    ASSERT_NEAR(nd.mr2, s2, qtol) << "node " << i << " mr2";
    ASSERT_NEAR(nd.b_max, std::sqrt(b2), 0x1.0p-23 * std::sqrt(b2) + 1e-300);
    // rcrit2 is the bmax criterion's (b_max / theta)^2 here.
    ASSERT_NEAR(nd.rcrit2, (nd.b_max / 0.5) * (nd.b_max / 0.5), 1e-12 * nd.rcrit2 + 1e-300);
  }

  // Groups cover every particle exactly once, within n_group, in particle order (the CUDA
  // group mode's warps take them in this order).
  for (int n_group : {1, 16, 32, 64}) {
    std::vector<int> in_group(n, 0);
    std::uint64_t next = 0;
    for (const Group& g : make_groups(t.nodes, n_group)) {
      EXPECT_LE(g.end - g.begin, static_cast<std::uint64_t>(n_group));
      EXPECT_EQ(g.begin, next);
      next = g.end;
      for (std::uint64_t j = g.begin; j < g.end; ++j) ++in_group[j];
    }
    EXPECT_EQ(next, n);
    for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(in_group[j], 1);
  }
}

TEST(Octree, InvariantsUniformCube) {
  check_tree(uniform_cube(20000, 1), 16, "uniform n_leaf 16");
  check_tree(uniform_cube(3000, 2), 1, "uniform n_leaf 1");
}

TEST(Octree, InvariantsPlummer) {
  check_tree(make_plummer(20000, 3), 8, "plummer n_leaf 8");
  check_tree(make_plummer(20000, 3), 64, "plummer n_leaf 64");
}

TEST(Octree, InvariantsDegenerate) {
  check_tree(ParticleSet{}, 16, "N = 0");
  check_tree(uniform_cube(1, 4), 16, "N = 1");
  check_tree(uniform_cube(2, 4), 1, "N = 2");
  check_tree(uniform_cube(3, 4), 1, "N = 3");
  check_tree(one_octant(5000, 5), 4, "one octant");
  check_tree(thin_disk(5000, 6), 16, "thin disk");
  ParticleSet dup = uniform_cube(500, 7);
  dup.append(all_at_one_point(300));  // 300 coincident particles among others
  check_tree(dup, 8, "coincident among others");
}

TEST(Octree, CoincidentParticlesEndInOneDeepestLeaf) {
  // 100000 particles at one point: without the level-42 stop this would recurse forever.
  const ParticleSet p = all_at_one_point(100000);
  check_tree(all_at_one_point(2000), 16, "all at one point");
  Octree t;
  PhaseTimes times;
  build_tree(p, {16, Criterion::barnes94, 0.5}, t, times);
  // A chain of single-child nodes from the root (level 0) to one leaf: 21 levels of the keys,
  // then those of the keys inside the crowded finest cell down to level 39, where the side
  // (2^-39: the cube of coincident points has side 1) is 4096 ulps of the coordinates (in
  // [2, 4): ulp 2^-51), the deepest that deep_level_cap allows.
  const int deepest = 39;
  ASSERT_EQ(t.nodes.size(), static_cast<std::size_t>(deepest + 1));
  EXPECT_EQ(t.max_level, deepest);
  EXPECT_EQ(t.view().max_level, static_cast<std::uint32_t>(deepest));
  const TreeNode& leaf = t.nodes.back();
  EXPECT_EQ(leaf.first_child, 0u);
  EXPECT_EQ(node_level(leaf, t.nodes[0]), deepest);
  EXPECT_EQ(leaf.end - leaf.begin, p.size());
  EXPECT_NEAR(leaf.m, 1.0, 1e-9);
  EXPECT_EQ(leaf.b_max, 0.0f);
}

// A clump 1e-8 across in a box of side ~2 (a finest cell is 2 / 2^21 ~ 1e-6): its particles
// share one or a few keys. They used to end in leaves of ~3000 particles; now such cells are
// split by the particles' keys inside them, to leaves of n_leaf, except 50 coincident ones.
ParticleSet field_with_clump(std::uint64_t seed, std::size_t n_clump = 3000) {
  ParticleSet p = uniform_cube(2000, seed);
  Random rng(seed + 1);
  for (std::size_t i = 0; i < n_clump; ++i)
    p.push_back(0.3 + 1e-8 * rng.uniform(-1, 1), -0.2 + 1e-8 * rng.uniform(-1, 1),
                0.1 + 1e-8 * rng.uniform(-1, 1), 0, 0, 0, 1e-4, p.size());
  for (std::size_t i = 0; i < 50; ++i) p.push_back(0.3, -0.2, 0.1, 0, 0, 0, 1e-4, p.size());
  return p;
}

TEST(Octree, CrowdedFinestCellsAreSplitBelowTheKeys) {
  // 3000: runs keyed and sorted by one thread each; 70000 (above 2^16): by all threads each.
  for (const auto& [n_clump, n_leaf] :
       {std::pair{3000, 1}, std::pair{3000, 16}, std::pair{70000, 16}}) {
    const ParticleSet p = field_with_clump(12, n_clump);
    check_tree(p, n_leaf,
               "clump of " + std::to_string(n_clump) + ", n_leaf " + std::to_string(n_leaf));
    Octree t;
    PhaseTimes times;
    build_tree(p, {n_leaf, Criterion::barnes94, 0.5}, t, times);
    ASSERT_FALSE(t.deep.empty());
    std::uint64_t longest = 0;
    for (const DeepCells::Run& run : t.deep.runs) longest = std::max(longest, run.end - run.begin);
    EXPECT_EQ(longest > 65536, n_clump > 65536);  // which of the two paths
    EXPECT_GT(t.max_level, kMortonMaxLevel);
    EXPECT_LE(t.max_level, kTreeMaxLevel);
    // Each run is a whole crowded cell: one key, more than n_leaf particles, different keys on
    // either side; the keys inside it ascend.
    for (std::size_t r = 0; r < t.deep.runs.size(); ++r) {
      const std::uint64_t b = t.deep.runs[r].begin, e = t.deep.runs[r].end;
      EXPECT_GT(e - b, static_cast<std::uint64_t>(n_leaf));
      if (b > 0) {
        EXPECT_NE(t.keys[b - 1], t.keys[b]);
      }
      if (e < p.size()) {
        EXPECT_NE(t.keys[e], t.keys[b]);
      }
      for (std::uint64_t k = b; k < e; ++k) {
        ASSERT_EQ(t.keys[k], t.keys[b]);
        if (k > b) {
          ASSERT_LE(t.deep.keys[t.deep.start[r] + k - b - 1], t.deep.keys[t.deep.start[r] + k - b]);
        }
      }
    }
    // Only the coincident particles share a leaf beyond n_leaf, at level 42 (the cell's
    // coordinates are ~0.3, whose ulp 2^-54 is 4096 times below the side 2^-41 there).
    std::size_t crowded = 0;
    for (const DeepCells::Run& run : t.deep.runs) EXPECT_EQ(run.max_level, kTreeMaxLevel);
    for (const TreeNode& nd : t.nodes)
      if (nd.first_child == 0 && nd.end - nd.begin > static_cast<std::uint64_t>(n_leaf)) {
        ++crowded;
        EXPECT_EQ(node_level(nd, t.nodes[0]), kTreeMaxLevel);
        EXPECT_EQ(nd.b_max, 0.0f);
        EXPECT_GE(nd.end - nd.begin, 50u);
      }
    EXPECT_EQ(crowded, 1u);
  }
}

// A crowded cell is split only while its nodes stay well above the coordinates' rounding and
// their float moments (m side^2 of the lightest particle) in range (deep_level_cap): the clump
// far from the origin (4e6: an ulp is 2^-31, 4096 of them 1.9e-6, above the finest key cell,
// 2 / 2^21 ~ 9.5e-7) or of particles of mass 1e-20 (m side^2 < 2^-100 already at side 1e-5)
// stays a leaf of level 21, as every crowded cell was before. One such light particle among
// the clump's normal ones does not keep it whole (the heaviest particle sets the bound).
TEST(Octree, CrowdedCellsStayLeavesWhereSplittingWouldLoseAccuracy) {
  for (const char* what : {"far from the origin", "light particles"}) {
    SCOPED_TRACE(what);
    ParticleSet p = field_with_clump(13);
    if (what[0] == 'f')
      for (std::size_t i = 0; i < p.size(); ++i) {
        p.x[i] += 4e6;
        p.y[i] += 4e6;
        p.z[i] += 4e6;
      }
    else
      for (std::size_t i = 2000; i < p.size(); ++i) p.m[i] = 1e-20;
    check_tree(p, 16, what);
    Octree t;
    PhaseTimes times;
    build_tree(p, {16, Criterion::barnes94, 0.5}, t, times);
    ASSERT_FALSE(t.deep.empty());  // ordered (below), not split
    for (const DeepCells::Run& run : t.deep.runs) EXPECT_EQ(run.max_level, kMortonMaxLevel);
    EXPECT_EQ(t.max_level, kMortonMaxLevel);
  }
  ParticleSet p = field_with_clump(13);
  p.m[2100] = 1e-30;
  Octree t;
  PhaseTimes times;
  build_tree(p, {16, Criterion::barnes94, 0.5}, t, times);
  ASSERT_FALSE(t.deep.empty());
  EXPECT_EQ(t.deep.runs[0].max_level, kTreeMaxLevel);
}

// A leaf of more than n_leaf particles (a crowded cell at the deepest level, or one that cannot
// be split) holds them in an order of their own, not the input's: the group walks cut such
// leaves into groups in order, and a cluster beside an escaper 1e12 away (in leaves of
// thousands) got forces up to 1.7e-3 apart for two orders of one set.
TEST(Octree, CrowdedLeavesDoNotKeepTheInputOrder) {
  const auto leaves = [](const ParticleSet& p) {
    Octree t;
    PhaseTimes times;
    build_tree(p, {16, Criterion::barnes94, 0.5}, t, times);
    std::vector<std::vector<std::array<double, 4>>> out;  // each crowded leaf's particles
    for (const TreeNode& nd : t.nodes)
      if (nd.first_child == 0 && nd.end - nd.begin > 16) {
        out.emplace_back();
        for (std::uint64_t k = nd.begin; k < nd.end; ++k)
          out.back().push_back({t.x[k], t.y[k], t.z[k], t.m[k]});
      }
    return out;
  };
  // A clump split to level 42 with 50 coincident particles of two masses; the same clump far
  // from the origin (not split: one leaf of 3050); a Plummer sphere beside an escaper at 1e12.
  ParticleSet clump = field_with_clump(14);
  for (std::size_t i = clump.size() - 25; i < clump.size(); ++i) clump.m[i] = 2e-4;
  ParticleSet far = field_with_clump(15);
  for (std::size_t i = 0; i < far.size(); ++i) far.x[i] += 4e6, far.y[i] += 4e6, far.z[i] += 4e6;
  ParticleSet escaper = make_plummer(3000, 16);
  escaper.push_back(1e12, 0, 0, 0, 0, 0, escaper.m[0], escaper.size());
  for (const auto& [what, p] : {std::pair<const char*, const ParticleSet*>{"clump", &clump},
                                {"far clump", &far},
                                {"escaper", &escaper}}) {
    SCOPED_TRACE(what);
    const auto a = leaves(*p);
    ASSERT_FALSE(a.empty());
    for (std::uint64_t seed : {1, 2}) {  // two shuffles of the input rows
      ParticleSet q;
      std::vector<std::size_t> order(p->size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::mt19937_64 rng(seed);
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i : order)
        q.push_back(p->x[i], p->y[i], p->z[i], 0, 0, 0, p->m[i], p->id[i]);
      EXPECT_EQ(leaves(q), a) << "shuffle " << seed;
    }
  }
}

// Groups do not depend on where the system sits: the first child of a node starting at
// particle 0 joined an empty run whose box was the point (0, 0, 0), so near the origin the
// leftmost groups were cut where the same system elsewhere kept them whole (2026-12-01 review:
// [0,16) [16,20) [20,40) at x = 500, [0,20) [20,40) at x = -1e6).
TEST(Octree, GroupsDoNotDependOnWhereTheSystemSits) {
  const auto leaf = [](double x, float b_max, std::uint64_t begin, std::uint64_t end,
                       std::uint32_t next) {
    TreeNode n{};
    n.com_x = x;
    n.m = 1;
    n.b_max = b_max;
    n.begin = begin;
    n.end = end;
    n.next = next;
    n.side = 4;
    return n;
  };
  for (const double x0 : {500.0, -1e6, 0.0}) {
    // Four sibling leaves: two of 8 particles 3 apart (spacing 1), one of 4 at 530, one of 20 at
    // 3000 (beyond 1024 spacings of the first: a group of its own).
    std::vector<TreeNode> nodes = {leaf(x0, 1000, 0, 40, 5), leaf(x0, 1, 0, 8, 2),
                                   leaf(x0 + 3, 1, 8, 16, 3), leaf(x0 + 530, 1, 16, 20, 4),
                                   leaf(x0 + 3000, 1, 20, 40, 5)};
    nodes[0].first_child = 1;
    nodes[0].side = 4096;
    const std::vector<Group> g = make_groups(nodes, 32);
    ASSERT_EQ(g.size(), 2u) << "system at " << x0;
    EXPECT_EQ(g[0].begin, 0u);
    EXPECT_EQ(g[0].end, 20u) << "system at " << x0;
    EXPECT_EQ(g[1].end, 40u);
  }
}

TEST(Octree, RejectsBadLeafSize) {
  const ParticleSet p = uniform_cube(10, 1);
  Octree t;
  PhaseTimes times;
  EXPECT_THROW(build_tree(p, {0, Criterion::barnes94, 0.5}, t, times), std::invalid_argument);
}

}  // namespace
}  // namespace hoshi
