// Direct summation, one test body for two backends: the CPU float kernel and the CUDA tiled
// kernel (skipped with the reason when CUDA is not built or no device is present), both
// against an independent double-precision sum written from Newton's law.
//
// Tolerance (float32 against double, per target i and component):
//   |da| <= 2^-20 S1 + 4 sqrt(N) 2^-24 S1 + 6 sqrt(3) 2^-24 L S2
// with S1 = sum_j |a_ij|, S2 = sum_j |a_ij| / r_ij, L the largest local coordinate:
//  * 2^-20 S1: per-term error of the float formula; rsqrtf (--use_fast_math) is within 2 ulp
//    (2^-22 relative), a_ij uses inv^3 (3 x 2^-22) and three roundings (3 x 2^-24): < 2^-20.
//    The CPU kernel's 1/sqrt is better; the bound covers both.
//  * 4 sqrt(N) 2^-24 S1: accumulation of N rounded terms in float, a random walk of N steps of
//    at most half an ulp of |partial sum| <= S1; 4 sqrt(N) is about 7 standard deviations.
//  * position rounding: local coordinates (|x| <= L after subtracting the local centre)
//    rounded to float move each by <= 2^-24 L, so |delta d_ij| <= 2 sqrt(3) 2^-24 L and the
//    pair term moves by <= 3 |delta d| / r_ij |a_ij| (|grad (d / r^3)| <= 3 / r^3 softened or
//    not). Not random: summed in full.
// The potential likewise with P1 = sum_j m_j / sqrt(r^2 + eps^2) (the self pair is masked,
// softened too) and its gradient S1 in the position term:
//   |dpot| <= 2^-21 P1 + 4 sqrt(N) 2^-24 P1 + 2 sqrt(3) 2^-24 L S1.
// G multiplies everything (one more rounding, inside the 2^-20).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "direct/direct.hpp"
#include "gpu_test_support.hpp"
#include "ic/ic.hpp"
#include "solver/solver.hpp"
#ifdef HOSHI_HAVE_CUDA
#include "gpu/cuda_solvers.hpp"
#endif

namespace hoshi {
namespace {

using testing_support::backend_test_name;

struct Reference {
  double a[3], pot;
  double s1, s2, p1;  // tolerance scales (see the file comment)
};

// Independent double sum: Plummer written from the formula; the spline through the double
// reference kernel (its float/double agreement is what is tested), with Newtonian scales
// (the spline's force and potential are at most Newton's).
Reference reference(const ParticleSet& p, std::size_t i, Softening kernel, double eps, double G) {
  Reference r{};
  if (kernel == Softening::spline) {
    ForceArrays f;
    direct_reference(p, G, kernel, eps, {i}, f);
    r.a[0] = f.ax[0];
    r.a[1] = f.ay[0];
    r.a[2] = f.az[0];
    r.pot = f.pot[0];
  }
  for (std::size_t j = 0; j < p.size(); ++j) {
    if (j == i) continue;
    const double d[3] = {p.x[j] - p.x[i], p.y[j] - p.y[i], p.z[j] - p.z[i]};
    const double rr2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    const double rr = std::sqrt(rr2);
    const double s2 = kernel == Softening::plummer ? rr2 + eps * eps : rr2;
    const double s = std::sqrt(s2);
    const double mag = G * p.m[j] * rr / (s2 * s);
    if (kernel == Softening::plummer) {
      for (int k = 0; k < 3; ++k) r.a[k] += G * p.m[j] * d[k] / (s2 * s);
      r.pot -= G * p.m[j] / s;
    }
    r.s1 += mag;
    r.s2 += mag / rr;
    r.p1 += G * p.m[j] / s;
  }
  return r;
}

// The largest offset per axis a position may have from the centre the kernels take their float
// offsets from: a median position (CUDA) or a chunk's median (CPU) lies inside the bounding
// box, so at most its largest side (with the box centre it was half of it).
double local_extent(const ParticleSet& p, std::size_t begin = 0,
                    std::size_t end = static_cast<std::size_t>(-1)) {
  end = std::min(end, p.size());
  const auto ext = [&](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin() + static_cast<std::ptrdiff_t>(begin),
                                              v.begin() + static_cast<std::ptrdiff_t>(end));
    return *hi - *lo;
  };
  return std::max({ext(p.x), ext(p.y), ext(p.z)});
}

struct Case {
  Softening kernel = Softening::plummer;
  double eps = 0;
  double G = 1;
};

SolverConfig direct_config(Backend b, const Case& c) {
  SolverConfig cfg;
  cfg.solver = SolverKind::direct;
  cfg.backend = b;
  cfg.precision = Precision::float32;
  cfg.softening = c.kernel;
  cfg.eps = c.eps;
  cfg.G = c.G;
  return cfg;
}

// The test body: every target of p against the double reference (targets from `first` on; L:
// the offsets' extent, local_extent(p) by default).
void expect_direct_matches_reference(Backend b, ParticleSet p, const Case& c, std::size_t first = 0,
                                     double L_given = 0) {
  auto solver = make_solver(direct_config(b, c), p.size());
  ASSERT_EQ(solver->backend(), to_string(b));
  ASSERT_EQ(solver->name(), "direct");
  const ForceStats st = solver->compute(p);
  const std::size_t n = p.size();
  EXPECT_EQ(st.pp, n > 0 ? static_cast<std::uint64_t>(n) * (n - 1) : 0);  // distinct pairs
  const double L = L_given > 0 ? L_given : local_extent(p);
  const double u = std::ldexp(1.0, -24);
  const double walk = 4 * std::sqrt(static_cast<double>(n)) * u;
  std::size_t bad = 0;
  for (std::size_t i = first; i < n && bad < 5; ++i) {
    const Reference r = reference(p, i, c.kernel, c.eps, c.G);
    const double tol_a =
        std::ldexp(1.0, -20) * r.s1 + walk * r.s1 + 6 * std::sqrt(3.0) * u * L * r.s2;
    const double tol_p =
        std::ldexp(1.0, -21) * r.p1 + walk * r.p1 + 2 * std::sqrt(3.0) * u * L * r.s1;
    const double got[3] = {p.ax[i], p.ay[i], p.az[i]};
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(got[k], r.a[k], tol_a) << "target " << i << " component " << k;
      bad += std::abs(got[k] - r.a[k]) > tol_a;
    }
    EXPECT_NEAR(p.pot[i], r.pot, tol_p) << "target " << i;
    bad += std::abs(p.pot[i] - r.pot) > tol_p;
  }
}

