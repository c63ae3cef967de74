#include "run/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "core/checks.hpp"
#include "integrator/leapfrog.hpp"
#include "tree/tree_solver.hpp"  // has_accelerations
#ifdef HOSHI_HAVE_CUDA
#include <memory>
#include <sstream>

#include "gpu/device_stepper.hpp"
#endif

namespace hoshi {

void validate(const RunConfig& c) {
  auto bad = [](const char* name, double v, const char* rule) {
    std::ostringstream s;  // the value as given (1e-09, not std::to_string's -0.000000)
    s << "invalid " << name << " " << std::setprecision(10) << v << " (" << rule << ")";
    throw std::invalid_argument(s.str());
  };
  if (!(c.t_end >= 0) || !std::isfinite(c.t_end)) bad("--t-end", c.t_end, "must be >= 0");
  if (!(c.dt > 0) || !std::isfinite(c.dt)) bad("--dt", c.dt, "must be > 0");
  // A run that cannot end (1e12 steps); a step below the run's time tolerance, 1e-12 t_end
  // (time_tolerance), which a restart near t_end would have, is refused by this too.
  if (c.eta == 0 && c.t_end / c.dt > 1e12) bad("--dt", c.dt, "more than 1e12 steps to --t-end");
  if (!(c.eta >= 0) || !std::isfinite(c.eta)) bad("--eta", c.eta, "must be >= 0");
  if (c.levels < 1 || c.levels > kMaxLevels)
    bad("--levels", c.levels, ("1 to " + std::to_string(kMaxLevels)).c_str());
  if (c.levels > 1 && c.eta > 0)
    bad("--eta", c.eta, "block steps take their criterion as level_eta, with eta 0");
  if (c.levels > 1 && (!(c.level_eta > 0) || !std::isfinite(c.level_eta)))
    bad("--eta", c.level_eta, "must be > 0");
  if (c.levels > 1 && !(c.solver.eps > 0))
    bad("--softening", c.solver.eps, "block steps (--levels > 1) need > 0");
  if (c.eta > 0 && !(c.solver.eps > 0))
    bad("--softening", c.solver.eps, "the adaptive step --eta needs > 0");
  if (!(c.output_every > 0) || !std::isfinite(c.output_every))
    bad("--output-every", c.output_every, "must be > 0");
  // Each output row is a step of its own with --eta (the step lands on it), and a line.
  if (c.t_end / c.output_every > 1e9)
    bad("--output-every", c.output_every, "more than 1e9 outputs to --t-end");
  validate(c.solver);
}

double softening_step_scale(double eps, double max_a2) {
  return eps > 0 && max_a2 > 0 && std::isfinite(max_a2) ? std::sqrt(eps / std::sqrt(max_a2)) : 0.0;
}

namespace {

void accumulate(PhaseTimes& into, const ForceStats& st) {
  for (const auto& [k, v] : st.seconds) into[k] += v;
}

class EnergyLog {
 public:
  EnergyLog(const std::string& dir, bool append) {
    if (dir.empty()) return;
    path_ = dir + "/energy.csv";
    // A continued run appends, with the header only if the log is gone (deleted by hand).
    std::error_code ec;
    const bool header = !append || std::filesystem::file_size(path_, ec) == 0 || ec;
    length_ = header ? 0 : std::filesystem::file_size(path_, ec);
    out_.open(path_, append ? std::ios::app : std::ios::trunc);
    if (!out_) throw std::runtime_error("cannot write " + path_);
    if (header) write(std::string(kEnergyLogHeader) + "\n");
  }
  void row(std::size_t step, double t, double dt, const Diagnostics& d, double err) {
    if (!out_.is_open()) return;
    std::ostringstream s;
    s << step << ',' << std::setprecision(17) << t << ',' << dt << ',' << d.kinetic << ','
      << d.potential << ',' << d.total << ',' << err << ',' << d.momentum[0] << ',' << d.momentum[1]
      << ',' << d.momentum[2] << ',' << d.angular_momentum[0] << ',' << d.angular_momentum[1] << ','
      << d.angular_momentum[2] << ',' << d.virial_ratio << '\n';
    write(s.str());
  }

