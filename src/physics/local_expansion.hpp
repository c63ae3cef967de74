// Local (Taylor) expansions of cell potentials about a point: the far field of the CPU group
// walk (tree/tree_walk.cpp, "Far cells").
//
// A cell far from a group compared to the group's size has a smooth potential over the group;
// instead of evaluating the cell's multipole on every particle of the group (one p-c term per
// particle), the walk adds the cell's potential, Taylor-expanded about the group centre to
// total degree P, to one expansion per group (cell-to-local, "M2L"), and evaluates that
// expansion once per particle (local-to-particle, "L2P").
//
// The expanded function is exactly the cell term of multipole.hpp (Plummer-softened with
// eps2 in the cell terms, S the cell's mr2):
//   phi(x) = -M / |d| - (1/2) (d.Q.d - eps2 S) / |d|^5,   |d|^2 = d.d + eps2,   d = s - x,
// with s the cell's centre of mass relative to the expansion centre and Q its traceless
// quadrupole (order 1: Q = 0). Its Taylor series in x converges for |x| < |s| and the error of
// the degree-P truncation at |x| = rho |s| is of order rho^(P+1) in the potential and
// (P+1) rho^P in the acceleration, relative to the cell's term.
//
// The expansion is built from the series of |d|^-1 and |d|^-5 in t = (|d|^2 - a) / a with
// a = |s|^2 + eps2 (t = (-2 s.x + x.x) / a, zero at x = 0):
//   |d|^-k = a^(-k/2) (1 + t)^(-k/2) = a^(-k/2) sum_j binom(-k/2, j) t^j,
// so everything is products of polynomials, exact to round-off, with no special cases; a
// jet of 3-variable monomials (x^i y^j z^k, i + j + k <= P) holds the coefficients.
//
// Written for Real = float, double or a SIMD vector (one cell per lane): the same code serves
// the SIMD walk and the double-precision tests. Callers scale lengths so that |x| <= 1 and
// |s| >= 1 / rho (tree_walk.cpp), which keeps every coefficient near the size of M / |s|.
#pragma once

#include <array>

#include "physics/hostdev.hpp"

// The loops below run over compile-time tables; fully unrolled, every table entry and every
// branch on it folds away and the arrays of Real live in registers.
#if defined(__clang__)
#define HOSHI_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define HOSHI_UNROLL _Pragma("GCC unroll 128")
#else
#define HOSHI_UNROLL
#endif

