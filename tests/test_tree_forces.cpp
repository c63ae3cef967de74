// Tree forces against double-precision direct summation, the counting check, and degenerate
// inputs. The reference is direct_reference (double, independent of the tree code).
//
// Literature for the accuracy bounds:
//  * Salmon & Warren (1994), J. Comput. Phys. 111, 136: the error of a cell's expansion is
//    bounded by (b_max / d)^(p+1) times its monopole term; the plain bh criterion has no such
//    bound (a cell can be accepted with its mass next to the target), which is why barnes94
//    and bmax are offered and barnes94 is the default.
//  * Dehnen (2002), J. Comput. Phys. 179, 27: relative force errors of tree and FMM codes
//    scale as theta^(p+1) for expansion order p (monopole p = 1 about the centre of mass, whose
//    dipole vanishes, behaves as theta^2 ... theta^3; quadrupole p = 2 as theta^3), with
//    median errors of order 1e-4 .. 1e-3 at theta ~ 0.5 for quadrupole trees.
// The constants of the bounds come from measurement on this code (quoted beside each bound,
// with a factor 2 margin); the scaling tests check the theta^(p+1) law.
//
// One test body, every tree solver: the TEST_P suites (TreeForcesOn, Plummer100kOn) run on the
// CPU group walk (the default), the CPU per-particle walk, the CPU mirror of the CUDA group
// mode (tests/box_mirror_solver.hpp), and the two CUDA walks (per particle: the same HOSTDEV
// walk_particle on the device; group mode: walk_box_target per lane); the CUDA instances skip
// with the reason when hoshi is built without CUDA or no device is present. Each CUDA walk
// differs from its CPU counterpart only by rounding (rsqrtf, FMA contraction;
// tests/test_gpu_tree.cpp), so the bounds hold for it unchanged. The counting checks test the
// shared walk functions themselves; the group walk's own features (local expansions, the relative
// default, thread independence) are TESTs of the CPU solver.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "box_mirror_solver.hpp"
#include "direct/direct.hpp"
#include "gpu_test_support.hpp"
#include "ic/ic.hpp"
#include "solver/solver.hpp"
#include "tree/tree_solver.hpp"
#include "tree/tree_walk.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi {
namespace {

// A tree solver under test: backend and walk. box_mirror: the CPU mirror of the CUDA group mode
// (tests/box_mirror_solver.hpp), which runs everywhere and checks the code that mode's kernel
// runs per lane (tree/walk_box.hpp) against the bounds.
// lists: the CUDA group mode with its lists kernel (gpu::GroupWalkKernel::lists) instead of the
// default.
struct TreeVariant {
  Backend backend;
  WalkKind walk;
  bool box_mirror = false;
  bool lists = false;
};
constexpr TreeVariant kCpuGroup{Backend::cpu, WalkKind::group};
constexpr TreeVariant kCpuParticle{Backend::cpu, WalkKind::particle};
constexpr TreeVariant kCpuBoxMirror{Backend::cpu, WalkKind::group, true};
constexpr TreeVariant kCudaParticle{Backend::cuda, WalkKind::particle};
constexpr TreeVariant kCudaGroup{Backend::cuda, WalkKind::group};
constexpr TreeVariant kCudaLists{Backend::cuda, WalkKind::group, false, true};
const TreeVariant kVariants[] = {kCpuGroup, kCpuParticle, kCpuBoxMirror, kCudaParticle, kCudaGroup};
// TreeForcesOn's corner cases (crowded and deep trees, spline cells, the relative criterion's
// bounds) run the lists kernel too; Plummer100kOn's accuracy laws the default kernel only.
const TreeVariant kCornerVariants[] = {kCpuGroup,     kCpuParticle, kCpuBoxMirror,
                                       kCudaParticle, kCudaGroup,   kCudaLists};

std::string variant_name(const ::testing::TestParamInfo<TreeVariant>& info) {
  if (info.param.box_mirror) return "cpu_boxmirror";
  return to_string(info.param.backend) + "_" + to_string(info.param.walk) +
         (info.param.lists ? "_lists" : "");
}
void PrintTo(const TreeVariant& v, std::ostream* os) {
  *os << (v.box_mirror ? "cpu mirror of the CUDA group"
                       : to_string(v.backend) + " " + to_string(v.walk))
      << " walk" << (v.lists ? " (lists kernel)" : "");
}
// The backend whose defaults (default_theta, ...) a variant has.
Backend defaults_of(TreeVariant v) {
  return v.box_mirror ? Backend::cuda : v.backend;
}
// The CPU group walk (n_group 128, local expansions) has the tightest errors at a given theta:
// its criterion holds for a large box. The other walks share the looser per-particle bounds.
bool cpu_group_walk(TreeVariant v) {
  return v.backend == Backend::cpu && v.walk == WalkKind::group && !v.box_mirror;
}

struct TreeConfig : SolverConfig {
  bool box_mirror = false;
};

TreeConfig tree_config(double theta, int order, TreeVariant v,
                       Criterion criterion = Criterion::barnes94) {
  TreeConfig c;
  c.solver = SolverKind::tree;
  c.backend = v.backend;
  c.tree.theta = theta;
  c.tree.order = order;
  c.tree.walk = v.walk;
  c.tree.walk_auto = false;
  c.tree.criterion = criterion;
  c.box_mirror = v.box_mirror;
  return c;
}

// The solver of a test configuration: make_solver's (TreeSolver on the CPU, the CUDA tree
// solver on CUDA) or the box mirror.
std::unique_ptr<GravitySolver> solver_for(const TreeConfig& c, std::size_t n) {
  if (c.box_mirror) return std::make_unique<testing_support::BoxMirrorSolver>(c);
  return make_solver(c, n);
}

ForceStats compute(const TreeConfig& c, ParticleSet& p) {
  auto s = solver_for(c, p.size());
  EXPECT_EQ(s->backend(), to_string(c.backend));
  return s->compute(p);
}

// Fixture of the one-body-every-solver tests: GetParam() is the solver; CUDA skips visibly.
class TreeForcesOn : public ::testing::TestWithParam<TreeVariant> {
 protected:
  void SetUp() override {
    HOSHI_SKIP_IF_UNAVAILABLE(GetParam().backend);
    if (GetParam().lists)
      kernel_ = std::make_unique<testing_support::GroupKernelScope>(
          testing_support::GroupKernelScope::lists);
  }
  std::unique_ptr<testing_support::GroupKernelScope> kernel_;  // the lists variant's
};

std::vector<std::size_t> random_targets(std::size_t n, std::size_t k, std::uint64_t seed) {
  std::vector<std::size_t> t;
  if (k >= n) {
    t.resize(n);
    std::iota(t.begin(), t.end(), std::size_t{0});
    return t;
  }
  Random rng(seed);
  for (std::size_t i = 0; i < k; ++i) t.push_back(rng.next_u64() % n);
  return t;
}

struct Errors {
  std::vector<double> acc, pot;  // sorted relative errors
  double p(double q) const { return acc[std::min(acc.size() - 1, std::size_t(q * acc.size()))]; }
  double pot_p(double q) const {
    return pot[std::min(pot.size() - 1, std::size_t(q * pot.size()))];
  }
};

Errors errors(const ParticleSet& p, const std::vector<std::size_t>& targets,
              const ForceArrays& ref) {
  Errors e;
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const std::size_t i = targets[k];
    const double dx = p.ax[i] - ref.ax[k], dy = p.ay[i] - ref.ay[k], dz = p.az[i] - ref.az[k];
    const double a =
        std::sqrt(ref.ax[k] * ref.ax[k] + ref.ay[k] * ref.ay[k] + ref.az[k] * ref.az[k]);
    e.acc.push_back(std::sqrt(dx * dx + dy * dy + dz * dz) / a);
    e.pot.push_back(std::abs(p.pot[i] - ref.pot[k]) / std::abs(ref.pot[k]));
    EXPECT_TRUE(std::isfinite(p.ax[i]) && std::isfinite(p.pot[i])) << "target " << i;
  }
  std::sort(e.acc.begin(), e.acc.end());
  std::sort(e.pot.begin(), e.pot.end());
  return e;
}

Errors tree_errors(ParticleSet p, const TreeConfig& c, const std::vector<std::size_t>& targets,
                   const ForceArrays& ref, ForceStats* stats = nullptr) {
  const ForceStats st = compute(c, p);
  if (stats) *stats = st;
  return errors(p, targets, ref);
}

// ---- theta -> 0: the tree is a direct sum in float -------------------------------------