class DirectBackends : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { HOSHI_SKIP_IF_UNAVAILABLE(GetParam()); }
};

TEST_P(DirectBackends, PlummerSoftenedAnyN) {
  // 1000 = 7 full tiles of 128 and a partial one: the padded sources must add nothing.
  expect_direct_matches_reference(GetParam(), make_plummer(1000, 21), {Softening::plummer, 0.01});
}

TEST_P(DirectBackends, Unsoftened) {
  expect_direct_matches_reference(GetParam(), make_plummer(777, 22), {Softening::plummer, 0.0});
}

TEST_P(DirectBackends, SplineSoftenedWithG) {
  expect_direct_matches_reference(GetParam(), make_plummer(600, 23),
                                  {Softening::spline, 0.05, 2.5});
}

TEST_P(DirectBackends, SplitSourcesSmallN) {
  // N = 4096 is where the CUDA kernel splits the sources across grid.y and reduces the
  // partial sums (gpu/launch_geometry.hpp); the result must not depend on it.
  expect_direct_matches_reference(GetParam(), make_plummer(4096, 24), {Softening::plummer, 0.005});
}

TEST_P(DirectBackends, FarFromTheOriginUsesALocalFrame) {
  // A cluster of size ~1 at 1e6: in global float coordinates every separation would be lost
  // to 2^-24 x 1e6 ~ 0.06. Relative to the local centre L ~ 10, and the bound holds.
  ParticleSet p = make_plummer(500, 25);
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.x[i] += 1e6;
    p.y[i] -= 3e5;
  }
  expect_direct_matches_reference(GetParam(), p, {Softening::plummer, 0.01});
}

TEST_P(DirectBackends, AnEscaperCostsTheClusterNoResolution) {
  // One particle 1e5 from a unit cluster: offsets from the box centre (5e4) rounded the
  // cluster's positions to ~4e-3 (p99 force errors 7e-2 on the CPU). From a median centre
  // (CUDA) or a chunk's (CPU) the cluster's offsets stay within its own extent, and every
  // cluster particle meets the bound with that extent (the escaper's own force is not checked:
  // its offset is 1e5, its sources as far).
  ParticleSet p = make_plummer(1000, 26);
  p.x[0] += 1e5;
  expect_direct_matches_reference(GetParam(), p, {Softening::plummer, 0.01}, 1, local_extent(p, 1));
}

