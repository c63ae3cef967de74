// Leapfrog kick-drift-kick (second order, symplectic and time-reversible at fixed dt, for
// forces that depend on the positions alone: the tree's relative criterion also reads the
// previous step's |a|, which breaks exact reversibility).
#pragma once

#include "core/particle_set.hpp"
#include "solver/solver.hpp"

namespace hoshi {

// v += a dt
void kick(ParticleSet& p, double dt);
// x += v dt
void drift(ParticleSet& p, double dt);

// Global adaptive step dt = eta sqrt(eps / max|a|). A step size that changes with the state
// breaks the symplectic property: energy errors then random-walk instead of staying bounded.
// Requires eps > 0 and eta > 0; returns +inf when every acceleration is 0.
double adaptive_dt(const ParticleSet& p, double eta, double eps);
// The same from max|a|^2 (max_acceleration2 here, or DeviceStepper's on the device).
double adaptive_dt_from(double a2max, double eta, double eps);
// max over the set of ax^2 + ay^2 + az^2 (0 for an empty set).
double max_acceleration2(const ParticleSet& p);

class Leapfrog {
 public:
  explicit Leapfrog(GravitySolver& solver) : solver_(solver) {}
  // Computes the accelerations of the initial state (needed before the first step).
  ForceStats initialise(ParticleSet& p);
  // One KDK step of size dt; the set holds the accelerations and potentials of the new state
  // afterwards. Returns the statistics of the force evaluation.
  ForceStats step(ParticleSet& p, double dt);
  double integrate_seconds() const { return integrate_seconds_; }

 private:
  GravitySolver& solver_;
  double integrate_seconds_ = 0;
};

}  // namespace hoshi
