// The warp-cooperative group walk (tree/walk_warp.hpp: the CUDA group mode's lists kernel) on
// the CPU, through its mirror walk_tree_warps, which runs the same HOSTDEV function with the
// 32 lanes one after the other (HostWarp). Against walk_tree_boxes (the box walk per target:
// the same box test, so the same interaction sets) and the double reference:
//  * the p-p and p-c counts equal the box walk's exactly (same sets), for every criterion,
//    both orders and both softening kernels, for groups larger than a warp (taken 32 targets
//    at a time) and leaves larger than a tile (filled over several passes);
//  * the forces differ from the box walk's by float rounding only. Bound per target i: each
//    term's separation d is formed as (s - c) - (x_i - c) in float from box-relative positions,
//    an error of at most ~2u (h + |d|) with h the box's half-diagonal (u = 2^-24), which moves
//    a term m/d^2 by ~6u (1 + h/d) of itself; summed over all sources (cells stand for their
//    particles) plus the summation's round-off: 8u sum_j (1 + h/r_ij) m_j / r_ij^2 +
//    8 sqrt(N) u S1_i, S1_i = sum_j m_j / r_ij^2;
//  * the stack bound of the depth-first mode, and the fallback to the box walk for a walk that
//    runs out of stack (bit for bit);
//  * a lane reading another lane's value outside a collective aborts (what the device would
//    silently get wrong: there a lane sees only its own registers);
//  * with the device's memory model for the scratch (WeakWarp: a lane sees another lane's
//    writes only after a sync(), not after a shuffle), the walk gives bit for bit the results
//    of the lanes run one after the other (HostWarp), and no two lanes write one byte between
//    two syncs: a sync() missing between a write and another lane's read of it shows up here,
//    not only on a device (removing any of the three that order tile and stack writes before
//    their reads fails this test). The syncs that order reads before later overwrites (the
//    popped stack entries, a summed tile, the scratch at the end of a walk) are not covered:
//    in this model a lane's read happens when its part of an each() runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "direct/direct.hpp"
#include "ic/ic.hpp"
#include "solver/solver.hpp"
#include "tree/octree.hpp"
#include "tree/tree_walk.hpp"
#include "tree/walk_warp.hpp"

