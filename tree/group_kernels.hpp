// The SIMD kernels of the CPU group walk (tree/tree_walk.cpp) and their buffers: one group's
// targets, particle sources, cells and far cells in float, relative to the group centre, and
// the kernels that evaluate them: particle-particle (pp_kernel), particle-cell (pc_kernel),
// far cells into a local expansion and back (m2l, l2p). In a header of their own so that
// tests and benchmarks (examples/kernel_bench.cpp) call the same code as the walk.
#pragma once

// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (the
// _mm512_undefined_ps() pass-through of rsqrt14, GCC bug 105593): silenced for these kernels.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "direct/simd.hpp"
#include "physics/local_expansion.hpp"
#include "physics/multipole.hpp"
#include "tree/tree_view.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi::group_kernels {

// Sets flush-to-zero and denormals-are-zero for the calling thread while in scope (x86).
struct FlushDenormals {
#if defined(__SSE__)
  unsigned int saved = _mm_getcsr();
  FlushDenormals() {
    _mm_setcsr(saved | 0x8040u);
  }
  ~FlushDenormals() {
    _mm_setcsr(saved);
  }
#else
  FlushDenormals() = default;
#endif
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;
};

using simd::VecF;
constexpr int kW = simd::kWidth;
#ifndef HOSHI_TREE_BLOCK_PP
#define HOSHI_TREE_BLOCK_PP 4
#endif
#ifndef HOSHI_TREE_BLOCK_PC
#define HOSHI_TREE_BLOCK_PC 4
#endif
// Targets are padded to whole vectors for the L2P step and to whole register blocks for the
// kernels (TargetBlock<B> reads B targets from t0): kW alone is a multiple of the blocks only for
// SIMD widths they divide, and the scalar build (kW = 1) read up to 3 floats past the target
// arrays (AddressSanitizer, 2026-11-30; the results were right, the read undefined).
constexpr int kTargetBlock = std::lcm(kW, std::lcm(HOSHI_TREE_BLOCK_PP, HOSHI_TREE_BLOCK_PC));
// Degree of the groups' local expansions (physics/local_expansion.hpp).
#ifndef HOSHI_LOCAL_ORDER
#define HOSHI_LOCAL_ORDER 5
#endif
constexpr int kLocalOrder = HOSHI_LOCAL_ORDER;
constexpr int kLocalCount = Monomials<kLocalOrder>::kCount;
// Padding entries: zero mass (and moments) far away, so they add exactly zero.
constexpr float kPadPosition = 1e18f;
// Far-cell padding (in group radii): zero mass and moments; near enough that no intermediate
// of the expansion underflows.
constexpr float kFarPadPosition = 1e3f;

// Far cells of one expansion centre, in float SoA relative to the centre and in units of the
// expansion's radius (positions / scale, quadrupoles and mr2 / scale^2), padded to kW.
struct FarBuffer {
  std::vector<float> x, y, z, m, qxx, qxy, qxz, qyy, qyz, qzz, mr2;
  std::size_t n = 0;
  void add(const TreeNode& node, double cx, double cy, double cz, double inv_scale);
  void pad();
};

// Per-thread buffers of one group: sources, cells and targets relative to the group centre,
// filled by the walk itself (FillVisitor) so that every node is read once per group.
struct GroupBuffers {
  std::vector<float> sx, sy, sz, sm;                                     // particle sources
  std::vector<float> cx, cy, cz, cm, qxx, qxy, qxz, qyy, qyz, qzz, mr2;  // cells
  std::vector<float> tx, ty, tz;                                         // targets
  // Each target's own source index (the self pair's, masked): k for target k of a whole group;
  // with active targets alone (GravitySolver::compute_active), those particles' places among
  // the group's own sources, tself[k] = toff[k].
  std::vector<float> tself;
  std::vector<std::uint32_t> toff;  // target k is the group's particle begin + toff[k]
  FarBuffer far;                    // cells for the group's own local expansion
  // Sources: the group's own particles first (all of them, active or not), padded to own_end
  // (a multiple of kW); then the other particles of the opened leaves, [own_end, ns). The
  // self pairs can only be in the first part.
  std::size_t ns = 0, own_end = 0, nc = 0, nt = 0;
  double scale = 1;  // length unit of the far cells: group radius
};

inline std::size_t padded(std::size_t n, std::size_t w) {
  return (n + w - 1) / w * w;
}

