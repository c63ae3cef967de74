// GravitySolver::compute_active, the forces of block time steps' active particles: the tree of
// every particle, walked for the targets that hold an active one. Through make_solver (so
// through ScaledSolver), every active particle's a and pot must be compute()'s on the same state
// bit for bit: the walks skip whole targets (particles, groups, big nodes) and do nothing else
// differently, so any difference is a bug, not rounding. The interaction counts are those of
// the targets walked: none for no active particle, compute()'s for all, fewer for a subset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ic/ic.hpp"
#include "solver/solver.hpp"

namespace hoshi {
namespace {

using Mask = std::vector<std::uint8_t>;

SolverConfig tree_config(WalkKind walk, Criterion criterion) {
  SolverConfig c;
  c.solver = SolverKind::tree;
  c.backend = Backend::cpu;
  c.eps = 0.01;
  c.tree.walk = walk;
  c.tree.walk_auto = false;
  c.tree.criterion = criterion;
  c.tree.theta = default_theta(Backend::cpu, walk);
  c.tree.alpha = default_alpha(Backend::cpu, walk);
  return c;
}

std::string config_name(const SolverConfig& c) {
  return to_string(c.tree.walk) + " walk, " + to_string(c.tree.criterion);
}

// A Plummer sphere one step into a run: accelerations of the previous positions (the relative
// criterion's |a_old|), positions drifted since.
ParticleSet drifted_plummer(std::size_t n, std::uint64_t seed, const SolverConfig& c) {
  ParticleSet p = make_plummer(n, seed);
  make_solver(c, n)->compute(p);
  for (std::size_t i = 0; i < n; ++i) {
    p.x[i] += 0.01 * p.vx[i];
    p.y[i] += 0.01 * p.vy[i];
    p.z[i] += 0.01 * p.vz[i];
  }
  return p;
}

Mask random_mask(std::size_t n, double fraction, std::uint64_t seed) {
  Random rng(seed);
  Mask m(n);
  for (auto& f : m) f = rng.uniform() < fraction;
  return m;
}

// The innermost `fraction` by radius: a block time step's dense centre, a few subtrees.
Mask central_mask(const ParticleSet& p, double fraction) {
  const std::size_t n = p.size();
  std::vector<double> r2(n);
  for (std::size_t i = 0; i < n; ++i) r2[i] = p.x[i] * p.x[i] + p.y[i] * p.y[i] + p.z[i] * p.z[i];
  std::vector<double> sorted = r2;
  const std::size_t k = static_cast<std::size_t>(fraction * n);
  std::nth_element(sorted.begin(), sorted.begin() + k, sorted.end());
  Mask m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = r2[i] < sorted[k];
  return m;
}

Mask one_particle(std::size_t n, std::size_t i) {
  Mask m(n, 0);
  m[i] = 1;
  return m;
}

// compute_active(mask) on `state` against `full`, compute() on the same state: active entries
// bit-identical, the others as the interface allows (their previous value or compute()'s).
ForceStats check_active(GravitySolver& s, const ParticleSet& state, const ParticleSet& full,
                        const Mask& mask) {
  ParticleSet q = state;
  const ForceStats st = s.compute_active(q, mask);
  const auto equal = [&](const ParticleSet& r, std::size_t i) {
    return q.ax[i] == r.ax[i] && q.ay[i] == r.ay[i] && q.az[i] == r.az[i] && q.pot[i] == r.pot[i];
  };
  std::size_t wrong_active = 0, wrong_inactive = 0, first = q.size();
  for (std::size_t i = 0; i < q.size(); ++i) {
    const bool ok = mask[i] ? equal(full, i) : equal(full, i) || equal(state, i);
    if (ok) continue;
    (mask[i] ? wrong_active : wrong_inactive) += 1;
    first = std::min(first, i);
  }
  EXPECT_EQ(wrong_active, 0u) << "active particles whose a or pot differ from compute()'s; first "
                              << first;
  EXPECT_EQ(wrong_inactive, 0u)
      << "inactive particles neither kept their values nor got compute()'s; first " << first;
  return st;
}

struct Case {
  SolverConfig c;
  ParticleSet state, full;
  ForceStats full_st;
  std::unique_ptr<GravitySolver> s;
};

Case make_case(const SolverConfig& c, ParticleSet state) {
  const std::size_t n = state.size();
  Case k{c, std::move(state), {}, {}, make_solver(c, n)};
  k.full = k.state;
  k.full_st = k.s->compute(k.full);
  return k;
}

constexpr std::size_t kN = 3000;
const WalkKind kWalks[] = {WalkKind::group, WalkKind::particle};
const Criterion kCriteria[] = {Criterion::barnes94, Criterion::relative};

TEST(ComputeActive, ActiveParticlesGetTheForcesOfComputeBitForBit) {
  for (WalkKind walk : kWalks)
    for (Criterion crit : kCriteria) {
      const SolverConfig c = tree_config(walk, crit);
      SCOPED_TRACE(config_name(c));
      Case k = make_case(c, drifted_plummer(kN, 11, c));
      ASSERT_GT(k.full_st.pp, 0u);
      // A random 10% leaves few groups of the group walk (up to 128 particles) without an active
      // particle: at most compute()'s terms. The per-particle walk's: the next test.
      for (std::uint64_t seed : {1, 2}) {
        const ForceStats st = check_active(*k.s, k.state, k.full, random_mask(kN, 0.1, seed));
        EXPECT_LE(st.pp, k.full_st.pp);
        EXPECT_LE(st.pc, k.full_st.pc);
      }
      for (std::size_t i : {std::size_t{0}, kN - 1})
        check_active(*k.s, k.state, k.full, one_particle(kN, i));

      // The dense centre (a few subtrees): fewer terms in either walk.
      const ForceStats centre = check_active(*k.s, k.state, k.full, central_mask(k.state, 0.1));
      EXPECT_LT(centre.pp, k.full_st.pp);
      EXPECT_LT(centre.pc, k.full_st.pc);
      // One particle: one group (or one target) walked.
      const ForceStats one = check_active(*k.s, k.state, k.full, one_particle(kN, kN / 2));
      EXPECT_LT(one.pp + one.pc, (k.full_st.pp + k.full_st.pc) / 10);
      // ... and of the group walk's big targets only its ancestors (their local expansions).
      if (walk == WalkKind::group) {
        EXPECT_LT(one.m2l, k.full_st.m2l / 10);
      }

      // All active: the walk of compute() itself.
      const ForceStats all = check_active(*k.s, k.state, k.full, Mask(kN, 1));
      EXPECT_EQ(all.pp, k.full_st.pp);
      EXPECT_EQ(all.pc, k.full_st.pc);
      EXPECT_EQ(all.m2l, k.full_st.m2l);

      // None active: no interactions.
      const ForceStats none = check_active(*k.s, k.state, k.full, Mask(kN, 0));
      EXPECT_EQ(none.pp, 0u);
      EXPECT_EQ(none.pc, 0u);
      EXPECT_EQ(none.m2l, 0u);
    }
}

// The per-particle walk walks each active particle alone: the counts of a mask and of its
// complement add up to compute()'s exactly, and a random 10% does ~10% of the terms.
TEST(ComputeActive, PerParticleWalkCountsOnlyTheActiveTargets) {
  for (Criterion crit : kCriteria) {
    const SolverConfig c = tree_config(WalkKind::particle, crit);
    SCOPED_TRACE(config_name(c));
    Case k = make_case(c, drifted_plummer(kN, 12, c));
    const Mask m = random_mask(kN, 0.1, 3);
    Mask rest(kN);
    for (std::size_t i = 0; i < kN; ++i) rest[i] = !m[i];
    const ForceStats a = check_active(*k.s, k.state, k.full, m);
    const ForceStats b = check_active(*k.s, k.state, k.full, rest);
    EXPECT_EQ(a.pp + b.pp, k.full_st.pp);
    EXPECT_EQ(a.pc + b.pc, k.full_st.pc);
    EXPECT_LT(a.pp + a.pc, (k.full_st.pp + k.full_st.pc) / 5);
  }
}

// A set far from unit size and mass goes through ScaledSolver's rescaling (scale_exponents out
// of range): the same scaling for compute_active, so the same bits. A coordinate that the scaling
// would make subnormal (1e-300 in a system of size 1e30) sends the set through a rescaled copy
// instead.
TEST(ComputeActive, RescaledSetsGiveTheSameBits) {
  for (int e : {12, 30})
    for (WalkKind walk : kWalks)
      for (Criterion crit : kCriteria) {
        const double size = std::pow(10.0, e);
        SolverConfig c = tree_config(walk, crit);
        c.eps = 0.01 * size;
        SCOPED_TRACE(config_name(c) + ", size 1e" + std::to_string(e));
        ParticleSet p = make_plummer(kN, 13);
        for (std::size_t i = 0; i < kN; ++i) {
          p.x[i] *= size, p.y[i] *= size, p.z[i] *= size;
          p.m[i] *= size;
        }
        if (e == 30) p.x[0] = 1e-300;
        ASSERT_FALSE(scale_exponents(p, c.eps).in_range());
        make_solver(c, kN)->compute(p);
        Case k = make_case(c, p);
        const ForceStats centre = check_active(*k.s, k.state, k.full, central_mask(k.state, 0.1));
        EXPECT_LT(centre.pp, k.full_st.pp);
        check_active(*k.s, k.state, k.full, random_mask(kN, 0.1, 4));
      }
}

// The relative criterion's first call has no |a_old|: compute() bootstraps with a barnes94 pass
// over every particle, and compute_active computes every particle, as compute() does.
TEST(ComputeActive, FirstRelativeCallComputesEveryParticle) {
  for (WalkKind walk : kWalks) {
    const SolverConfig c = tree_config(walk, Criterion::relative);
    SCOPED_TRACE(config_name(c));
    Case k = make_case(c, make_plummer(kN, 14));
    ParticleSet q = k.state;
    const ForceStats st = k.s->compute_active(q, central_mask(k.state, 0.1));
    EXPECT_EQ(st.pp, k.full_st.pp);
    EXPECT_EQ(st.pc, k.full_st.pc);
    EXPECT_EQ(st.criterion, Criterion::relative);
    for (std::size_t i = 0; i < kN; ++i) {
      ASSERT_EQ(q.ax[i], k.full.ax[i]) << "particle " << i;
      ASSERT_EQ(q.pot[i], k.full.pot[i]) << "particle " << i;
    }
  }
}

// Direct summation, float32 (its chunks of Morton-ordered targets without an active particle
// skipped) and double (the active particles as targets): the active particles' forces are
// compute()'s bit for bit, for the interactions of the targets summed. A mask of the wrong size
// is refused.
TEST(ComputeActive, DirectSumsTheActiveTargetsOnly) {
  for (const Precision precision : {Precision::float32, Precision::float64}) {
    SolverConfig c;
    c.solver = SolverKind::direct;
    c.backend = Backend::cpu;
    c.precision = precision;
    c.eps = 0.01;
    const std::size_t n = 2000;
    const Case k = make_case(c, drifted_plummer(n, 15, c));
    const std::string name = precision == Precision::float32 ? "float32" : "float64";
    SCOPED_TRACE(name);
    const ForceStats one = check_active(*k.s, k.state, k.full, one_particle(n, 7));
    EXPECT_LT(one.pp, k.full_st.pp / 10);
    // The centre lies at the corner of the top octants, so its particles are spread over
    // several of float32's chunks (up to a few hundred targets each): fewer terms, not 10%.
    const Mask centre_mask = central_mask(k.state, 0.1);
    const ForceStats centre = check_active(*k.s, k.state, k.full, centre_mask);
    EXPECT_LT(centre.pp, k.full_st.pp);
    if (precision == Precision::float64) {
      EXPECT_EQ(centre.pp, std::count(centre_mask.begin(), centre_mask.end(), 1) * (n - 1));
    }
    EXPECT_EQ(check_active(*k.s, k.state, k.full, Mask(n, 1)).pp, k.full_st.pp);
    EXPECT_EQ(check_active(*k.s, k.state, k.full, Mask(n, 0)).pp, 0u);
    ParticleSet p = k.state;
    EXPECT_THROW(k.s->compute_active(p, Mask(n - 1, 1)), std::invalid_argument);
  }
  const SolverConfig t = tree_config(WalkKind::group, Criterion::barnes94);
  ParticleSet p = make_plummer(500, 15);
  EXPECT_THROW(make_solver(t, 500)->compute_active(p, Mask(499, 1)), std::invalid_argument);
  ParticleSet empty;
  EXPECT_EQ(make_solver(t, 0)->compute_active(empty, Mask{}).pp, 0u);
}

}  // namespace
}  // namespace hoshi
