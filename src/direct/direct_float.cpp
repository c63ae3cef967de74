// Fast float32 direct summation with explicit SIMD (src/direct/simd.hpp: AVX-512, AVX2 or
// scalar, chosen at build time by -march).
//
// Layout: float SoA positions relative to the bounding-box centre. i-parallel: a group holds
// kRegs registers of kWidth targets (3 x 16 = 48 on AVX-512) in registers with their
// accumulators; each source is broadcast and interacts with all of them. Sources come in
// tiles of kTile (32 KiB of float SoA, inside the 48 KiB L1) that every group of a thread
// walks before the next tile. OpenMP hands out chunks of kChunkGroups groups dynamically.
//
// The pair arithmetic is the shared HOSTDEV template (plummer_pair_scaled, spline_pair in
// physics/softening.hpp) instantiated with Real = simd::VecF; nothing here repeats it.
// docs/perf-direct.md counts the instructions and gives the measured rates.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/bounds.hpp"
#include "core/checks.hpp"
#include "direct/direct.hpp"
#include "direct/simd.hpp"

namespace hoshi {

namespace {

using simd::VecF;
constexpr int kWidth = simd::kWidth;
constexpr int kRegs = 3;                        // target registers per group
constexpr std::size_t kGroup = kRegs * kWidth;  // targets per group
constexpr std::size_t kTile = 2048;             // sources per tile: 2048 x 16 B = 32 KiB
constexpr std::size_t kChunkGroups = 4;         // groups per OpenMP work item (192 targets)

// The two pair kernels, as functors over VecF calling the shared physics. A source's mass is
// multiplied by kMassScale once per source and the accelerations accumulated in registers are
// kAccScale^-1 times the true ones (plummer_pair_scaled: m/2 in, 4 a out; powers of 2, exact).
struct PlummerKernel {
  static constexpr float kMassScale = 0.5f;
  static constexpr float kAccScale = 0.25f;
  VecF eps2;
  template <class Mask>
  void operator()(VecF dx, VecF dy, VecF dz, VecF m_half, Mask valid, VecF& ax4, VecF& ay4,
                  VecF& az4, VecF& pot) const {
    plummer_pair_scaled(dx, dy, dz, m_half, eps2, valid, ax4, ay4, az4, pot);
  }
};
struct SplineKernel {
  static constexpr float kMassScale = 1.0f;
  static constexpr float kAccScale = 1.0f;
  VecF h_inv;
  template <class Mask>
  void operator()(VecF dx, VecF dy, VecF dz, VecF m, Mask valid, VecF& ax, VecF& ay, VecF& az,
                  VecF& pot) const {
    spline_pair(dx, dy, dz, m, h_inv, valid, ax, ay, az, pot);
  }
};

// Which pairs count. NoMask: all (the common case, no per-pair cost). SkipSelf: target lane
// r*kWidth + k is source base + r*kWidth + k (the diagonal block of direct_float).
// SkipZeroDistance: pairs with d == 0 are skipped (block kernel with eps == 0).
struct NoMask {
  bool operator()(int, std::ptrdiff_t, VecF, VecF, VecF) const { return true; }
};
struct SkipSelf {
  std::ptrdiff_t base;
  auto operator()(int r, std::ptrdiff_t j, VecF, VecF, VecF) const {
    // Lane offsets and j - base are small integers (< kGroup), exact in float.
    return simd::lane_index() + VecF(float(r * kWidth)) != VecF(float(j - base));
  }
};
struct SkipZeroDistance {
  auto operator()(int, std::ptrdiff_t, VecF dx, VecF dy, VecF dz) const {
    return dx * dx + dy * dy + dz * dz > VecF(0.0f);
  }
};

// R registers of targets (R * kWidth consecutive entries of tx.. pot, all readable and
// writable) against the sources [j0, j1): sums in registers, then adds the sums to ax.. pot.
// kPrescaled: the source masses are already multiplied by Kernel::kMassScale.
template <int R, bool kPrescaled, class Kernel, class Valid>
inline void target_group(const Kernel& kern, const Valid& valid, const float* tx, const float* ty,
                         const float* tz, float* ax, float* ay, float* az, float* pot,
                         const FloatSources& s, std::ptrdiff_t j0, std::ptrdiff_t j1) {
  VecF xi[R], yi[R], zi[R], axi[R], ayi[R], azi[R], poti[R];
  for (int r = 0; r < R; ++r) {
    xi[r] = VecF::load(tx + r * kWidth);
    yi[r] = VecF::load(ty + r * kWidth);
    zi[r] = VecF::load(tz + r * kWidth);
    axi[r] = ayi[r] = azi[r] = poti[r] = VecF(0.0f);
  }
  const VecF mass_scale(Kernel::kMassScale);
  const float *sx = s.x, *sy = s.y, *sz = s.z, *sm = s.m;
  for (std::ptrdiff_t j = j0; j < j1; ++j) {
    const VecF xj(sx[j]), yj(sy[j]), zj(sz[j]);
    const VecF mj = kPrescaled ? VecF(sm[j]) : VecF(sm[j]) * mass_scale;
    for (int r = 0; r < R; ++r) {
      const VecF dx = xj - xi[r], dy = yj - yi[r], dz = zj - zi[r];
      kern(dx, dy, dz, mj, valid(r, j, dx, dy, dz), axi[r], ayi[r], azi[r], poti[r]);
    }
  }
  const VecF acc_scale(Kernel::kAccScale);
  for (int r = 0; r < R; ++r) {
    mul_add(acc_scale, axi[r], VecF::load(ax + r * kWidth)).store(ax + r * kWidth);
    mul_add(acc_scale, ayi[r], VecF::load(ay + r * kWidth)).store(ay + r * kWidth);
    mul_add(acc_scale, azi[r], VecF::load(az + r * kWidth)).store(az + r * kWidth);
    (poti[r] + VecF::load(pot + r * kWidth)).store(pot + r * kWidth);
  }
}

// Float SoA copy of a particle set relative to the bounding-box centre, padded to whole
// groups (padding: position 0, mass 0, never used as a source), with float accumulators.
// m holds mass_scale * m (the kernel's kMassScale; a power of two, exact).
struct LocalFloat {
  std::vector<float> x, y, z, m, ax, ay, az, pot;
};

LocalFloat to_local_float(const ParticleSet& p, std::size_t padded, float mass_scale) {
  const std::size_t n = p.size();
  const Box box = bounding_box(p);
  const double c[3] = {box.centre(0), box.centre(1), box.centre(2)};
  LocalFloat f;
  for (auto* v : {&f.x, &f.y, &f.z, &f.m, &f.ax, &f.ay, &f.az, &f.pot}) v->assign(padded, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    f.x[i] = static_cast<float>(p.x[i] - c[0]);
    f.y[i] = static_cast<float>(p.y[i] - c[1]);
    f.z[i] = static_cast<float>(p.z[i] - c[2]);
    f.m[i] = mass_scale * static_cast<float>(p.m[i]);
  }
  return f;
}

// All n targets against all n sources. The self pair can only occur in the sources
// [i0, i0 + kGroup) of the group starting at i0: with eps == 0 (`mask_self`) that range runs
// with the SkipSelf mask and the rest unmasked.
template <class Kernel>
void direct_all(const Kernel& kern, bool mask_self, LocalFloat& f, std::size_t n) {
  const std::size_t ngroups = f.x.size() / kGroup;
  const FloatSources src{f.x.data(), f.y.data(), f.z.data(), f.m.data(), n};
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
  const std::ptrdiff_t nchunks =
      static_cast<std::ptrdiff_t>((ngroups + kChunkGroups - 1) / kChunkGroups);
  // Dynamic chunks: a thread that loses its core to another process does not hold up the
  // rest. Below n = 256 thread start-up costs more than it saves.
#pragma omp parallel for schedule(dynamic, 1) if (n > 256)
  for (std::ptrdiff_t c = 0; c < nchunks; ++c) {
    const std::size_t g0 = static_cast<std::size_t>(c) * kChunkGroups;
    const std::size_t g1 = std::min(ngroups, g0 + kChunkGroups);
    for (std::ptrdiff_t s0 = 0; s0 < nn; s0 += static_cast<std::ptrdiff_t>(kTile)) {
      const std::ptrdiff_t s1 = std::min(nn, s0 + static_cast<std::ptrdiff_t>(kTile));
      for (std::size_t g = g0; g < g1; ++g) {
        const std::size_t i0 = g * kGroup;
        auto run = [&](const auto& valid, std::ptrdiff_t j0, std::ptrdiff_t j1) {
          if (j0 >= j1) return;
          target_group<kRegs, true>(kern, valid, &f.x[i0], &f.y[i0], &f.z[i0], &f.ax[i0], &f.ay[i0],
                                    &f.az[i0], &f.pot[i0], src, j0, j1);
        };
        if (!mask_self) {
          run(NoMask{}, s0, s1);
        } else {
          const std::ptrdiff_t b = static_cast<std::ptrdiff_t>(i0);
          const std::ptrdiff_t d0 = std::clamp(b, s0, s1);
          const std::ptrdiff_t d1 = std::clamp(b + static_cast<std::ptrdiff_t>(kGroup), s0, s1);
          run(NoMask{}, s0, d0);
          run(SkipSelf{b}, d0, d1);
          run(NoMask{}, d1, s1);
        }
      }
    }
  }
}

template <class Kernel, class Valid>
void block_all(const Kernel& kern, const Valid& valid, const FloatTargets& t,
               const FloatSources& s) {
  const std::ptrdiff_t ns = static_cast<std::ptrdiff_t>(s.n);
  std::size_t i = 0;
  for (; i + kGroup <= t.n; i += kGroup)
    target_group<kRegs, false>(kern, valid, t.x + i, t.y + i, t.z + i, t.ax + i, t.ay + i, t.az + i,
                               t.pot + i, s, 0, ns);
  for (; i + kWidth <= t.n; i += kWidth)
    target_group<1, false>(kern, valid, t.x + i, t.y + i, t.z + i, t.ax + i, t.ay + i, t.az + i,
                           t.pot + i, s, 0, ns);
  if (i == t.n) return;
  // Remainder: fewer than kWidth targets, through a zero-padded register's worth of copies.
  float x[kWidth] = {}, y[kWidth] = {}, z[kWidth] = {}, ax[kWidth] = {}, ay[kWidth] = {},
        az[kWidth] = {}, pot[kWidth] = {};
  const std::size_t rest = t.n - i;
  std::copy_n(t.x + i, rest, x);
  std::copy_n(t.y + i, rest, y);
  std::copy_n(t.z + i, rest, z);
  target_group<1, false>(kern, valid, x, y, z, ax, ay, az, pot, s, 0, ns);
  for (std::size_t k = 0; k < rest; ++k) {
    t.ax[i + k] += ax[k];
    t.ay[i + k] += ay[k];
    t.az[i + k] += az[k];
    t.pot[i + k] += pot[k];
  }
}

}  // namespace

const char* direct_simd_name() {
  return simd::kName;
}

void direct_block_float(const SofteningParams<float>& s, const FloatTargets& t,
                        const FloatSources& src, bool skip_zero_distance) {
  if (t.n == 0 || src.n == 0) return;
  auto with_mask = [&](const auto& kern) {
    if (skip_zero_distance && !(s.eps2 > 0))
      block_all(kern, SkipZeroDistance{}, t, src);
    else
      block_all(kern, NoMask{}, t, src);
  };
  if (s.kind == Softening::spline)
    with_mask(SplineKernel{VecF(s.h_inv)});
  else
    with_mask(PlummerKernel{VecF(s.eps2)});
}

std::uint64_t direct_float(ParticleSet& p, double G, Softening kernel, double eps) {
  const std::size_t n = p.size();
  if (n == 0) return 0;
  const auto s = SofteningParams<float>::make(kernel, eps);
  const bool soft = eps > 0;
  const std::size_t padded = (n + kGroup - 1) / kGroup * kGroup;
  LocalFloat f;
  if (s.kind == Softening::spline) {
    f = to_local_float(p, padded, SplineKernel::kMassScale);
    direct_all(SplineKernel{VecF(s.h_inv)}, !soft, f, n);
  } else {
    f = to_local_float(p, padded, PlummerKernel::kMassScale);
    direct_all(PlummerKernel{VecF(s.eps2)}, !soft, f, n);
  }

  // Check before writing, so that on an error p keeps its previous accelerations.
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i)
    finite = finite && std::isfinite(f.ax[i] + f.ay[i] + f.az[i] + f.pot[i]);
  if (!finite) {
    // Coincident particles with eps == 0: name them (only on this error path, O(N log N)).
    if (!soft) require_distinct_positions(p);
    // Distinct in double but equal after rounding to float32 relative to the box centre, or
    // a force beyond the float range.
    std::ostringstream msg;
    msg << "direct float32 kernel: non-finite force with softening " << eps;
    if (soft)
      msg << " (a softening this far below the system's size makes m / eps^3 overflow float32; "
             "use a larger one, 0 for none, or --precision double)";
    else
      msg << " (particles closer than float32 resolves); use --softening > 0 or --precision "
             "double";
    throw std::invalid_argument(msg.str());
  }
  for (std::size_t i = 0; i < n; ++i) {
    // With softening the self pair was included: zero force and potential -m_i/eps for both
    // kernels. Remove it.
    const double pot = soft ? double(f.pot[i]) + p.m[i] / eps : double(f.pot[i]);
    p.ax[i] = G * f.ax[i];
    p.ay[i] = G * f.ay[i];
    p.az[i] = G * f.az[i];
    p.pot[i] = G * pot;
  }
  return static_cast<std::uint64_t>(n) * (n - 1);
}

}  // namespace hoshi