// g.nt targets that are the group's own sources 0..nt-1, in order (a whole group, as the
// synthetic groups of tests and benchmarks are): tself and toff up to the targets' padding.
inline void set_whole_group_targets(GroupBuffers& g) {
  const std::size_t np = padded(g.nt, kTargetBlock);
  if (g.tself.size() < np) g.tself.resize(np);
  if (g.toff.size() < np) g.toff.resize(np);
  for (std::size_t k = 0; k < np; ++k) {
    const std::size_t own = g.nt > 0 ? std::min(k, g.nt - 1) : 0;
    g.tself[k] = static_cast<float>(own);
    g.toff[k] = static_cast<std::uint32_t>(own);
  }
}

template <std::size_t K>
inline void grow(std::vector<float>* const (&v)[K], std::size_t n) {
  if (v[0]->size() >= n) return;
  const std::size_t size = std::max<std::size_t>(2 * n, 1024);
  for (auto* a : v) a->resize(size);
}

inline void FarBuffer::add(const TreeNode& node, double cx, double cy, double cz,
                           double inv_scale) {
  grow<11>({&x, &y, &z, &m, &qxx, &qxy, &qxz, &qyy, &qyz, &qzz, &mr2}, n + kW);
  const double s = inv_scale, s2 = s * s;
  x[n] = static_cast<float>((node.com_x - cx) * s);
  y[n] = static_cast<float>((node.com_y - cy) * s);
  z[n] = static_cast<float>((node.com_z - cz) * s);
  m[n] = static_cast<float>(node.m);
  qxx[n] = static_cast<float>(node.qxx * s2);
  qxy[n] = static_cast<float>(node.qxy * s2);
  qxz[n] = static_cast<float>(node.qxz * s2);
  qyy[n] = static_cast<float>(node.qyy * s2);
  qyz[n] = static_cast<float>(node.qyz * s2);
  qzz[n] = static_cast<float>(node.qzz * s2);
  mr2[n] = static_cast<float>(node.mr2 * s2);
  ++n;
}

inline void FarBuffer::pad() {
  for (std::size_t k = n; k < padded(n, kW); ++k) {
    x[k] = y[k] = z[k] = kFarPadPosition;
    m[k] = qxx[k] = qxy[k] = qxz[k] = qyy[k] = qyz[k] = qzz[k] = mr2[k] = 0;
  }
}

// B targets broadcast to vectors, with their accumulators; add_to sums the lanes into out
// for the targets that exist (the last block may run past nt into the padding).
template <int B>
struct TargetBlock {
  VecF X[B], Y[B], Z[B], ax[B], ay[B], az[B], pot[B];
  TargetBlock(const GroupBuffers& g, std::size_t t0) {
    for (int b = 0; b < B; ++b) {
      X[b] = VecF(g.tx[t0 + b]);
      Y[b] = VecF(g.ty[t0 + b]);
      Z[b] = VecF(g.tz[t0 + b]);
      ax[b] = ay[b] = az[b] = pot[b] = VecF(0.0f);
    }
  }
  void add_to(float* const out[4], std::size_t t0, std::size_t nt, float acc_scale) const {
    for (int b = 0; b < B && t0 + b < nt; ++b) {
      out[0][t0 + b] += acc_scale * simd::reduce_add(ax[b]);
      out[1][t0 + b] += acc_scale * simd::reduce_add(ay[b]);
      out[2][t0 + b] += acc_scale * simd::reduce_add(az[b]);
      out[3][t0 + b] += simd::reduce_add(pot[b]);
    }
  }
};