namespace hoshi {
namespace {

struct Forces {
  std::vector<double> ax, ay, az, pot;
  explicit Forces(std::size_t n) : ax(n), ay(n), az(n), pot(n) {}
};

struct Case {
  Criterion criterion;
  int order;
  Softening softening;
  double eps;
  int n_leaf;
  int n_group;
};

std::string name(const Case& c) {
  return to_string(c.criterion) + " order " + std::to_string(c.order) + " " +
         to_string(c.softening) + " eps " + std::to_string(c.eps) + " n_leaf " +
         std::to_string(c.n_leaf) + " n_group " + std::to_string(c.n_group);
}

// The tree, alpha |a_ref| per sorted particle (relative criterion), and the walk config.
struct WalkSetup {
  Octree tree;
  std::vector<float> alpha_a;
  TreeWalkConfig cfg;
};

WalkSetup make_setup(const ParticleSet& p, const ParticleSet& ref, const Case& c) {
  WalkSetup s;
  PhaseTimes times;
  build_tree(p, {c.n_leaf, c.criterion, c.criterion == Criterion::relative ? 1.0 : 0.6}, s.tree,
             times);
  if (c.criterion == Criterion::relative) {
    // The per-particle walks' alpha, stricter than the CUDA group default (0.004): deeper
    // walks, fuller stacks and tiles.
    const double alpha = 0.0015;
    for (std::uint64_t k = 0; k < s.tree.index.size(); ++k) {
      const std::size_t i = s.tree.index[k];
      s.alpha_a.push_back(
          static_cast<float>(alpha * std::sqrt(ref.ax[i] * ref.ax[i] + ref.ay[i] * ref.ay[i] +
                                               ref.az[i] * ref.az[i])));
    }
  }
  s.cfg.criterion = c.criterion;
  s.cfg.order = c.order;
  s.cfg.softening = c.softening;
  s.cfg.eps = c.eps;
  s.cfg.n_group = c.n_group;
  return s;
}

// The rounding bound of the header, per target (in the caller's order).
std::vector<double> rounding_bound(const ParticleSet& p, const WalkSetup& s) {
  const std::size_t n = p.size();
  const TreeView v = s.tree.view();
  std::vector<double> h(n);  // half-diagonal of each target's group box
  for (const Group& g : make_groups(s.tree.nodes, s.cfg.n_group)) {
    const GroupBox b = group_box(v, g);
    for (std::uint64_t k = g.begin; k < g.end; ++k)
      h[s.tree.index[k]] = std::sqrt(b.hx * b.hx + b.hy * b.hy + b.hz * b.hz);
  }
  const double u = std::ldexp(1.0, -24);
  std::vector<double> bound(n);
  for (std::size_t i = 0; i < n; ++i) {
    double s1 = 0, sh = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double dx = p.x[j] - p.x[i], dy = p.y[j] - p.y[i], dz = p.z[j] - p.z[i];
      const double r2 = dx * dx + dy * dy + dz * dz;
      s1 += p.m[j] / r2;
      sh += p.m[j] / r2 * (1 + h[i] / std::sqrt(r2));
    }
    bound[i] = 8 * u * sh + 8 * std::sqrt(double(n)) * u * s1;
  }
  return bound;
}

// With `capacity` stack entries (kWarpStack: the CUDA kernel's) no walk may fall back.
void check_case(const ParticleSet& p, const ParticleSet& ref, const Case& c,
                int capacity = kWarpStack) {
  SCOPED_TRACE(name(c) + " stack capacity " + std::to_string(capacity));
  const std::size_t n = p.size();
  const WalkSetup s = make_setup(p, ref, c);
  const float* aa = s.alpha_a.empty() ? nullptr : s.alpha_a.data();
  Forces box(n), warp(n);
  const WalkCounts cb = walk_tree_boxes(s.tree, s.cfg, aa, box.ax.data(), box.ay.data(),
                                        box.az.data(), box.pot.data());
  std::uint64_t fallbacks = 99;
  const WalkCounts cw = walk_tree_warps(s.tree, s.cfg, aa, warp.ax.data(), warp.ay.data(),
                                        warp.az.data(), warp.pot.data(), capacity, &fallbacks);
  EXPECT_EQ(fallbacks, 0u);
  EXPECT_EQ(cw.pp, cb.pp);
  EXPECT_EQ(cw.pc, cb.pc);
  EXPECT_GT(cw.pc, 0u);
  const std::vector<double> bound = rounding_bound(p, s);
  std::size_t over = 0;
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::max({std::abs(warp.ax[i] - box.ax[i]), std::abs(warp.ay[i] - box.ay[i]),
                               std::abs(warp.az[i] - box.az[i])});
    over += d > bound[i];
    worst = std::max(worst, d / bound[i]);
    // The potential: the same terms' magnitudes bound it (m/r instead of m/r^2, r <= ~30).
    ASSERT_TRUE(std::isfinite(warp.pot[i]));
    ASSERT_LT(warp.pot[i], 0.0);
  }
  EXPECT_EQ(over, 0u) << "worst difference / bound " << worst;
  // And both sit at the tree's error against the double reference (median within 10%).
  std::vector<double> eb, ew;
  for (std::size_t i = 0; i < n; ++i) {
    const double a =
        std::sqrt(ref.ax[i] * ref.ax[i] + ref.ay[i] * ref.ay[i] + ref.az[i] * ref.az[i]);
    auto err = [&](const Forces& f) {
      return std::sqrt(std::pow(f.ax[i] - ref.ax[i], 2) + std::pow(f.ay[i] - ref.ay[i], 2) +
                       std::pow(f.az[i] - ref.az[i], 2)) /
             a;
    };
    eb.push_back(err(box));
    ew.push_back(err(warp));
  }
  std::nth_element(eb.begin(), eb.begin() + n / 2, eb.end());
  std::nth_element(ew.begin(), ew.begin() + n / 2, ew.end());
  EXPECT_LE(ew[n / 2], 1.1 * eb[n / 2] + std::ldexp(1.0, -18));
}