// With theta = 1e-4 every node is opened (r_crit = l / theta exceeds any distance), so both
// walks sum every pair in float. Per term, the float relative error is at most ~8 2^-24 plus
// the rounding of the relative positions: the per-particle walk subtracts in double
// (2^-24 |d| per component); the group walk rounds positions relative to the group centre,
// |x - c_g| <= r_ij + R_g, so the term's relative error is <= 3 2^-24 (r_ij + 2 R_g) / r_ij.
// The float sum of N terms adds ~ sqrt(N) 2^-24 sum|a_ij| (random-walk round-off, factor 4
// margin). Tolerance per target: 2^-24 [4 sqrt(N) sum|a_ij| + sum |a_ij| (11 + 6 R_g / r_ij)]
// (8 for the term, 3 + 6 R_g / r_ij for its relative position).
void check_theta_zero(TreeVariant v, Softening kernel, double eps) {
  SCOPED_TRACE(to_string(kernel) + " eps " + std::to_string(eps));
  ParticleSet p = make_plummer(3000, 21);
  TreeConfig c = tree_config(1e-4, 2, v);
  c.eps = eps;
  c.softening = kernel;
  const ForceStats st = compute(c, p);
  EXPECT_EQ(st.pc, 0u);
  EXPECT_EQ(st.pp, 3000u * 2999u);
  // Group radius of every particle (only the group walk uses it; the same build as the solver's).
  std::vector<double> rg(p.size(), 0.0);
  if (cpu_group_walk(v)) {
    ParticleSet q = p;
    TreeSolver s(c);
    s.compute(q);
    const Octree& t = s.tree();
    for (const Group& g : make_groups(t.nodes, c.tree.n_group)) {
      const GroupBox b = group_box(t.view(), g);
      for (std::uint64_t k = g.begin; k < g.end; ++k)
        rg[t.index[k]] = std::sqrt(b.hx * b.hx + b.hy * b.hy + b.hz * b.hz);
    }
  }
  ParticleSet ref = p;
  direct_reference(ref, 1.0, kernel, eps);
  const double n = static_cast<double>(p.size());
  for (std::size_t i = 0; i < p.size(); i += 7) {
    double sum_abs = 0, sum_pos = 0, sum_pot = 0;
    for (std::size_t j = 0; j < p.size(); ++j) {
      if (j == i) continue;
      const double dx = p.x[j] - p.x[i], dy = p.y[j] - p.y[i], dz = p.z[j] - p.z[i];
      const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
      const double rs = std::sqrt(r * r + eps * eps);
      const double a = p.m[j] / (rs * rs);  // >= |a_ij| for both kernels
      sum_abs += a;
      sum_pos += a * 6 * rg[i] / r;
      sum_pot += p.m[j] / rs;
    }
    const double tol = 0x1.0p-24 * (4 * std::sqrt(n) * sum_abs + 11 * sum_abs + sum_pos);
    EXPECT_NEAR(p.ax[i], ref.ax[i], tol) << i;
    EXPECT_NEAR(p.ay[i], ref.ay[i], tol) << i;
    EXPECT_NEAR(p.az[i], ref.az[i], tol) << i;
    EXPECT_NEAR(p.pot[i], ref.pot[i], 0x1.0p-24 * (4 * std::sqrt(n) + 8) * sum_pot) << i;
  }
}

// On CUDA, rsqrtf (<= 2 ulp) makes a term's worst case ~10 ulp instead of ~7; even a systematic
// bias of that size stays far inside the sum's 4 sqrt(N) margin (~220 ulp at N = 3000).
TEST_P(TreeForcesOn, ThetaToZeroIsDirectSumInFloat) {
  check_theta_zero(GetParam(), Softening::plummer, 0.0);
  check_theta_zero(GetParam(), Softening::plummer, 0.02);
  check_theta_zero(GetParam(), Softening::spline, 0.02);
}

// ---- the counting check -----------------------------------------------------------------

// Every target must see every other particle exactly once, as a particle or inside one
// accepted cell: the masses it interacts with sum to M - m_i. With unit masses the sums are
// integers, exact in double, so a missed or double-counted cell changes the result by >= 1.
struct MassVisitor {
  const TreeView* t;
  std::uint64_t self;
  double mass = 0;
  void cell(const TreeNode& n, double, double, double) { mass += n.m; }
  void particle(std::uint64_t j, double, double, double) {
    if (j != self) mass += t->m[j];
  }
};

// The nodes and particles a walk visits, in order.
struct RecordVisitor {
  const TreeView* t;
  std::vector<std::uint32_t> cells;
  std::vector<std::uint64_t> particles;
  void cell(const TreeNode& n, double, double, double) {
    cells.push_back(static_cast<std::uint32_t>(&n - t->nodes));
  }
  void particle(std::uint64_t j, double, double, double) { particles.push_back(j); }
};

void check_counting(const ParticleSet& p0, Criterion crit, double theta, int n_leaf, int n_group) {
  SCOPED_TRACE(to_string(crit) + " theta " + std::to_string(theta));
  ParticleSet p = p0;
  std::fill(p.m.begin(), p.m.end(), 1.0);
  Octree t;
  PhaseTimes times;
  build_tree(p, {n_leaf, crit, theta}, t, times);
  const TreeView v = t.view();
  const double n = static_cast<double>(p.size());
  // For the relative criterion: a made-up |a_old| that varies over particles.
  auto alpha_a = [&](std::uint64_t k) { return 1e-4 * (1 + double(k % 13)); };
  for (std::uint64_t k = 0; k < v.n_particles; ++k) {
    MassVisitor mv{&v, k};
    walk_particle_visit<double>(v, v.x[k], v.y[k], v.z[k], crit, alpha_a(k), mv);
    ASSERT_EQ(mv.mass, n - 1) << "sorted particle " << k;
  }
  InteractionList list;
  for (const Group& g : make_groups(t.nodes, n_group)) {
    double aa = alpha_a(g.begin);
    for (std::uint64_t k = g.begin; k < g.end; ++k) aa = std::min(aa, alpha_a(k));
    group_interaction_list(v, group_box(v, g), crit, aa, list);
    double mass = 0;
    for (std::uint32_t c : list.cells) mass += t.nodes[c].m;
    for (std::uint32_t l : list.leaves) mass += double(t.nodes[l].end - t.nodes[l].begin);
    // The group's own particles are in its list: each target sees N - 1 others and itself.
    ASSERT_EQ(mass, n) << "group " << g.begin;
    // The box walk of a target (walk_box.hpp: what every lane of the CUDA group mode runs)
    // visits exactly this list, in the same order, and sees N - 1 others.
    const GroupBox box = group_box(v, g);
    std::vector<std::uint64_t> leaf_particles;
    for (std::uint32_t l : list.leaves)
      for (std::uint64_t j = t.nodes[l].begin; j < t.nodes[l].end; ++j) leaf_particles.push_back(j);
    for (std::uint64_t k : {g.begin, g.end - 1}) {
      RecordVisitor rec{&v, {}, {}};
      walk_box_visit<double>(v, box, crit, aa, v.x[k], v.y[k], v.z[k], rec);
      ASSERT_EQ(rec.cells, list.cells) << "group " << g.begin << " target " << k;
      ASSERT_EQ(rec.particles, leaf_particles) << "group " << g.begin << " target " << k;
      MassVisitor mv{&v, k};
      walk_box_visit<double>(v, box, crit, aa, v.x[k], v.y[k], v.z[k], mv);
      ASSERT_EQ(mv.mass, n - 1) << "group " << g.begin << " target " << k;
    }
  }
}

TEST(TreeForces, CountingEveryTargetSeesAllOtherMassOnce) {
  const ParticleSet plummer = make_plummer(4000, 8);
  for (Criterion c : {Criterion::bh, Criterion::barnes94, Criterion::bmax, Criterion::relative}) {
    for (double theta : {0.3, 0.7, 1.0}) check_counting(plummer, c, theta, 8, 32);
  }
  check_counting(plummer, Criterion::barnes94, 0.5, 1, 1);
  check_counting(plummer, Criterion::barnes94, 0.5, 64, 256);
  // Coincident points among others, one particle, two particles.
  ParticleSet dup = make_plummer(500, 9);
  for (int i = 0; i < 200; ++i) dup.push_back(0.1, 0.2, 0.3, 0, 0, 0, 1, 1000 + i);
  check_counting(dup, Criterion::barnes94, 0.6, 8, 16);
  check_counting(make_plummer(1, 1), Criterion::barnes94, 0.5, 16, 64);
  check_counting(make_plummer(2, 1), Criterion::bh, 0.5, 1, 1);
}

