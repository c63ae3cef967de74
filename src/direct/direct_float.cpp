// Fast float32 direct summation with explicit SIMD (src/direct/simd.hpp: AVX-512, AVX2 or
// scalar, chosen at build time by -march).
//
// Layout: the particles in Morton order; float SoA offsets from a centre per chunk of targets
// (direct_all). i-parallel: a group holds
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
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/bounds.hpp"
#include "core/checks.hpp"
#include "core/parallel_errors.hpp"
#include "direct/direct.hpp"
#include "direct/simd.hpp"
#include "tree/octree.hpp"

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

// The particles in a spatially compact order, in double: Morton keys in the bounding cube,
// sorted as for the tree (sort_keys: stable, ties in input order). Consecutive targets (a chunk)
// then lie in one region. m holds mass_scale * m (the kernel's kMassScale; a power of two, exact).
struct SortedSet {
  std::vector<double> x, y, z;
  std::vector<float> m;
  std::vector<std::size_t> index;  // sorted position -> input index
};

SortedSet sorted_set(const ParticleSet& p, float mass_scale) {
  const std::size_t n = p.size();
  const BoundingCube cube = bounding_cube(p.x.data(), p.y.data(), p.z.data(), n);
  std::vector<std::uint64_t> keys(n), index;
  compute_morton_keys(p.x.data(), p.y.data(), p.z.data(), n, cube, keys.data());
  sort_keys(keys, index);
  SortedSet s;
  for (auto* v : {&s.x, &s.y, &s.z}) v->resize(n);
  s.m.resize(n);
  s.index.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = index[k];
    s.index[k] = i;
    s.x[k] = p.x[i];
    s.y[k] = p.y[i];
    s.z[k] = p.z[i];
    s.m[k] = mass_scale * static_cast<float>(p.m[i]);
  }
  return s;
}

// A chunk's extent may be at most this many times the smallest spacing of its particles
// (below): every target's offset from the chunk's centre is then within kChunkSpread of its
// distance to its Morton neighbours, and the rounding of that offset costs at most
// ~6 kChunkSpread 2^-24 (1e-4) of those pair terms, a few 2^-24 in smooth regions (a chunk of
// 192 Plummer particles spans ~30 of its smallest spacings). The Morton neighbours are not
// always the nearest: a pair r apart that the curve separates (an octant boundary between
// them) is rounded at ~kChunkSpread times the local spacing d, an error ~1e-5 d / r of its
// mutual term (a pair 2e-7 apart across x = 0.5 in a unit grid of 16^3: 8e-2, unsoftened;
// with softening r is at least eps). The float32 tree has the same limit at its group size
// (README, "two particles closer than ~1e-6 of their region's size").
constexpr double kChunkSpread = 256;
// Merging neighbouring chunks (target_chunks) asks each particle's offset from the merged
// chunk's median to be within kMergeSpread of its own spacing: tight enough that merging costs
// no accuracy (a geometric line: 2.5e-4 with 256, 3e-5 without merging), loose enough for lone
// outliers, whose offset is about their spacing.
constexpr double kMergeSpread = 16;

