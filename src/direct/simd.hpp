// Minimal SIMD vector types for the CPU kernels, chosen at build time by -march:
//   AVX-512F: 16 floats; AVX2+FMA: 8 floats; otherwise 1 float (plain scalar).
// They provide the operators and the rsqrt / select overloads that the HOSTDEV physics
// templates in src/physics/ use, so the SIMD kernels run the very same formulas as the
// scalar, double-reference and CUDA paths.
//
// rsqrt: hardware estimate (14 bits on AVX-512, 12 bits on AVX2) plus one Newton-Raphson
// step y' = y (3 - x y^2) / 2, which brings the relative error to about 2^-23 (AVX-512) and
// 2^-22 (AVX2), close to float round-off.
#pragma once

#include <cstddef>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace hoshi::simd {

#if defined(__AVX512F__)

inline constexpr const char* kName = "avx512";
inline constexpr int kWidth = 16;

struct Mask {
  __mmask16 k;
};
struct VecF {
  __m512 v;
  VecF() = default;
  VecF(__m512 x) : v(x) {}
  VecF(float x) : v(_mm512_set1_ps(x)) {}
  static VecF load(const float* p) { return _mm512_loadu_ps(p); }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
};
inline VecF operator+(VecF a, VecF b) {
  return _mm512_add_ps(a.v, b.v);
}
inline VecF operator-(VecF a, VecF b) {
  return _mm512_sub_ps(a.v, b.v);
}
inline VecF operator*(VecF a, VecF b) {
  return _mm512_mul_ps(a.v, b.v);
}
inline VecF operator/(VecF a, VecF b) {
  return _mm512_div_ps(a.v, b.v);
}
inline VecF operator-(VecF a) {
  return _mm512_sub_ps(_mm512_setzero_ps(), a.v);
}
inline VecF& operator+=(VecF& a, VecF b) {
  return a = a + b;
}
inline VecF& operator-=(VecF& a, VecF b) {
  return a = a - b;
}
inline Mask operator<(VecF a, VecF b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)};
}
inline Mask operator>(VecF a, VecF b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)};
}
inline Mask operator!=(VecF a, VecF b) {
  return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_NEQ_UQ)};
}
inline VecF fma(VecF a, VecF b, VecF c) {
  return _mm512_fmadd_ps(a.v, b.v, c.v);
}
inline VecF mul_add(VecF a, VecF b, VecF c) {
  return _mm512_fmadd_ps(a.v, b.v, c.v);
}
// 0, 1, ..., kWidth - 1
inline VecF lane_index() {
  return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
inline VecF select(Mask m, VecF a, VecF b) {
  return _mm512_mask_blend_ps(m.k, b.v, a.v);
}
inline VecF select(bool m, VecF a, VecF b) {
  return m ? a : b;
}
inline VecF rsqrt(VecF x) {
  // maskz form with a full mask: the same instruction, but avoids GCC 12's false
  // -Wmaybe-uninitialized on _mm512_undefined_ps inside _mm512_rsqrt14_ps.
  const __m512 y = _mm512_maskz_rsqrt14_ps(__mmask16(0xFFFF), x.v);
  const __m512 xy2 = _mm512_mul_ps(_mm512_mul_ps(x.v, y), y);
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), y),
                       _mm512_sub_ps(_mm512_set1_ps(3.0f), xy2));
}
inline VecF rsqrt_estimate(VecF x) {
  return _mm512_maskz_rsqrt14_ps(__mmask16(0xFFFF), x.v);
}
inline float reduce_add(VecF a) {
  // The halves through the compiler's vector extension rather than _mm512_reduce_add_ps or
  // the 256-bit extract and cast intrinsics, whose undefined pass-through operands trip GCC
  // 12's -Wuninitialized wherever they are inlined (GCC bug 105593).
  using V16 = float __attribute__((vector_size(64)));
  const V16 v = reinterpret_cast<const V16&>(a.v);
  const __m256 lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m256 s8 = _mm256_add_ps(lo, hi);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

#elif defined(__AVX2__) && defined(__FMA__)

inline constexpr const char* kName = "avx2";
inline constexpr int kWidth = 8;

struct Mask {
  __m256 k;
};
struct VecF {
  __m256 v;
  VecF() = default;
  VecF(__m256 x) : v(x) {}
  VecF(float x) : v(_mm256_set1_ps(x)) {}
  static VecF load(const float* p) { return _mm256_loadu_ps(p); }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
};
inline VecF operator+(VecF a, VecF b) {
  return _mm256_add_ps(a.v, b.v);
}
inline VecF operator-(VecF a, VecF b) {
  return _mm256_sub_ps(a.v, b.v);
}
inline VecF operator*(VecF a, VecF b) {
  return _mm256_mul_ps(a.v, b.v);
}
inline VecF operator/(VecF a, VecF b) {
  return _mm256_div_ps(a.v, b.v);
}
inline VecF operator-(VecF a) {
  return _mm256_sub_ps(_mm256_setzero_ps(), a.v);
}
inline VecF& operator+=(VecF& a, VecF b) {
  return a = a + b;
}
inline VecF& operator-=(VecF& a, VecF b) {
  return a = a - b;
}
inline Mask operator<(VecF a, VecF b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)};
}
inline Mask operator>(VecF a, VecF b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)};
}
inline Mask operator!=(VecF a, VecF b) {
  return {_mm256_cmp_ps(a.v, b.v, _CMP_NEQ_UQ)};
}
inline VecF fma(VecF a, VecF b, VecF c) {
  return _mm256_fmadd_ps(a.v, b.v, c.v);
}
inline VecF mul_add(VecF a, VecF b, VecF c) {
  return _mm256_fmadd_ps(a.v, b.v, c.v);
}
inline VecF lane_index() {
  return _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
}
inline VecF select(Mask m, VecF a, VecF b) {
  return _mm256_blendv_ps(b.v, a.v, m.k);
}
inline VecF select(bool m, VecF a, VecF b) {
  return m ? a : b;
}
inline VecF rsqrt(VecF x) {
  const __m256 y = _mm256_rsqrt_ps(x.v);
  const __m256 xy2 = _mm256_mul_ps(_mm256_mul_ps(x.v, y), y);
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), y),
                       _mm256_sub_ps(_mm256_set1_ps(3.0f), xy2));
}
inline VecF rsqrt_estimate(VecF x) {
  return _mm256_rsqrt_ps(x.v);
}
inline float reduce_add(VecF a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

#else

inline constexpr const char* kName = "scalar";
inline constexpr int kWidth = 1;
using Mask = bool;
struct VecF {
  float v;
  VecF() = default;
  VecF(float x) : v(x) {}
  static VecF load(const float* p) { return *p; }
  void store(float* p) const { *p = v; }
};
inline VecF operator+(VecF a, VecF b) {
  return a.v + b.v;
}
inline VecF operator-(VecF a, VecF b) {
  return a.v - b.v;
}
inline VecF operator*(VecF a, VecF b) {
  return a.v * b.v;
}
inline VecF operator/(VecF a, VecF b) {
  return a.v / b.v;
}
inline VecF operator-(VecF a) {
  return -a.v;
}
inline VecF& operator+=(VecF& a, VecF b) {
  return a = a + b;
}
inline VecF& operator-=(VecF& a, VecF b) {
  return a = a - b;
}
inline bool operator<(VecF a, VecF b) {
  return a.v < b.v;
}
inline bool operator>(VecF a, VecF b) {
  return a.v > b.v;
}
inline bool operator!=(VecF a, VecF b) {
  return a.v != b.v;
}
inline VecF fma(VecF a, VecF b, VecF c) {
  return a.v * b.v + c.v;
}
inline VecF mul_add(VecF a, VecF b, VecF c) {
  return a.v * b.v + c.v;
}
inline VecF lane_index() {
  return 0.0f;
}
inline VecF select(bool m, VecF a, VecF b) {
  return m ? a : b;
}
inline VecF rsqrt(VecF x) {
  return 1.0f / __builtin_sqrtf(x.v);
}
inline VecF rsqrt_estimate(VecF x) {
  return 1.0f / __builtin_sqrtf(x.v);
}
inline float reduce_add(VecF a) {
  return a.v;
}

#endif

}  // namespace hoshi::simd