// The hierarchical walk of walk_tree_groups (group_walk_lists: the same traversal): every group
// sees all the mass once, through its p-c cells, its leaves (its own particles included) and
// the local expansions of itself and its big ancestors; the groups are make_groups' groups.
void check_hierarchical_counting(const ParticleSet& p0, Criterion crit, double theta, int n_leaf,
                                 int n_group, double local_ratio) {
  SCOPED_TRACE(to_string(crit) + " theta " + std::to_string(theta) + " n_group " +
               std::to_string(n_group) + " local_ratio " + std::to_string(local_ratio));
  ParticleSet p = p0;
  std::fill(p.m.begin(), p.m.end(), 1.0);
  Octree t;
  PhaseTimes times;
  build_tree(p, {n_leaf, crit, theta}, t, times);
  const double n = static_cast<double>(p.size());
  std::vector<float> alpha_a(p.size());
  for (std::size_t k = 0; k < alpha_a.size(); ++k) alpha_a[k] = float(1e-4 * (1 + double(k % 13)));
  TreeWalkConfig cfg;
  cfg.criterion = crit;
  cfg.n_group = n_group;
  cfg.local_ratio = local_ratio;
  const std::vector<GroupLists> lists = group_walk_lists(t, cfg, alpha_a.data());
  const std::vector<Group> groups = make_groups(t.nodes, n_group);
  ASSERT_EQ(lists.size(), groups.size());
  std::size_t far_total = 0;
  for (std::size_t k = 0; k < lists.size(); ++k) {
    const GroupLists& l = lists[k];
    ASSERT_EQ(l.group.begin, groups[k].begin);
    ASSERT_EQ(l.group.end, groups[k].end);
    double mass = 0;
    for (std::uint32_t c : l.cells) mass += t.nodes[c].m;
    for (std::uint32_t c : l.far) mass += t.nodes[c].m;
    for (std::uint32_t c : l.leaves) mass += double(t.nodes[c].end - t.nodes[c].begin);
    ASSERT_EQ(mass, n) << "group " << l.group.begin;
    if (local_ratio == 0) {
      ASSERT_TRUE(l.far.empty());
    }
    far_total += l.far.size();
  }
  // A walk with local expansions on a few thousand particles uses them.
  if (local_ratio > 0.2 && p.size() >= 4000 && n_group <= 256) {
    EXPECT_GT(far_total, 0u);
  }
}

TEST(TreeForces, HierarchicalWalkSeesAllOtherMassOnce) {
  const ParticleSet plummer = make_plummer(4000, 8);
  for (Criterion c : {Criterion::bh, Criterion::barnes94, Criterion::bmax, Criterion::relative})
    for (double theta : {0.3, 0.7, 1.0})
      for (double lr : {0.0, 0.3, 0.5}) check_hierarchical_counting(plummer, c, theta, 8, 32, lr);
  check_hierarchical_counting(plummer, Criterion::barnes94, 0.5, 1, 1, 0.3);
  check_hierarchical_counting(plummer, Criterion::barnes94, 0.5, 64, 256, 0.3);
  check_hierarchical_counting(plummer, Criterion::barnes94, 0.5, 16, 4000, 0.3);
  ParticleSet dup = make_plummer(500, 9);
  for (int i = 0; i < 200; ++i) dup.push_back(0.1, 0.2, 0.3, 0, 0, 0, 1, 1000 + i);
  check_hierarchical_counting(dup, Criterion::barnes94, 0.6, 8, 16, 0.3);
  check_hierarchical_counting(make_plummer(1, 1), Criterion::barnes94, 0.5, 16, 64, 0.3);
  check_hierarchical_counting(make_plummer(2, 1), Criterion::bh, 0.5, 1, 1, 0.3);
}

// ---- accuracy on a Plummer sphere of 100k particles -----------------------------------

// The sphere, 1500 random targets and their double reference, built once per process and
// shared by the suites below.
struct Plummer100kData {
  ParticleSet p;
  std::vector<std::size_t> targets;
  ForceArrays ref;
};
const Plummer100kData& plummer100k() {
  static const Plummer100kData d = [] {
    Plummer100kData r;
    r.p = make_plummer(100000, 42);
    r.targets = random_targets(r.p.size(), 1500, 99);
    direct_reference(r.p, 1.0, Softening::plummer, 0.0, r.targets, r.ref);
    return r;
  }();
  return d;
}
Errors run_100k(const TreeConfig& c, ForceStats* st = nullptr) {
  const Plummer100kData& d = plummer100k();
  return tree_errors(d.p, c, d.targets, d.ref, st);
}

// Every tree solver (GetParam()); CPU group-walk features are the TESTs of Plummer100k below.
class Plummer100kOn : public TreeForcesOn {};

TEST_P(Plummer100kOn, ErrorFallsWithThetaAndQuadrupoleBeatsMonopole) {
  // Halving theta (0.8 -> 0.4) shrinks the error by 2^(p+1) in theory: 8 for the quadrupole,
  // 4 .. 8 for the monopole about the centre of mass (Dehnen 2002). Required: at least 4 and
  // 2.5 (measured, group / per-particle walk: 12.7 / 12.4 and 6.5 / 6.7; leaves opened near
  // the target make the law approximate).
  const double thetas[] = {0.8, 0.6, 0.4};
  Errors e[2][3];
  for (int order : {1, 2})
    for (int k = 0; k < 3; ++k)
      e[order - 1][k] = run_100k(tree_config(thetas[k], order, GetParam()));
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE("theta " + std::to_string(thetas[k]));
    // Quadrupole beats monopole at every theta, at the median and in the tail.
    EXPECT_LT(e[1][k].p(0.5), e[0][k].p(0.5));
    EXPECT_LT(e[1][k].p(0.99), e[0][k].p(0.99));
    EXPECT_LT(e[1][k].pot_p(0.5), e[0][k].pot_p(0.5));
    if (k > 0) {
      for (int o = 0; o < 2; ++o) {
        EXPECT_LT(e[o][k].p(0.5), e[o][k - 1].p(0.5));
        EXPECT_LT(e[o][k].p(0.99), e[o][k - 1].p(0.99));
      }
    }
  }
  EXPECT_GT(e[1][0].p(0.5) / e[1][2].p(0.5), 4.0);
  EXPECT_GT(e[0][0].p(0.5) / e[0][2].p(0.5), 2.5);
}

TEST_P(Plummer100kOn, QuadrupoleThetaHalfWithinLiteratureBounds) {
  // Measured on this code (2026-12-02): per-particle walk p50 2.4e-4, p99 1.1e-3, p99.9
  // 2.2e-3 at ~2300 interactions per particle (the reference: 2.5e-4 and 1.2e-3); the
  // box mirror of the CUDA group mode 1.2e-4, 4.7e-4, 1.2e-3; the CPU group walk, whose
  // criterion holds for the whole group box of up to 128, 8.2e-5, 3.5e-4, 7.9e-4. Potentials
  // converge faster (one power of d less): medians 1.6e-5, 1.1e-5, 8.5e-6. Bounds: twice the
  // per-particle walk's values (which every walk but the CPU group walk meets), and twice the
  // CPU group walk's own for it; all within Dehnen's (2002) 1e-4 .. 1e-3 medians for
  // quadrupole trees at theta 0.5.
  ForceStats st;
  const Errors e = run_100k(tree_config(0.5, 2, GetParam()), &st);
  const bool group = cpu_group_walk(GetParam());
  EXPECT_LT(e.p(0.5), group ? 1.7e-4 : 5e-4);
  EXPECT_LT(e.p(0.99), group ? 7e-4 : 2.5e-3);
  EXPECT_LT(e.p(0.999), group ? 1.6e-3 : 4.5e-3);
  EXPECT_LT(e.pot_p(0.5), group ? 1.7e-5 : 3.3e-5);
  EXPECT_GT(st.pc, 0u);
  EXPECT_GT(st.pp, 0u);
  // A tree must do far fewer than N interactions per particle (here < 5%).
  EXPECT_LT(double(st.pp + st.pc) / 100000.0, 5000.0);
}