class WalkWarp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    p_ = new ParticleSet(make_plummer(3000, 17));
    ref_ = new ParticleSet(*p_);
  }
  static void TearDownTestSuite() {
    delete p_;
    delete ref_;
  }
  // The reference for a softening (double direct summation).
  static const ParticleSet& reference(Softening k, double eps) {
    *ref_ = *p_;
    direct_reference(*ref_, 1.0, k, eps);
    return *ref_;
  }
  static ParticleSet* p_;
  static ParticleSet* ref_;
};
ParticleSet* WalkWarp::p_ = nullptr;
ParticleSet* WalkWarp::ref_ = nullptr;

TEST_F(WalkWarp, SameInteractionsAsTheBoxWalkToFloatRounding) {
  const ParticleSet& ref = reference(Softening::plummer, 0.01);
  for (Criterion crit : {Criterion::bh, Criterion::barnes94, Criterion::bmax, Criterion::relative})
    for (int order : {1, 2}) check_case(*p_, ref, {crit, order, Softening::plummer, 0.01, 16, 32});
}

TEST_F(WalkWarp, SplineAndUnsoftened) {
  check_case(*p_, reference(Softening::spline, 0.02),
             {Criterion::barnes94, 2, Softening::spline, 0.02, 16, 32});
  check_case(*p_, reference(Softening::plummer, 0.0),
             {Criterion::relative, 2, Softening::plummer, 0.0, 16, 32});
}

// Leaves of up to 64 particles (more than a tile: filled over several passes) and groups of up
// to 64 (two warps' worth of targets, walked 32 at a time); one-particle leaves and groups.
TEST_F(WalkWarp, LeavesAndGroupsLargerThanAWarp) {
  const ParticleSet& ref = reference(Softening::plummer, 0.01);
  check_case(*p_, ref, {Criterion::barnes94, 2, Softening::plummer, 0.01, 64, 64});
  check_case(*p_, ref, {Criterion::relative, 2, Softening::plummer, 0.01, 64, 32});
  check_case(*p_, ref, {Criterion::barnes94, 2, Softening::plummer, 0.01, 1, 1});
}

// The stack: with room for one entry every walk falls back to the box walk (bit for bit the
// box walk's forces); below the headroom the walk goes depth first, one node at a time, and
// needs at most 8 + 7 (L - 1) entries for a tree whose deepest level is L (the bound behind
// kStackHeadroom): with exactly that many no walk falls back, with half of it some do, and
// the others still match.
TEST_F(WalkWarp, StackBoundAndFallbackToTheBoxWalk) {
  const ParticleSet& ref = reference(Softening::plummer, 0.01);
  const Case c{Criterion::barnes94, 2, Softening::plummer, 0.01, 16, 32};
  const WalkSetup s = make_setup(*p_, ref, c);
  const std::size_t n = p_->size();
  Forces box(n), warp(n);
  const WalkCounts cb = walk_tree_boxes(s.tree, s.cfg, nullptr, box.ax.data(), box.ay.data(),
                                        box.az.data(), box.pot.data());
  std::uint64_t chunks = 0;
  for (const Group& g : make_groups(s.tree.nodes, c.n_group))
    chunks += (g.end - g.begin + kWarpLanes - 1) / kWarpLanes;
  std::uint32_t deepest = 0;
  for (const TreeNode& node : s.tree.nodes)
    deepest = std::max(deepest, static_cast<std::uint32_t>(node_level(node, s.tree.nodes[0])));
  ASSERT_GE(deepest, 4u);
  const int bound = static_cast<int>(8 + 7 * (deepest - 1));
  ASSERT_LE(bound, static_cast<int>(kStackHeadroom));
  const std::vector<double> tol = rounding_bound(*p_, s);
  for (int capacity : {1, bound / 2, bound}) {
    SCOPED_TRACE("stack capacity " + std::to_string(capacity));
    std::uint64_t fallbacks = 0;
    const WalkCounts cw = walk_tree_warps(s.tree, s.cfg, nullptr, warp.ax.data(), warp.ay.data(),
                                          warp.az.data(), warp.pot.data(), capacity, &fallbacks);
    EXPECT_EQ(cw.pp, cb.pp);
    EXPECT_EQ(cw.pc, cb.pc);
    if (capacity == 1) {
      EXPECT_EQ(fallbacks, chunks);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(warp.ax[i], box.ax[i]) << i;
        ASSERT_EQ(warp.pot[i], box.pot[i]) << i;
      }
    } else if (capacity == bound) {
      EXPECT_EQ(fallbacks, 0u);
    } else {
      EXPECT_GT(fallbacks, 0u);
      EXPECT_LT(fallbacks, chunks);
    }
    for (std::size_t i = 0; i < n; ++i) ASSERT_LE(std::abs(warp.ax[i] - box.ax[i]), tol[i]) << i;
  }
}