// Particle-particle terms of sources [0, ns) (padded to kW) on targets [0, nt) (padded to
// kTargetBlock), B targets at a time against each source vector, accumulators in registers.
// kSpline picks the kernel (eps2 = 0: unsoftened Plummer). The self pair (own source tself[t]
// for target t) is masked, softened too: its potential -m/eps in the float sums rounded them at
// its size (the caller removed it afterwards until 2026-11-30). Results are added to out.
template <int B, bool kSpline>
void pp_kernel(const GroupBuffers& g, VecF eps2, VecF h_inv, float* const out[4]) {
  // Plummer: the scaled form (plummer_pair_scaled: m/2 in, 4 a out; both exact powers of 2).
  constexpr bool kScaled = !kSpline;
  const VecF m_scale(kScaled ? 0.5f : 1.0f);
  const float acc_scale = kScaled ? 0.25f : 1.0f;
  const std::size_t n = padded(g.ns, kW);
  for (std::size_t t0 = 0; t0 < g.nt; t0 += B) {
    TargetBlock<B> t(g, t0);
    auto& [X, Y, Z, ax, ay, az, pot] = t;
    // kMasked: the sources that may be a target itself (the group's own).
    auto sources = [&](auto masked, std::size_t j0, std::size_t j1) {
      constexpr bool kMasked = decltype(masked)::value;
      for (std::size_t j = j0; j < j1; j += kW) {
        const VecF x = VecF::load(&g.sx[j]), y = VecF::load(&g.sy[j]), z = VecF::load(&g.sz[j]);
        const VecF m = VecF::load(&g.sm[j]) * m_scale;
        // Own source j + lane is target k if tself[k] = j + lane: the self pair is masked by
        // index (exact in float: a group has far fewer than 2^24 particles), not by r = 0,
        // which also masked two distinct particles whose float offsets from the box centre
        // coincide (their infinite force then went missing instead of failing the solver's
        // finiteness check).
        const VecF source_index = simd::lane_index() + VecF(static_cast<float>(j));
        for (int b = 0; b < B; ++b) {
          const VecF dx = x - X[b], dy = y - Y[b], dz = z - Z[b];
          auto pair = [&](auto valid) {
            if constexpr (kSpline)
              spline_pair(dx, dy, dz, m, h_inv, valid, ax[b], ay[b], az[b], pot[b]);
            else
              plummer_pair_scaled(dx, dy, dz, m, eps2, valid, ax[b], ay[b], az[b], pot[b]);
          };
          if constexpr (kMasked)
            pair(source_index != VecF(g.tself[t0 + b]));
          else
            pair(true);
        }
      }
    };
    sources(std::true_type{}, 0, g.own_end);
    sources(std::false_type{}, g.own_end, n);
    t.add_to(out, t0, g.nt, acc_scale);
  }
}

// Particle-cell terms (monopole, or monopole + quadrupole) of the cells on the targets.
template <int B, int kOrder>
void pc_kernel(const GroupBuffers& g, VecF eps2, float* const out[4]) {
  const std::size_t n = padded(g.nc, kW);
  for (std::size_t t0 = 0; t0 < g.nt; t0 += B) {
    TargetBlock<B> t(g, t0);
    auto& [X, Y, Z, ax, ay, az, pot] = t;
    for (std::size_t j = 0; j < n; j += kW) {
      const VecF x = VecF::load(&g.cx[j]), y = VecF::load(&g.cy[j]), z = VecF::load(&g.cz[j]);
      const VecF m = VecF::load(&g.cm[j]);
      if constexpr (kOrder == 1) {
        for (int b = 0; b < B; ++b)
          cell_monopole(x - X[b], y - Y[b], z - Z[b], m, eps2, ax[b], ay[b], az[b], pot[b]);
      } else {
        const VecF qxx = VecF::load(&g.qxx[j]), qxy = VecF::load(&g.qxy[j]);
        const VecF qxz = VecF::load(&g.qxz[j]), qyy = VecF::load(&g.qyy[j]);
        const VecF qyz = VecF::load(&g.qyz[j]), qzz = VecF::load(&g.qzz[j]);
        const VecF mr2 = VecF::load(&g.mr2[j]);
        for (int b = 0; b < B; ++b)
          cell_quadrupole(x - X[b], y - Y[b], z - Z[b], m, qxx, qxy, qxz, qyy, qyz, qzz, mr2, eps2,
                          ax[b], ay[b], az[b], pot[b]);
      }
    }
    t.add_to(out, t0, g.nt, 1.0f);
  }
}

// Far cells to a local expansion (M2L): SIMD over cells, one lane per cell, then summed over
// the lanes into coef[kLocalCount]. eps2: the cells' softening in units of the buffer's scale.
template <int kOrder>
void m2l(const FarBuffer& f, float eps2, float* coef) {
  VecF L[kLocalCount];
  for (VecF& l : L) l = VecF(0.0f);
  const VecF e2(eps2);
  const std::size_t n = padded(f.n, kW);
  for (std::size_t j = 0; j < n; j += kW) {
    add_cell_to_local<kLocalOrder, kOrder>(
        VecF::load(&f.x[j]), VecF::load(&f.y[j]), VecF::load(&f.z[j]), VecF::load(&f.m[j]),
        VecF::load(&f.qxx[j]), VecF::load(&f.qxy[j]), VecF::load(&f.qxz[j]), VecF::load(&f.qyy[j]),
        VecF::load(&f.qyz[j]), VecF::load(&f.qzz[j]), VecF::load(&f.mr2[j]), e2, L);
  }
  for (int c = 0; c < kLocalCount; ++c) coef[c] = simd::reduce_add(L[c]);
}

