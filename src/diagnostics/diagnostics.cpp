#include "diagnostics/diagnostics.hpp"

#include <cmath>

namespace hoshi {

Diagnostics diagnostics(const ParticleSet& p) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
  double K = 0, W = 0, M = 0, px = 0, py = 0, pz = 0, lx = 0, ly = 0, lz = 0, cx = 0, cy = 0,
         cz = 0;
#pragma omp parallel for if (n > 100000) reduction(+ : K, W, M, px, py, pz, lx, ly, lz, cx, cy, cz)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const double m = p.m[i];
    K += 0.5 * m * (p.vx[i] * p.vx[i] + p.vy[i] * p.vy[i] + p.vz[i] * p.vz[i]);
    W += 0.5 * m * p.pot[i];
    M += m;
    px += m * p.vx[i];
    py += m * p.vy[i];
    pz += m * p.vz[i];
    lx += m * (p.y[i] * p.vz[i] - p.z[i] * p.vy[i]);
    ly += m * (p.z[i] * p.vx[i] - p.x[i] * p.vz[i]);
    lz += m * (p.x[i] * p.vy[i] - p.y[i] * p.vx[i]);
    cx += m * p.x[i];
    cy += m * p.y[i];
    cz += m * p.z[i];
  }
  Diagnostics d;
  d.kinetic = K;
  d.potential = W;
  d.total = K + W;
  d.momentum = {px, py, pz};
  d.angular_momentum = {lx, ly, lz};
  d.mass = M;
  if (M > 0) d.com = {cx / M, cy / M, cz / M};
  const double K_int = M > 0 ? K - 0.5 * (px * px + py * py + pz * pz) / M : K;
  d.virial_ratio = W != 0 ? 2 * K_int / std::abs(W) : 0;
  return d;
}

}  // namespace hoshi