 private:
  // One whole row or nothing: a write that fails (a full disk) is cut back to the rows before
  // it (it left half a row for readers, and for a restart's trim).
  void write(const std::string& text) {
    out_ << text;
    out_.flush();
    if (!out_) {
      out_.close();
      std::error_code ec;
      std::filesystem::resize_file(path_, length_, ec);
      throw std::runtime_error("write to " + path_ + " failed (disk full?)");
    }
    length_ += text.size();
  }

  std::string path_;
  std::ofstream out_;
  std::uintmax_t length_ = 0;  // the file's length after its last whole row
};

// A state that is no longer finite (a velocity that overflowed, a non-finite force that no
// solver check saw) stops the run before anything is written from it: an energy row of nan, or
// a snapshot or checkpoint replacing the last good one.
void require_finite_state(const ParticleSet& p, double t, std::size_t step) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
  std::ptrdiff_t first = n;
#pragma omp parallel for reduction(min : first) if (n > 100000)
  for (std::ptrdiff_t i = 0; i < n; ++i)
    if (!std::isfinite(p.x[i] + p.y[i] + p.z[i] + p.vx[i] + p.vy[i] + p.vz[i]))
      first = std::min(first, i);
  if (first == n) return;
  std::ostringstream s;
  s << std::setprecision(6) << "the state at t = " << t << " (step " << step
    << ") is not finite: particle id " << p.id[first] << " at (" << p.x[first] << ", " << p.y[first]
    << ", " << p.z[first] << ") with velocity (" << p.vx[first] << ", " << p.vy[first] << ", "
    << p.vz[first] << "); nothing was written from it (the last snapshot and checkpoint stand)";
  throw std::runtime_error(s.str());
}

// The decimals of the progress line's time: 4, or enough to tell the outputs apart (an interval
// of 5e-5 printed 0.0001 twice).
int time_decimals(double output_every) {
  const double digits = std::ceil(-std::log10(output_every)) + 1;
  return static_cast<int>(std::clamp(digits, 4.0, 15.0));
}

void log_line(std::ostream* log, int decimals, std::size_t step, double t, const Diagnostics& d,
              double err, double steps_per_s) {
  if (!log) return;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "t = %*.*f  step %7zu  E = %+.8e  dE/E0 = %+.2e  2K/|W| = %.3f  %.1f steps/s",
                decimals + 5, decimals, t, step, d.total, err, d.virial_ratio, steps_per_s);
  *log << buf << "\n" << std::flush;
}

// The run loop's integrator: the host leapfrog over any solver or, for a CUDA solver,
// device-resident stepping (gpu/device_stepper.hpp: the state stays on the device, `p` is
// brought up to date by sync() at output times and at the end; the adaptive step's max|a| is
// reduced there).
class Stepper {
 public:
  Stepper(GravitySolver& solver, const RunConfig& cfg, ParticleSet& p) : lf_(solver), p_(p) {
    if (cfg.levels > 1)
      block_.emplace(solver, cfg.levels, cfg.level_eta, cfg.solver.eps, cfg.level_scheme);
#ifdef HOSHI_HAVE_CUDA
    if (solver.backend() == "cuda" && !block_) {
      SolverConfig sc = cfg.solver;  // "auto" settings: resolved for CUDA by the stepper
      sc.solver = solver.name() == "direct" ? SolverKind::direct : SolverKind::tree;
      device_ = std::make_unique<gpu::DeviceStepper>(sc, p);
    }
#endif
  }
  // max |a|^2 of the current state, for the adaptive step.
  double max_acceleration2() {
#ifdef HOSHI_HAVE_CUDA
    if (device_) return device_->max_acceleration2();
#endif
    return hoshi::max_acceleration2(p_);
  }
  ForceStats initialise() {
#ifdef HOSHI_HAVE_CUDA
    if (device_) {
      const ForceStats st = device_->compute_forces();
      sync();
      return st;
    }
#endif
    return lf_.initialise(p_);
  }
  ForceStats step(double dt) {
    synced_ = false;
#ifdef HOSHI_HAVE_CUDA
    if (device_) {
      device_->kick(0.5 * dt);
      device_->drift(dt);
      const ForceStats st = device_->compute_forces();
      device_->kick(0.5 * dt);
      return st;
    }
#endif
    if (block_) return block_->step(p_, dt);
    return lf_.step(p_, dt);
  }
  // Block steps' counts (empty without them).
  BlockStats block_stats() const {
    return block_ ? block_->stats() : BlockStats{};
  }
  bool on_device() const {
#ifdef HOSHI_HAVE_CUDA
    return device_ != nullptr;
#else
    return false;
#endif
  }
  // The host ParticleSet holds the current state (downloaded once per step on the device).
  void sync() {
#ifdef HOSHI_HAVE_CUDA
    if (device_ && !synced_) device_->download(p_);
#endif
    synced_ = true;
  }
  double integrate_seconds() const {
    double s = lf_.integrate_seconds() + (block_ ? block_->integrate_seconds() : 0.0);
#ifdef HOSHI_HAVE_CUDA
    if (device_)
      for (const auto& [k, v] : device_->integrate_seconds()) s += v;
#endif
    return s;
  }

