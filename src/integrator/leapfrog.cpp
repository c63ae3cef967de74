#include "integrator/leapfrog.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace hoshi {

void kick(ParticleSet& p, double dt) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    p.vx[i] += p.ax[i] * dt;
    p.vy[i] += p.ay[i] * dt;
    p.vz[i] += p.az[i] * dt;
  }
}

void drift(ParticleSet& p, double dt) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
#pragma omp parallel for simd schedule(static) if (n > 16384)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    p.x[i] += p.vx[i] * dt;
    p.y[i] += p.vy[i] * dt;
    p.z[i] += p.vz[i] * dt;
  }
}

double max_acceleration2(const ParticleSet& p) {
  double a2max = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    a2max = std::max(a2max, p.ax[i] * p.ax[i] + p.ay[i] * p.ay[i] + p.az[i] * p.az[i]);
  return a2max;
}

double adaptive_dt(const ParticleSet& p, double eta, double eps) {
  return adaptive_dt_from(max_acceleration2(p), eta, eps);
}

double adaptive_dt_from(double a2max, double eta, double eps) {
  if (!(eta > 0))
    throw std::invalid_argument("invalid --eta " + std::to_string(eta) + " (must be > 0)");
  if (!(eps > 0))
    throw std::invalid_argument(
        "the adaptive step dt = eta sqrt(eps/max|a|) needs --softening > 0");
  if (a2max == 0) return std::numeric_limits<double>::infinity();
  return eta * std::sqrt(eps / std::sqrt(a2max));
}

ForceStats Leapfrog::initialise(ParticleSet& p) {
  return solver_.compute(p);
}

ForceStats Leapfrog::step(ParticleSet& p, double dt) {
  Stopwatch sw;
  kick(p, 0.5 * dt);
  drift(p, dt);
  integrate_seconds_ += sw.seconds();
  ForceStats st = solver_.compute(p);
  sw.restart();
  kick(p, 0.5 * dt);
  integrate_seconds_ += sw.seconds();
  return st;
}

}  // namespace hoshi
