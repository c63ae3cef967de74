// Test-local helpers for the equilibrium tests: a kick-drift-kick leapfrog on any
// GravitySolver and the total energy from the solver's potentials. (The project's integrator
// lives in src/integrator/; these tests keep their own few lines so that they test the models,
// not the integrator.)
#pragma once

#include <functional>

#include "analysis/analysis.hpp"
#include "core/particle_set.hpp"
#include "solver/solver.hpp"

namespace hoshi::testing_util {

inline double total_energy(const ParticleSet& p) {
  return kinetic_energy(p) + potential_energy_from_pot(p);
}

// Leapfrog KDK with a fixed step; `observe(t, p)` after the initial force evaluation and after
// every step (forces and potentials of p are current then).
inline void leapfrog(ParticleSet& p, GravitySolver& solver, double dt, int steps,
                     const std::function<void(double, const ParticleSet&)>& observe) {
  solver.compute(p);
  observe(0.0, p);
  const std::size_t n = p.size();
  for (int s = 1; s <= steps; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      p.vx[i] += 0.5 * dt * p.ax[i];
      p.vy[i] += 0.5 * dt * p.ay[i];
      p.vz[i] += 0.5 * dt * p.az[i];
      p.x[i] += dt * p.vx[i];
      p.y[i] += dt * p.vy[i];
      p.z[i] += dt * p.vz[i];
    }
    solver.compute(p);
    for (std::size_t i = 0; i < n; ++i) {
      p.vx[i] += 0.5 * dt * p.ax[i];
      p.vy[i] += 0.5 * dt * p.ay[i];
      p.vz[i] += 0.5 * dt * p.az[i];
    }
    observe(s * dt, p);
  }
}

}  // namespace hoshi::testing_util