TEST_P(Plummer100kOn, DefaultsMeetTheAccuracyGoalWithFewerTerms) {
  // "--theta auto --criterion auto --alpha auto" (hoshi run's defaults) for this backend and
  // walk: the relative criterion (a first call bootstraps |a_old| with barnes94), alpha 0.02
  // for the CPU group walk and 0.0015 for the per-particle walks; and barnes94 at the default
  // theta ("--criterion barnes94": 0.65 group, 0.5 per particle). Both must meet the issue's
  // goal, p99 <= 1.4e-3, and the default must need fewer p-p and p-c terms. Measured here
  // (1e5): group p99 1.24e-3 with 862 p-p + 422 p-c per particle (barnes94 0.65: 1.17e-3,
  // p99.9 4.1e-3, 1662 + 579); per-particle p99 7.4e-4 with 190 + 1077 (barnes94 0.5:
  // 1.07e-3, 703 + 1622). Raising the group walk's theta to 0.75 fails the goal (p99 2.2e-3).
  const TreeVariant v = GetParam();
  TreeConfig c = tree_config(default_theta(defaults_of(v), v.walk), 2, v);
  c.tree.theta_auto = c.tree.criterion_auto = c.tree.alpha_auto = true;
  const Plummer100kData& d = plummer100k();
  auto s = solver_for(c, d.p.size());
  ParticleSet q = d.p;
  const ForceStats st = s->compute(q);
  EXPECT_EQ(st.criterion, Criterion::relative);
  EXPECT_LT(errors(q, d.targets, d.ref).p(0.99), 1.4e-3);
  ForceStats geometric;
  EXPECT_LT(run_100k(tree_config(default_theta(defaults_of(v), v.walk), 2, v), &geometric).p(0.99),
            1.4e-3);
  EXPECT_LT(st.pp, geometric.pp);
  EXPECT_LT(st.pc, geometric.pc);
}

TEST_P(Plummer100kOn, CriteriaAndRelativeSecondCall) {
  // bmax (Salmon & Warren 1994) and bh at theta 0.5 with quadrupoles: measured p99 (group /
  // per-particle walk) 1.75e-3 / 6.9e-3 (bmax) and 4.7e-4 / 1.45e-3 (bh); bound about 2x (the
  // group walk accepts a cell only if the criterion holds for its whole group box, hence its
  // smaller errors). The relative criterion (Gadget-2, alpha 0.0025) on a first call
  // bootstraps |a_old| with a barnes94 pass; later calls use the previous result. It accepts
  // a cell when the cell's leading error term, G M l^2 / d^4, is at most alpha |a_old|
  // (Springel 2005, eq. 18), so relative errors of order alpha or below are expected; with the
  // quadrupole kept they are smaller. Measured (1e5; group / per-particle): p50 8.7e-5 /
  // 4.1e-4, p99 2.9e-4 / 1.15e-3. Bound: p50 <= alpha, p99 <= 4 alpha.
  const TreeVariant v = GetParam();
  const bool group = cpu_group_walk(v);
  EXPECT_LT(run_100k(tree_config(0.5, 2, v, Criterion::bmax)).p(0.99), group ? 3e-3 : 1.4e-2);
  EXPECT_LT(run_100k(tree_config(0.5, 2, v, Criterion::bh)).p(0.99), group ? 1e-3 : 3e-3);
  const Plummer100kData& d = plummer100k();
  ParticleSet p = d.p;
  TreeConfig c = tree_config(0.5, 2, v, Criterion::relative);
  c.tree.alpha = 0.0025;
  auto s = solver_for(c, p.size());
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    EXPECT_EQ(s->compute(p).criterion, Criterion::relative);
    const Errors e = errors(p, d.targets, d.ref);
    EXPECT_LT(e.p(0.5), c.tree.alpha);
    EXPECT_LT(e.p(0.99), 4 * c.tree.alpha);
  }
  // Each particle's own |a_old| (input order to tree order): the targets with errors above 1e-4
  // get |a_old| = 1e-30, so the walk opens every cell with mass for them (for their group), and
  // their forces become the float32 direct sum's (errors ~5e-6 at 1e5: docs/perf-gpu.md's
  // 5.4e-6 at 2^16, 8.9e-6 at 2^18); bound 2e-5, a fifth of their errors before. Another
  // particle's |a_old| (a lost mapping) left them at their errors; the bounds above let it pass.
  const auto relative_error = [&](const ParticleSet& q, std::size_t k) {
    const std::size_t i = d.targets[k];
    return std::hypot(q.ax[i] - d.ref.ax[k], q.ay[i] - d.ref.ay[k], q.az[i] - d.ref.az[k]) /
           std::hypot(d.ref.ax[k], d.ref.ay[k], d.ref.az[k]);
  };
  std::vector<std::size_t> large;
  for (std::size_t k = 0; k < d.targets.size(); ++k)
    if (relative_error(p, k) > 1e-4) large.push_back(k);
  ASSERT_GE(large.size(), 10u);
  large.resize(10);
  for (std::size_t k : large) {
    const std::size_t i = d.targets[k];
    p.ax[i] = 1e-30, p.ay[i] = 0, p.az[i] = 0;
  }
  s->compute(p);
  for (std::size_t k : large) EXPECT_LT(relative_error(p, k), 2e-5) << "target " << d.targets[k];
}

INSTANTIATE_TEST_SUITE_P(Solvers, Plummer100kOn, ::testing::ValuesIn(kVariants), variant_name);

// The CPU group walk's own features.
TEST(Plummer100k, LocalExpansionsKeepTheErrorAndCutCellTerms) {
  // local_ratio_for scales the local expansions' radius with theta so that their truncation
  // error (~rho^5 per cell) stays a small fraction of the multipole error (~theta^3): with
  // them on, the error percentiles may grow by at most 15% (measured at 1e5: p99 1.17e-3 vs
  // 1.19e-3 at theta 0.65, 7.97e-5 both at 0.3, 1.52e-5 both at 0.2), while the p-c terms per
  // particle fall by a factor 2 at theta 0.65 and 1.3 at 0.2 (measured: 2.5 and 1.5 since
  // compact cells stay out of the expansions, 2.9 and 1.7 before; at small theta rho is smaller
  // and fewer cells are far enough).
  for (double theta : {0.2, 0.65}) {
    SCOPED_TRACE("theta " + std::to_string(theta));
    TreeConfig on = tree_config(theta, 2, kCpuGroup);
    TreeConfig off = on;
    off.tree.local_ratio = 0;
    ASSERT_GT(on.tree.local_ratio, 0);
    ForceStats st_on, st_off;
    const Errors e_on = run_100k(on, &st_on), e_off = run_100k(off, &st_off);
    EXPECT_LT(e_on.p(0.5), 1.15 * e_off.p(0.5));
    EXPECT_LT(e_on.p(0.99), 1.15 * e_off.p(0.99));
    EXPECT_LT(e_on.pot_p(0.5), 1.15 * e_off.pot_p(0.5));
    EXPECT_EQ(st_on.pp, st_off.pp);
    EXPECT_LT((theta > 0.5 ? 2.0 : 1.3) * double(st_on.pc), double(st_off.pc));
  }
}

// A point mass that dominates its neighbours' force must not enter their local expansion: it
// is exact as a particle-cell term, and through the degree-5 expansion it was off by
// ~(P + 1) rho^P, 1.3% at the far zone's edge (2026-11-30 audit: p99 7.9e-3 over the targets
// below with barnes94 and relative, 7e-7 without local expansions). A star of mass 1 at the
// origin with 20 light companions within 1e-3 (a small leaf that every criterion accepts) and
// 120 light targets filling a unit cube whose centre is just beyond radius / rho along the
// diagonal. Bound: 1e-5, float32 round-off (measured 7e-7) with margin; the fault is 1e-2.
TEST(TreeForces, LocalExpansionsLeaveADominantPointMassExact) {
  ParticleSet p;
  Random rng(3);
  p.push_back(0, 0, 0, 0, 0, 0, 1.0, 0);
  for (int i = 0; i < 20; ++i)
    p.push_back(1e-3 * rng.uniform(-1, 1), 1e-3 * rng.uniform(-1, 1), 1e-3 * rng.uniform(-1, 1), 0,
                0, 0, 1e-12, p.size());
  const double rho =
      local_ratio_for(kLocalRatio, Criterion::relative, kThetaGroupWalk, kAlphaGroupWalk, 2);
  const double c = 1.02 * (0.5 * std::sqrt(3.0)) / rho / std::sqrt(3.0);
  std::vector<std::size_t> targets;
  for (int i = 0; i < 120; ++i) {
    const double u = i < 8 ? 0.5 * ((i & 1) ? 1 : -1) : rng.uniform(-0.5, 0.5);
    const double v = i < 8 ? 0.5 * ((i & 2) ? 1 : -1) : rng.uniform(-0.5, 0.5);
    const double w = i < 8 ? 0.5 * ((i & 4) ? 1 : -1) : rng.uniform(-0.5, 0.5);
    targets.push_back(p.size());
    p.push_back(c + u, c + v, c + w, 0, 0, 0, 1e-12, p.size());
  }
  ForceArrays ref;
  direct_reference(p, 1.0, Softening::plummer, 0.0, targets, ref);
  for (Criterion criterion : {Criterion::barnes94, Criterion::relative}) {
    SCOPED_TRACE(to_string(criterion));
    TreeConfig cfg = tree_config(kThetaGroupWalk, 2, kCpuGroup, criterion);
    cfg.tree.alpha = kAlphaGroupWalk;
    ParticleSet q = p;
    auto s = solver_for(cfg, q.size());
    s->compute(q);
    if (criterion == Criterion::relative) s->compute(q);  // with |a_old|
    const Errors e = errors(q, targets, ref);
    EXPECT_LT(e.acc.back(), 1e-5);
  }
}