namespace hoshi {

// Monomials x^i y^j z^k of total degree <= P: by degree, then i descending, then j descending.
template <int P>
struct Monomials {
  static constexpr int kCount = (P + 1) * (P + 2) * (P + 3) / 6;
  static constexpr int index(int i, int j, int k) {
    const int d = i + j + k, e = d - i;
    return d * (d + 1) * (d + 2) / 6 + e * (e + 1) / 2 + (e - j);
  }
  // Exponents of each monomial, and the index of the monomial divided by x, y or z
  // (-1 where the exponent is 0), and by x^2, y^2 or z^2 (-1 where the exponent is < 2).
  std::array<int, kCount> ex{}, ey{}, ez{}, deg{};
  std::array<std::array<int, 3>, kCount> down1{}, down2{};
  constexpr Monomials() {
    int n = 0;
    for (int d = 0; d <= P; ++d)
      for (int i = d; i >= 0; --i)
        for (int j = d - i; j >= 0; --j) {
          const int k = d - i - j;
          ex[n] = i;
          ey[n] = j;
          ez[n] = k;
          deg[n] = d;
          down1[n] = {i > 0 ? index(i - 1, j, k) : -1, j > 0 ? index(i, j - 1, k) : -1,
                      k > 0 ? index(i, j, k - 1) : -1};
          down2[n] = {i > 1 ? index(i - 2, j, k) : -1, j > 1 ? index(i, j - 2, k) : -1,
                      k > 1 ? index(i, j, k - 2) : -1};
          ++n;
        }
  }
};

namespace local_detail {

template <int P>
inline constexpr Monomials<P> kMono{};

// out = u * t, t = tx x + ty y + tz z + tq (x^2 + y^2 + z^2), truncated at degree P, for the
// output monomials of degree >= min_deg (u has no terms below degree min_deg - 1).
template <int P, class Real>
HOSTDEV inline void mul_t(const Real* u, Real tx, Real ty, Real tz, Real tq, int min_deg,
                          Real* out) {
  constexpr auto& M = kMono<P>;
  HOSHI_UNROLL
  for (int a = 0; a < M.kCount; ++a) {
    if (M.deg[a] < min_deg) {
      out[a] = Real(0);
      continue;
    }
    Real s(0);
    if (M.down1[a][0] >= 0) s = mul_add(tx, u[M.down1[a][0]], s);
    if (M.down1[a][1] >= 0) s = mul_add(ty, u[M.down1[a][1]], s);
    if (M.down1[a][2] >= 0) s = mul_add(tz, u[M.down1[a][2]], s);
    Real q(0);
    bool any = false;
    HOSHI_UNROLL
    for (int c = 0; c < 3; ++c)
      if (M.down2[a][c] >= 0) {
        q = any ? q + u[M.down2[a][c]] : u[M.down2[a][c]];
        any = true;
      }
    out[a] = any ? mul_add(tq, q, s) : s;
  }
}

}  // namespace local_detail

// Adds to L[0 .. Monomials<P>::kCount) the Taylor coefficients about x = 0, to degree P, of
// phi(x) above for one cell (order 1: monopole, 2: monopole + quadrupole).
template <int P, int kOrder, class Real>
HOSTDEV inline void add_cell_to_local(Real sx, Real sy, Real sz, Real m, Real qxx, Real qxy,
                                      Real qxz, Real qyy, Real qyz, Real qzz, Real mr2, Real eps2,
                                      Real* L) {
  using local_detail::kMono;
  using local_detail::mul_t;
  constexpr int K = Monomials<P>::kCount;
  constexpr auto& M = kMono<P>;
  const Real a = mul_add(sz, sz, mul_add(sy, sy, mul_add(sx, sx, eps2)));
  const Real ia_half = rsqrt(a);  // a^(-1/2)
  const Real ia = ia_half * ia_half;
  // t = (-2 s.x + x.x) / a
  const Real m2ia = Real(-2) * ia;
  const Real tx = m2ia * sx, ty = m2ia * sy, tz = m2ia * sz, tq = ia;
  // Powers of t (t^j has degrees j .. 2j) and the two binomial series.
  Real T[K], U[K];
  HOSHI_UNROLL
  for (int c = 0; c < K; ++c) T[c] = Real(0);
  T[M.index(1, 0, 0)] = tx;
  T[M.index(0, 1, 0)] = ty;
  T[M.index(0, 0, 1)] = tz;
  if constexpr (P >= 2) {
    T[M.index(2, 0, 0)] = tq;
    T[M.index(0, 2, 0)] = tq;
    T[M.index(0, 0, 2)] = tq;
  }
  // s1 = sum_j binom(-1/2, j) t^j and s5 = sum_j binom(-5/2, j) t^j, j = 0..P.
  Real s1[K], s5[K];
  double b1 = 1, b5 = 1;  // binom(-1/2, j), binom(-5/2, j)
  HOSHI_UNROLL
  for (int c = 0; c < K; ++c) s1[c] = s5[c] = Real(0);
  s1[0] = s5[0] = Real(1);
  HOSHI_UNROLL
  for (int j = 1; j <= P; ++j) {
    b1 *= (-0.5 - (j - 1)) / j;
    b5 *= (-2.5 - (j - 1)) / j;
    if (j > 1) {  // T = t^j from t^(j-1)
      mul_t<P>(T, tx, ty, tz, tq, j, U);
      HOSHI_UNROLL
      for (int c = 0; c < K; ++c) T[c] = U[c];
    }
    HOSHI_UNROLL
    for (int c = 0; c < K; ++c) {
      if (M.deg[c] < j) continue;
      s1[c] = mul_add(Real(static_cast<float>(b1)), T[c], s1[c]);
      if constexpr (kOrder >= 2) s5[c] = mul_add(Real(static_cast<float>(b5)), T[c], s5[c]);
    }
  }
  // Monopole: -M |d|^-1 = -M a^(-1/2) s1.
  const Real mono = -m * ia_half;
  HOSHI_UNROLL
  for (int c = 0; c < K; ++c) L[c] = mul_add(mono, s1[c], L[c]);
  if constexpr (kOrder >= 2) {
    // Quadrupole: -(1/2) (d.Q.d - eps2 S) a^(-5/2) s5 with d = s - x:
    // d.Q.d - eps2 S = (s.Q.s - eps2 S) - 2 x.(Q s) + x.Q.x, a quadratic in x.
    const Real qsx = mul_add(qxz, sz, mul_add(qxy, sy, qxx * sx));
    const Real qsy = mul_add(qyz, sz, mul_add(qyy, sy, qxy * sx));
    const Real qsz = mul_add(qzz, sz, mul_add(qyz, sy, qxz * sx));
    const Real sqs = mul_add(sz, qsz, mul_add(sy, qsy, sx * qsx));
    const Real ia5 = ia * ia * ia_half;
    const Real h = Real(-0.5f) * ia5;
    // The quadratic's coefficients times h: constant, linear (x, y, z), quadratic.
    Real q[10];
    q[0] = h * (sqs - eps2 * mr2);
    q[1] = Real(-2) * h * qsx;
    q[2] = Real(-2) * h * qsy;
    q[3] = Real(-2) * h * qsz;
    if constexpr (P >= 2) {
      q[4] = h * qxx;            // x^2
      q[5] = Real(2) * h * qxy;  // xy
      q[6] = Real(2) * h * qxz;  // xz
      q[7] = h * qyy;            // y^2
      q[8] = Real(2) * h * qyz;  // yz
      q[9] = h * qzz;            // z^2
    }
    constexpr int kQuadIndex[10][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0},
                                       {1, 1, 0}, {1, 0, 1}, {0, 2, 0}, {0, 1, 1}, {0, 0, 2}};
    HOSHI_UNROLL
    for (int c = 0; c < K; ++c) {
      HOSHI_UNROLL
      for (int r = 0; r < 10; ++r) {
        const int i = M.ex[c] - kQuadIndex[r][0], j = M.ey[c] - kQuadIndex[r][1],
                  k = M.ez[c] - kQuadIndex[r][2];
        if (i < 0 || j < 0 || k < 0) continue;
        if (r >= 4 && P < 2) continue;
        L[c] = mul_add(q[r], s5[M.index(i, j, k)], L[c]);
      }
    }
  }
}