TEST_P(DirectBackends, TwoBodiesAnalytic) {
  // a_1 = G m_2 d / (r^2 + eps^2)^(3/2), pot_1 = -G m_2 / sqrt(r^2 + eps^2); d = (3, 4, 0),
  // r^2 = 25, eps^2 = 0.25 (exact in float). Float round-off: a few ulps.
  ParticleSet p;
  p.push_back(0.5, -1, 2, 0, 0, 0, 0.25, 0);
  p.push_back(3.5, 3, 2, 0, 0, 0, 0.75, 1);
  const double eps = 0.5, G = 1.5;
  auto solver = make_solver(direct_config(GetParam(), {Softening::plummer, eps, G}), 2);
  solver->compute(p);
  const double s = std::pow(25.25, 1.5);
  // |a| ~ 0.03, |pot| ~ 0.22: the float error (< 2^-20 relative, see the file comment) is
  // below 3e-7.
  const double tol = 1e-6;
  EXPECT_NEAR(p.ax[0], G * 0.75 * 3 / s, tol);
  EXPECT_NEAR(p.ay[0], G * 0.75 * 4 / s, tol);
  EXPECT_NEAR(p.az[0], 0.0, tol);
  EXPECT_NEAR(p.ax[1], -G * 0.25 * 3 / s, tol);
  EXPECT_NEAR(p.pot[0], -G * 0.75 / std::sqrt(25.25), tol);
  EXPECT_NEAR(p.pot[1], -G * 0.25 / std::sqrt(25.25), tol);
}

TEST_P(DirectBackends, ZeroAndOneParticle) {
  for (const double eps : {0.1, 0.0}) {
    SolverConfig cfg = direct_config(GetParam(), {Softening::plummer, eps});
    ParticleSet empty;
    EXPECT_EQ(make_solver(cfg, 0)->compute(empty).pp, 0u);
    // One particle: no force and no potential (the self pair is masked, softened too). It sits
    // at the centre of the float offsets (its median position), where the tile's padding
    // sources once met it at r = 0 (NaN unsoftened).
    ParticleSet one;
    one.push_back(1, 2, 3, 0, 0, 0, 2.0, 0);
    make_solver(cfg, 1)->compute(one);
    EXPECT_EQ(one.ax[0], 0.0) << "eps " << eps;
    EXPECT_EQ(one.ay[0], 0.0) << "eps " << eps;
    EXPECT_EQ(one.az[0], 0.0) << "eps " << eps;
    EXPECT_EQ(one.pot[0], 0.0) << "eps " << eps;
  }
}

TEST_P(DirectBackends, KeplerPairUnsoftened) {
  // Two particles, one of them at the median (the float origin): the analytic pair force.
  ParticleSet p;
  p.push_back(-0.25, 0, 0, 0, 0, 0, 0.5, 0);
  p.push_back(0.75, 0, 0, 0, 0, 0, 0.5, 1);
  make_solver(direct_config(GetParam(), {Softening::plummer, 0.0}), 2)->compute(p);
  EXPECT_NEAR(p.ax[0], 0.5, 0x1.0p-20);  // G m / r^2 = 0.5 / 1
  EXPECT_NEAR(p.ax[1], -0.5, 0x1.0p-20);
  EXPECT_NEAR(p.pot[0], -0.5, 0x1.0p-20);
  EXPECT_NEAR(p.pot[1], -0.5, 0x1.0p-20);
}

