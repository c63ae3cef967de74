// The simulation loop: initial forces, leapfrog steps, diagnostics at each output time.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <limits>
#include <string>

#include "core/particle_set.hpp"
#include "core/timer.hpp"
#include "diagnostics/diagnostics.hpp"
#include "integrator/block.hpp"
#include "solver/solver.hpp"

namespace hoshi {

// Where a run starts when it continues from a checkpoint (io/checkpoint.hpp): the state in
// the ParticleSet already holds the accelerations of its positions, so the run goes on with
// the next step exactly as the uninterrupted run would have (bit for bit).
struct RunStart {
  std::size_t step = 0;    // steps done so far
  double time = 0;         // simulated time reached
  double e0 = 0;           // total energy at t = 0 of the original run
  double next_output = 0;  // next energy.csv output time
  // The step grid of a fixed-step run, t = time_base + (step - step_base) dt, as the run that
  // wrote the checkpoint counted it (NaN: not recorded, checkpoints before 2026-11-30). A run
  // that ended with a short step is continued on a grid from there; its own restarts keep it.
  double time_base = std::numeric_limits<double>::quiet_NaN();
  std::size_t step_base = 0;
  // The force settings differ from the checkpoint's (softening, solver, criterion, ...): the
  // stored accelerations are those of the old settings, so the restored state's forces are
  // computed again before the first kick (the stored ones serve as the relative criterion's
  // previous |a|).
  bool recompute_forces = false;
  // The outgrown-step check (RunConfig::step_outgrown) as the run before kept it: the softening's
  // measure where the run started (NaN: not recorded; the restored state's is taken), and the
  // step it warned of (0: none). A restart measured the growth of max|a| from its own state, and
  // a collapse restarted half-way was warned of only at 0.52 of the measure.
  double step_scale_at_start = std::numeric_limits<double>::quiet_NaN();
  double step_outgrown_dt = 0;
};

// Whether a continued run's time is on the fixed step grid t = time_base + (step - step_base) dt.
bool on_step_grid(const RunStart& s, double dt, double time_base, std::size_t step_base);
// Whether a continued fixed-step run's time is off both the grid its checkpoint records and
// t = step dt (the run it continues ended with a short step at its --t-end, or dt changed): it
// then counts its steps from its own time, t = time + k dt.
bool start_off_grid(const RunStart& s, double dt);

// What an observer sees after each step (and once before the first).
struct RunProgress {
  std::size_t step = 0;
  double time = 0, dt = 0, t_end = 0;
  double e0 = 0;           // initial total energy (for relative errors)
  double next_output = 0;  // pending energy.csv output time (checkpoints store it)
  double time_base = 0;    // the step grid (RunStart::time_base; checkpoints store it)
  std::size_t step_base = 0;
  double step_scale_at_start = std::numeric_limits<double>::quiet_NaN();  // RunStart's
  double step_outgrown_dt = 0;
};

// The first line of OUT/energy.csv: its columns (a restart checks it before it appends).
inline constexpr const char* kEnergyLogHeader =
    "step,time,dt,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,virial_ratio";

// The softening's measure of a step, sqrt(eps / max|a|) (the --eta step is eta times it), from
// max|a|^2; 0 without softening or without forces. A fixed step longer than
// kSofteningStepLimit of it does not resolve the encounters within the softening: a particle
// crosses another's softening length in a step or two and the energy climbs (hoshi run's
// warnings, cli/cmd_run.cpp).
double softening_step_scale(double eps, double max_a2);
inline constexpr double kSofteningStepLimit = 0.3;

// A fixed step that the run outgrew: after a step, the step exceeded kSofteningStepLimit of
// the softening's measure, which it was within at the start (a cold collapse).
struct StepOutgrown {
  double time = 0;
  std::size_t step = 0;
  double max_acceleration = 0;  // max|a| at that time
  double scale = 0;             // sqrt(eps / max|a|) at that time
  double scale_at_start = 0;    // and where the run started (0: no forces there)
  double dt = 0;                // the run's fixed step (block steps: the smallest level's)
};

// Snapshots, checkpoints, progress display and signal handling hook in here (cli/cmd_run).
// The particles after a step, as an observer reads them. With device-resident stepping
// (--backend cuda) they are copied from the device the first time they are asked for in a
// step, and only then: an observer that writes nothing costs no transfer, and one that does
// always reads the current state (it decides and reads in one place, so no decision taken
// before the step's wall-clock or signal check can leave it a stale copy).
class StepState {
 public:
  virtual const ParticleSet& particles() = 0;