// The targets [begin, end) of each chunk: runs of at most kChunkGroups * kGroup consecutive
// sorted particles whose bounding box's largest side is at most kChunkSpread times the
// smallest spacing s_i among them, s_i the max-norm distance from particle i to its nearer
// Morton neighbour, no smaller than the softening length (closer pairs need no finer
// resolution). A cluster's particles and far escapers (whose own spacings are large) never
// share a chunk, whatever particle a chunk starts with (a median-gap rule let a chunk that
// started among escapers take in a cluster). Deterministic: depends on the positions only.
std::vector<std::pair<std::size_t, std::size_t>> target_chunks(const SortedSet& p, double eps) {
  const std::size_t n = p.x.size(), max_size = kChunkGroups * kGroup;
  const auto gap = [&](std::size_t k) {  // between k - 1 and k
    return std::max({std::abs(p.x[k] - p.x[k - 1]), std::abs(p.y[k] - p.y[k - 1]),
                     std::abs(p.z[k] - p.z[k - 1])});
  };
  std::vector<double> spacing(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    double s = std::numeric_limits<double>::infinity();
    if (k > 0) s = std::min(s, gap(k));
    if (k + 1 < n) s = std::min(s, gap(k + 1));
    spacing[k] = std::max(s, eps);
  }
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  for (std::size_t i = 0; i < n;) {
    double lo[3] = {p.x[i], p.y[i], p.z[i]}, hi[3] = {p.x[i], p.y[i], p.z[i]};
    double smallest = spacing[i];
    std::size_t end = i + 1;
    for (; end < n && end - i < max_size; ++end) {
      const double x[3] = {p.x[end], p.y[end], p.z[end]};
      double l[3], h[3], side = 0;
      for (int c = 0; c < 3; ++c) {
        l[c] = std::min(lo[c], x[c]);
        h[c] = std::max(hi[c], x[c]);
        side = std::max(side, h[c] - l[c]);
      }
      const double s = std::min(smallest, spacing[end]);
      if (side > kChunkSpread * s) break;
      std::copy(l, l + 3, lo);
      std::copy(h, h + 3, hi);
      smallest = s;
    }
    chunks.emplace_back(i, end);
    i = end;
  }
  // Neighbouring chunks merge (up to the chunk size) where every particle stays within
  // kMergeSpread of its own spacing from the merged chunk's median position: a lone outlier
  // (a chunk of its own above, its spacing large) joins the chunk beside it, whose offsets do
  // not change much, instead of costing a group pass of its own.
  std::vector<double> scratch;
  std::vector<std::pair<std::size_t, std::size_t>> merged;
  for (const auto& c : chunks) {
    if (!merged.empty() && c.second - merged.back().first <= max_size) {
      const std::size_t b = merged.back().first, e = c.second;
      const double centre[3] = {median(p.x, b, e, scratch), median(p.y, b, e, scratch),
                                median(p.z, b, e, scratch)};
      bool fits = true;
      for (std::size_t k = b; k < e && fits; ++k)
        fits = std::max({std::abs(p.x[k] - centre[0]), std::abs(p.y[k] - centre[1]),
                         std::abs(p.z[k] - centre[2])}) <= kMergeSpread * spacing[k];
      if (fits) {
        merged.back().second = e;
        continue;
      }
    }
    merged.push_back(c);
  }
  return merged;
}

// Float accumulators of the sorted targets.
struct FloatSums {
  std::vector<float> ax, ay, az, pot;
};