// A local expansion about a centre, in units of its radius `scale`.
struct LocalFrame {
  double cx, cy, cz, scale;
  float coef[kLocalCount];
};

// Adds the local expansion `coef` (centre offset (ox, oy, oz) from the group centre to the
// frame centre... in the frame's units: target k sits at (tx[k] / scale + ox, ...)) to the
// group's targets (L2P, SIMD over targets), in the caller's units.
inline void l2p(const float* coef, double ox, double oy, double oz, double scale,
                const GroupBuffers& g, float* const out[4]) {
  const double inv_s = 1 / scale;
  const VecF to_unit(static_cast<float>(inv_s));
  const VecF sx(static_cast<float>(ox)), sy(static_cast<float>(oy)), sz(static_cast<float>(oz));
  const VecF acc_scale(static_cast<float>(inv_s * inv_s)), pot_scale(static_cast<float>(inv_s));
  for (std::size_t k = 0; k < g.nt; k += kW) {
    VecF ax, ay, az, pot;
    eval_local<kLocalOrder>(coef, mul_add(VecF::load(&g.tx[k]), to_unit, sx),
                            mul_add(VecF::load(&g.ty[k]), to_unit, sy),
                            mul_add(VecF::load(&g.tz[k]), to_unit, sz), ax, ay, az, pot);
    mul_add(ax, acc_scale, VecF::load(out[0] + k)).store(out[0] + k);
    mul_add(ay, acc_scale, VecF::load(out[1] + k)).store(out[1] + k);
    mul_add(az, acc_scale, VecF::load(out[2] + k)).store(out[2] + k);
    mul_add(pot, pot_scale, VecF::load(out[3] + k)).store(out[3] + k);
  }
}

// Far cells of a centre (positions in units of `scale`) into a new local expansion there.
inline void far_to_local(const FarBuffer& f, double centre_x, double centre_y, double centre_z,
                         double scale, int order, float cell_eps2, LocalFrame& out) {
  out.cx = centre_x, out.cy = centre_y, out.cz = centre_z, out.scale = scale;
  const double inv_s = 1 / scale;
  const float eps2 = static_cast<float>(cell_eps2 * inv_s * inv_s);
  if (order == 1)
    m2l<1>(f, eps2, out.coef);
  else
    m2l<2>(f, eps2, out.coef);
}

// Adds `from` re-expanded about to's centre and in to's unit (L2L): coefficients in a frame of
// scale S hold S phi as a polynomial of x / S, so to(x') = (S_to / S_from) from(o + x' S_to /
// S_from) with o the centre offset in from's unit.
inline void add_shifted(const LocalFrame& from, LocalFrame& to) {
  const double inv = 1 / from.scale, s = to.scale * inv;
  double shifted[kLocalCount];
  shift_local<kLocalOrder>(from.coef, (to.cx - from.cx) * inv, (to.cy - from.cy) * inv,
                           (to.cz - from.cz) * inv, s, s, shifted);
  for (int c = 0; c < kLocalCount; ++c) to.coef[c] = static_cast<float>(to.coef[c] + shifted[c]);
}

constexpr int kBlockPP = HOSHI_TREE_BLOCK_PP;
constexpr int kBlockPC = HOSHI_TREE_BLOCK_PC;

template <bool kSpline, int kOrder>
void group_kernel(const GroupBuffers& g, const WalkParams<float>& w, float* out_ax, float* out_ay,
                  float* out_az, float* out_pot) {
  float* const out[4] = {out_ax, out_ay, out_az, out_pot};
  for (float* o : out) std::fill(o, o + padded(g.nt, kTargetBlock), 0.0f);
  pp_kernel<kBlockPP, kSpline>(g, VecF(w.soft.eps2), VecF(w.soft.h_inv), out);
  pc_kernel<kBlockPC, kOrder>(g, VecF(w.cell_eps2), out);
}

using GroupKernel = void (*)(const GroupBuffers&, const WalkParams<float>&, float*, float*, float*,
                             float*);

template <bool kSpline>
GroupKernel pick_order(int order) {
  return order == 1 ? &group_kernel<kSpline, 1> : &group_kernel<kSpline, 2>;
}

// The kernel for w (eps = 0 runs as Plummer with eps2 = 0: SofteningParams::make).
inline GroupKernel pick_kernel(const WalkParams<float>& w) {
  return w.soft.kind == Softening::spline ? pick_order<true>(w.order) : pick_order<false>(w.order);
}

}  // namespace hoshi::group_kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