// A cluster of size ~1e-9 in a Plummer sphere: its key cell is split below the keys'
// resolution (octree.hpp, DeepCells), so the tree is deeper than 21 levels (37), and the
// headroom follows its depth (stack_headroom): with kWarpStack no walk falls back, the
// interactions are the box walk's, and with exactly the depth-first bound's capacity none
// falls back either. (The bound is a worst case that neither this set nor a fractal corner
// of 7 particles per level over 42 levels comes near: without fallback from capacities of 60
// and 100 on, with the old headroom of 21 levels as with the new.)
TEST_F(WalkWarp, TreeDeeperThanTheKeys) {
  ParticleSet p = make_plummer(2000, 31);
  const ParticleSet cluster = make_plummer(1500, 32);
  for (std::size_t i = 0; i < cluster.size(); ++i)
    p.push_back(0.05 + 1e-9 * cluster.x[i], 0.02 + 1e-9 * cluster.y[i], -0.03 + 1e-9 * cluster.z[i],
                0, 0, 0, 1e-3 * cluster.m[i], 2000 + i);
  ParticleSet ref = p;
  direct_reference(ref, 1.0, Softening::plummer, 0.0);
  const Case c{Criterion::barnes94, 2, Softening::plummer, 0.0, 16, 32};
  const int max_level = make_setup(p, ref, c).tree.max_level;
  ASSERT_GT(max_level, kMortonMaxLevel + 8);
  check_case(p, ref, c);
  check_case(p, ref, c, 8 + 7 * (max_level - 1));
}

// The child table the walk reads instead of the `next` chains: node i's children in pre-order,
// zeros after them, none for a leaf, and every node but the root the child of exactly one.
TEST_F(WalkWarp, ChildTableListsEveryNodesChildrenInOrder) {
  const ParticleSet& ref = reference(Softening::plummer, 0.01);
  for (int n_leaf : {1, 16}) {
    SCOPED_TRACE("n_leaf " + std::to_string(n_leaf));
    const WalkSetup s =
        make_setup(*p_, ref, {Criterion::barnes94, 2, Softening::plummer, 0.01, n_leaf, 32});
    const TreeView t = s.tree.view();
    const std::vector<NodeChildren> kids = child_table(t);
    ASSERT_EQ(kids.size(), t.n_nodes);
    std::vector<int> parents(t.n_nodes, 0);
    std::uint32_t most = 0;
    for (std::uint32_t i = 0; i < t.n_nodes; ++i) {
      std::vector<std::uint32_t> chain;
      if (t.nodes[i].first_child != 0)
        for (std::uint32_t c = i + 1; c < t.nodes[i].next; c = t.nodes[c].next) chain.push_back(c);
      ASSERT_LE(chain.size(), 8u) << "node " << i;
      ASSERT_EQ(child_count(kids[i]), chain.size()) << "node " << i;
      for (std::size_t k = 0; k < 8; ++k)
        ASSERT_EQ(kids[i].c[k], k < chain.size() ? chain[k] : 0u) << "node " << i << " slot " << k;
      for (std::uint32_t c : chain) ++parents[c];
      most = std::max<std::uint32_t>(most, static_cast<std::uint32_t>(chain.size()));
    }
    EXPECT_EQ(parents[0], 0);
    for (std::uint32_t i = 1; i < t.n_nodes; ++i) ASSERT_EQ(parents[i], 1) << "node " << i;
    EXPECT_EQ(most, 8u);  // full nodes occur, so the table's width is exercised
  }
}