 protected:
  ~StepState() = default;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Called after every step, and once at the start (step == start step).
  // Returning false ends the run after this step (res.interrupted = true).
  virtual bool after_step(StepState& state, const RunProgress& progress) = 0;
};

struct RunConfig {
  double t_end = 10.0;    // simulated time to reach
  double dt = 1.0 / 128;  // fixed step (used when eta == 0; choose_dt may shorten it)
  double eta = 0.0;       // > 0: global adaptive step dt = eta sqrt(eps / max|a|)
  // > 1: block steps (integrator/block.hpp), each particle at the largest dt / 2^k, k < levels,
  // within level_eta sqrt(eps / |a|); dt is the base step (eta must be 0). On CUDA they run
  // through the host integrator (no device-resident stepping).
  int levels = 1;
  double level_eta = kLevelEta;
  LevelScheme level_scheme = LevelScheme::individual;  // how block steps share the forces
  double output_every = 0.25;                          // diagnostics interval (simulated time)
  std::string out_dir;                                 // energy.csv goes here; empty: no files
  bool quiet = false;                                  // no per-output terminal lines
  SolverConfig solver;
  const RunStart* start = nullptr;  // continue from a checkpoint (null: a fresh run)
  RunObserver* observer = nullptr;  // called after every step (null: none)
  // Called once the initial forces are known (or, continuing without recomputing them, before
  // the first step) and before anything is written to out_dir: where the caller prepares the
  // directory (removes an earlier run's files, trims a continued run's log). A setting that
  // fails in the first force evaluation (a softening whose m / eps^3 leaves float32) then
  // fails before any earlier output is touched. Null: nothing to prepare.
  std::function<void()> prepare_output;
  // Fixed steps: called once the initial forces are known (the restored ones when continuing
  // without recomputing them), before prepare_output; returns the step the run takes instead of
  // dt (--dt auto: from the initial state, cli/cmd_run.cpp). It may throw
  // std::invalid_argument, before anything is written. Null: dt.
  std::function<double()> choose_dt;
  // Fixed steps with softening: called once, after the first step whose state the step no
  // longer resolves (StepOutgrown) and whose measure is under half the start's (max|a| at
  // least 4 times the start's: a changed state, not the fluctuation of a run that starts near
  // the limit), when the state the run started from was within the limit
  // (one past it was warned of before the run: a run's warnings see its start, and a restart's
  // state was seen by the run before it). Null: not checked.
  std::function<void(const StepOutgrown&)> step_outgrown;
};

struct RunResult {
  std::size_t steps = 0;
  double time = 0;
  Diagnostics initial, final;
  double rel_energy_error = 0;  // (E_final - E_0) / |E_0|
  PhaseTimes seconds;           // accumulated solver phases plus "integrate", "io"
  std::string solver_name, backend_name;
  bool device_resident = false;  // stepped on the device (gpu::DeviceStepper)
  double e0 = 0;                 // initial total energy (plus energy_jump)
  double energy_jump = 0;        // restart with new force settings: E after - E before
  double next_output = 0;        // pending energy.csv output time
  double time_base = 0;          // the step grid, t = time_base + (step - step_base) dt
  std::size_t step_base = 0;
  double step_scale_at_start = std::numeric_limits<double>::quiet_NaN();  // RunStart's
  double step_outgrown_dt = 0;
  bool interrupted = false;  // the observer ended the run before t_end
  BlockStats block;          // block steps (levels > 1): substeps, force evaluations, levels
  double fixed_dt = 0;       // the fixed step taken (the base step of block steps; 0 with --eta)
};

// The fraction of the softening's measure sqrt(eps / max|a|) that a fixed step may take:
// kSofteningStepLimit, and with block steps (its smallest level's step) the particles' own
// criterion, level_eta, which the particle of max|a| then needs.
inline double softening_limit(const RunConfig& c) {
  return c.levels > 1 ? c.level_eta : kSofteningStepLimit;
}

// Validates cfg (std::invalid_argument naming the bad value).
void validate(const RunConfig& cfg);

// The tolerance of the run's time comparisons (reaching t_end, output times): relative to
// t_end, so that a run of t_end = 1e-11 in steps of 1e-12 takes all ten (an absolute 1e-12
// stopped it a step short). Fixed steps keep t = step dt, one rounding.
inline double time_tolerance(double t_end) {
  return 1e-12 * (t_end > 0 ? t_end : 1.0);
}

// Runs `p` from t = 0 to cfg.t_end. Writes OUT/energy.csv (header
// step,time,dt,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,virial_ratio) with
// one row per output interval, and one line per output interval to `log` (if not null).
// With cfg.start the run continues from that state and appends to energy.csv.
RunResult run_simulation(ParticleSet& p, const RunConfig& cfg, std::ostream* log);

}  // namespace hoshi
