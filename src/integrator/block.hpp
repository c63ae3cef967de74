// Block time steps: each particle steps at its own power-of-two fraction of the base step.
//
// The base step dt (--dt) is cut into 2^(levels - 1) substeps. A particle on level k steps at
// dt / 2^k, the largest of these within eta sqrt(eps / |a|) of its own acceleration (the --eta
// step's measure, per particle as in Gadget: ErrTolIntAccuracy), so that a dense centre or a
// close pair takes short steps and the rest of the system does not pay for them. The scheme is
// the kick-drift-kick leapfrog per particle on the hierarchy (Gadget-2, Springel 2005, section
// 4): every particle drifts with the system; at the end of its step a particle gets new forces
// (of the current positions of all particles: GravitySolver::compute_active), its closing
// half-kick, a new level and its next opening half-kick. A particle moves to a longer step
// only where that step's grid has a boundary (the hierarchy stays synchronised), to a shorter
// one at the end of any of its steps: a particle on a long step that falls into a dense region
// keeps that step to its end (there is no wake-up, as Saitoh & Makino 2009's limiter for
// neighbours would give).
//
// At the end of each base step every particle has ended a step: positions, velocities,
// accelerations and potentials are synchronised, as after a Leapfrog step, and the levels of
// the next base step follow from the state alone. Outputs, checkpoints and restarts see base
// steps only (a restart continues bit for bit). With one level, or with every particle on
// level 0, a base step is Leapfrog::step, bit for bit.
//
// Not symplectic: a particle that changes level changes its step (as --eta's global step). A
// particle near a level's threshold alternates between two levels, its choices in phase with
// its orbit, and the energy drifts by up to a few times the leapfrog's own error: Plummer
// N = 2048, eps 0.01, to t = 4, direct double, eta 0.3: --dt 1/8 --levels 4 -3.7e-3, where the
// leapfrog at 1/32 and 1/64 has 1.8e-3 and 8.7e-4 (docs/performance.md, "Block time steps"). A
// margin before a particle moves up (hysteresis) halved that, but doubled an eccentric binary's
// phase error (it made the choice less symmetric in time), so the level is the criterion's alone.
// Where the steps pay is a system whose shortest steps are needed by few particles (a close
// pair in a galaxy).
#pragma once

#include <cstdint>
#include <vector>

#include "core/particle_set.hpp"
#include "solver/solver.hpp"

namespace hoshi {

// The particles' criterion by default (--levels without --eta). Power et al. (2003, MNRAS 338,
// 14) obtained their best-converged haloes with individual steps of this form, at eta ~ 0.2;
// Gadget's default sqrt(2 x 0.025) is 0.22.
inline constexpr double kLevelEta = 0.2;

// The most levels (2^(kMaxLevels - 1) substeps per base step).
inline constexpr int kMaxLevels = 30;

// The level of a particle with |a|^2 = a2: the smallest k in [0, levels) with
// dt / 2^k <= eta sqrt(eps / |a|); levels - 1 when none is (*floor set true, if given). 0 when
// a2 is 0 or eps is 0.
int block_level(double a2, double dt, int levels, double eta, double eps, bool* floor = nullptr);

struct BlockStats {
  std::uint64_t substeps = 0;  // substeps with a force evaluation, over all base steps
  std::uint64_t forces = 0;    // particle force evaluations (active particles), summed
  // The most particles in a base step that, at one of their steps' starts, wanted a step below
  // the smallest level's.
  std::uint64_t floor = 0;
  std::vector<std::uint64_t> level;  // particles per level at the last base step's start
};

class BlockLeapfrog {
 public:
  // levels in [1, kMaxLevels]; eta > 0 and eps > 0 (std::invalid_argument otherwise).
  BlockLeapfrog(GravitySolver& solver, int levels, double eta, double eps);
  // One base step of size dt from a synchronised state whose accelerations are those of its
  // positions (after Leapfrog::initialise or a step); the set is synchronised afterwards.
  // Returns the statistics of the step's force evaluations, summed.
  ForceStats step(ParticleSet& p, double dt);
  const BlockStats& stats() const { return stats_; }
  double integrate_seconds() const { return integrate_seconds_; }

 private:
  GravitySolver& solver_;
  int levels_;
  double eta_, eps_;
  std::vector<std::uint8_t> level_, active_, floor_;
  BlockStats stats_;
  double integrate_seconds_ = 0;
};

}  // namespace hoshi
