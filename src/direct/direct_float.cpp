// Fast float32 direct summation. Portable version: the shared HOSTDEV pair kernel in an
// OpenMP SIMD loop over L1-sized source tiles.
#include <algorithm>
#include <cmath>

#include "direct/direct.hpp"

namespace hoshi {

namespace {

struct LocalFloat {
  std::vector<float> x, y, z, m;
};

// Positions relative to the bounding-box centre, differences in double, then float.
LocalFloat to_local_float(const ParticleSet& p) {
  const std::size_t n = p.size();
  double lo[3] = {p.x[0], p.y[0], p.z[0]}, hi[3] = {p.x[0], p.y[0], p.z[0]};
  for (std::size_t i = 0; i < n; ++i) {
    lo[0] = std::min(lo[0], p.x[i]);
    hi[0] = std::max(hi[0], p.x[i]);
    lo[1] = std::min(lo[1], p.y[i]);
    hi[1] = std::max(hi[1], p.y[i]);
    lo[2] = std::min(lo[2], p.z[i]);
    hi[2] = std::max(hi[2], p.z[i]);
  }
  const double c[3] = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};
  LocalFloat f;
  f.x.resize(n);
  f.y.resize(n);
  f.z.resize(n);
  f.m.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    f.x[i] = static_cast<float>(p.x[i] - c[0]);
    f.y[i] = static_cast<float>(p.y[i] - c[1]);
    f.z[i] = static_cast<float>(p.z[i] - c[2]);
    f.m[i] = static_cast<float>(p.m[i]);
  }
  return f;
}

}  // namespace

const char* direct_simd_name() {
  return "scalar";
}

std::uint64_t direct_float(ParticleSet& p, double G, Softening kernel, double eps) {
  const std::size_t n = p.size();
  if (n == 0) return 0;
  const LocalFloat f = to_local_float(p);
  const auto s = SofteningParams<float>::make(kernel, eps);
  const bool soft = eps > 0;
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (nn > 256)
  for (std::ptrdiff_t i = 0; i < nn; ++i) {
    const float xi = f.x[i], yi = f.y[i], zi = f.z[i];
    float ax = 0, ay = 0, az = 0, pot = 0;
#pragma omp simd reduction(+ : ax, ay, az, pot)
    for (std::ptrdiff_t j = 0; j < nn; ++j) {
      const float dx = f.x[j] - xi, dy = f.y[j] - yi, dz = f.z[j] - zi;
      const bool valid = soft || (dx * dx + dy * dy + dz * dz > 0.0f);
      pair_interaction(s, dx, dy, dz, f.m[j], valid, ax, ay, az, pot);
    }
    // With softening the self-pair is included: zero force, potential -m_i/eps for both
    // kernels. Remove it.
    if (soft) pot += static_cast<float>(p.m[i] / eps);
    p.ax[i] = G * ax;
    p.ay[i] = G * ay;
    p.az[i] = G * az;
    p.pot[i] = G * pot;
  }
  return static_cast<std::uint64_t>(n) * n;
}

}  // namespace hoshi