// One particle and two particles: the root is a leaf, the self pair masked.
TEST_F(WalkWarp, TinyTrees) {
  for (std::size_t n : {1u, 2u, 33u}) {
    ParticleSet p = make_plummer(n, 5);
    ParticleSet ref = p;
    direct_reference(ref, 1.0, Softening::plummer, 0.01);
    const WalkSetup s =
        make_setup(p, ref, {Criterion::barnes94, 2, Softening::plummer, 0.01, 16, 32});
    Forces warp(n);
    const WalkCounts cw = walk_tree_warps(s.tree, s.cfg, nullptr, warp.ax.data(), warp.ay.data(),
                                          warp.az.data(), warp.pot.data());
    EXPECT_EQ(cw.pp + cw.pc > 0, n > 1);
    for (std::size_t i = 0; i < n; ++i) {
      const double scale = std::abs(ref.pot[i]) + 1e-30;
      EXPECT_NEAR(warp.pot[i], ref.pot[i], 1e-3 * scale) << "n " << n << " target " << i;
    }
  }
}

// The device's memory model for the warp's scratch, on the CPU: a lane sees its own writes at
// once and the other lanes' only after a sync() (__syncwarp orders shared memory; the shuffles
// of the collectives do not). Each lane runs on its own view of the scratch; after its part of
// an each(), the bytes it changed are its writes, applied to every view at the next sync(). A
// lane that reads another lane's write before the sync() that orders it reads the old value
// here, and the walk's result changes; two lanes writing one byte between syncs is reported.
class WeakWarp {
 public:
  template <class T>
  using Var = HostWarp::Var<T>;

  explicit WeakWarp(WarpScratch* scratch)
      : s_(reinterpret_cast<unsigned char*>(scratch)), writer_(kBytes, -1), value_(kBytes) {
    for (auto& v : view_) v.assign(s_, s_ + kBytes);
  }
  template <class F>
  void each(F&& f) {
    host_.each([&](int l) {
      std::vector<unsigned char>& mine = view_[l];
      std::memcpy(s_, mine.data(), kBytes);  // what lane l sees
      f(l);
      for (std::size_t b = 0; b < kBytes; ++b) {
        if (s_[b] == mine[b]) continue;
        if (writer_[b] != -1 && writer_[b] != l) ++conflicts;
        writer_[b] = l;
        value_[b] = s_[b];
        mine[b] = s_[b];
      }
    });
  }
  void sync() {
    for (std::size_t b = 0; b < kBytes; ++b) {
      if (writer_[b] < 0) continue;
      for (auto& v : view_) v[b] = value_[b];
      writer_[b] = -1;
    }
  }
  Var<std::uint32_t> exclusive_sum(const Var<std::uint32_t>& v, std::uint32_t& total) {
    return host_.exclusive_sum(v, total);
  }
  template <class T>
  Var<T> gather(const Var<T>& v, const Var<int>& src) {
    return host_.gather(v, src);
  }
  std::uint32_t or_all(const Var<std::uint32_t>& v) { return host_.or_all(v); }

  std::size_t conflicts = 0;  // bytes written by two lanes between two syncs

 private:
  static constexpr std::size_t kBytes = sizeof(WarpScratch);
  HostWarp host_;
  unsigned char* s_;
  std::vector<unsigned char> view_[kWarpLanes];
  std::vector<int> writer_;
  std::vector<unsigned char> value_;
};

