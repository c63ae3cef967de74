// The SIMD kernels of the CPU group walk (tree/group_kernels.hpp) against the same terms
// summed in double, on one group's buffers: targets that are also the first sources (the
// self pair masked, softened or not), further sources, and
// cells with quadrupoles. Counts that are not multiples of the SIMD width or of the register
// blocks exercise the padding.
//
// Bound: every term is a fixed sequence of about 20 (particle) or 40 (cell) float operations
// on inputs rounded to float once, each within 2^-24 relative, and the sum over n terms adds
// at most n roundings (fewer in the kernels' lane-wise accumulation); with n <= 100 terms per
// target the error of a component is at most ~(40 + 100) 2^-24 of the sum of the magnitudes of
// its terms. The test allows 2^-16 (256 roundings) of that sum, and also checks that the
// kernels are not trivially right: each output differs from the reference without the cells.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tree/group_kernels.hpp"

namespace hoshi {
namespace {

using namespace group_kernels;

struct Reference {
  std::vector<double> a[4];    // ax, ay, az, pot
  std::vector<double> mag[4];  // sum of |term| per component
};

class GroupKernels : public ::testing::Test {
 protected:
  static constexpr std::size_t kTargets = 37, kOthers = 53, kCells = 29;
  GroupBuffers g;

  void SetUp() override {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    auto put = [](std::vector<float>& v, std::size_t k, double x) {
      if (v.size() <= k) v.resize(k + 1);
      v[k] = static_cast<float>(x);
    };
    // Targets in the unit box; they are the first sources (own particles), padded to kW.
    for (std::size_t k = 0; k < kTargets; ++k) {
      const double x = u(rng), y = u(rng), z = u(rng), m = 0.5 + 0.5 * u(rng) * u(rng);
      put(g.tx, k, x), put(g.ty, k, y), put(g.tz, k, z);
      put(g.sx, k, x), put(g.sy, k, y), put(g.sz, k, z), put(g.sm, k, m);
    }
    g.nt = kTargets;
    set_whole_group_targets(g);
    std::size_t ns = kTargets;
    for (; ns < padded(kTargets, kW); ++ns)
      put(g.sx, ns, 1e18), put(g.sy, ns, 1e18), put(g.sz, ns, 1e18), put(g.sm, ns, 0);
    g.own_end = ns;
    for (std::size_t k = 0; k < kOthers; ++k, ++ns)  // neighbours, 1 to 3 box sizes away
      put(g.sx, ns, 2 * u(rng) + 2), put(g.sy, ns, 2 * u(rng)), put(g.sz, ns, 2 * u(rng)),
          put(g.sm, ns, 1 + 0.5 * u(rng));
    g.ns = ns;
    for (; ns < padded(g.ns, kW); ++ns)
      put(g.sx, ns, 1e18), put(g.sy, ns, 1e18), put(g.sz, ns, 1e18), put(g.sm, ns, 0);
    std::size_t nc = 0;
    for (; nc < kCells; ++nc) {  // cells 4 to 8 box sizes away, quadrupoles ~ M (size 1)^2
      const double r = 4 + 4 * (0.5 + 0.5 * u(rng)), cz = u(rng), phi = 3.14159 * u(rng);
      const double s = std::sqrt(1 - cz * cz), m = 5 + 4 * u(rng);
      put(g.cx, nc, r * s * std::cos(phi)), put(g.cy, nc, r * s * std::sin(phi));
      put(g.cz, nc, r * cz), put(g.cm, nc, m);
      const double qxx = m * u(rng), qyy = m * u(rng);
      put(g.qxx, nc, qxx), put(g.qyy, nc, qyy), put(g.qzz, nc, -qxx - qyy);
      put(g.qxy, nc, m * u(rng)), put(g.qxz, nc, m * u(rng)), put(g.qyz, nc, m * u(rng));
      put(g.mr2, nc, m * (1 + u(rng)));  // sum m |y|^2 >= |Q| / 2 for a real cell
    }
    g.nc = nc;
    for (; nc < padded(g.nc, kW); ++nc) {
      put(g.cx, nc, 1e18), put(g.cy, nc, 1e18), put(g.cz, nc, 1e18);
      for (auto* v : {&g.cm, &g.qxx, &g.qxy, &g.qxz, &g.qyy, &g.qyz, &g.qzz, &g.mr2})
        put(*v, nc, 0);
    }
    // Targets padded to a whole vector (the kernels read them in blocks).
    for (std::size_t k = kTargets; k < padded(kTargets, kTargetBlock); ++k)
      put(g.tx, k, g.tx[kTargets - 1]), put(g.ty, k, g.ty[kTargets - 1]),
          put(g.tz, k, g.tz[kTargets - 1]);
    g.far.n = 0;
  }