// All n targets against all n sources, in float offsets from a centre per chunk of
// consecutive (sorted) targets (target_chunks): the chunk's targets and, one tile at a time,
// the sources are converted from double relative to the chunk's median position. A pair's
// rounding error is then that of its own distances from the chunk, not of the whole system's
// extent (one escaper 1e4 away from a unit cluster made the cluster's forces 1e-2 wrong with
// one global centre). The conversion costs ~1/kGroup of the pair work per source. The self
// pair can only occur in the sources [i0, i0 + kGroup) of the group starting at i0: that
// range runs with the SkipSelf mask and the rest unmasked. Softened too: the self pair's
// potential -m_i/eps, added to the float sums and removed at the end (until 2026-11-30),
// rounded them at its size (an escaper's potential 1e-6 came out 7e-10; one particle alone
// got -1e-7).
// active: per sorted particle, whether its forces are wanted (nullptr: every particle's); a chunk
// without one is skipped (its sums stay 0). Returns the number of targets summed.
template <class Kernel>
std::uint64_t direct_all(const Kernel& kern, const SortedSet& p, double eps, FloatSums& out,
                         const std::vector<std::uint8_t>* active) {
  const std::size_t n = p.x.size();
  constexpr std::size_t kChunk = kChunkGroups * kGroup;
  const auto chunks = target_chunks(p, eps);
  for (auto* v : {&out.ax, &out.ay, &out.az, &out.pot}) v->assign(n, 0.0f);
  const auto nchunks = static_cast<std::ptrdiff_t>(chunks.size());
  // A failed allocation (the buffers, the medians' scratch) is rethrown after the region, not
  // left to end the program inside it.
  ParallelErrors errors;
  std::uint64_t summed = 0;
  // Below n = 256 thread start-up costs more than it saves.
#pragma omp parallel if (n > 256) reduction(+ : summed)
  {
    std::vector<float> sx, sy, sz, sm, tx, ty, tz, ax, ay, az, pot;
    std::vector<double> scratch;
    errors.run([&] {
      for (auto* v : {&sx, &sy, &sz, &sm}) v->resize(kTile);
      for (auto* v : {&tx, &ty, &tz, &ax, &ay, &az, &pot}) v->resize(kChunk);
    });
    // Dynamic chunks: a thread that loses its core to another process does not hold up the
    // rest.
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t c = 0; c < nchunks; ++c)
      errors.run([&] {
        const auto [i_begin, i_end] = chunks[static_cast<std::size_t>(c)];
        if (active && std::none_of(active->begin() + static_cast<std::ptrdiff_t>(i_begin),
                                   active->begin() + static_cast<std::ptrdiff_t>(i_end),
                                   [](std::uint8_t a) { return a != 0; }))
          return;
        summed += i_end - i_begin;
        const double cx = median(p.x, i_begin, i_end, scratch);
        const double cy = median(p.y, i_begin, i_end, scratch);
        const double cz = median(p.z, i_begin, i_end, scratch);
        for (std::size_t k = 0; k < kChunk; ++k) {  // padding: the centre, results unused
          const std::size_t i = i_begin + k;
          tx[k] = i < i_end ? static_cast<float>(p.x[i] - cx) : 0.0f;
          ty[k] = i < i_end ? static_cast<float>(p.y[i] - cy) : 0.0f;
          tz[k] = i < i_end ? static_cast<float>(p.z[i] - cz) : 0.0f;
          ax[k] = ay[k] = az[k] = pot[k] = 0.0f;
        }
        for (std::size_t s0 = 0; s0 < n; s0 += kTile) {
          const std::size_t s1 = std::min(n, s0 + kTile);
          {
            const double* __restrict__ x = p.x.data() + s0;
            const double* __restrict__ y = p.y.data() + s0;
            const double* __restrict__ z = p.z.data() + s0;
            float* __restrict__ fx = sx.data();
            float* __restrict__ fy = sy.data();
            float* __restrict__ fz = sz.data();
            const auto count = static_cast<std::ptrdiff_t>(s1 - s0);
#pragma omp simd
            for (std::ptrdiff_t j = 0; j < count; ++j) {
              fx[j] = static_cast<float>(x[j] - cx);
              fy[j] = static_cast<float>(y[j] - cy);
              fz[j] = static_cast<float>(z[j] - cz);
            }
            std::copy(p.m.begin() + static_cast<std::ptrdiff_t>(s0),
                      p.m.begin() + static_cast<std::ptrdiff_t>(s1), sm.begin());
          }
          const FloatSources src{sx.data(), sy.data(), sz.data(), sm.data(), s1 - s0};
          const auto ns = static_cast<std::ptrdiff_t>(s1 - s0);
          for (std::size_t k0 = 0; i_begin + k0 < i_end; k0 += kGroup) {
            // A chunk's last group with fewer targets runs with as many registers as they fill.
            const std::size_t regs = std::min<std::size_t>(
                kRegs, (i_end - i_begin - k0 + kWidth - 1) / static_cast<std::size_t>(kWidth));
            auto run = [&](const auto& valid, std::ptrdiff_t j0, std::ptrdiff_t j1) {
              if (j0 >= j1) return;
              auto group = [&](auto r) {
                target_group<decltype(r)::value, true>(kern, valid, &tx[k0], &ty[k0], &tz[k0],
                                                       &ax[k0], &ay[k0], &az[k0], &pot[k0], src, j0,
                                                       j1);
              };
              if (regs >= kRegs)
                group(std::integral_constant<int, kRegs>{});
              else if (regs == 2)
                group(std::integral_constant<int, 2>{});
              else
                group(std::integral_constant<int, 1>{});
            };
            {  // tile-local source indices: global j - s0
              const auto b =
                  static_cast<std::ptrdiff_t>(i_begin + k0) - static_cast<std::ptrdiff_t>(s0);
              const std::ptrdiff_t d0 = std::clamp<std::ptrdiff_t>(b, 0, ns);
              const std::ptrdiff_t d1 =
                  std::clamp<std::ptrdiff_t>(b + static_cast<std::ptrdiff_t>(kGroup), 0, ns);
              run(NoMask{}, 0, d0);
              run(SkipSelf{b}, d0, d1);
              run(NoMask{}, d1, ns);
            }
          }
        }
        for (std::size_t i = i_begin; i < i_end; ++i) {
          out.ax[i] = ax[i - i_begin];
          out.ay[i] = ay[i - i_begin];
          out.az[i] = az[i - i_begin];
          out.pot[i] = pot[i - i_begin];
        }
      });
  }
  errors.rethrow();
  return summed;
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