namespace local_detail {

// The terms of a binomial shift along one axis, as a compile-time list: output monomial
// out[t] (exponent e along the axis) receives input monomial in[t] (exponent n >= e, other
// exponents equal) times binom(n, e) o^(n - e); the output is then scaled by s^e.
template <int P, int kAxis>
struct ShiftTerms {
  static constexpr int kMax = Monomials<P>::kCount * (P + 1);
  int count = 0;
  std::array<int, kMax> out{}, in{}, power{};
  std::array<double, kMax> binom{};
  std::array<int, Monomials<P>::kCount> scale_power{};
  constexpr ShiftTerms() {
    constexpr Monomials<P> M{};
    double b[P + 1][P + 1] = {};
    for (int n = 0; n <= P; ++n) {
      b[n][0] = 1;
      for (int k = 1; k <= n; ++k) b[n][k] = b[n - 1][k - 1] + (k < n ? b[n - 1][k] : 0);
    }
    for (int a = 0; a < M.kCount; ++a) {
      const int e[3] = {M.ex[a], M.ey[a], M.ez[a]};
      scale_power[a] = e[kAxis];
      const int top = P - (e[0] + e[1] + e[2] - e[kAxis]);
      for (int n = e[kAxis]; n <= top; ++n) {
        int f[3] = {e[0], e[1], e[2]};
        f[kAxis] = n;
        out[count] = a;
        in[count] = Monomials<P>::index(f[0], f[1], f[2]);
        power[count] = n - e[kAxis];
        binom[count] = b[n][e[kAxis]];
        ++count;
      }
    }
  }
};

template <int P, int kAxis>
inline constexpr ShiftTerms<P, kAxis> kShift{};

template <int P, int kAxis>
inline void shift_axis(const double* w, double o, double s, double* v) {
  constexpr auto& T = kShift<P, kAxis>;
  double op[P + 1], sp[P + 1];
  op[0] = sp[0] = 1;
  for (int k = 1; k <= P; ++k) op[k] = op[k - 1] * o, sp[k] = sp[k - 1] * s;
  for (int a = 0; a < Monomials<P>::kCount; ++a) v[a] = 0;
  HOSHI_UNROLL
  for (int t = 0; t < T.count; ++t) v[T.out[t]] += w[T.in[t]] * (T.binom[t] * op[T.power[t]]);
  HOSHI_UNROLL
  for (int a = 0; a < Monomials<P>::kCount; ++a) v[a] *= sp[T.scale_power[a]];
}

}  // namespace local_detail