TEST_F(WalkWarp, OnlySyncOrdersTheScratchAsOnTheDevice) {
  const ParticleSet& ref = reference(Softening::plummer, 0.01);
  for (const Case& c : {Case{Criterion::relative, 2, Softening::plummer, 0.01, 16, 32},
                        Case{Criterion::barnes94, 1, Softening::plummer, 0.01, 64, 64}}) {
    SCOPED_TRACE(name(c));
    const WalkSetup s = make_setup(*p_, ref, c);
    const TreeView t = s.tree.view();
    const WalkParams<float> w = make_walk_params<float>(c.criterion, c.order, c.softening, c.eps);
    const std::vector<Group> groups = make_groups(s.tree.nodes, c.n_group);
    const std::vector<NodeChildren> kids = child_table(t);
    std::size_t walks = 0;
    for (std::size_t gi = 0; gi < groups.size(); gi += 11) {  // every eleventh group
      const Group& g = groups[gi];
      const GroupBox box = group_box(t, g);
      float aa = s.alpha_a.empty() ? 0.0f : s.alpha_a[g.begin];
      for (std::uint64_t k = g.begin; !s.alpha_a.empty() && k < g.end; ++k)
        aa = std::min(aa, s.alpha_a[k]);
      for (std::uint64_t k0 = g.begin; k0 < g.end; k0 += kWarpLanes, ++walks) {
        HostWarp host;
        HostWarp::Var<LaneTarget> seq, weak;
        host.each([&](int l) { seq[l] = weak[l] = lane_target(t, box, g.begin, k0, g.end, l); });
        auto scratch = std::make_unique<WarpScratch>();
        ASSERT_TRUE(walk_group_warp(host, t, kids.data(), box, c.criterion, aa, w, g.begin, k0,
                                    *scratch, kWarpStack, seq));
        auto scratch2 = std::make_unique<WarpScratch>();
        WeakWarp warp(scratch2.get());
        ASSERT_TRUE(walk_group_warp(warp, t, kids.data(), box, c.criterion, aa, w, g.begin, k0,
                                    *scratch2, kWarpStack, weak));
        EXPECT_EQ(warp.conflicts, 0u) << "group " << gi;
        host.each([&](int l) {
          EXPECT_EQ(weak[l].f.ax, seq[l].f.ax) << "group " << gi << " lane " << l;
          EXPECT_EQ(weak[l].f.ay, seq[l].f.ay) << "group " << gi << " lane " << l;
          EXPECT_EQ(weak[l].f.az, seq[l].f.az) << "group " << gi << " lane " << l;
          EXPECT_EQ(weak[l].f.pot, seq[l].f.pot) << "group " << gi << " lane " << l;
          EXPECT_EQ(weak[l].f.pp, seq[l].f.pp) << "group " << gi << " lane " << l;
          EXPECT_EQ(weak[l].f.pc, seq[l].f.pc) << "group " << gi << " lane " << l;
        });
        if (HasFailure()) return;
      }
    }
    EXPECT_GT(walks, 10u);
  }
}

TEST(HostWarpDeathTest, ReadingAnotherLanesValueAborts) {
  HostWarp warp;
  HostWarp::Var<int> v;
  warp.each([&](int l) { v[l] = l; });
  EXPECT_DEATH(warp.each([&](int l) { v[l] = v[(l + 1) % kWarpLanes]; }), "outside a collective");
}

TEST(HostWarp, CollectivesActLikeTheShuffles) {
  HostWarp warp;
  HostWarp::Var<std::uint32_t> v, bits;
  HostWarp::Var<int> src;
  warp.each([&](int l) {
    v[l] = static_cast<std::uint32_t>(l % 3);
    src[l] = 31 - l;
    bits[l] = l % 5 == 0 ? 1u << l : 0u;
  });
  std::uint32_t total = 0;
  const auto at = warp.exclusive_sum(v, total);
  const auto back = warp.gather(v, src);
  std::uint32_t expect_at = 0, expect_bits = 0;
  for (int l = 0; l < kWarpLanes; ++l) expect_bits |= l % 5 == 0 ? 1u << l : 0u;
  EXPECT_EQ(warp.or_all(bits), expect_bits);
  warp.each([&](int l) {
    EXPECT_EQ(at[l], expect_at);
    expect_at += static_cast<std::uint32_t>(l % 3);
    EXPECT_EQ(back[l], static_cast<std::uint32_t>((31 - l) % 3));
  });
  EXPECT_EQ(total, expect_at);
}

}  // namespace
}  // namespace hoshi
