// HOSTDEV: functions shared verbatim by the CPU solvers and the CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define HOSHI_HOSTDEV __host__ __device__
#else
#define HOSHI_HOSTDEV
#endif
#define HOSTDEV HOSHI_HOSTDEV

#if !defined(__CUDACC__)
#include <cmath>
#endif

namespace hoshi {

// Scalar overloads of the few primitives the physics needs. SIMD vector types (see
// src/direct/simd.hpp) provide the same names, found by argument-dependent lookup, so one
// templated formula serves float, double, CUDA float and an AVX-512 register of 16 floats.
HOSTDEV inline float rsqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}
HOSTDEV inline double rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrt(x);
#else
  return 1.0 / std::sqrt(x);
#endif
}
template <class Real>
HOSTDEV inline Real select(bool c, Real a, Real b) {
  return c ? a : b;
}
// a * b + c; SIMD types map it to one fused multiply-add, scalar code leaves the choice to
// the compiler (contraction), so results agree with a * b + c to within one rounding.
template <class Real>
HOSTDEV inline Real mul_add(Real a, Real b, Real c) {
  return a * b + c;
}
// A starting value y ~ 1/sqrt(x) for one Newton step y (3 - x y^2) / 2. Scalar code returns the
// correctly rounded value (the Newton step then changes it by an ulp at most); SIMD types
// return the hardware estimate (2^-14 relative on AVX-512, 2^-12 on AVX2).
HOSTDEV inline float rsqrt_estimate(float x) {
  return rsqrt(x);
}
HOSTDEV inline double rsqrt_estimate(double x) {
  return rsqrt(x);
}

}  // namespace hoshi