// Re-expansion about another centre and in another length unit ("L2L"): out(x') =
// c L(o + s x') for the degree-P polynomial L, exactly (a polynomial shifted and scaled is a
// polynomial of the same degree; only round-off, in double here). One binomial shift per axis,
// over compile-time term lists. The walk moves a big target's expansion to its children's
// centres this way, so that each group evaluates one expansion instead of one per ancestor.
template <int P, class Coef>
inline void shift_local(const Coef* L, double ox, double oy, double oz, double s, double c,
                        double* out) {
  constexpr int K = Monomials<P>::kCount;
  double w[K], v[K];
  for (int a = 0; a < K; ++a) w[a] = static_cast<double>(L[a]);
  local_detail::shift_axis<P, 0>(w, ox, s, v);
  local_detail::shift_axis<P, 1>(v, oy, s, w);
  local_detail::shift_axis<P, 2>(w, oz, s, v);
  for (int a = 0; a < K; ++a) out[a] = c * v[a];
}

// Potential and acceleration (-grad phi) at x of the expansion with coefficients L (any type
// convertible to Real, e.g. float coefficients broadcast to a SIMD vector of targets).
template <int P, class Coef, class Real>
HOSTDEV inline void eval_local(const Coef* L, Real x, Real y, Real z, Real& ax, Real& ay, Real& az,
                               Real& pot) {
  constexpr int K = Monomials<P>::kCount;
  constexpr auto& M = local_detail::kMono<P>;
  Real mono[K];
  mono[0] = Real(1);
  HOSHI_UNROLL
  for (int c = 1; c < K; ++c) {
    // Multiply a lower monomial by one variable (x if it has one, else y, else z).
    if (M.ex[c] > 0)
      mono[c] = mono[M.down1[c][0]] * x;
    else if (M.ey[c] > 0)
      mono[c] = mono[M.down1[c][1]] * y;
    else
      mono[c] = mono[M.down1[c][2]] * z;
  }
  Real p(0), gx(0), gy(0), gz(0);
  HOSHI_UNROLL
  for (int c = 0; c < K; ++c) {
    const Real l(L[c]);
    p = mul_add(l, mono[c], p);
    if (M.ex[c] > 0) gx = mul_add(l * Real(float(M.ex[c])), mono[M.down1[c][0]], gx);
    if (M.ey[c] > 0) gy = mul_add(l * Real(float(M.ey[c])), mono[M.down1[c][1]], gy);
    if (M.ez[c] > 0) gz = mul_add(l * Real(float(M.ez[c])), mono[M.down1[c][2]], gz);
  }
  ax = Real(0) - gx;
  ay = Real(0) - gy;
  az = Real(0) - gz;
  pot = p;
}

}  // namespace hoshi