TEST_P(DirectBackends, CoincidentUnsoftenedIsRejected) {
  ParticleSet p;
  p.push_back(1, 1, 1, 0, 0, 0, 1, 0);
  p.push_back(1, 1, 1, 0, 0, 0, 1, 7);
  auto solver = make_solver(direct_config(GetParam(), {Softening::plummer, 0.0}), 2);
  EXPECT_THROW(solver->compute(p), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Backends, DirectBackends, ::testing::Values(Backend::cpu, Backend::cuda),
                         backend_test_name);

#ifdef HOSHI_HAVE_CUDA
// The direct kernel's other variants (one, two or four targets per thread, those that are not
// the default that the suite above runs: gpu::set_direct_targets_per_thread) under the same
// bounds: partial blocks of targets, no softening, the spline, and the split sources of small N.
TEST(DirectCuda, OtherTargetsPerThreadMeetTheSameBounds) {
  HOSHI_SKIP_IF_UNAVAILABLE(Backend::cuda);
  struct Restore {
    int t = gpu::direct_targets_per_thread();
    ~Restore() { gpu::set_direct_targets_per_thread(t); }
  } restore;
  for (int t : {1, 2, 4}) {
    if (t == restore.t) continue;
    SCOPED_TRACE(std::to_string(t) + " targets per thread");
    gpu::set_direct_targets_per_thread(t);
    expect_direct_matches_reference(Backend::cuda, make_plummer(1000, 21),
                                    {Softening::plummer, 0.01});
    expect_direct_matches_reference(Backend::cuda, make_plummer(777, 22),
                                    {Softening::plummer, 0.0});
    expect_direct_matches_reference(Backend::cuda, make_plummer(600, 23),
                                    {Softening::spline, 0.05, 2.5});
    expect_direct_matches_reference(Backend::cuda, make_plummer(4096, 24),
                                    {Softening::plummer, 0.005});
  }
  EXPECT_THROW(gpu::set_direct_targets_per_thread(3), std::invalid_argument);
}

// The prefetching tile schedule (gpu::set_direct_prefetch) sums the same sources in the same
// order with the same arithmetic as the classic one (their PTX has the same floating-point
// operations in the same order), so every variant gives the same forces and potentials, bit for
// bit unless ptxas contracts a PTX multiply and add differently under the other schedule's
// register budget: then within the rounding of two float sums of the same terms,
// (2^-22 + 4 sqrt(N) 2^-24) S1, S1 = sum_j |a_ij| (checked on every 7th target; the number of
// targets not bit-equal is printed). One tile (N < 128), partial last tiles, many tiles per split
// source range (N = 20000), the split sources of small N, each softening. A schedule that
// skipped, repeated or raced a tile would change a sum by whole terms, far beyond that.
TEST(DirectCuda, PrefetchScheduleMatchesTheClassicOne) {
  HOSHI_SKIP_IF_UNAVAILABLE(Backend::cuda);
  struct Restore {
    int t = gpu::direct_targets_per_thread();
    bool prefetch = gpu::direct_prefetch();
    ~Restore() {
      gpu::set_direct_targets_per_thread(t);
      gpu::set_direct_prefetch(prefetch);
    }
  } restore;
  const struct {
    std::size_t n;
    Case c;
  } cases[] = {{100, {Softening::plummer, 0.01}},
               {777, {Softening::plummer, 0.0}},
               {600, {Softening::spline, 0.05, 2.5}},
               {4096, {Softening::plummer, 0.005}},
               {20000, {Softening::plummer, 0.005}}};
  auto forces = [](ParticleSet p, const Case& c, bool prefetch) {
    gpu::set_direct_prefetch(prefetch);
    make_solver(direct_config(Backend::cuda, c), p.size())->compute(p);
    return p;
  };
  for (int t : {1, 2, 4}) {
    gpu::set_direct_targets_per_thread(t);
    for (const auto& k : cases) {
      SCOPED_TRACE(std::to_string(t) + " targets per thread, N = " + std::to_string(k.n));
      const ParticleSet p = make_plummer(k.n, 31 + static_cast<unsigned>(k.n));
      const ParticleSet a = forces(p, k.c, false), b = forces(p, k.c, true);
      std::size_t differ = 0;
      for (std::size_t i = 0; i < k.n; ++i)
        differ +=
            a.ax[i] != b.ax[i] || a.ay[i] != b.ay[i] || a.az[i] != b.az[i] || a.pot[i] != b.pot[i];
      const double eps2 = k.c.eps * k.c.eps;
      for (std::size_t i = 0; i < k.n; i += 7) {
        double s1 = 0, s0 = 0;  // sum_j |a_ij| and sum_j |phi_ij| (Plummer bounds both kernels)
        for (std::size_t j = 0; j < k.n; ++j) {
          const double dx = p.x[j] - p.x[i], dy = p.y[j] - p.y[i], dz = p.z[j] - p.z[i];
          const double r2 = dx * dx + dy * dy + dz * dz + eps2;
          if (r2 == 0) continue;
          s1 += p.m[j] / r2;
          s0 += p.m[j] / std::sqrt(r2);
        }
        const double f = std::ldexp(1.0, -22) + 4 * std::sqrt(double(k.n)) * std::ldexp(1.0, -24);
        ASSERT_NEAR(b.ax[i], a.ax[i], f * s1) << i;
        ASSERT_NEAR(b.ay[i], a.ay[i], f * s1) << i;
        ASSERT_NEAR(b.az[i], a.az[i], f * s1) << i;
        ASSERT_NEAR(b.pot[i], a.pot[i], f * s0) << i;
      }
      if (differ) std::printf("%zu of %zu targets not bit for bit\n", differ, k.n);
      EXPECT_NE(a.ax[0], 0.0);  // the forces were computed at all
    }
  }
}
#endif

}  // namespace
}  // namespace hoshi