  // The group's sums in double from the same float inputs.
  Reference reference(const SofteningParams<double>& soft, bool with_cells, int order) const {
    Reference r;
    for (int c = 0; c < 4; ++c) r.a[c].assign(g.nt, 0), r.mag[c].assign(g.nt, 0);
    for (std::size_t i = 0; i < g.nt; ++i) {
      auto add = [&](double ax, double ay, double az, double pot) {
        const double t[4] = {ax, ay, az, pot};
        for (int c = 0; c < 4; ++c) r.a[c][i] += t[c], r.mag[c][i] += std::abs(t[c]);
      };
      for (std::size_t j = 0; j < g.ns; ++j) {
        if (j >= g.nt && j < g.own_end) continue;  // padding
        if (j == i) continue;  // the kernels mask the self pair, softened or not
        double ax = 0, ay = 0, az = 0, pot = 0;
        pair_interaction<double>(soft, double(g.sx[j]) - g.tx[i], double(g.sy[j]) - g.ty[i],
                                 double(g.sz[j]) - g.tz[i], g.sm[j], true, ax, ay, az, pot);
        add(ax, ay, az, pot);
      }
      if (!with_cells) continue;
      for (std::size_t j = 0; j < g.nc; ++j) {
        double ax = 0, ay = 0, az = 0, pot = 0;
        const double dx = double(g.cx[j]) - g.tx[i], dy = double(g.cy[j]) - g.ty[i],
                     dz = double(g.cz[j]) - g.tz[i];
        const double eps2 = soft.kind == Softening::plummer ? soft.eps2 : 0.0;
        if (order == 1)
          cell_monopole<double>(dx, dy, dz, g.cm[j], eps2, ax, ay, az, pot);
        else
          cell_quadrupole<double>(dx, dy, dz, g.cm[j], g.qxx[j], g.qxy[j], g.qxz[j], g.qyy[j],
                                  g.qyz[j], g.qzz[j], g.mr2[j], eps2, ax, ay, az, pot);
        add(ax, ay, az, pot);
      }
    }
    return r;
  }

  template <bool kSpline, int kOrder>
  void check(Softening kind, double eps) {
    const WalkParams<float> w = make_walk_params<float>(Criterion::barnes94, kOrder, kind, eps);
    const Reference ref =
        reference(SofteningParams<double>::make(kind, eps), /*with_cells=*/true, kOrder);
    const Reference no_cells =
        reference(SofteningParams<double>::make(kind, eps), /*with_cells=*/false, kOrder);
    std::vector<float> out[4];
    for (auto& o : out) o.assign(padded(g.nt, kTargetBlock), -1.0f);  // kernels overwrite
    group_kernel<kSpline, kOrder>(g, w, out[0].data(), out[1].data(), out[2].data(), out[3].data());
    const char* name[4] = {"ax", "ay", "az", "pot"};
    for (std::size_t i = 0; i < g.nt; ++i)
      for (int c = 0; c < 4; ++c) {
        const double err = std::abs(out[c][i] - ref.a[c][i]);
        ASSERT_LE(err, 0x1.0p-16 * ref.mag[c][i]) << name[c] << " of target " << i << ": kernel "
                                                  << out[c][i] << ", double " << ref.a[c][i];
        // The cells matter at this level: a kernel that dropped them would fail.
        ASSERT_GT(std::abs(no_cells.a[c][i] - ref.a[c][i]), 100 * err) << name[c] << " " << i;
      }
  }
};

TEST_F(GroupKernels, NewtonianQuadrupoleMatchesDouble) {
  check<false, 2>(Softening::plummer, 0.0);
}
TEST_F(GroupKernels, NewtonianMonopoleMatchesDouble) {
  check<false, 1>(Softening::plummer, 0.0);
}
TEST_F(GroupKernels, PlummerSoftenedMatchesDouble) {
  check<false, 2>(Softening::plummer, 0.05);
}
TEST_F(GroupKernels, SplineSoftenedMatchesDouble) {
  check<true, 2>(Softening::spline, 0.05);
}

// Unsoftened, the self pair is masked by index, not by r = 0: two distinct particles at the same
// float offset (a pair closer than float32 resolves at the group's scale) must give a
// non-finite force, which the solver reports, not silently lose their mutual force (as the
// r = 0 mask did). The other targets are unaffected.
TEST_F(GroupKernels, DistinctParticlesAtOneFloatPositionAreNotTakenForTheSelfPair) {
  for (std::vector<float>* v : {&g.tx, &g.ty, &g.tz}) (*v)[4] = (*v)[3];
  g.sx[4] = g.sx[3], g.sy[4] = g.sy[3], g.sz[4] = g.sz[3];
  const WalkParams<float> w =
      make_walk_params<float>(Criterion::barnes94, 2, Softening::plummer, 0);
  std::vector<float> out[4];
  for (auto& o : out) o.assign(padded(g.nt, kTargetBlock), 0.0f);
  group_kernel<false, 2>(g, w, out[0].data(), out[1].data(), out[2].data(), out[3].data());
  for (std::size_t i = 0; i < g.nt; ++i) {
    const bool finite = std::isfinite(out[0][i] + out[1][i] + out[2][i] + out[3][i]);
    EXPECT_EQ(finite, i != 3 && i != 4) << "target " << i;
  }
}

}  // namespace
}  // namespace hoshi