 private:
  Leapfrog lf_;
  std::optional<BlockLeapfrog> block_;
  ParticleSet& p_;
  bool synced_ = false;
#ifdef HOSHI_HAVE_CUDA
  std::unique_ptr<gpu::DeviceStepper> device_;
#endif
};

}  // namespace

bool on_step_grid(const RunStart& s, double dt, double time_base, std::size_t step_base) {
  return s.step >= step_base && s.time == time_base + static_cast<double>(s.step - step_base) * dt;
}

bool start_off_grid(const RunStart& s, double dt) {
  if (std::isfinite(s.time_base) && on_step_grid(s, dt, s.time_base, s.step_base)) return false;
  return !on_step_grid(s, dt, 0.0, 0);
}

RunResult run_simulation(ParticleSet& p, const RunConfig& cfg, std::ostream* log) {
  validate(cfg);
  require_valid_particles(p, "initial conditions");
  auto solver = make_solver(cfg.solver, p.size());
  RunResult res;
  res.solver_name = solver->name();
  res.backend_name = solver->backend();
  Stepper lf(*solver, cfg, p);
  res.device_resident = lf.on_device();
  const RunStart* start = cfg.start;
  std::ostream* line = cfg.quiet ? nullptr : log;
  const int decimals = time_decimals(cfg.output_every);
  Stopwatch wall;

  // A continued run already holds the accelerations of its state: computing them again
  // could differ (the relative criterion uses the previous step's |a|). The device stepper
  // took them from p (DeviceStepper's constructor). Unless the force settings changed: then
  // the energy jumps by the change of the potential, and the energy error is measured from the
  // initial energy plus that jump (RunResult::energy_jump).
  const bool recompute = start && start->recompute_forces;
  const double before = recompute ? diagnostics(p).total : 0.0;
  if (!start || recompute || !has_accelerations(p)) accumulate(res.seconds, lf.initialise());
  res.initial = diagnostics(p);
  if (recompute) res.energy_jump = res.initial.total - before;
  double t = start ? start->time : 0.0;
  std::size_t step = start ? start->step : 0;
  // The adaptive step, eta sqrt(eps / max|a|); a run that cannot end (1e12 steps left, as
  // --dt's check says of fixed steps) is refused before anything is written (std::
  // invalid_argument: --eta 1e-300), or stopped where it gets there (std::runtime_error).
  const auto adaptive_step = [&](double now, std::size_t at_step) {
    const double a2 = lf.max_acceleration2();
    const double dt = adaptive_dt_from(a2, cfg.eta, cfg.solver.eps);
    if (!((cfg.t_end - now) / dt > 1e12)) return dt;
    std::ostringstream s;
    s << std::setprecision(6) << "the adaptive step " << dt << " = " << cfg.eta
      << " sqrt(eps / max|a|) at t = " << now << " (step " << at_step << ", max|a| "
      << std::sqrt(a2) << ", eps " << cfg.solver.eps << ") leaves more than 1e12 steps to --t-end "
      << cfg.t_end << ": raise --eta or --softening, or give fixed steps (--eta 0 --dt)";
    if (at_step == (start ? start->step : 0)) throw std::invalid_argument(s.str());
    throw std::runtime_error(s.str());
  };
  if (cfg.eta > 0 && t < cfg.t_end) adaptive_step(t, step);  // before the outputs are touched
  // The fixed step, cfg.dt or the one chosen from the initial state (--dt auto).
  const double fixed_dt = cfg.eta == 0 && cfg.choose_dt ? cfg.choose_dt() : cfg.dt;
  if (!(fixed_dt > 0) || !std::isfinite(fixed_dt))
    throw std::logic_error("RunConfig::choose_dt returned a step that is not > 0");
  // The step against the softening's measure after each step, until it is passed (the measure
  // of the start is the warning's before the run; a cold collapse's steps outgrow it later,
  // when max|a| grows at the centre).
  // With block steps, the smallest level's step (the others' particles are within their
  // criterion): the state outgrew the hierarchy's depth.
  const double finest = std::ldexp(fixed_dt, -(cfg.levels - 1));
  const auto outgrown = [&](double scale) {
    return scale > 0 && finest > softening_limit(cfg) * scale;
  };
  const bool watch = cfg.step_outgrown && cfg.eta == 0 && cfg.solver.eps > 0;
  // A restart keeps the measure of the run's start and the step it warned of, unless its
  // forces changed (another softening: another measure).
  const bool kept = start && !start->recompute_forces;
  double scale_at_start = kept ? start->step_scale_at_start : std::nan("");
  if (watch && !std::isfinite(scale_at_start))
    scale_at_start = softening_step_scale(cfg.solver.eps, lf.max_acceleration2());
  double outgrown_dt = kept ? start->step_outgrown_dt : 0.0;
  bool armed = watch && !outgrown(scale_at_start) && !(outgrown_dt > 0 && finest >= outgrown_dt);
  if (cfg.prepare_output) cfg.prepare_output();
  EnergyLog elog(cfg.out_dir, start != nullptr);
  const double e0 = start ? start->e0 + res.energy_jump : res.initial.total;
  auto rel_err = [&](const Diagnostics& d) {
    return e0 != 0 ? (d.total - e0) / std::abs(e0) : d.total;
  };
  if (!start) {
    elog.row(0, 0.0, 0.0, res.initial, 0.0);
    log_line(line, decimals, 0, 0.0, res.initial, 0.0, 0.0);
  }

  // Fixed step: t = t_base + (step - step_base) dt exactly (no accumulated round-off), with
  // t_base = step_base = 0 for a new run. Adaptive step: clamp to the next output time.
  // A continued run keeps the grid its checkpoint records; one whose time is off that grid
  // (it ended with a short step, or dt changed) counts from its own time and step instead.
  const double tiny = time_tolerance(cfg.t_end);
  double next_output = start ? start->next_output : cfg.output_every;
  double t_base = 0.0;
  std::size_t step_base = 0;
  if (start) {
    if (std::isfinite(start->time_base) &&
        on_step_grid(*start, fixed_dt, start->time_base, start->step_base))
      t_base = start->time_base, step_base = start->step_base;
    else if (!on_step_grid(*start, fixed_dt, 0.0, 0))
      t_base = start->time, step_base = start->step;
  }
  std::size_t steps_at_last_line = step;
  double wall_at_last_line = 0;
  // The grid as checkpoints record it: none (NaN) for adaptive steps.
  const double grid_time = cfg.eta > 0 ? std::numeric_limits<double>::quiet_NaN() : t_base;
  struct LazyState final : StepState {
    Stepper& lf;
    ParticleSet& p;
    LazyState(Stepper& l, ParticleSet& q) : lf(l), p(q) {}
    double t = 0;
    std::size_t step = 0;
    std::optional<std::size_t> checked;  // the step whose state was found finite
    const ParticleSet& particles() override {
      lf.sync();  // snapshots, checkpoints, the progress line read the host state
      if (checked != step) require_finite_state(p, t, step);  // once per step
      checked = step;
      return p;
    }
  } state(lf, p);
  auto observe = [&](double dt) {
    if (!cfg.observer) return true;
    state.t = t, state.step = step;
    RunProgress progress{step, t, dt, cfg.t_end, e0, next_output, grid_time, step_base};
    progress.step_scale_at_start = scale_at_start;
    progress.step_outgrown_dt = outgrown_dt;
    return cfg.observer->after_step(state, progress);
  };
  bool go_on = observe(0.0);
  while (go_on && t < cfg.t_end - tiny) {
    double dt;
    std::optional<double> lands;  // a step cut short ends exactly at this output time or t_end
    if (cfg.eta > 0) {
      dt = adaptive_step(t, step);
      if (next_output - t <= dt) dt = next_output - t, lands = next_output;
      if (cfg.t_end - t <= dt) dt = cfg.t_end - t, lands = cfg.t_end;
    } else {
      // A full step unless less than a step (beyond rounding) remains: t_end = 0.001 in
      // steps of 1e-4 reaches t = 9e-4 with 1e-4 minus an ulp left, which must not become a
      // shorter step (the run would differ from a longer one, and from its own restart).
      const double left = cfg.t_end - t;
      if (left < fixed_dt - tiny)
        dt = left, lands = cfg.t_end;
      else
        dt = fixed_dt;
    }
    accumulate(res.seconds, lf.step(dt));
    ++step;
    t = lands         ? *lands
        : cfg.eta > 0 ? t + dt
                      : t_base + static_cast<double>(step - step_base) * fixed_dt;
    if (armed) {  // a max|a| of the step's forces: O(N), on the device a reduction
      const double a2 = lf.max_acceleration2();
      const double scale = softening_step_scale(cfg.solver.eps, a2);
      // Outgrown: past the limit, and at under half the measure of the start, as the run's state
      // changed (a collapse; close encounters in a small N); a run that starts just within the
      // limit passes it by max|a|'s fluctuations alone (tree_vs_direct's 1/64 at 0.26 of it,
      // bounded errors of 7e-4).
      if (outgrown(scale) && !(scale_at_start > 0 && scale > 0.5 * scale_at_start)) {
        armed = false;
        outgrown_dt = finest;
        cfg.step_outgrown(StepOutgrown{t, step, std::sqrt(a2), scale, scale_at_start, finest});
      }
    }
    if (t >= next_output - tiny || t >= cfg.t_end - tiny) {
      // The next multiple of output_every after t, as k * output_every (one rounding; summing
      // output_every drifted: after 1e5 outputs of 0.03 a row landing on a multiple was
      // skipped).
      next_output = (std::floor((t + tiny) / cfg.output_every) + 1) * cfg.output_every;
      Stopwatch io;
      lf.sync();
      require_finite_state(p, t, step);
      const Diagnostics d = diagnostics(p);
      elog.row(step, t, dt, d, rel_err(d));
      const double w = wall.seconds();
      log_line(line, decimals, step, t, d, rel_err(d),
               (step - steps_at_last_line) / std::max(1e-9, w - wall_at_last_line));
      steps_at_last_line = step;
      wall_at_last_line = w;
      res.seconds["io"] += io.seconds();
    }
    go_on = observe(dt);
  }
  res.interrupted = !go_on && t < cfg.t_end - tiny;
  res.e0 = e0;
  res.next_output = next_output;
  res.time_base = grid_time;
  res.step_base = step_base;
  res.step_scale_at_start = scale_at_start;
  res.step_outgrown_dt = outgrown_dt;
  res.steps = step;
  res.time = t;
  lf.sync();
  require_finite_state(p, t, step);
  res.final = diagnostics(p);
  res.rel_energy_error = rel_err(res.final);
  res.seconds["integrate"] += lf.integrate_seconds();
  res.block = lf.block_stats();
  res.fixed_dt = cfg.eta > 0 ? 0.0 : fixed_dt;
  res.seconds["total"] = wall.seconds();
  return res;
}

}  // namespace hoshi
