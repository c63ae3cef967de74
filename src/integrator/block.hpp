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
//
// LevelScheme::hierarchical (Gadget-4's HIERARCHICAL_GRAVITY; HOLD, Pelupessy et al. 2012)
// instead splits the forces by level: each pair interacts at the longer of its two particles'
// steps, as kicks of both members at once, so that direct summation conserves the total
// momentum to round-off (the individual scheme's pairs on two levels exchange momentum at
// different times: 2e-4 in a cold collapse). A boundary of the levels >= L computes the forces
// among the particles of each set {level >= m}, m >= L, from those particles alone (a tree of
// the set): 1.4 to 2.9 times the individual scheme's force evaluations in the runs measured,
// most where the deep levels hold most particles, on smaller sets. It is not symplectic either
// (levels change), and its energy error is not smaller in general: docs/performance.md, "Block time
// steps".
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

// How the forces are shared among the levels (--level-scheme).
enum class LevelScheme {
  individual,    // a particle's step ends: its force from every particle (Gadget-2)
  hierarchical,  // each pair at the longer of its two steps (Gadget-4): momentum-conserving
};

// The level of a particle with |a|^2 = a2: the smallest k in [0, levels) with
// dt / 2^k <= eta sqrt(eps / |a|); levels - 1 when none is (*floor set true, if given). 0 when
// a2 is 0 or eps is 0.
int block_level(double a2, double dt, int levels, double eta, double eps, bool* floor = nullptr);

struct BlockStats {
  std::uint64_t substeps = 0;  // substeps with a force evaluation, over all base steps
  // Particle force evaluations, summed: the active particles (individual), the members of each
  // set whose forces were computed (hierarchical).
  std::uint64_t forces = 0;
  // The most particles in a base step that, at one of their steps' starts, wanted a step below
  // the smallest level's.
  std::uint64_t floor = 0;
  std::vector<std::uint64_t> level;  // particles per level at the last base step's start
};

class BlockLeapfrog {
 public:
  // levels in [1, kMaxLevels]; eta > 0 and eps > 0 (std::invalid_argument otherwise).
  BlockLeapfrog(GravitySolver& solver, int levels, double eta, double eps,
                LevelScheme scheme = LevelScheme::individual);
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
  LevelScheme scheme_;
  ForceStats step_hierarchical(ParticleSet& p, double dt);
  // The forces of the particles on levels >= m of `lv` from those particles alone into sub_
  // (sub_index_: their indices in p); the count.
  std::size_t subset_forces(const ParticleSet& p, const std::vector<std::uint8_t>& lv, int m,
                            ForceStats& st);
  // v += w a for sub_'s particles.
  void kick_subset(ParticleSet& p, double w) const;
  // Adds the half-kick weights of a boundary of the levels >= from (h_from/2 for F_from, -h_m/2
  // for F_m, m > from) to w, indexed by each set's own level (the smallest occupied level >= m
  // of `count`, the particles per level).
  void add_half_kicks(const std::vector<std::uint64_t>& count, int from, const double* half,
                      double* w) const;
  // Each nonzero weight w[k]'s kick with the forces of {lv >= k}; w is zeroed.
  void apply_kicks(ParticleSet& p, const std::vector<std::uint8_t>& lv, double* w, ForceStats& st);
  std::vector<std::uint8_t> level_, active_, floor_, old_level_;
  std::vector<std::size_t> sub_index_;
  ParticleSet sub_;
  BlockStats stats_;
  double integrate_seconds_ = 0;
};

}  // namespace hoshi