std::uint64_t direct_float(ParticleSet& p, double G, Softening kernel, double eps,
                           const std::vector<std::uint8_t>* active) {
  const std::size_t n = p.size();
  if (n == 0) return 0;
  const auto s = SofteningParams<float>::make(kernel, eps);
  const bool soft = eps > 0;
  const bool spline = s.kind == Softening::spline;
  const SortedSet sorted =
      sorted_set(p, spline ? SplineKernel::kMassScale : PlummerKernel::kMassScale);
  std::vector<std::uint8_t> sorted_active;
  if (active) {
    sorted_active.resize(n);
    for (std::size_t k = 0; k < n; ++k) sorted_active[k] = (*active)[sorted.index[k]] != 0;
  }
  const std::vector<std::uint8_t>* act = active ? &sorted_active : nullptr;
  FloatSums f;
  const std::uint64_t summed = spline
                                   ? direct_all(SplineKernel{VecF(s.h_inv)}, sorted, eps, f, act)
                                   : direct_all(PlummerKernel{VecF(s.eps2)}, sorted, eps, f, act);
  const auto wanted = [&](std::size_t k) { return !act || sorted_active[k]; };

  // Check before writing, so that on an error p keeps its previous accelerations.
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i)
    finite = finite && (!wanted(i) || std::isfinite(f.ax[i] + f.ay[i] + f.az[i] + f.pot[i]));
  if (!finite) {
    // Coincident particles with eps == 0: name them (only on this error path, O(N log N)).
    if (!soft) require_distinct_positions(p);
    // Distinct in double but equal after rounding to float32 relative to the chunk's centre,
    // or a force beyond the float range.
    std::ostringstream msg;
    msg << "direct float32 kernel: non-finite force with softening " << eps;
    if (soft)
      msg << " (a softening this far from the system's size leaves float32's range: m / eps^3 "
             "when it is tiny, eps^2 when it is huge; use one near the interparticle distance, 0 "
             "for none, or --precision double)";
    else
      msg << " (particles closer than float32 resolves); use --softening > 0 or --precision "
             "double";
    throw std::invalid_argument(msg.str());
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (!wanted(k)) continue;
    const std::size_t i = sorted.index[k];
    const double pot = f.pot[k];
    p.ax[i] = G * f.ax[k];
    p.ay[i] = G * f.ay[k];
    p.az[i] = G * f.az[k];
    p.pot[i] = G * pot;
  }
  return summed * (n - 1);
}

}  // namespace hoshi
