// The simulation loop: initial forces, leapfrog steps, diagnostics at each output time.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include "core/particle_set.hpp"
#include "core/timer.hpp"
#include "diagnostics/diagnostics.hpp"
#include "solver/solver.hpp"

namespace hoshi {

struct RunConfig {
  double t_end = 10.0;         // simulated time to reach
  double dt = 1.0 / 128;       // fixed step (used when eta == 0)
  double eta = 0.0;            // > 0: global adaptive step dt = eta sqrt(eps / max|a|)
  double output_every = 0.25;  // diagnostics interval (simulated time)
  std::string out_dir;         // energy.csv goes here; empty: no files
  bool quiet = false;          // no per-output terminal lines
  SolverConfig solver;
};

struct RunResult {
  std::size_t steps = 0;
  double time = 0;
  Diagnostics initial, final;
  double rel_energy_error = 0;  // (E_final - E_0) / |E_0|
  PhaseTimes seconds;           // accumulated solver phases plus "integrate", "io"
  std::string solver_name, backend_name;
};

// Validates cfg (std::invalid_argument naming the bad value).
void validate(const RunConfig& cfg);

// Runs `p` from t = 0 to cfg.t_end. Writes OUT/energy.csv (header
// step,time,dt,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,virial_ratio) with
// one row per output interval, and one line per output interval to `log` (if not null).
RunResult run_simulation(ParticleSet& p, const RunConfig& cfg, std::ostream* log);

}  // namespace hoshi