// The relative criterion's light far cells: each may enter a group's local expansion with a
// share of its truncation error up to a fraction of alpha |a_old|, and the ~100 far cells' shares
// add up with one sign. On an evenly spaced softened ring, where |a_old| is a small residual of
// the neighbours' pulls, a tenth gave p99 8.0e-3 (2026-12-01 audit; 6.2e-4 without the rule,
// the criterion's own error), a hundredth 1.2e-3: the bound 2.5e-3 is 2.5 times the default's
// documented p99 (1e-3) and fails a tenth by 3.
TEST(TreeForces, LightFarCellsDoNotAddUpOnARing) {
  const std::size_t n = 20000;
  ParticleSet p;
  const double a = 0.3, b = 0.7;  // tilted off the axes
  for (std::size_t i = 0; i < n; ++i) {
    const double phi = 2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n);
    const double x = std::cos(phi), y0 = std::sin(phi);
    const double y = y0 * std::cos(a), z = y0 * std::sin(a);
    p.push_back(x * std::cos(b) - y * std::sin(b), x * std::sin(b) + y * std::cos(b), z, 0, 0, 0,
                1.0 / static_cast<double>(n), i);
  }
  const auto targets = random_targets(n, 2000, 4);
  TreeConfig cfg = tree_config(kThetaGroupWalk, 2, kCpuGroup, Criterion::relative);
  cfg.tree.alpha = kAlphaGroupWalk;
  cfg.eps = 1e-3;
  ForceArrays ref;
  direct_reference(p, 1.0, Softening::plummer, cfg.eps, targets, ref);
  auto s = solver_for(cfg, p.size());
  s->compute(p);
  s->compute(p);  // with |a_old|
  const Errors e = errors(p, targets, ref);
  EXPECT_LT(e.p(0.99), 2.5e-3);
}

// Gadget's relative criterion estimates a cell's error as M l^2 / d^4, which assumes its mass is
// spread. A cell of side 1 with mass 1 at one corner and a particle of 0.2 at the opposite
// corner, facing a target 0.2 beyond it (just outside the guard radius), next to a perturber
// of mass 1000 (|a_old| ~ 125, so alpha |a_old| is large): the estimate passes, the real error
// of the cell is 0.037 of |a| (measured before mac_relative_bound_ok). With Salmon & Warren's
// bound the cell may err by at most kRelativeBoundFactor alpha |a_old|: that is the bound
// (6e-3 at alpha 0.0015; measured 6e-8, the cell is opened). One-particle leaves and groups,
// so that the cell is a node and the target's group is the target. The CUDA group mode's groups
// are 32 particles: there the group holds the whole set and opens the cell whatever the
// criterion says (it passed with the bound switched off), so that mode is skipped.
TEST_P(TreeForcesOn, RelativeCriterionBoundsACellWithItsMassAtOneCorner) {
  if (GetParam().box_mirror ||
      (GetParam().backend == Backend::cuda && GetParam().walk == WalkKind::group))
    GTEST_SKIP() << "groups of 32 hold all six particles: the cell is opened whatever the "
                    "criterion (the bound is tested by the CPU walks on the same HOSTDEV code)";
  const double light = 0.2;
  const double com = (4.01 + 4.99 * light) / (1 + light);  // per axis
  const double b_max = std::sqrt(3.0) * (4.99 - com);
  const double guard = std::sqrt(3.0) * (0.6 + 4.5 - com);   // r_guard = 0.6 sqrt(3) l + delta
  const double s = (guard - b_max + 0.01) / std::sqrt(3.0);  // target offset per axis
  ParticleSet p;
  p.push_back(0, 0, 0, 0, 0, 0, 1e-3, 0);  // the root cube [0, 8]^3: the cell is [4, 5]^3
  p.push_back(8, 8, 8, 0, 0, 0, 1e-3, 1);
  p.push_back(4.01, 4.01, 4.01, 0, 0, 0, 1.0, 2);
  p.push_back(4.99, 4.99, 4.99, 0, 0, 0, light, 3);
  p.push_back(4.99 + s, 4.99 + s, 4.99 + s, 0, 0, 0, 1e-6, 4);  // the target
  p.push_back(5.1, 5.1, 7.9, 0, 0, 0, 1e3, 5);
  const std::vector<std::size_t> targets{4};
  ForceArrays ref;
  direct_reference(p, 1.0, Softening::plummer, 0.0, targets, ref);
  TreeConfig cfg = tree_config(kThetaParticleWalk, 2, GetParam(), Criterion::relative);
  cfg.tree.alpha = kAlphaParticleWalk;
  cfg.tree.n_leaf = 1;
  cfg.tree.n_group = 1;
  auto solver = solver_for(cfg, p.size());
  solver->compute(p);
  solver->compute(p);  // with |a_old|
  const Errors e = errors(p, targets, ref);
  EXPECT_LT(e.acc.back(), kRelativeBoundFactor * kAlphaParticleWalk);
}

TEST(TreeForces, AutoSettingsResolveForTheBackendUsed) {
  // What the CLI fills in for "--backend auto" (the CPU group walk's values until the backend
  // is known), then resolved for CUDA (make_solver and the device stepper) and for the CPU.
  SolverConfig c;
  c.backend = Backend::automatic;
  c.tree.walk = WalkKind::group;
  c.tree.walk_auto = true;
  c.tree.theta_auto = c.tree.criterion_auto = c.tree.alpha_auto = true;
  c.tree.theta = default_theta(c.backend, c.tree.walk);
  c.tree.criterion = default_criterion(c.backend, c.tree.walk);
  c.tree.alpha = default_alpha(c.backend, c.tree.walk);
  ASSERT_EQ(c.tree.alpha, kAlphaGroupWalk);
  const SolverConfig g = resolve_auto(c, Backend::cuda);
  EXPECT_EQ(g.backend, Backend::cuda);
  EXPECT_EQ(g.tree.walk, WalkKind::group);  // "--walk auto" on CUDA: the group mode
  EXPECT_EQ(g.tree.theta, kThetaCudaGroupWalk);
  EXPECT_EQ(g.tree.criterion, Criterion::relative);
  EXPECT_EQ(g.tree.alpha, kAlphaCudaGroupWalk);
  const SolverConfig h = resolve_auto(c, Backend::cpu);
  EXPECT_EQ(h.tree.walk, WalkKind::group);
  EXPECT_EQ(h.tree.theta, kThetaGroupWalk);
  EXPECT_EQ(h.tree.alpha, kAlphaGroupWalk);
  // "--walk particle" on CUDA: the per-particle kernel's defaults.
  SolverConfig cg = c;
  cg.tree.walk_auto = false;
  cg.tree.walk = WalkKind::particle;
  EXPECT_EQ(resolve_auto(cg, Backend::cuda).tree.walk, WalkKind::particle);
  EXPECT_EQ(resolve_auto(cg, Backend::cuda).tree.theta, kThetaParticleWalk);
  EXPECT_EQ(resolve_auto(cg, Backend::cuda).tree.alpha, kAlphaParticleWalk);
  // Values the user gave are kept.
  c.tree.alpha_auto = c.tree.theta_auto = false;
  c.tree.alpha = 0.004;
  c.tree.theta = 0.7;
  EXPECT_EQ(resolve_auto(c, Backend::cuda).tree.alpha, 0.004);
  EXPECT_EQ(resolve_auto(c, Backend::cuda).tree.theta, 0.7);
}

