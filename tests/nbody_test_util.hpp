// Helpers for the equilibrium tests: fixed-step leapfrog runs with an observer, and the total
// energy from the solver's potentials.
#pragma once

#include <functional>

#include "core/particle_set.hpp"
#include "diagnostics/diagnostics.hpp"
#include "integrator/leapfrog.hpp"
#include "solver/solver.hpp"

namespace hoshi::testing_util {

inline double total_energy(const ParticleSet& p) {
  return diagnostics(p).total;
}

// Leapfrog KDK (src/integrator) with a fixed step; `observe(t, p)` after the initial force
// evaluation and after every step (forces and potentials of p are current then).
inline void leapfrog(ParticleSet& p, GravitySolver& solver, double dt, int steps,
                     const std::function<void(double, const ParticleSet&)>& observe) {
  Leapfrog lf(solver);
  lf.initialise(p);
  observe(0.0, p);
  for (int s = 1; s <= steps; ++s) {
    lf.step(p, dt);
    observe(s * dt, p);
  }
}

}  // namespace hoshi::testing_util
