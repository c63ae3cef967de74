// Softened particle-particle interaction kernels (HOSTDEV, templated on Real).
//
// Conventions, used everywhere in hoshi:
//   d = x_source - x_target (so the attraction is +d direction)
//   a_target += G * f * d,   pot_target += G * phi
// with G applied once by the caller. eps is the Plummer-equivalent softening length.
//
//  * Plummer: phi = -m / sqrt(r^2 + eps^2), f = m (r^2 + eps^2)^(-3/2).
//  * Cubic spline (Monaghan & Lattanzio 1985 as used in Gadget-2, Springel 2005 eq. 4):
//    h = 2.8 eps; exactly Newtonian for r >= h; phi(0) = -m/eps, the same depth as Plummer.
#pragma once

#include "physics/hostdev.hpp"

namespace hoshi {

enum class Softening : int { plummer = 0, spline = 1 };

// Spline kernel radius in units of the Plummer-equivalent softening (Gadget's 2.8).
constexpr double spline_h_over_eps = 2.8;

// Plummer pair term. eps2 = eps^2. With eps2 == 0 the caller must exclude r2 == 0
// (self-pair); `valid` masks such pairs to zero without a branch.
template <class Real, class Mask>
HOSTDEV inline void plummer_pair(Real dx, Real dy, Real dz, Real m, Real eps2, Mask valid, Real& ax,
                                 Real& ay, Real& az, Real& pot) {
  // eps2 first: with contraction this is three fused multiply-adds, one instruction fewer in
  // the hottest loop of every kernel (GPU direct: 15 instead of 16 issue slots per pair).
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;
  const Real inv = select(valid, rsqrt(r2), Real(0));
  const Real m_inv = m * inv;
  const Real m_inv3 = m_inv * inv * inv;
  ax += m_inv3 * dx;
  ay += m_inv3 * dy;
  az += m_inv3 * dz;
  pot -= m_inv;
}

// The Plummer pair in an FMA-friendly scaled form for SIMD kernels (same physics as
// plummer_pair, 19 vector operations per pair on AVX-512 instead of 21). The Newton step of
// the reciprocal square root is written out so that its constants fold into the inputs
// and the accumulators:
//   y  = rsqrt_estimate(r2),  y2 = y (3 - r2 y^2)       = 2 / sqrt(r2)  (one Newton step)
//   pot  -= m_half y2             = m / sqrt(r2)
//   a4   += m_half y2 y2^2 d      = 4 m d / r2^(3/2)
// The caller passes m_half = m / 2 and accumulates a4 = 4 a; multiplying a4 by 1/4 at the end
// is exact. valid == false contributes zero (y = 0 gives y2 = 0).
template <class Real, class Mask>
HOSTDEV inline void plummer_pair_scaled(Real dx, Real dy, Real dz, Real m_half, Real eps2,
                                        Mask valid, Real& ax4, Real& ay4, Real& az4, Real& pot) {
  const Real r2 = mul_add(dz, dz, mul_add(dy, dy, mul_add(dx, dx, eps2)));
  const Real y = select(valid, rsqrt_estimate(r2), Real(0));
  const Real y2 = y * (Real(3) - (r2 * y) * y);
  const Real m_inv = m_half * y2;
  const Real m_inv3_4 = m_inv * (y2 * y2);
  ax4 = mul_add(m_inv3_4, dx, ax4);
  ay4 = mul_add(m_inv3_4, dy, ay4);
  az4 = mul_add(m_inv3_4, dz, az4);
  pot -= m_inv;
}

// Cubic-spline (Gadget) force factor f and potential phi for squared distance r2 and kernel
// radius h, given as h_inv = 1/h. Returned for unit mass; Newtonian for r >= h.
template <class Real, class Mask>
HOSTDEV inline void spline_kernel(Real r2, Real h_inv, Mask valid, Real& f, Real& phi) {
  // r = 0 (a coincident pair) is finite for the spline: u = 0 picks the inner branch.
  const auto nonzero = r2 > Real(0);
  const Real inv_r = select(nonzero, rsqrt(select(nonzero, r2, Real(1))), Real(0));
  const Real r = r2 * inv_r;
  const Real u = r * h_inv;
  const Real h_inv3 = h_inv * h_inv * h_inv;
  const Real u2 = u * u;
  // u < 1/2
  const Real f_in = h_inv3 * (Real(10.666666666667) + u2 * (Real(32.0) * u - Real(38.4)));
  const Real p_in =
      h_inv * (Real(-2.8) + u2 * (Real(5.333333333333) + u2 * (Real(6.4) * u - Real(9.6))));
  // 1/2 <= u < 1 (u >= 1/2 here, so 1/u^3 is finite)
  // 1/u = h / r = h inv_r: no division per pair (h = 1/h_inv is loop-invariant in a kernel).
  const Real u_inv = select(u > Real(0.25), (Real(1) / h_inv) * inv_r, Real(1));
  const Real f_mid =
      h_inv3 * (Real(21.333333333333) - Real(48.0) * u + Real(38.4) * u2 -
                Real(10.666666666667) * u2 * u - Real(0.066666666667) * u_inv * u_inv * u_inv);
  const Real p_mid =
      h_inv * (Real(-3.2) + Real(0.066666666667) * u_inv +
               u2 * (Real(10.666666666667) +
                     u * (Real(-16.0) + u * (Real(9.6) - Real(2.133333333333) * u))));
  // u >= 1: Newtonian
  const Real f_out = inv_r * inv_r * inv_r;
  const Real p_out = -inv_r;
  f = select(u < Real(0.5), f_in, select(u < Real(1), f_mid, f_out));
  phi = select(u < Real(0.5), p_in, select(u < Real(1), p_mid, p_out));
  // The self-pair (r = 0, valid == false) contributes nothing.
  f = select(valid, f, Real(0));
  phi = select(valid, phi, Real(0));
}

template <class Real, class Mask>
HOSTDEV inline void spline_pair(Real dx, Real dy, Real dz, Real m, Real h_inv, Mask valid, Real& ax,
                                Real& ay, Real& az, Real& pot) {
  const Real r2 = dx * dx + dy * dy + dz * dz;
  Real f, phi;
  spline_kernel(r2, h_inv, valid, f, phi);
  const Real mf = m * f;
  ax += mf * dx;
  ay += mf * dy;
  az += mf * dz;
  pot += m * phi;
}

// Softening parameters in the form the kernels take, in the kernel's Real type.
template <class Real>
struct SofteningParams {
  Softening kind = Softening::plummer;
  Real eps2 = 0;   // Plummer: eps^2
  Real h = 0;      // spline: 2.8 eps
  Real h_inv = 0;  // spline: 1/h

  static SofteningParams make(Softening kind, double eps) {
    SofteningParams p;
    // With eps = 0 both kernels are Newtonian; the Plummer form is then exact and cheaper.
    p.kind = eps > 0 ? kind : Softening::plummer;
    p.eps2 = Real(eps * eps);
    p.h = Real(spline_h_over_eps * eps);
    p.h_inv = eps > 0 ? Real(1.0 / (spline_h_over_eps * eps)) : Real(0);
    return p;
  }
};

// Dispatch on the softening kind; `valid` false for the self-pair.
template <class Real, class Mask>
HOSTDEV inline void pair_interaction(const SofteningParams<Real>& s, Real dx, Real dy, Real dz,
                                     Real m, Mask valid, Real& ax, Real& ay, Real& az, Real& pot) {
  if (s.kind == Softening::plummer) {
    plummer_pair(dx, dy, dz, m, s.eps2, valid, ax, ay, az, pot);
  } else {
    spline_pair(dx, dy, dz, m, s.h_inv, valid, ax, ay, az, pot);
  }
}

}  // namespace hoshi