TEST(Plummer100k, DefaultsPerBackendAndWalk) {
  EXPECT_EQ(default_theta(Backend::cpu, WalkKind::group), kThetaGroupWalk);
  EXPECT_EQ(default_theta(Backend::cpu, WalkKind::particle), kThetaParticleWalk);
  EXPECT_EQ(default_theta(Backend::cuda, WalkKind::group), kThetaCudaGroupWalk);
  EXPECT_EQ(default_theta(Backend::cuda, WalkKind::particle), kThetaParticleWalk);
  EXPECT_EQ(default_criterion(Backend::cpu, WalkKind::group), Criterion::relative);
  EXPECT_EQ(default_criterion(Backend::cpu, WalkKind::particle), Criterion::relative);
  EXPECT_EQ(default_criterion(Backend::cuda, WalkKind::group), Criterion::relative);
  EXPECT_EQ(default_alpha(Backend::cpu, WalkKind::group), kAlphaGroupWalk);
  EXPECT_EQ(default_alpha(Backend::cpu, WalkKind::particle), kAlphaParticleWalk);
  EXPECT_EQ(default_alpha(Backend::cuda, WalkKind::group), kAlphaCudaGroupWalk);
  EXPECT_EQ(default_alpha(Backend::cuda, WalkKind::particle), kAlphaParticleWalk);
  // make_solver resolves "auto" for the backend it picks: --backend auto without a device is
  // the CPU group walk at kThetaGroupWalk, with the same interactions as that theta.
  ParticleSet p = make_plummer(3000, 5);
  SolverConfig a;
  a.solver = SolverKind::tree;
  a.backend = Backend::automatic;
  a.eps = 0.01;
  a.tree.theta = kThetaParticleWalk;
  a.tree.theta_auto = true;
  SolverConfig b = a;
  b.backend = Backend::cpu;
  b.tree.theta_auto = false;
  b.tree.theta = kThetaGroupWalk;
  auto sa = make_solver(a, p.size());
  if (sa->backend() == "cpu") {
    const ForceStats fa = sa->compute(p);
    const ForceStats fb = make_solver(b, p.size())->compute(p);
    EXPECT_EQ(fa.pp, fb.pp);
    EXPECT_EQ(fa.pc, fb.pc);
  }
}

// ---- degenerate inputs ------------------------------------------------------------------

TEST_P(TreeForcesOn, ZeroOneTwoThreeParticles) {
  // One solver for all sizes (its buffers shrink and grow between calls).
  auto s = solver_for(tree_config(0.5, 2, GetParam()), 0);
  ParticleSet none;
  const ForceStats st0 = s->compute(none);
  EXPECT_EQ(st0.pp + st0.pc, 0u);
  ParticleSet one;
  one.push_back(1, 2, 3, 0, 0, 0, 5, 0);
  s->compute(one);
  EXPECT_EQ(one.ax[0], 0.0);
  EXPECT_EQ(one.pot[0], 0.0);
  // Two and three bodies: Newton to float round-off (each term within ~10 ulp, rsqrtf on
  // CUDA included; the terms are at most 1 (particle 0 on particle 2, m / r^2 = 1 / 1) and
  // scale = 5 bounds their sums: 4 2^-24 scale).
  for (int n : {2, 3}) {
    ParticleSet p;
    p.push_back(0, 0, 0, 0, 0, 0, 1.0, 0);
    p.push_back(2, 0, 0, 0, 0, 0, 3.0, 1);
    if (n == 3) p.push_back(0, 0, 1, 0, 0, 0, 0.5, 2);
    s->compute(p);
    ParticleSet ref = p;
    direct_reference(ref, 1.0, Softening::plummer, 0.0);
    for (int i = 0; i < n; ++i) {
      const double scale = 5.0;  // >= sum_j m_j / r_ij^2 and sum m_j / r_ij here
      EXPECT_NEAR(p.ax[i], ref.ax[i], 4 * 0x1.0p-24 * scale);
      EXPECT_NEAR(p.ay[i], ref.ay[i], 4 * 0x1.0p-24 * scale);
      EXPECT_NEAR(p.az[i], ref.az[i], 4 * 0x1.0p-24 * scale);
      EXPECT_NEAR(p.pot[i], ref.pot[i], 4 * 0x1.0p-24 * scale);
    }
    if (n == 2) {
      EXPECT_NEAR(p.ax[0], 3.0 / 4.0, 1e-6);
      EXPECT_NEAR(p.ax[1], -1.0 / 4.0, 1e-6);
    }
  }
}

TEST_P(TreeForcesOn, AllAtOnePointWithSoftening) {
  // N particles at one point, softened: zero force (every d is exactly 0) and potential
  // -(M - m_i) / eps (phi(0) = -m / eps for both kernels). The N terms are identical, so their
  // float round-off does not average out: worst case N 2^-24 relative, plus a few ulp for the
  // term itself (rsqrtf's 2 ulp on CUDA).
  for (Softening k : {Softening::plummer, Softening::spline}) {
    ParticleSet p;
    const int n = 1000;
    for (int i = 0; i < n; ++i) p.push_back(0.3, 0.3, 0.3, 0, 0, 0, 1.0 / n, i);
    TreeConfig c = tree_config(0.5, 2, GetParam());
    c.eps = 0.05;
    c.softening = k;
    compute(c, p);
    const double want = -(1.0 - 1.0 / n) / c.eps;
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(p.ax[i], 0.0);
      ASSERT_NEAR(p.pot[i], want, (n + 4) * 0x1.0p-24 * std::abs(want));
    }
  }
}

TEST_P(TreeForcesOn, CoincidentParticlesWithoutSofteningAreRejectedWithIds) {
  ParticleSet p = make_plummer(1000, 3);
  p.x[17] = p.x[800];
  p.y[17] = p.y[800];
  p.z[17] = p.z[800];
  try {
    compute(tree_config(0.5, 2, GetParam()), p);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("ids 17 and 800"), std::string::npos) << msg;
  }
}

// Percentile errors of the tree forces on the given targets (all particles when few).
// A Plummer sphere of n particles (seed) shrunk by `scale` around (cx, cy, cz), of total mass
// 1e-3: a small cluster inside a field.
ParticleSet small_cluster(std::size_t n, std::uint64_t seed, double scale, double cx, double cy,
                          double cz) {
  ParticleSet p = make_plummer(n, seed);
  for (std::size_t i = 0; i < n; ++i) {
    p.x[i] = cx + scale * p.x[i];
    p.y[i] = cy + scale * p.y[i];
    p.z[i] = cz + scale * p.z[i];
    p.m[i] *= 1e-3;
  }
  return p;
}

// n particles of mass 1/n uniform in the cube of half-side h around (o, o, o), ids from id0.
ParticleSet uniform_field(std::size_t n, std::uint64_t seed, double h, double o,
                          std::uint64_t id0) {
  ParticleSet p;
  Random rng(seed);
  for (std::size_t i = 0; i < n; ++i)
    p.push_back(o + rng.uniform(-h, h), o + rng.uniform(-h, h), o + rng.uniform(-h, h), 0, 0, 0,
                1.0 / n, id0 + i);
  return p;
}

Errors degenerate_errors(const ParticleSet& p0, TreeVariant v, double theta,
                         const std::vector<std::size_t>& targets) {
  ParticleSet p = p0;
  ForceArrays ref;
  direct_reference(p, 1.0, Softening::plummer, 0.0, targets, ref);
  return tree_errors(p, tree_config(theta, 2, v), targets, ref);
}

TEST_P(TreeForcesOn, TwoClustersFarApart) {
  // Two Plummer clusters 1e6 apart: each sees the other as a point mass (force 1e-12 of
  // its own); the bounds are those of a single cluster of this size (2000: measured p99
  // ~1e-3 at theta 0.5 for both walks). And 30 apart, where the other's pull, 1/900 of the
  // unit internal force, is above the p50 bound: a walk that left it out fails there.
  for (const double d : {1e6, 30.0}) {
    SCOPED_TRACE(d);
    ParticleSet p = make_plummer(2000, 5);
    ParticleSet q = make_plummer(2000, 6);
    for (std::size_t i = 0; i < q.size(); ++i) {
      q.x[i] += d;
      q.id[i] += 2000;
    }
    p.append(q);
    const auto targets = random_targets(p.size(), 4000, 1);
    const Errors e = degenerate_errors(p, GetParam(), 0.5, targets);
    EXPECT_LT(e.p(0.5), 5e-4);
    EXPECT_LT(e.p(0.99), 3e-3);
  }
}

// An escaper 1e6 away beside a cluster, in the root octant next to one of the cluster's sparse
// octants: the group maker joined that octant's 110 particles and the escaper into one group 1e6
// wide, whose float offsets from its centre are rounded by ~0.06 (an audit, 2026-11-30: p999
// 3.1e-3, max 1.05e-2 at theta 0.01, where almost every term is a pair; the per-particle walk
// 2.4e-5). Groups now stay compact (GroupRun in tree/tree_walk.cpp). At theta 0.01 every walk
// is nearly the float direct sum, whose max error here is ~2e-5 (the theta -> 0 bound above):
// 1e-4 leaves a margin of 5 and fails the joined group by 100.
TEST_P(TreeForcesOn, AnEscaperBesideAClusterOctantCostsItNoAccuracy) {
  ParticleSet p = make_plummer(20000, 3);
  p.push_back(1e6, 0, 0, 0, 0, 0, 1.0 / 20000, 20000);
  std::vector<std::size_t> targets(p.size());
  std::iota(targets.begin(), targets.end(), std::size_t{0});
  const Errors e = degenerate_errors(p, GetParam(), 0.01, targets);
  EXPECT_LT(e.p(1.0), 1e-4);
}

// The spline kernel is softened within h = 2.8 eps and its cell terms are unsoftened, so no
// node with a particle within h of the target may be used as a cell (octree.hpp,
// kernel_radius). A target 1 away from a tight clump, eps = 1 (h = 2.8): every pair is inside
// h, so every node is opened and the tree is the float direct sum (before the guard the
// clump was a point mass to the target and to itself: errors up to 1e6). A Plummer sphere at
// eps = 0.1, comparable to its interparticle distance: the spline's errors are bounded like
// the Plummer kernel's (before: p99 8e-2 against 7e-3 at N = 20000).
TEST_P(TreeForcesOn, SplineCellsStayBeyondTheKernelRadius) {
  ParticleSet clump;
  clump.push_back(0, 0, 0, 0, 0, 0, 1.0 / 401, 0);
  Random rng(9);
  for (int i = 1; i <= 400; ++i)
    clump.push_back(1 + 0.005 * rng.normal(), 0.005 * rng.normal(), 0.005 * rng.normal(), 0, 0, 0,
                    1.0 / 401, static_cast<std::uint64_t>(i));
  TreeConfig c = tree_config(0.5, 2, GetParam());
  c.softening = Softening::spline;
  c.eps = 1.0;
  {
    ParticleSet p = clump;
    const ForceStats st = compute(c, p);
    EXPECT_EQ(st.pc, 0u);
    ParticleSet ref = clump;
    direct_reference(ref, 1.0, Softening::spline, c.eps);
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double a =
          std::sqrt(ref.ax[i] * ref.ax[i] + ref.ay[i] * ref.ay[i] + ref.az[i] * ref.az[i]);
      // float round-off of 401 terms (the clump's own forces nearly cancel: relative to the
      // largest term, 1 / h^2 in size)
      const double tol = 1e-5 * (a + 1.0 / (2.8 * 2.8));
      EXPECT_NEAR(p.ax[i], ref.ax[i], tol) << i;
      EXPECT_NEAR(p.pot[i], ref.pot[i], 1e-5 * std::abs(ref.pot[i])) << i;
    }
  }
  ParticleSet sphere = make_plummer(3000, 10);
  const auto targets = random_targets(sphere.size(), 3000, 2);
  Errors e[2];
  for (int k = 0; k < 2; ++k) {
    const Softening kernel = k == 0 ? Softening::plummer : Softening::spline;
    ParticleSet p = sphere;
    ForceArrays ref;
    direct_reference(p, 1.0, kernel, 0.1, targets, ref);
    TreeConfig ck = tree_config(0.5, 2, GetParam());
    ck.softening = kernel;
    ck.eps = 0.1;
    e[k] = tree_errors(p, ck, targets, ref);
  }
  EXPECT_LT(e[1].p(0.99), 2 * e[0].p(0.99) + 1e-4);
  EXPECT_LT(e[1].p(0.99), 1e-2);
}

TEST_P(TreeForcesOn, SmallClusterInHugeBoxIsAsAccurateAsAlone) {
  // A cluster of size 1e-6 (300 particles) inside a box of size 1e3 with 2000 field
  // particles. Positions enter the float kernels relative to the target or group centre,
  // the difference taken in double, so the cluster's forces are as accurate as those of the
  // same cluster alone: float round-off, ~ 2^-24 sqrt(N) sum|a_ij| / |a| (< 1e-5 here) plus
  // the tree error of the alone case. Box-relative floats would give errors of
  // 2^-24 * 1e3 / 1e-6 ~ 60, i.e. garbage. The cluster lies in one cell of the keys' finest
  // level (1e3 / 2^21 ~ 5e-4), which is split below it (octree.hpp, DeepCells); before that
  // split the cluster was one leaf here, summed pairwise, and the maximum error was float
  // round-off (the bound was then 1e-3 on it; the cluster alone reaches 1.3e-3 with the
  // per-particle walk). The absolute bound is that of the small clusters of
  // TwoClustersFarApart at this theta.
  const ParticleSet cluster = small_cluster(300, 7, 1e-6, 100.0, -250.0, 400.0);
  ParticleSet all = cluster;
  all.append(uniform_field(2000, 8, 500, 0, 300));
  std::vector<std::size_t> targets(300);
  std::iota(targets.begin(), targets.end(), std::size_t{0});
  const Errors alone = degenerate_errors(cluster, GetParam(), 0.5, targets);
  const Errors inbox = degenerate_errors(all, GetParam(), 0.5, targets);
  EXPECT_LT(inbox.p(0.5), 2 * alone.p(0.5) + 1e-5);
  EXPECT_LT(inbox.acc.back(), 2 * alone.acc.back() + 1e-5);
  EXPECT_LT(inbox.p(0.99), 3e-3);
}

// A cluster of 20000 particles and size ~1e-8 in a box of side ~2 (finest key cell 2 / 2^21
// ~ 1e-6): one key cell holds all of it. That cell was a leaf, every cluster particle summing
// the others pairwise (4.0e8 p-p terms); it is now split below the keys' resolution
// (octree.hpp, DeepCells), so the cluster is walked as if alone: its errors are those of the
// cluster alone (float round-off of relative positions and the tree error), and its terms
// those of the cluster alone and of the field alone, up to where the cells' edges fall
// (measured: 1.12x, 1.23x and 1.15x their sum for the CPU group, per-particle and box-mirror
// walks; before, 8-23x).
TEST_P(TreeForcesOn, CrowdedFinestCellsAreWalkedLikeTheClusterAlone) {
  const std::size_t nc = 20000, nf = 2000;
  const ParticleSet cluster = small_cluster(nc, 21, 1e-8, 0.3, -0.2, 0.1);
  const ParticleSet field = uniform_field(nf, 22, 1, 0, nc);
  ParticleSet all = cluster;
  all.append(field);
  const std::vector<std::size_t> targets = random_targets(nc, 1000, 23);
  const TreeConfig c = tree_config(0.5, 2, GetParam());
  ForceStats st_alone, st_all;
  ParticleSet f = field;
  const ForceStats st_field = compute(c, f);
  ForceArrays ref_alone, ref_all;
  ParticleSet q = cluster;
  direct_reference(q, 1.0, Softening::plummer, 0.0, targets, ref_alone);
  q = all;
  direct_reference(q, 1.0, Softening::plummer, 0.0, targets, ref_all);
  const Errors alone = tree_errors(cluster, c, targets, ref_alone, &st_alone);
  const Errors inbox = tree_errors(all, c, targets, ref_all, &st_all);
  EXPECT_LT(inbox.p(0.5), 2 * alone.p(0.5) + 1e-5);
  EXPECT_LT(inbox.p(0.99), 2 * alone.p(0.99) + 1e-5);
  EXPECT_LT(inbox.acc.back(), 1e-2);
  EXPECT_LT(st_all.pp, 1.5 * (st_alone.pp + st_field.pp));
}

// A cluster of size 1e-8 in a field of size 2 centred 1e6 away from the origin: there an ulp of
// a coordinate is 1.2e-10 (the cluster is ~100 ulps wide: softened, eps 1e-11, since some of
// its particles share a position), and nodes far below the finest key cell (~1e-6) would have
// their corners and centres of mass rounded by a sizeable fraction of their side: split to
// 2^-42 of the box, the errors were 3.6-7.8x those of the same set moved to the origin (exactly:
// 1e6 subtracted; p50 and p99 of the three CPU walks; per-particle walk p99 5.8e-3 against
// 1.6e-3). Such
// a cell is split only while its nodes are at least 4096 ulps wide (octree.cpp,
// deep_level_cap), here one level, and summed pairwise below: its errors are at most those at
// the origin, where the cluster is walked as a tree.
TEST_P(TreeForcesOn, CrowdedCellsFarFromTheOriginAreNoWorseThanAtTheOrigin) {
  const std::size_t nc = 4000, nf = 2000;
  const double o = 1e6, eps = 1e-11;
  ParticleSet far = small_cluster(nc, 24, 1e-8, o + 0.3, o - 0.2, o + 0.1);
  far.append(uniform_field(nf, 25, 1, o, nc));
  ParticleSet origin = far;
  for (std::size_t i = 0; i < far.size(); ++i) {  // exact: Sterbenz
    origin.x[i] -= o;
    origin.y[i] -= o;
    origin.z[i] -= o;
  }
  const std::vector<std::size_t> targets = random_targets(nc, 1000, 26);
  TreeConfig c = tree_config(0.5, 2, GetParam());
  c.eps = eps;
  Errors e[2];
  for (int k = 0; k < 2; ++k) {
    ParticleSet q = k == 0 ? origin : far;
    ForceArrays ref;
    direct_reference(q, 1.0, Softening::plummer, eps, targets, ref);
    e[k] = tree_errors(k == 0 ? origin : far, c, targets, ref);
  }
  EXPECT_LT(e[1].p(0.5), 1.5 * e[0].p(0.5) + 1e-6);
  EXPECT_LT(e[1].p(0.99), 1.5 * e[0].p(0.99) + 1e-6);
  EXPECT_LT(e[0].p(0.99), 3e-3);
}

TEST_P(TreeForcesOn, ThinDiskAndOneOctant) {
  // A flat disk (z = 0 for all) and a set crowded into one octant of its cube, theta 0.5.
  // Flat cells have larger quadrupole remainders and the disk's in-plane forces cancel near
  // its centre, so the errors exceed Plummer's. Measured (2026-12-02; per-particle walk / box
  // mirror of the CUDA group mode / CPU group walk): disk p50 2.4e-4 / 1.2e-4 / 6.9e-5, p99
  // 4.4e-3 / 2.0e-3 / 1.9e-3; octant p50 4.5e-4 / 1.4e-4 / 7.2e-5, p99 2.0e-3 / 6.6e-4 /
  // 4.6e-4. Bounds: about twice the per-particle walk's for the walks of small groups, twice
  // the CPU group walk's own for it (disk, octant).
  ParticleSet disk;
  Random rng(9);
  for (int i = 0; i < 5000; ++i) {
    const double r = std::sqrt(rng.uniform()), phi = 2 * M_PI * rng.uniform();
    disk.push_back(r * std::cos(phi), r * std::sin(phi), 0.0, 0, 0, 0, 1.0 / 5000, i);
  }
  ParticleSet octant = make_plummer(5000, 10);
  for (std::size_t i = 0; i < octant.size(); ++i) {
    octant.x[i] = 10 + std::abs(octant.x[i]);
    octant.y[i] = 10 + std::abs(octant.y[i]);
    octant.z[i] = 10 + std::abs(octant.z[i]);
  }
  octant.push_back(-10, -10, -10, 0, 0, 0, 1e-4, 99999);
  const bool group = cpu_group_walk(GetParam());
  for (const auto& [p, p50, p99] :
       {std::tuple{&disk, group ? 1.4e-4 : 5e-4, group ? 4e-3 : 9e-3},
        std::tuple{&octant, group ? 1.5e-4 : 9e-4, group ? 1e-3 : 4e-3}}) {
    const auto targets = random_targets(p->size(), 1000, 2);
    const Errors e = degenerate_errors(*p, GetParam(), 0.5, targets);
    EXPECT_LT(e.p(0.5), p50);
    EXPECT_LT(e.p(0.99), p99);
  }
}

TEST(TreeForces, GroupWalkIsIndependentOfTheThreadCount) {
  // Every group's sums are formed by one thread from its own task (candidates and ancestors'
  // expansions), in an order fixed by the tree: the forces are bit for bit the same on any
  // number of threads (runs and restarts reproduce on another machine).
  const ParticleSet p0 = make_plummer(30000, 5);
  TreeConfig c = tree_config(0.65, 2, kCpuGroup);
  c.eps = 0.01;
  const int saved = omp_get_max_threads();
  std::vector<ParticleSet> out;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    ParticleSet p = p0;
    TreeSolver s(c);
    const ForceStats st = s.compute(p);
    EXPECT_GT(st.m2l, 0u);
    out.push_back(p);
  }
  omp_set_num_threads(saved);
  for (std::size_t k = 1; k < out.size(); ++k) {
    EXPECT_EQ(out[k].ax, out[0].ax);
    EXPECT_EQ(out[k].ay, out[0].ay);
    EXPECT_EQ(out[k].az, out[0].az);
    EXPECT_EQ(out[k].pot, out[0].pot);
  }
}

TEST(TreeForces, MakeSolverBuildsTheTree) {
  SolverConfig c;
  c.solver = SolverKind::tree;
  c.backend = Backend::cpu;
  auto s = make_solver(c, 10);
  EXPECT_EQ(s->name(), "tree");
  c.solver = SolverKind::automatic;
  const std::size_t crossover = direct_tree_crossover_n(Backend::cpu);
  EXPECT_EQ(make_solver(c, crossover)->name(), "tree");
  EXPECT_EQ(make_solver(c, crossover - 1)->name(), "direct");
  // The double-precision path is direct summation's: auto takes it at every N (it chose the
  // tree from the crossover up, which refused double precision).
  c.precision = Precision::float64;
  for (std::size_t n : {std::size_t{10}, crossover, 10 * crossover})
    EXPECT_EQ(make_solver(c, n)->name(), "direct") << n;
  c.backend = Backend::automatic;  // the double reference runs on the CPU
  EXPECT_EQ(describe_forces(c, crossover).rfind("direct cpu float64 ", 0), 0u)
      << describe_forces(c, crossover);
}

// The recorded settings (/Parameters/forces, the "forces:" line) name what the walk uses: the
// per-particle walk has no groups and no local expansions.
TEST(TreeForces, DescriptionNamesOnlyTheSettingsTheWalkUses) {
  SolverConfig c;
  c.solver = SolverKind::tree;
  c.backend = Backend::cpu;
  c.tree.n_group = 64;
  const std::string group = describe_forces(c, 100);
  EXPECT_NE(group.find(" n_leaf=16 n_group=64 local_ratio=0.37 walk=group"), std::string::npos)
      << group;
  c.tree.walk_auto = false;
  c.tree.walk = WalkKind::particle;
  const std::string particle = describe_forces(c, 100);
  EXPECT_NE(particle.find(" n_leaf=16 walk=particle"), std::string::npos) << particle;
  EXPECT_EQ(particle.find("n_group"), std::string::npos) << particle;
  EXPECT_EQ(particle.find("local_ratio"), std::string::npos) << particle;
}

TEST_P(TreeForcesOn, EveryPhaseIsTimed) {
  // The host build's phases, the walk, and on CUDA the transfers (docs/perf-gpu.md).
  ParticleSet p = make_plummer(5000, 1);
  const ForceStats st = compute(tree_config(0.5, 2, GetParam()), p);
  std::vector<const char*> phases = {"keys", "sort", "permute", "build", "moments", "walk"};
  if (GetParam().backend == Backend::cuda) {
    phases.push_back("upload");
    phases.push_back("download");
  }
  // Each phase is a part of the whole call (timed one after the other: their sum is at most
  // the total); the walk of 5000 particles takes measurable time. (The box mirror is the
  // tests' model of the CUDA kernel, timed by nothing but its host build.)
  double sum = 0;
  for (const char* phase : phases) {
    EXPECT_EQ(st.seconds.count(phase), 1u) << phase;
    if (st.seconds.count(phase)) {
      EXPECT_GE(st.seconds.at(phase), 0.0) << phase;
      sum += st.seconds.at(phase);
    }
  }
  EXPECT_GT(st.total_seconds, 0.0);
  if (!GetParam().box_mirror) {
    EXPECT_GT(st.seconds.count("walk") ? st.seconds.at("walk") : 0.0, 0.0);
    EXPECT_LE(sum, st.total_seconds * (1 + 1e-9));
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers, TreeForcesOn, ::testing::ValuesIn(kCornerVariants), variant_name);

}  // namespace
}  // namespace hoshi
